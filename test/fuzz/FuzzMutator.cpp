//===- FuzzMutator.cpp - structure-aware mutations of ONNX models ---------===//
//
// libFuzzer's custom mutator for cgc-fuzz-proto. An input that parses as a
// ModelProto gets one to three mutations that keep it a well-formed
// protobuf but make it a hostile model: dims changed to 0, -1 or huge
// values, attributes of the wrong type or with extreme values, op types
// swapped, node inputs dropped, duplicated or renamed, bits flipped in
// raw_data, external data pointed elsewhere, opset and IR versions
// changed, nodes wrapped into nested If subgraphs. One mutation in eight,
// and every input that does not parse, goes to libFuzzer's byte mutator, so
// the wire format is still fuzzed. The crossover splices nodes, initializers
// and inputs of two models.
//
//===----------------------------------------------------------------------===//

#include "cgc/Import/ONNXImporter.h"

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size,
                                   size_t maxSize);

namespace {

using Rng = std::mt19937_64;

size_t pick(Rng &rng, size_t n) { return n ? rng() % n : 0; }
bool oneIn(Rng &rng, unsigned n) { return rng() % n == 0; }

int64_t interestingInt(Rng &rng) {
  static const int64_t values[] = {
      0, 1, 2, 3, 4, -1, -2, 7, 16, 255, 256, 65535, 65536,
      std::numeric_limits<int32_t>::max(),
      int64_t(std::numeric_limits<int32_t>::max()) + 1,
      std::numeric_limits<int32_t>::min(), int64_t(1) << 32,
      int64_t(1) << 40, int64_t(1) << 62,
      std::numeric_limits<int64_t>::max(),
      std::numeric_limits<int64_t>::min(),
      std::numeric_limits<int64_t>::min() + 1};
  if (oneIn(rng, 4))
    return (int64_t)rng();
  return values[pick(rng, std::size(values))];
}

float interestingFloat(Rng &rng) {
  static const float values[] = {
      0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-9f, 1e30f, -1e30f,
      std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(),
      std::numeric_limits<float>::quiet_NaN(),
      std::numeric_limits<float>::denorm_min(),
      std::numeric_limits<float>::max(), 9.3e18f, -9.3e18f};
  return values[pick(rng, std::size(values))];
}

std::string interestingName(Rng &rng) {
  static const char *names[] = {"",  "x", "y", "w", "cond", "unknown_value",
                                "a", "b", "0", " ", "\xff",  "then"};
  return names[pick(rng, std::size(names))];
}

/// Every graph of the model: the main graph and all subgraphs.
void collectGraphs(onnx::GraphProto *graph,
                   std::vector<onnx::GraphProto *> &graphs) {
  graphs.push_back(graph);
  for (onnx::NodeProto &node : *graph->mutable_node())
    for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
      if (attr.has_g())
        collectGraphs(attr.mutable_g(), graphs);
      for (onnx::GraphProto &g : *attr.mutable_graphs())
        collectGraphs(&g, graphs);
    }
}

/// Every value name used or defined in `graph` (not its subgraphs).
std::vector<std::string> valueNames(const onnx::GraphProto &graph) {
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto &v : graph.input())
    names.push_back(v.name());
  for (const onnx::TensorProto &t : graph.initializer())
    names.push_back(t.name());
  for (const onnx::NodeProto &n : graph.node())
    for (const std::string &out : n.output())
      names.push_back(out);
  return names;
}

std::string someName(Rng &rng, const onnx::GraphProto &graph) {
  std::vector<std::string> names = valueNames(graph);
  if (names.empty() || oneIn(rng, 6))
    return interestingName(rng);
  return names[pick(rng, names.size())];
}

onnx::NodeProto *someNode(Rng &rng, onnx::GraphProto &graph,
                          int *index = nullptr) {
  if (graph.node_size() == 0)
    return nullptr;
  int i = (int)pick(rng, graph.node_size());
  if (index)
    *index = i;
  return graph.mutable_node(i);
}

/// A tensor type's shape, or null for non-tensor values.
onnx::TensorShapeProto *someShape(Rng &rng, onnx::GraphProto &graph) {
  std::vector<onnx::ValueInfoProto *> infos;
  for (onnx::ValueInfoProto &v : *graph.mutable_input())
    infos.push_back(&v);
  for (onnx::ValueInfoProto &v : *graph.mutable_output())
    infos.push_back(&v);
  for (onnx::ValueInfoProto &v : *graph.mutable_value_info())
    infos.push_back(&v);
  if (infos.empty())
    return nullptr;
  onnx::ValueInfoProto *info = infos[pick(rng, infos.size())];
  if (oneIn(rng, 6)) {
    // Element type, including unsupported and invalid ones.
    info->mutable_type()->mutable_tensor_type()->set_elem_type(
        (int32_t)pick(rng, 24) - 1);
    return nullptr;
  }
  if (oneIn(rng, 12)) {
    info->mutable_type()->mutable_tensor_type()->clear_shape();
    return nullptr;
  }
  return info->mutable_type()->mutable_tensor_type()->mutable_shape();
}

void mutateDims(Rng &rng, onnx::GraphProto &graph) {
  if (graph.initializer_size() && oneIn(rng, 2)) {
    onnx::TensorProto *t =
        graph.mutable_initializer(pick(rng, graph.initializer_size()));
    if (t->dims_size() && !oneIn(rng, 4))
      t->set_dims(pick(rng, t->dims_size()), interestingInt(rng));
    else if (oneIn(rng, 2))
      t->add_dims(interestingInt(rng));
    else
      t->clear_dims();
    return;
  }
  onnx::TensorShapeProto *shape = someShape(rng, graph);
  if (!shape)
    return;
  switch (pick(rng, 4)) {
  case 0:
    shape->add_dim()->set_dim_value(interestingInt(rng));
    break;
  case 1:
    if (shape->dim_size())
      shape->mutable_dim()->RemoveLast();
    break;
  case 2:
    if (shape->dim_size())
      shape->mutable_dim(pick(rng, shape->dim_size()))
          ->set_dim_param(oneIn(rng, 2) ? "N" : "");
    break;
  default:
    if (shape->dim_size())
      shape->mutable_dim(pick(rng, shape->dim_size()))
          ->set_dim_value(interestingInt(rng));
    break;
  }
}

void randomTensor(Rng &rng, onnx::TensorProto &t) {
  t.Clear();
  t.set_data_type((int32_t)pick(rng, 17));
  size_t rank = pick(rng, 3);
  int64_t count = 1;
  for (size_t i = 0; i < rank; ++i) {
    int64_t dim = oneIn(rng, 8) ? interestingInt(rng) : (int64_t)pick(rng, 5);
    t.add_dims(dim);
    count *= dim >= 0 && dim < 5 ? dim : 1;
  }
  std::string raw;
  size_t bytes = (size_t)count * (1 + pick(rng, 8));
  for (size_t i = 0; i < bytes; ++i)
    raw.push_back((char)rng());
  t.set_raw_data(raw);
}

void mutateAttribute(Rng &rng, onnx::GraphProto &graph) {
  onnx::NodeProto *node = someNode(rng, graph);
  if (!node)
    return;
  static const char *names[] = {
      "axis", "axes", "perm", "shape", "to", "keepdims", "alpha", "beta",
      "epsilon", "group", "kernel_shape", "pads", "strides", "dilations",
      "mode", "value", "value_int", "value_ints", "value_float", "transA",
      "transB", "auto_pad", "ceil_mode", "split", "starts", "ends", "k",
      "largest", "sorted", "allowzero", "then_branch", "else_branch", "body",
      "count_include_pad", "p", "blocksize", "noop_with_empty_axes"};
  onnx::AttributeProto *attr;
  int index;
  if (node->attribute_size() == 0 || oneIn(rng, 4)) {
    index = node->attribute_size();
    attr = node->add_attribute();
    attr->set_name(names[pick(rng, std::size(names))]);
    attr->set_type((onnx::AttributeProto::AttributeType)pick(rng, 15));
  } else {
    index = (int)pick(rng, node->attribute_size());
    attr = node->mutable_attribute(index);
  }
  switch (pick(rng, 10)) {
  case 0: // The declared type (protobuf asserts that it is a known one).
    attr->set_type((onnx::AttributeProto::AttributeType)pick(rng, 15));
    break;
  case 1:
    attr->set_i(interestingInt(rng));
    break;
  case 2:
    attr->set_f(interestingFloat(rng));
    break;
  case 3:
    if (attr->ints_size() && oneIn(rng, 2))
      attr->set_ints(pick(rng, attr->ints_size()), interestingInt(rng));
    else
      attr->add_ints(interestingInt(rng));
    break;
  case 4:
    if (attr->ints_size() && oneIn(rng, 2))
      attr->mutable_ints()->RemoveLast();
    else
      attr->add_floats(interestingFloat(rng));
    break;
  case 5: {
    static const char *strings[] = {"", "NOTSET", "SAME_UPPER", "VALID",
                                    "nearest", "linear", "DCR", "CRD",
                                    "constant", "reflect", "edge", "\xff"};
    attr->set_s(strings[pick(rng, std::size(strings))]);
    break;
  }
  case 6:
    randomTensor(rng, *attr->mutable_t());
    break;
  case 7: // A copy of the enclosing graph as a subgraph.
    if (graph.ByteSizeLong() < 4096) {
      onnx::GraphProto copy = graph;
      *attr->mutable_g() = std::move(copy);
    }
    break;
  case 8:
    node->mutable_attribute()->DeleteSubrange(index, 1);
    break;
  default:
    attr->Clear();
    attr->set_name(names[pick(rng, std::size(names))]);
    break;
  }
}

void mutateOpType(Rng &rng, onnx::GraphProto &graph) {
  onnx::NodeProto *node = someNode(rng, graph);
  if (!node)
    return;
  static const std::vector<std::string> ops = cgc::supportedONNXOps();
  if (oneIn(rng, 10)) {
    static const char *domains[] = {"", "ai.onnx", "com.microsoft",
                                    "ai.onnx.ml", "\xff"};
    node->set_domain(domains[pick(rng, std::size(domains))]);
  } else if (oneIn(rng, 20)) {
    node->set_op_type(oneIn(rng, 2) ? "NotAnOp" : "");
  } else {
    node->set_op_type(ops[pick(rng, ops.size())]);
  }
}

void mutateInputs(Rng &rng, onnx::GraphProto &graph) {
  int index;
  onnx::NodeProto *node = someNode(rng, graph, &index);
  if (!node)
    return;
  switch (pick(rng, 8)) {
  case 0:
    if (node->input_size())
      node->mutable_input()->DeleteSubrange(pick(rng, node->input_size()), 1);
    break;
  case 1:
    if (node->input_size())
      node->add_input(node->input(pick(rng, node->input_size())));
    break;
  case 2:
    if (node->input_size())
      node->set_input(pick(rng, node->input_size()), someName(rng, graph));
    break;
  case 3:
    node->add_input(someName(rng, graph));
    break;
  case 4: // Outputs: renamed onto an existing value, dropped, emptied.
    if (node->output_size())
      node->set_output(pick(rng, node->output_size()), someName(rng, graph));
    else
      node->add_output(someName(rng, graph));
    break;
  case 5: // Whole nodes: dropped, duplicated, moved.
    if (oneIn(rng, 2)) {
      graph.mutable_node()->DeleteSubrange(index, 1);
    } else {
      onnx::NodeProto copy = *node;
      *graph.add_node() = std::move(copy);
    }
    break;
  case 6: // Graph inputs, outputs and initializers.
    if (oneIn(rng, 2) && graph.input_size())
      graph.mutable_input()->DeleteSubrange(pick(rng, graph.input_size()), 1);
    else if (oneIn(rng, 2) && graph.initializer_size())
      graph.mutable_initializer()->DeleteSubrange(
          pick(rng, graph.initializer_size()), 1);
    else if (graph.output_size())
      graph.mutable_output(pick(rng, graph.output_size()))
          ->set_name(someName(rng, graph));
    break;
  default:
    if (graph.input_size())
      *graph.add_input() = graph.input(pick(rng, graph.input_size()));
    break;
  }
}

void mutateData(Rng &rng, onnx::GraphProto &graph) {
  if (graph.initializer_size() == 0)
    return;
  onnx::TensorProto *t =
      graph.mutable_initializer(pick(rng, graph.initializer_size()));
  switch (pick(rng, 6)) {
  case 0: { // Bit flips in raw_data.
    std::string *raw = t->mutable_raw_data();
    if (raw->empty())
      break;
    for (int i = 0, n = 1 + (int)pick(rng, 4); i < n; ++i)
      (*raw)[pick(rng, raw->size())] ^= (char)(1u << pick(rng, 8));
    break;
  }
  case 1: { // Truncated or extended raw_data.
    std::string *raw = t->mutable_raw_data();
    if (!raw->empty() && oneIn(rng, 2))
      raw->resize(pick(rng, raw->size()));
    else
      raw->append(1 + pick(rng, 8), (char)rng());
    break;
  }
  case 2:
    t->set_data_type((int32_t)pick(rng, 24) - 1);
    break;
  case 3: // Typed fields instead of raw_data.
    t->clear_raw_data();
    for (int i = 0, n = (int)pick(rng, 6); i < n; ++i) {
      t->add_float_data(interestingFloat(rng));
      t->add_int64_data(interestingInt(rng));
      t->add_int32_data((int32_t)interestingInt(rng));
    }
    break;
  case 4: { // External data, inside and outside the model folder.
    static const char *locations[] = {
        "weights.bin", "sub/w.bin", "sub/../weights.bin", "../weights.bin",
        "/etc/passwd", "missing.bin", "", "sub", ".", "weights.bin/x"};
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    t->clear_external_data();
    auto add = [&](const char *key, const std::string &value) {
      onnx::StringStringEntryProto *e = t->add_external_data();
      e->set_key(key);
      e->set_value(value);
    };
    add("location", locations[pick(rng, std::size(locations))]);
    auto number = [&] {
      return std::to_string(oneIn(rng, 2) ? interestingInt(rng)
                                          : (int64_t)pick(rng, 64));
    };
    if (!oneIn(rng, 3))
      add("offset", number());
    if (!oneIn(rng, 3))
      add("length", oneIn(rng, 8) ? std::string("12abc") : number());
    break;
  }
  default:
    randomTensor(rng, *t);
    t->set_name(someName(rng, graph));
    break;
  }
}

void mutateVersions(Rng &rng, onnx::ModelProto &model) {
  static const int64_t versions[] = {-1, 0, 1, 5, 6, 7, 8, 9, 10, 11, 12,
                                     13, 14, 15, 16, 17, 18, 19, 20, 21,
                                     22, 23, 1000};
  switch (pick(rng, 4)) {
  case 0:
    model.set_ir_version(versions[pick(rng, std::size(versions))]);
    break;
  case 1:
    if (model.opset_import_size())
      model.mutable_opset_import(pick(rng, model.opset_import_size()))
          ->set_version(versions[pick(rng, std::size(versions))]);
    break;
  case 2: {
    onnx::OperatorSetIdProto *opset = model.add_opset_import();
    opset->set_domain(oneIn(rng, 2) ? "" : "com.microsoft");
    opset->set_version(versions[pick(rng, std::size(versions))]);
    break;
  }
  default:
    if (model.opset_import_size())
      model.mutable_opset_import()->DeleteSubrange(
          pick(rng, model.opset_import_size()), 1);
    break;
  }
}

/// Moves a node into the then branch of a new If node (its else branch is
/// a copy), so the node's inputs come from an enclosing graph.
void wrapInIf(Rng &rng, onnx::GraphProto &graph) {
  onnx::NodeProto *node = someNode(rng, graph);
  if (!node || node->output_size() == 0)
    return;
  onnx::NodeProto inner = *node;
  onnx::NodeProto wrapper;
  wrapper.set_op_type("If");
  wrapper.add_input(someName(rng, graph));
  onnx::GraphProto branch;
  branch.set_name("wrapped");
  *branch.add_node() = inner;
  for (const std::string &out : inner.output()) {
    wrapper.add_output(out);
    onnx::ValueInfoProto *info = branch.add_output();
    info->set_name(out);
    onnx::TypeProto::Tensor *tensor =
        info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
  }
  for (const char *name : {"then_branch", "else_branch"}) {
    onnx::AttributeProto *attr = wrapper.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::GRAPH);
    *attr->mutable_g() = branch;
  }
  *node = wrapper;
}

void mutateModel(Rng &rng, onnx::ModelProto &model) {
  std::vector<onnx::GraphProto *> graphs;
  collectGraphs(model.mutable_graph(), graphs);
  onnx::GraphProto &graph = *graphs[pick(rng, graphs.size())];
  switch (pick(rng, 8)) {
  case 0: mutateDims(rng, graph); break;
  case 1: mutateAttribute(rng, graph); break;
  case 2: mutateOpType(rng, graph); break;
  case 3: mutateInputs(rng, graph); break;
  case 4: mutateData(rng, graph); break;
  case 5: mutateVersions(rng, model); break;
  case 6: wrapInIf(rng, graph); break;
  default: mutateInputs(rng, graph); break;
  }
}

bool parse(const uint8_t *data, size_t size, onnx::ModelProto &model) {
  return size <= (size_t)std::numeric_limits<int>::max() &&
         model.ParseFromArray(data, (int)size) && model.has_graph();
}

size_t store(const onnx::ModelProto &model, uint8_t *data, size_t maxSize) {
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.size() > maxSize)
    return 0;
  memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed) {
  Rng rng(seed);
  onnx::ModelProto model;
  if (oneIn(rng, 8) || !parse(data, size, model))
    return LLVMFuzzerMutate(data, size, maxSize);
  for (int i = 0, n = 1 + (int)pick(rng, 3); i < n; ++i)
    mutateModel(rng, model);
  size_t newSize = store(model, data, maxSize);
  return newSize ? newSize : LLVMFuzzerMutate(data, size, maxSize);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1,
                                            size_t size1,
                                            const uint8_t *data2,
                                            size_t size2, uint8_t *out,
                                            size_t maxOutSize,
                                            unsigned int seed) {
  Rng rng(seed);
  onnx::ModelProto first, second;
  if (!parse(data1, size1, first) || !parse(data2, size2, second))
    return 0;
  onnx::GraphProto *to = first.mutable_graph();
  const onnx::GraphProto &from = second.graph();
  for (const onnx::NodeProto &node : from.node())
    if (oneIn(rng, 2))
      *to->add_node() = node;
  for (const onnx::TensorProto &init : from.initializer())
    if (oneIn(rng, 2))
      *to->add_initializer() = init;
  for (const onnx::ValueInfoProto &input : from.input())
    if (oneIn(rng, 2))
      *to->add_input() = input;
  if (from.output_size() && oneIn(rng, 2))
    *to->add_output() = from.output(pick(rng, from.output_size()));
  return store(first, out, maxOutSize);
}
