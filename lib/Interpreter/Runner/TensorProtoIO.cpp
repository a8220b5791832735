//===- TensorProtoIO.cpp - ONNX protobufs, catching exceptions ------------===//
//
// Built with -fexceptions: libonnx and protobuf may throw, and the rest of
// the interpreter is built without exceptions, so every call into them is
// here and turns an exception into an error string.
//
//===----------------------------------------------------------------------===//

#include "cgc/Import/ProtoIO.h"
#include "cgc/Interpreter/RunnerSupport.h"

#include "mlir/IR/Builders.h"

#include "onnx/defs/parser.h"
#include "onnx/onnx_pb.h"


using namespace mlir;
using namespace cgc::interp;

namespace {

bool readWholeFile(const std::string &path, std::string &bytes,
                   std::string &error) {
  std::string reason;
  if (cgc::readFileBytes(path, bytes, &reason))
    return true;
  error = "cannot open '" + path + "': " + reason;
  return false;
}

/// Bits of an element that ONNX packs several to a byte (int4, uint4,
/// float4e2m1: 4; int2, uint2: 2), else 0.
unsigned packedBits(Scalar s) {
  return s == Scalar::F4E2M1FN ? 4 : subByteBits(s);
}

/// Unpacks packed elements into `tensor` (one byte each).
bool unpackInto(StringRef packed, HostTensor &tensor, std::string &error) {
  std::string unpacked;
  unsigned bits = packedBits(tensor.scalar);
  if (!unpackSubByte(packed, bits, isSigned(tensor.scalar),
                     tensor.numElements(), unpacked)) {
    error = "holds " + std::to_string(packed.size()) + " bytes of packed " +
            std::to_string(bits) + "-bit data, " +
            std::to_string((tensor.numElements() * bits + 7) / 8) +
            " expected";
    return false;
  }
  copyBytes(tensor.bytes.data(), unpacked.data(), unpacked.size());
  return true;
}

bool convertProto(const onnx::TensorProto &proto, MLIRContext *ctx,
                  HostTensor &tensor, std::string &error) {
  Type type = elementTypeOfOnnx(ctx, proto.data_type());
  if (!type) {
    error = "unsupported tensor element type " +
            (onnx::TensorProto::DataType_IsValid(proto.data_type())
                 ? onnx::TensorProto::DataType_Name(
                       (onnx::TensorProto::DataType)proto.data_type())
                 : std::to_string(proto.data_type()));
    return false;
  }
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    error = "tensors with external data are not supported";
    return false;
  }
  SmallVector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape)
    if (d < 0) {
      error = "negative dim";
      return false;
    }
  tensor = HostTensor(type, shape);
  int64_t n = tensor.numElements();
  if (proto.has_raw_data() && packedBits(tensor.scalar))
    return unpackInto(proto.raw_data(), tensor, error);
  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (raw.size() != tensor.bytes.size()) {
      error = "raw data holds " + std::to_string(raw.size()) + " bytes, " +
              std::to_string(tensor.bytes.size()) + " expected";
      return false;
    }
    // An empty tensor has no buffer: memcpy from or to null is undefined
    // even for 0 bytes (UBSan, on the zero-size ONNX node tests).
    if (!raw.empty())
      std::memcpy(tensor.bytes.data(), raw.data(), raw.size());
    if (tensor.scalar == Scalar::I1)
      for (uint8_t &b : tensor.bytes)
        b = b != 0;
    return true;
  }
  auto sizeError = [&](int64_t got) {
    error = "holds " + std::to_string(got) + " values, " + std::to_string(n) +
            " expected";
    return false;
  };
  switch (proto.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (proto.float_data_size() != n)
      return sizeError(proto.float_data_size());
    for (int64_t i = 0; i < n; ++i)
      tensor.setF(i, proto.float_data(i));
    return true;
  case onnx::TensorProto::DOUBLE:
    if (proto.double_data_size() != n)
      return sizeError(proto.double_data_size());
    for (int64_t i = 0; i < n; ++i)
      tensor.setF(i, proto.double_data(i));
    return true;
  case onnx::TensorProto::INT64:
    if (proto.int64_data_size() != n)
      return sizeError(proto.int64_data_size());
    for (int64_t i = 0; i < n; ++i)
      tensor.setI(i, proto.int64_data(i));
    return true;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    if (proto.uint64_data_size() != n)
      return sizeError(proto.uint64_data_size());
    for (int64_t i = 0; i < n; ++i)
      tensor.setU(i, proto.uint64_data(i));
    return true;
  default:
    if (packedBits(tensor.scalar)) {
      // One packed byte per int32.
      std::string packed;
      for (int32_t v : proto.int32_data())
        packed.push_back((char)v);
      return unpackInto(packed, tensor, error);
    }
    // int32_data carries the narrower types and fp16/bf16/float8 bit
    // patterns.
    if (proto.int32_data_size() != n)
      return sizeError(proto.int32_data_size());
    for (int64_t i = 0; i < n; ++i) {
      int32_t v = proto.int32_data(i);
      if (tensor.scalar == Scalar::F16 || tensor.scalar == Scalar::BF16) {
        uint16_t bits = (uint16_t)v;
        std::memcpy(tensor.bytes.data() + 2 * i, &bits, 2);
      } else if (isNarrowFloat(tensor.scalar)) {
        tensor.bytes[i] = (uint8_t)v;
      } else {
        tensor.setI(i, v);
      }
    }
    return true;
  }
}

void collectGraphOps(const onnx::GraphProto &graph,
                     std::set<std::string> &ops) {
  for (const onnx::NodeProto &node : graph.node()) {
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    ops.insert(defaultDomain ? node.op_type()
                             : node.domain() + "." + node.op_type());
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        collectGraphOps(attr.g(), ops);
      for (const onnx::GraphProto &g : attr.graphs())
        collectGraphOps(g, ops);
    }
  }
}

} // namespace

bool cgc::interp::readTensorProto(const std::string &path, MLIRContext *context,
                                  HostTensor &tensor, std::string &name,
                                  std::string &error) {
  return catchingExceptions(error, "'" + path + "': ", [&] {
    std::string bytes;
    if (!readWholeFile(path, bytes, error))
      return false;
    onnx::TensorProto proto;
    if (!proto.ParseFromString(bytes)) {
      error = "'" + path + "' is not a TensorProto";
      return false;
    }
    name = proto.name();
    if (!convertProto(proto, context, tensor, error)) {
      error = "'" + path + "': " + error;
      return false;
    }
    return true;
  });
}

bool cgc::interp::writeTensorProto(const std::string &path,
                                   const HostTensor &tensor,
                                   const std::string &name,
                                   std::string &error) {
  return catchingExceptions(error, "", [&] {
    onnx::TensorProto proto;
    proto.set_name(name);
    proto.set_data_type(onnxCodeOf(tensor.scalar));
    for (int64_t d : tensor.shape)
      proto.add_dims(d);
    if (unsigned bits = packedBits(tensor.scalar))
      proto.set_raw_data(packSubByte(tensor.bytes, bits));
    else
      proto.set_raw_data(
          std::string(tensor.bytes.begin(), tensor.bytes.end()));
    std::string bytes;
    if (!proto.SerializeToString(&bytes)) {
      error = "cannot serialize '" + name + "'";
      return false;
    }
    return writeFileBytes(path, bytes, error);
  });
}

bool cgc::interp::collectModelOps(const std::string &path,
                                  std::set<std::string> &ops,
                                  std::string &error) {
  return catchingExceptions(error, "", [&] {
    std::string bytes;
    if (!readWholeFile(path, bytes, error))
      return false;
    onnx::ModelProto model;
    if (path.size() > 8 && path.compare(path.size() - 8, 8, ".onnxtxt") == 0) {
      onnx::OnnxParser parser(bytes.c_str());
      onnx::Common::Status status = parser.Parse(model);
      if (!status.IsOK()) {
        error = status.ErrorMessage();
        return false;
      }
    } else if (!model.ParseFromString(bytes)) {
      error = "'" + path + "' is not an ONNX model";
      return false;
    }
    collectGraphOps(model.graph(), ops);
    return true;
  });
}

bool cgc::interp::modelInputNames(const std::string &path,
                                  std::vector<std::string> &names,
                                  std::string &error) {
  return catchingExceptions(error, "", [&] {
    std::string bytes;
    if (!readWholeFile(path, bytes, error))
      return false;
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes)) {
      error = "'" + path + "' is not an ONNX model";
      return false;
    }
    std::set<std::string> initializers;
    for (const onnx::TensorProto &init : model.graph().initializer())
      initializers.insert(init.name());
    for (const onnx::ValueInfoProto &input : model.graph().input())
      if (!initializers.count(input.name()))
        names.push_back(input.name());
    return true;
  });
}
