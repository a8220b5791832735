//===- ImportOptionsTest.cpp - --dim / --shape parsing --------------------===//

#include "cgc/Import/ONNXImporter.h"

#include <gtest/gtest.h>

TEST(ImportOptions, DimBinding) {
  cgc::ImportOptions options;
  std::string error;
  ASSERT_TRUE(cgc::parseDimBinding("N=4", options, error)) << error;
  EXPECT_EQ(options.dimBindings.lookup("N"), 4);
}

TEST(ImportOptions, MalformedDimBindings) {
  cgc::ImportOptions options;
  std::string error;
  for (const char *bad : {"N", "=4", "N=", "N=-1", "N=four"}) {
    error.clear();
    EXPECT_FALSE(cgc::parseDimBinding(bad, options, error)) << bad;
    EXPECT_NE(error.find("--dim"), std::string::npos) << bad;
  }
}

TEST(ImportOptions, ShapeBinding) {
  cgc::ImportOptions options;
  std::string error;
  ASSERT_TRUE(cgc::parseShapeBinding("image=1x3x224x224", options, error));
  EXPECT_EQ(options.inputShapes.lookup("image"),
            (std::vector<int64_t>{1, 3, 224, 224}));
  ASSERT_TRUE(cgc::parseShapeBinding("s=scalar", options, error));
  EXPECT_TRUE(options.inputShapes.lookup("s").empty());
}

TEST(ImportOptions, MalformedShapeBindings) {
  cgc::ImportOptions options;
  std::string error;
  for (const char *bad : {"x=", "x=1xax3", "=2x2", "x=2x-1"}) {
    EXPECT_FALSE(cgc::parseShapeBinding(bad, options, error)) << bad;
  }
}
