//===- Sharding.cpp - ONNX multi-device annotations (IR 11) --------------===//
//
// IR 11 lets a model describe device configurations (ModelProto field 26,
// DeviceConfigurationProto) and, per node, how each of its inputs and
// outputs is sharded over the devices of one (NodeProto field 10,
// NodeDeviceConfigurationProto). The libonnx cgc builds against (1.12)
// predates these messages, so protobuf keeps them as unknown fields; this
// file decodes them by their field numbers.
//
// What cgc takes: the shardings of weights (initializers), each along one
// axis into as many parts as the configuration has devices. They become
// cgc.devices on the module and cgc.shard_axis on the weights' constants;
// --cgc-tensor-parallel splits exactly the MatMul and Gemm products whose
// weights say so, and checks that every annotated weight (a bias too) is
// cut as it says, or refuses by name. The shardings of computed
// values are implied by the weights' (cgc derives them, and every rank's
// outputs are whole); they are checked for form only. What cgc cannot
// take is an error naming the node: pipeline stages, replication groups,
// placement on some of the devices, a tensor sharded along several axes or
// into another number of parts, a weight sharded two ways.
//
//===----------------------------------------------------------------------===//

#include "ImporterCore.h"

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"

#include <google/protobuf/unknown_field_set.h>

#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;
using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

namespace {

// Field numbers of onnx.proto (IR 11).
constexpr int kModelConfiguration = 26;
constexpr int kNodeDeviceConfigurations = 10;

struct SimpleSharding {
  int64_t shards = 0;
};
struct ShardedDim {
  int64_t axis = 0;
  std::vector<SimpleSharding> simple;
};
struct ShardingSpec {
  std::string tensor;
  std::vector<int64_t> devices;
  bool deviceGroups = false;
  std::vector<ShardedDim> dims;
};
struct NodeConfiguration {
  std::string configuration;
  std::vector<ShardingSpec> specs;
  bool pipelineStage = false;
};
struct DeviceConfiguration {
  std::string name;
  int64_t devices = 0;
};

/// Decodes a varint at `pos` of `bytes` (a packed repeated field).
bool readVarint(const std::string &bytes, size_t &pos, uint64_t *value) {
  *value = 0;
  for (int shift = 0; pos < bytes.size() && shift < 64; shift += 7) {
    uint8_t byte = static_cast<uint8_t>(bytes[pos++]);
    *value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return true;
  }
  return false;
}

/// The fields of a nested message held as bytes; false when malformed.
bool parseNested(const UnknownField &field, UnknownFieldSet *set) {
  return field.type() == UnknownField::TYPE_LENGTH_DELIMITED &&
         set->ParseFromString(field.length_delimited());
}

/// A repeated int64 field, packed or not.
bool appendInts(const UnknownField &field, std::vector<int64_t> *out) {
  if (field.type() == UnknownField::TYPE_VARINT) {
    out->push_back(static_cast<int64_t>(field.varint()));
    return true;
  }
  if (field.type() != UnknownField::TYPE_LENGTH_DELIMITED)
    return false;
  const std::string &bytes = field.length_delimited();
  for (size_t pos = 0; pos < bytes.size();) {
    uint64_t v = 0;
    if (!readVarint(bytes, pos, &v))
      return false;
    out->push_back(static_cast<int64_t>(v));
  }
  return true;
}

/// Calls `fn` with the fields of each nested message numbered `number` in
/// `fields`; false when one is malformed or `fn` says so.
template <typename Fn>
bool forEachMessage(const UnknownFieldSet &fields, int number, Fn fn) {
  for (int i = 0; i < fields.field_count(); ++i) {
    if (fields.field(i).number() != number)
      continue;
    UnknownFieldSet set;
    if (!parseNested(fields.field(i), &set) || !fn(set))
      return false;
  }
  return true;
}

bool parseShardedDim(const UnknownField &field, ShardedDim *dim) {
  UnknownFieldSet set;
  if (!parseNested(field, &set))
    return false;
  for (int i = 0; i < set.field_count(); ++i) {
    const UnknownField &f = set.field(i);
    if (f.number() == 1 && f.type() == UnknownField::TYPE_VARINT)
      dim->axis = static_cast<int64_t>(f.varint());
  }
  return forEachMessage(set, 2, [&](const UnknownFieldSet &simple) {
    SimpleSharding s;
    for (int k = 0; k < simple.field_count(); ++k)
      if (simple.field(k).number() == 3 &&
          simple.field(k).type() == UnknownField::TYPE_VARINT)
        s.shards = static_cast<int64_t>(simple.field(k).varint());
    dim->simple.push_back(s);
    return true;
  });
}

bool parseSpec(const UnknownField &field, ShardingSpec *spec) {
  UnknownFieldSet set;
  if (!parseNested(field, &set))
    return false;
  for (int i = 0; i < set.field_count(); ++i) {
    const UnknownField &f = set.field(i);
    switch (f.number()) {
    case 1:
      if (f.type() != UnknownField::TYPE_LENGTH_DELIMITED)
        return false;
      spec->tensor = f.length_delimited();
      break;
    case 2:
      if (!appendInts(f, &spec->devices))
        return false;
      break;
    case 3:
      spec->deviceGroups = true;
      break;
    case 4: {
      ShardedDim dim;
      if (!parseShardedDim(f, &dim))
        return false;
      spec->dims.push_back(dim);
      break;
    }
    default:
      break;
    }
  }
  return true;
}

/// The node's device configurations; false when one is malformed.
bool nodeConfigurations(const onnx::NodeProto &node,
                        std::vector<NodeConfiguration> *out) {
  return forEachMessage(
      node.unknown_fields(), kNodeDeviceConfigurations,
      [&](const UnknownFieldSet &set) {
        NodeConfiguration config;
        for (int k = 0; k < set.field_count(); ++k) {
          const UnknownField &f = set.field(k);
          if (f.number() == 1 &&
              f.type() == UnknownField::TYPE_LENGTH_DELIMITED) {
            config.configuration = f.length_delimited();
          } else if (f.number() == 2) {
            ShardingSpec spec;
            if (!parseSpec(f, &spec))
              return false;
            config.specs.push_back(std::move(spec));
          } else if (f.number() == 3) {
            config.pipelineStage = true;
          }
        }
        out->push_back(std::move(config));
        return true;
      });
}

/// The model's device configurations; false when one is malformed.
bool modelConfigurations(const onnx::ModelProto &model,
                         std::vector<DeviceConfiguration> *out) {
  return forEachMessage(
      model.unknown_fields(), kModelConfiguration,
      [&](const UnknownFieldSet &set) {
        DeviceConfiguration config;
        for (int k = 0; k < set.field_count(); ++k) {
          const UnknownField &f = set.field(k);
          if (f.number() == 1 &&
              f.type() == UnknownField::TYPE_LENGTH_DELIMITED)
            config.name = f.length_delimited();
          else if (f.number() == 2 && f.type() == UnknownField::TYPE_VARINT)
            config.devices = static_cast<int32_t>(f.varint());
        }
        out->push_back(std::move(config));
        return true;
      });
}

std::string describeNode(const onnx::NodeProto &node) {
  return "node '" + node.name() + "' (" + node.op_type() + ")";
}

/// Applies one node's sharding specs under `config`: the weights' axes on
/// their constants (`axes` remembers them for conflicts).
LogicalResult applySpecs(GraphImporter &importer, const onnx::NodeProto &node,
                         const NodeConfiguration &nodeConfig,
                         const DeviceConfiguration &config,
                         llvm::StringMap<int64_t> &axes) {
  std::string where = describeNode(node);
  if (nodeConfig.pipelineStage) {
    importer.error() << where << " has a pipeline stage: cgc splits a model "
                     << "by tensor parallelism only";
    return failure();
  }
  for (const ShardingSpec &spec : nodeConfig.specs) {
    auto names = [&](const auto &list) {
      return llvm::is_contained(list, spec.tensor);
    };
    std::string what = where + ": the sharding of '" + spec.tensor + "'";
    if (!names(node.input()) && !names(node.output())) {
      importer.error() << what << " names no input or output of the node";
      return failure();
    }
    if (spec.deviceGroups) {
      importer.error() << what << " replicates over device groups "
                       << "(index_to_device_group_map), which cgc does not "
                       << "take";
      return failure();
    }
    if (!spec.devices.empty()) {
      std::vector<int64_t> sorted = spec.devices;
      llvm::sort(sorted);
      for (int64_t d = 0; d < config.devices; ++d)
        if ((size_t)d >= sorted.size() || sorted[d] != d ||
            sorted.size() != (size_t)config.devices) {
          importer.error() << what << " places it on some of the "
                           << config.devices << " devices of '" << config.name
                           << "': cgc puts every tensor on every device";
          return failure();
        }
    }
    if (spec.dims.empty())
      continue; // replicated
    if (spec.dims.size() > 1 || spec.dims[0].simple.size() != 1) {
      importer.error() << what << " shards several axes (or one axis in "
                       << "several steps): cgc shards one axis";
      return failure();
    }
    int64_t shards = spec.dims[0].simple[0].shards;
    if (shards != config.devices) {
      importer.error() << what << " cuts it into " << shards
                       << " parts, but '" << config.name << "' has "
                       << config.devices << " devices";
      return failure();
    }
    Value value = importer.lookup(spec.tensor);
    auto constant = value ? value.getDefiningOp<ConstantOp>() : ConstantOp();
    if (!constant)
      continue; // a computed value: its split follows from the weights'
    int64_t rank = cast<ShapedType>(constant.getType()).getRank();
    int64_t axis = spec.dims[0].axis < 0 ? spec.dims[0].axis + rank
                                         : spec.dims[0].axis;
    if (axis < 0 || axis >= rank) {
      importer.error() << what << " shards axis " << spec.dims[0].axis
                       << " of a tensor of rank " << rank;
      return failure();
    }
    auto [it, fresh] = axes.try_emplace(spec.tensor, axis);
    if (!fresh && it->second != axis) {
      importer.error() << what << " shards axis " << axis
                       << ", but another annotation shards it along axis "
                       << it->second;
      return failure();
    }
    setShardAxis(constant, axis);
  }
  return success();
}

/// The configuration the nodes' annotations refer to: the one named by
/// `wanted`, or the model's only one.
FailureOr<DeviceConfiguration>
chooseConfiguration(GraphImporter &importer,
                    const std::vector<DeviceConfiguration> &configs,
                    StringRef wanted) {
  for (const DeviceConfiguration &config : configs)
    if (!wanted.empty() && config.name == wanted)
      return config;
  if (!wanted.empty() || configs.size() != 1) {
    std::string names;
    for (const DeviceConfiguration &config : configs)
      names += (names.empty() ? "'" : ", '") + config.name + "'";
    if (wanted.empty())
      importer.error() << "the model describes " << configs.size()
                       << " device configurations (" << names
                       << "): choose one with --device-configuration=NAME";
    else
      importer.error() << "--device-configuration=" << wanted
                       << " names none of the model's device configurations"
                       << (names.empty() ? std::string(" (it has none)")
                                         : " (" + names + ")");
    return failure();
  }
  return configs[0];
}

} // namespace

LogicalResult cgc::onnx_import::importShardingAnnotations(
    GraphImporter &importer, const onnx::ModelProto &model, ModuleOp module,
    StringRef wanted) {
  std::vector<DeviceConfiguration> configs;
  if (!modelConfigurations(model, &configs)) {
    importer.error() << "the model's device configurations (field 26) are "
                     << "malformed";
    return failure();
  }
  if (configs.empty() && wanted.empty())
    return success();
  FailureOr<DeviceConfiguration> config =
      chooseConfiguration(importer, configs, wanted);
  if (failed(config))
    return failure();
  if (config->devices < 1 || config->devices > kMaxRanks) {
    importer.error() << "device configuration '" << config->name << "' has "
                     << config->devices << " devices (cgc takes 1 to "
                     << kMaxRanks << ")";
    return failure();
  }
  llvm::StringMap<int64_t> axes;
  for (const onnx::NodeProto &node : model.graph().node()) {
    std::vector<NodeConfiguration> nodeConfigs;
    if (!nodeConfigurations(node, &nodeConfigs)) {
      importer.error() << describeNode(node) << ": its device configurations "
                       << "(field 10) are malformed";
      return failure();
    }
    for (const NodeConfiguration &nodeConfig : nodeConfigs) {
      if (nodeConfig.configuration != config->name)
        continue;
      if (failed(applySpecs(importer, node, nodeConfig, *config, axes)))
        return failure();
    }
  }
  if (config->devices > 1 && !axes.empty())
    setDevices(module, config->devices);
  else // one device: nothing to split
    module.walk([](ConstantOp constant) { clearShardAxis(constant); });
  return success();
}
