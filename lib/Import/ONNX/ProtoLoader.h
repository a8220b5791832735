//===- ProtoLoader.h - read ONNX protobufs without exceptions ---*- C++ -*-===//
//
// libonnx and protobuf report some errors by throwing, and the compiler is
// built without exceptions. Every call into them that may throw lives in
// ProtoLoader.cpp (built with -fexceptions) and returns an error string.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_IMPORT_ONNX_PROTOLOADER_H
#define CGC_LIB_IMPORT_ONNX_PROTOLOADER_H

#include "onnx/onnx_pb.h"

#include <string>

namespace cgc {

/// Reads `path` as a binary ModelProto, or as ONNX text format when it ends in
/// `.onnxtxt`. Returns false and fills `error` on failure.
bool loadModelProto(const std::string &path, onnx::ModelProto &model,
                    std::string &error);

/// Parses `bytes` as a binary ModelProto, or as ONNX text format when `name`
/// ends in `.onnxtxt`. Returns false and fills `error` on failure.
bool parseModelProto(const std::string &bytes, const std::string &name,
                     onnx::ModelProto &model, std::string &error);

/// Upgrades a model whose default-domain opset is below `targetOpset` with
/// the ONNX version converter. Returns false and fills `error` when the
/// converter cannot (it throws on unsupported adapters). The checker, shape
/// inference and converter run in a child process, since they crash on
/// some malformed models.
bool upgradeOpset(onnx::ModelProto &model, int targetOpset,
                  std::string &error);

/// Reads a serialized TensorProto (the backend test `.pb` format), or a
/// numpy `.npy` file (little-endian numeric or bool dtypes, C order) into
/// one: `--bind` takes either.
bool loadTensorProto(const std::string &path, onnx::TensorProto &tensor,
                     std::string &error);

} // namespace cgc

#endif // CGC_LIB_IMPORT_ONNX_PROTOLOADER_H
