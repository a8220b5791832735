//===- ProtoLoader.cpp - read ONNX protobufs, catching exceptions ---------===//
//
// Built with -fexceptions: the only file that may see a C++ exception.
//
//===----------------------------------------------------------------------===//

#include "ProtoLoader.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

#include <algorithm>
#include <exception>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_set>

namespace {
bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool readWholeFile(const std::string &path, std::string &bytes,
                   std::string &error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot open file";
    return false;
  }
  std::ostringstream buffer;
  buffer << file.rdbuf();
  bytes = buffer.str();
  return true;
}

/// libonnx's text parser recurses once per nested bracket (subgraphs,
/// sequence types, ...) and overflows the stack a few thousand levels down.
/// Real models nest a few dozen levels.
constexpr int kMaxTextNesting = 256;

/// Deepest nesting of (), [] and {} outside strings and comments.
int textNesting(const std::string &text) {
  int depth = 0, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n')
        ++i;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '(' || c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

bool parseText(const std::string &text, onnx::ModelProto &model,
               std::string &error) {
  if (textNesting(text) > kMaxTextNesting) {
    error = "malformed ONNX text: brackets nested more than " +
            std::to_string(kMaxTextNesting) + " deep";
    return false;
  }
  onnx::OnnxParser parser(text.c_str());
  onnx::Common::Status status = parser.Parse(model);
  if (!status.IsOK()) {
    error = "malformed ONNX text: " + status.ErrorMessage();
    return false;
  }
  return true;
}

bool parseBinary(const std::string &bytes, onnx::ModelProto &model,
                 std::string &error) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    error = "file is larger than the 2 GiB protobuf limit (use external data)";
    return false;
  }
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    error = "not a valid ONNX model protobuf (truncated or malformed)";
    return false;
  }
  if (!model.has_graph()) {
    error = "the protobuf holds no graph (is this an ONNX model?)";
    return false;
  }
  return true;
}
} // namespace

bool cgc::loadModelProto(const std::string &path, onnx::ModelProto &model,
                         std::string &error) {
  try {
    std::string bytes;
    if (!readWholeFile(path, bytes, error))
      return false;
    return parseModelProto(bytes, path, model, error);
  } catch (const std::exception &e) {
    error = std::string("failed to read the model: ") + e.what();
  } catch (...) {
    error = "failed to read the model: unknown exception";
  }
  return false;
}

bool cgc::parseModelProto(const std::string &bytes, const std::string &name,
                          onnx::ModelProto &model, std::string &error) {
  try {
    if (endsWith(name, ".onnxtxt"))
      return parseText(bytes, model, error);
    return parseBinary(bytes, model, error);
  } catch (const std::exception &e) {
    error = std::string("failed to read the model: ") + e.what();
  } catch (...) {
    error = "failed to read the model: unknown exception";
  }
  return false;
}

bool cgc::upgradeOpset(onnx::ModelProto &model, int targetOpset,
                       std::string &error) {
  // Shape inference and the converter trust their input, so only models
  // that pass the ONNX checker go in. The checker lets an undefined output
  // of the main graph through, on which the converter dereferences null.
  std::unordered_set<std::string> defined;
  for (const onnx::ValueInfoProto &input : model.graph().input())
    defined.insert(input.name());
  for (const onnx::TensorProto &init : model.graph().initializer())
    defined.insert(init.name());
  for (const onnx::NodeProto &node : model.graph().node())
    defined.insert(node.output().begin(), node.output().end());
  for (const onnx::ValueInfoProto &output : model.graph().output()) {
    if (!defined.count(output.name())) {
      error = "graph output '" + output.name() + "' is not produced by any node";
      return false;
    }
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    error = std::string("the ONNX checker rejects it: ") + e.what();
    return false;
  } catch (...) {
    error = "the ONNX checker rejects it";
    return false;
  }
  try {
    // The converter's adapters need the shapes of the values they touch.
    onnx::ModelProto inferred = model;
    try {
      onnx::shape_inference::InferShapes(inferred);
    } catch (const std::exception &) {
      inferred = model; // best effort: convert without the shapes
    }
    model = onnx::version_conversion::ConvertVersion(inferred, targetOpset);
    return true;
  } catch (const std::exception &e) {
    error = e.what();
  } catch (...) {
    error = "unknown exception";
  }
  return false;
}

bool cgc::loadTensorProto(const std::string &path, onnx::TensorProto &tensor,
                          std::string &error) {
  try {
    std::string bytes;
    if (!readWholeFile(path, bytes, error))
      return false;
    if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
        !tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      error = "not a valid TensorProto file";
      return false;
    }
    return true;
  } catch (const std::exception &e) {
    error = e.what();
  } catch (...) {
    error = "unknown exception";
  }
  return false;
}
