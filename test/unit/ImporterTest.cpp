//===- ImporterTest.cpp - bad models are rejected with clear errors -------===//
//
// Models are built here (ONNX text format or protobuf API), written to a
// fresh temporary folder, imported, and the diagnostic text is checked.
//
//===----------------------------------------------------------------------===//

#include "cgc/Import/ONNXImporter.h"
#include "cgc/InitAllDialects.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "onnx/defs/parser.h"
#include "onnx/onnx_pb.h"

#include <fstream>
#include <gtest/gtest.h>

namespace {

class ImporterTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("cgc-import", path));
    dir = std::string(path);
    modelDir = dir + "/model";
    llvm::sys::fs::create_directory(modelDir);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  static onnx::ModelProto parseText(const std::string &text) {
    onnx::ModelProto model;
    auto status = onnx::OnnxParser::Parse(model, text.c_str());
    EXPECT_TRUE(status.IsOK()) << status.ErrorMessage();
    return model;
  }

  std::string write(const onnx::ModelProto &model,
                    const std::string &name = "model.onnx") {
    std::string path = modelDir + "/" + name;
    std::ofstream out(path, std::ios::binary);
    model.SerializeToOstream(&out);
    return path;
  }

  std::string writeBytes(const std::string &bytes, const std::string &name) {
    std::string path = modelDir + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  /// Imports `path`; returns "" on success or the collected error text.
  std::string importErrors(const std::string &path,
                           const cgc::ImportOptions &options = {}) {
    mlir::DialectRegistry registry;
    cgc::registerAllDialects(registry);
    mlir::MLIRContext context(registry);
    std::string errors;
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      errors += d.str() + "\n";
      return mlir::success();
    });
    auto module = cgc::importONNXModel(path, &context, options);
    if (module)
      EXPECT_TRUE(errors.empty()) << errors;
    else
      EXPECT_FALSE(errors.empty()) << "import failed without a message";
    return module ? "" : errors;
  }

  /// A model with one external-data initializer at `location`.
  onnx::ModelProto externalModel(const std::string &location,
                                 int64_t offset = 0, int64_t length = 16) {
    onnx::ModelProto model = parseText(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[4] x) => (float[4] y) { y = Add(x, w) })");
    onnx::TensorProto *w = model.mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(4);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char *key, const std::string &value) {
      auto *entry = w->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    };
    add("location", location);
    add("offset", std::to_string(offset));
    add("length", std::to_string(length));
    return model;
  }

  std::string dir, modelDir;
};

const char *kAddModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,3] x, float[3] b) => (float[2,3] y) { y = Add(x, b) })";

TEST_F(ImporterTest, ValidModelImports) {
  EXPECT_EQ(importErrors(write(parseText(kAddModel))), "");
}

TEST_F(ImporterTest, MissingFile) {
  EXPECT_NE(importErrors(modelDir + "/nope.onnx").find("cannot open"),
            std::string::npos);
}

TEST_F(ImporterTest, TruncatedProtobuf) {
  std::string bytes;
  parseText(kAddModel).SerializeToString(&bytes);
  std::string path = writeBytes(bytes.substr(0, bytes.size() / 2), "cut.onnx");
  EXPECT_NE(importErrors(path).find("truncated or malformed"),
            std::string::npos);
}

TEST_F(ImporterTest, GarbageBytes) {
  std::string path = writeBytes(std::string("\xff\xff\xff\xff garbage", 13),
                                "garbage.onnx");
  EXPECT_NE(importErrors(path).find("not a valid ONNX model"),
            std::string::npos);
}

TEST_F(ImporterTest, UnknownOp) {
  std::string errors = importErrors(write(parseText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = FrobnicateTensor(x) })")));
  EXPECT_NE(errors.find("unsupported ONNX op 'FrobnicateTensor'"),
            std::string::npos)
      << errors;
}

TEST_F(ImporterTest, UnknownDomain) {
  std::string errors = importErrors(write(parseText(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
    g (float[2] x) => (float[2] y) { y = com.example.Custom(x) })")));
  EXPECT_NE(errors.find("unsupported op domain 'com.example'"),
            std::string::npos)
      << errors;
}

TEST_F(ImporterTest, UnsupportedOpset) {
  onnx::ModelProto model = parseText(kAddModel);
  model.mutable_opset_import(0)->set_version(0);
  std::string errors = importErrors(write(model));
  EXPECT_NE(errors.find("unsupported opset 0"), std::string::npos) << errors;
  model.mutable_opset_import(0)->set_version(99);
  errors = importErrors(write(model));
  EXPECT_NE(errors.find("unsupported opset 99"), std::string::npos) << errors;
}

TEST_F(ImporterTest, OldOpsetIsUpgraded) {
  onnx::ModelProto model = parseText(kAddModel);
  model.mutable_opset_import(0)->set_version(6);
  EXPECT_EQ(importErrors(write(model)), "");
}

TEST_F(ImporterTest, UndefinedInput) {
  std::string errors = importErrors(write(parseText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = Add(x, missing_weight) })")));
  EXPECT_NE(errors.find("input 'missing_weight' is not defined"),
            std::string::npos)
      << errors;
}

TEST_F(ImporterTest, Cycle) {
  std::string errors = importErrors(write(parseText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) {
      a = Add(x, b)
      b = Relu(a)
      y = Relu(b)
    })")));
  EXPECT_NE(errors.find("has a cycle"), std::string::npos) << errors;
}

TEST_F(ImporterTest, OverflowingDims) {
  onnx::ModelProto model = parseText(kAddModel);
  onnx::TensorProto *w = model.mutable_graph()->add_initializer();
  w->set_name("huge");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < 4; ++i)
    w->add_dims(int64_t(1) << 20);
  std::string errors = importErrors(write(model));
  EXPECT_NE(errors.find("overflows"), std::string::npos) << errors;
}

TEST_F(ImporterTest, DataSizeMismatch) {
  onnx::ModelProto model = parseText(kAddModel);
  onnx::TensorProto *w = model.mutable_graph()->add_initializer();
  w->set_name("short");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(8);
  w->set_raw_data(std::string(12, '\0'));
  std::string errors = importErrors(write(model));
  EXPECT_NE(errors.find("holds 12 bytes of data but its shape and type need 32"),
            std::string::npos)
      << errors;
}

TEST_F(ImporterTest, WrongAttributeType) {
  std::string errors = importErrors(write(parseText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = LeakyRelu<alpha = "fast">(x) })")));
  EXPECT_NE(errors.find("attribute 'alpha' must be FLOAT, got STRING"),
            std::string::npos)
      << errors;
}

TEST_F(ImporterTest, ShapeMismatchNamesTheNode) {
  std::string errors = importErrors(write(parseText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x, float[4] b) => (float[2,3] y) { y = Add(x, b) })")));
  EXPECT_NE(errors.find("(Add): operands are not broadcast-compatible"),
            std::string::npos)
      << errors;
}

TEST_F(ImporterTest, ExternalDataInsideTheFolder) {
  writeBytes(std::string(16, '\0'), "weights.bin");
  EXPECT_EQ(importErrors(write(externalModel("weights.bin"))), "");
}

TEST_F(ImporterTest, ExternalDataDotDot) {
  writeBytes(std::string(16, '\0'), "weights.bin");
  std::string errors = importErrors(write(externalModel("../model/weights.bin")));
  EXPECT_NE(errors.find("escapes the model folder"), std::string::npos)
      << errors;
}

TEST_F(ImporterTest, ExternalDataAbsolutePath) {
  std::string path = writeBytes(std::string(16, '\0'), "weights.bin");
  std::string errors = importErrors(write(externalModel(path)));
  EXPECT_NE(errors.find("escapes the model folder"), std::string::npos)
      << errors;
}

TEST_F(ImporterTest, ExternalDataSymlinkOutOfTheFolder) {
  std::string outside = dir + "/secret.bin";
  std::ofstream(outside, std::ios::binary) << std::string(16, '\0');
  ASSERT_FALSE(llvm::sys::fs::create_link(outside, modelDir + "/link.bin"));
  std::string errors = importErrors(write(externalModel("link.bin")));
  EXPECT_NE(errors.find("resolves outside the model folder"),
            std::string::npos)
      << errors;
}

TEST_F(ImporterTest, ExternalDataPastTheEnd) {
  writeBytes(std::string(16, '\0'), "weights.bin");
  std::string errors =
      importErrors(write(externalModel("weights.bin", /*offset=*/8)));
  EXPECT_NE(errors.find("is past the end"), std::string::npos) << errors;
}

TEST_F(ImporterTest, SymbolicDimsStayUnlessBound) {
  const char *text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3] x) => (float[N,3] y) { y = Relu(x) })";
  EXPECT_EQ(importErrors(write(parseText(text))), "");
  cgc::ImportOptions options;
  options.dimBindings["N"] = 2;
  EXPECT_EQ(importErrors(write(parseText(text)), options), "");
}

// A Loop without a trip count runs until its condition turns false: the
// importer supplies INT64_MAX (this was (double)INT64_MAX converted back to
// int64, undefined behaviour that gave INT64_MIN) and, without a condition,
// true (an i1 APInt built from a signed 1, which asserts).
TEST_F(ImporterTest, LoopDefaults) {
  onnx::ModelProto model = parseText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x, int64 n, bool c) => (float[4] y) {
      y = Loop(n, c, x) <
        body = l (int64 i, bool ci, float[4] v) => (bool co, float[4] w) {
          co = Identity(ci)
          w = Relu(v)
        }
      >
    })");
  onnx::NodeProto *loop = model.mutable_graph()->mutable_node(0);
  loop->set_input(0, "");
  loop->set_input(1, "");
  model.mutable_graph()->mutable_input()->DeleteSubrange(1, 2);
  mlir::MLIRContext context;
  auto module = cgc::importONNXModel(write(model), &context, {});
  ASSERT_TRUE(module);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  EXPECT_NE(text.find("dense<9223372036854775807> : tensor<i64>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("dense<true> : tensor<i1>"), std::string::npos) << text;
}

TEST_F(ImporterTest, ImportFromBytes) {
  mlir::MLIRContext context;
  std::string errors;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    errors += d.str() + "\n";
    return mlir::success();
  });
  std::string bytes;
  parseText(kAddModel).SerializeToString(&bytes);
  EXPECT_TRUE(cgc::importONNXModelFromBytes(bytes, "mem.onnx", &context, {}));
  // The name picks the format, as for files.
  EXPECT_TRUE(cgc::importONNXModelFromBytes(kAddModel, "mem.onnxtxt",
                                            &context, {}));
  EXPECT_EQ(errors, "");
  EXPECT_FALSE(cgc::importONNXModelFromBytes(bytes.substr(0, 10), "cut.onnx",
                                             &context, {}));
  EXPECT_NE(errors.find("truncated or malformed"), std::string::npos)
      << errors;
}

TEST_F(ImporterTest, ExternalDataFromBytesUsesTheNamedFolder) {
  writeBytes(std::string(16, '\0'), "weights.bin");
  std::string bytes;
  externalModel("weights.bin").SerializeToString(&bytes);
  mlir::MLIRContext context;
  mlir::ScopedDiagnosticHandler handler(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  EXPECT_TRUE(cgc::importONNXModelFromBytes(bytes, modelDir + "/m.onnx",
                                            &context, {}));
  EXPECT_FALSE(cgc::importONNXModelFromBytes(bytes, dir + "/m.onnx",
                                             &context, {}));
}

} // namespace
