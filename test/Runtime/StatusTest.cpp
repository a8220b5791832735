//===- StatusTest.cpp - cgrt_status ---------------------------------------===//

#include "Status.h"
#include "TestUtil.h"

#include <cstring>

using namespace cgrttest;

TEST(StatusTest, NullIsSuccess) {
  EXPECT_EQ(cgrt_status_get_code(nullptr), CGRT_OK);
  EXPECT_STREQ(cgrt_status_get_message(nullptr), "");
  cgrt_status_free(nullptr); // no-op
}

TEST(StatusTest, CarriesCodeAndFormattedMessage) {
  cgrt_status status =
      cgrt::makeStatus(CGRT_CORRUPT, "file '%s' is %d bytes", "w.bin", 12);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(cgrt_status_get_code(status), CGRT_CORRUPT);
  EXPECT_STREQ(cgrt_status_get_message(status), "file 'w.bin' is 12 bytes");
  cgrt_status_free(status);
}

TEST(StatusTest, OkCodeMakesNoStatus) {
  EXPECT_EQ(cgrt::makeStatus(CGRT_OK, "ignored"), nullptr);
  EXPECT_EQ(cgrt::makeStatusString(CGRT_OK, "ignored"), nullptr);
}

TEST(StatusTest, AnnotatePrefixesTheMessage) {
  cgrt_status status = cgrt::annotate(
      cgrt::makeStatus(CGRT_NOT_FOUND, "no file"), "cgrt_model_load");
  EXPECT_TRUE(hasStatus(status, CGRT_NOT_FOUND, {"cgrt_model_load: no file"}));
  EXPECT_EQ(cgrt::annotate(nullptr, "x"), nullptr);
}

TEST(StatusTest, LongMessagesAreKeptWhole) {
  std::string long_(5000, 'x');
  cgrt_status status =
      cgrt::makeStatus(CGRT_INTERNAL, "%s|%s", long_.c_str(), "end");
  EXPECT_EQ(std::strlen(cgrt_status_get_message(status)), 5004u);
  cgrt_status_free(status);
}

TEST(StatusTest, GuardTurnsExceptionsIntoStatuses) {
  EXPECT_TRUE(hasStatus(cgrt::guardApi("f",
                                       []() -> cgrt_status {
                                         throw std::bad_alloc();
                                       }),
                        CGRT_OUT_OF_MEMORY, {"f: out of host memory"}));
  EXPECT_TRUE(hasStatus(cgrt::guardApi("g",
                                       []() -> cgrt_status {
                                         throw std::runtime_error("boom");
                                       }),
                        CGRT_INTERNAL, {"g: internal error: boom"}));
}
