//===- TrainingOps.cpp - the ops of ai.onnx.preview.training --------------===//
//
// Adagrad, Momentum (standard and Nesterov) and Adam of the
// ai.onnx.preview.training domain (version 1), each as the elementwise
// update it defines, applied to every (X, G, state...) group of its
// variadic inputs with the shared learning rate R and step count T. The
// step count enters as a float (T > 0 selects the bias corrections).
//
// Gradient becomes the backward ops of the graph's own ops from its `xs`
// to its `y` (cgc::ReverseMode, the gradient rules cgc --train uses),
// built where the node stands; the initializers it differentiates stay
// tensors of their own (not folded into constants) until then.
//
//===----------------------------------------------------------------------===//

#include "ImportHelpers.h"

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/Gradients.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

namespace {

/// The shared inputs R (learning rate) and T (step count, as a float and
/// as T > 0), and the groups of per-tensor inputs: `perGroup` inputs of
/// each of the n tensors, grouped input kind by input kind.
struct Optimizer {
  Value rate, step, started;
  int64_t tensors;
};

FailureOr<Optimizer> readOptimizer(NodeContext &ctx, int64_t perGroup,
                                   Type &element) {
  FailureOr<SmallVector<Value>> in = requiredInputs(ctx, ctx.numInputs());
  if (failed(in))
    return failure();
  int64_t n = ((int64_t)ctx.numInputs() - 2) / perGroup;
  if (n < 1 || 2 + n * perGroup != (int64_t)ctx.numInputs() ||
      (int64_t)ctx.numOutputs() > n * (perGroup - 1)) {
    ctx.error() << "expects R, T and " << perGroup
                << " inputs a tensor (grouped by kind), got "
                << ctx.numInputs() << " inputs";
    return failure();
  }
  element = tensorType((*in)[2]).getElementType();
  if (!isa<FloatType>(element)) {
    ctx.error() << "optimizes float tensors, got " << tensorType((*in)[2]);
    return failure();
  }
  FailureOr<Value> rate = castTo(ctx, (*in)[0], element),
                   step = castTo(ctx, (*in)[1], element);
  if (failed(rate) || failed(step) || failed(rate = reshapeTo(ctx, *rate, {})) ||
      failed(step = reshapeTo(ctx, *step, {})))
    return failure();
  FailureOr<Value> started =
      ctx.create1<GreaterOp>({*step, ctx.constScalar(0.0, element)});
  if (failed(started))
    return failure();
  return Optimizer{*rate, *step, *started, n};
}

/// Input `kind` (0: X, 1: G, 2...: states) of tensor i.
Value groupInput(NodeContext &ctx, const Optimizer &o, int64_t kind,
                 int64_t i) {
  return ctx.input(2 + kind * o.tensors + i);
}

/// norm_coefficient * X + G.
Value regularized(Arith &a, double norm, Value x, Value g) {
  return a.add(a.mul(a.c(norm), x), g);
}

Results importAdagrad(NodeContext &ctx) {
  Type element;
  FailureOr<Optimizer> o = readOptimizer(ctx, 3, element);
  if (failed(o))
    return failure();
  double decay = ctx.getFloat("decay_factor", 0.0),
         epsilon = ctx.getFloat("epsilon", 0.0),
         norm = ctx.getFloat("norm_coefficient", 0.0);
  Arith a(ctx, element);
  // r / (1 + T * decay_factor)
  Value rate = a.div(o->rate, a.add(a.c(1.0), a.mul(o->step, a.c(decay))));
  SmallVector<Value> xs, hs;
  for (int64_t i = 0; i < o->tensors; ++i) {
    Value x = groupInput(ctx, *o, 0, i), g = groupInput(ctx, *o, 1, i),
          h = groupInput(ctx, *o, 2, i);
    Value gr = regularized(a, norm, x, g);
    Value hNew = a.add(h, a.mul(gr, gr));
    Value scale = a.add(a.sqrt(hNew), a.c(epsilon));
    xs.push_back(a.sub(x, a.div(a.mul(rate, gr), scale)));
    hs.push_back(hNew);
  }
  if (!a.ok || ctx.hadAttributeError())
    return failure();
  llvm::append_range(xs, hs);
  return xs;
}

Results importMomentum(NodeContext &ctx) {
  Type element;
  FailureOr<Optimizer> o = readOptimizer(ctx, 3, element);
  if (failed(o))
    return failure();
  double alpha = ctx.getFloat("alpha", 0.0), beta = ctx.getFloat("beta", 0.0),
         norm = ctx.getFloat("norm_coefficient", 0.0);
  std::string mode = ctx.getString("mode", "standard");
  if (ctx.hadAttributeError())
    return failure();
  if (mode != "standard" && mode != "nesterov") {
    ctx.error() << "mode must be standard or nesterov, got '" << mode << "'";
    return failure();
  }
  Arith a(ctx, element);
  // The first step (T = 0) takes the whole gradient.
  Value betaNow = a.select(o->started, a.c(beta), a.c(1.0));
  SmallVector<Value> xs, vs;
  for (int64_t i = 0; i < o->tensors; ++i) {
    Value x = groupInput(ctx, *o, 0, i), g = groupInput(ctx, *o, 1, i),
          v = groupInput(ctx, *o, 2, i);
    Value gr = regularized(a, norm, x, g);
    Value vNew = a.add(a.mul(a.c(alpha), v), a.mul(betaNow, gr));
    Value direction =
        mode == "standard" ? vNew : a.add(gr, a.mul(a.c(alpha), vNew));
    xs.push_back(a.sub(x, a.mul(o->rate, direction)));
    vs.push_back(vNew);
  }
  if (!a.ok)
    return failure();
  llvm::append_range(xs, vs);
  return xs;
}

Results importAdam(NodeContext &ctx) {
  Type element;
  FailureOr<Optimizer> o = readOptimizer(ctx, 4, element);
  if (failed(o))
    return failure();
  double alpha = ctx.getFloat("alpha", 0.9), beta = ctx.getFloat("beta", 0.999),
         epsilon = ctx.getFloat("epsilon", 0.0),
         norm = ctx.getFloat("norm_coefficient", 0.0),
         normPost = ctx.getFloat("norm_coefficient_post", 0.0);
  if (ctx.hadAttributeError())
    return failure();
  Arith a(ctx, element);
  // From T > 0: r * sqrt(1 - beta^T) / (1 - alpha^T).
  Value alphaT = a.op<PowOp>({a.c(alpha), o->step}),
        betaT = a.op<PowOp>({a.c(beta), o->step});
  Value corrected = a.div(a.mul(o->rate, a.sqrt(a.sub(a.c(1.0), betaT))),
                          a.sub(a.c(1.0), alphaT));
  Value rate = a.select(o->started, corrected, o->rate);
  SmallVector<Value> xs, vs, hs;
  for (int64_t i = 0; i < o->tensors; ++i) {
    Value x = groupInput(ctx, *o, 0, i), g = groupInput(ctx, *o, 1, i),
          v = groupInput(ctx, *o, 2, i), h = groupInput(ctx, *o, 3, i);
    Value gr = regularized(a, norm, x, g);
    Value vNew = a.add(a.mul(a.c(alpha), v), a.mul(a.c(1.0 - alpha), gr));
    Value hNew =
        a.add(a.mul(a.c(beta), h), a.mul(a.c(1.0 - beta), a.mul(gr, gr)));
    Value scale = a.add(a.sqrt(hNew), a.c(epsilon));
    Value xNew = a.sub(x, a.mul(rate, a.div(vNew, scale)));
    xs.push_back(a.mul(a.c(1.0 - normPost), xNew));
    vs.push_back(vNew);
    hs.push_back(hNew);
  }
  if (!a.ok)
    return failure();
  llvm::append_range(xs, vs);
  llvm::append_range(xs, hs);
  return xs;
}

/// The tensors Gradient differentiates with respect to (`xs`), checked to
/// be its inputs in that order, then `zs`'s.
FailureOr<SmallVector<Value>> gradientSources(NodeContext &ctx) {
  std::optional<SmallVector<std::string>> xs = ctx.getStrings("xs"),
                                           zs = ctx.getStrings("zs");
  if (ctx.hadAttributeError())
    return failure();
  if (!xs || xs->empty()) {
    ctx.error() << "needs the attribute xs (the tensors to differentiate "
                   "with respect to)";
    return failure();
  }
  SmallVector<std::string> names(*xs);
  if (zs)
    llvm::append_range(names, *zs);
  if (ctx.numInputs() != names.size()) {
    ctx.error() << "has " << ctx.numInputs() << " inputs, but xs and zs name "
                << names.size() << " tensors";
    return failure();
  }
  if (ctx.numOutputs() > xs->size()) {
    ctx.error() << "has " << ctx.numOutputs() << " outputs, more than the "
                << xs->size() << " tensors of xs";
    return failure();
  }
  SmallVector<Value> sources;
  for (auto [i, name] : llvm::enumerate(names)) {
    if (ctx.node().input(i) != name) {
      ctx.error() << "input " << i << " is '" << ctx.node().input(i)
                  << "' where xs/zs name '" << name
                  << "': cgc differentiates the graph's own tensors, so "
                     "each input must be the tensor its name says";
      return failure();
    }
    if (i >= xs->size())
      continue;
    Value source = ctx.input(i);
    Operation *def = source ? source.getDefiningOp() : nullptr;
    if (!source || (def && isa<ConstantOp>(def) && !isInitializer(def))) {
      ctx.error() << "xs names '" << name
                  << "', a constant: differentiating with respect to it is "
                     "not supported (graph inputs, this graph's float "
                     "initializers and the values computed from them are)";
      return failure();
    }
    sources.push_back(source);
  }
  return sources;
}

bool isStaticFloat(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && isa<FloatType>(type.getElementType());
}

/// Gradient: d y / d x for each x of `xs` (for a y of several elements,
/// the gradient of their sum); zeros for an x that y does not depend on.
Results importGradient(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> sources = gradientSources(ctx);
  if (failed(sources))
    return failure();
  std::string yName = ctx.getString("y", "");
  if (ctx.hadAttributeError())
    return failure();
  Value y = yName.empty() ? Value() : ctx.graph().lookup(yName);
  if (!y) {
    ctx.error() << "y '" << yName
                << "' is not a tensor computed before this node";
    return failure();
  }
  SmallVector<Value> differentiated(*sources);
  differentiated.push_back(y);
  for (Value v : differentiated)
    if (!isStaticFloat(v) || tensorType(v).getNumElements() == 0) {
      ctx.error() << "differentiates non-empty float tensors of static "
                     "shape, got "
                  << v.getType();
      return failure();
    }
  ReverseMode reverse(*ctx.builder().getInsertionBlock(), *sources, y);
  for (Operation *op : reverse.activeOps())
    for (Value r : op->getResults())
      if (reverse.reaches(r) &&
          (!isStaticFloat(r) || tensorType(r).getNumElements() == 0)) {
        ctx.error() << "the gradient flows through node '" << nodeName(op)
                    << "', whose result " << r.getType()
                    << " is not a non-empty float tensor of static shape";
        return failure();
      }
  GradientBuilder g(ctx.builder(), ctx.loc());
  Operation *failedOp = nullptr;
  bool hasRule = false;
  if (failed(reverse.build(g, g.splat(1.0, tensorType(y)), failedOp,
                           hasRule))) {
    ctx.error() << "the gradient flows through node '" << nodeName(failedOp)
                << "' ('" << failedOp->getName().stripDialect() << "'), which "
                << (hasRule ? "could not be differentiated"
                            : "has no gradient rule (docs/training.md lists "
                              "the ops that have one)");
    return failure();
  }
  SmallVector<Value> grads;
  for (size_t i = 0; i < ctx.numOutputs(); ++i) {
    Value grad = reverse.gradient((*sources)[i]);
    grads.push_back(grad ? grad : g.zeros(tensorType((*sources)[i])));
  }
  return grads;
}

} // namespace

bool cgc::onnx_import::isGradientNode(const onnx::NodeProto &node) {
  return node.op_type() == "Gradient" &&
         node.domain() == "ai.onnx.preview.training";
}

llvm::StringSet<>
cgc::onnx_import::tensorsDifferentiatedByGradient(const onnx::GraphProto &graph) {
  llvm::StringSet<> names;
  for (const onnx::NodeProto &node : graph.node()) {
    if (!isGradientNode(node))
      continue;
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.name() == "xs")
        for (const std::string &name : attr.strings())
          names.insert(name);
  }
  return names;
}

void cgc::onnx_import::registerTrainingOps(ImporterTable &t) {
  auto add = importerAdder(t);
  add("ai.onnx.preview.training.Adagrad", importAdagrad,
      "elementwise update of every (X, G, H) with the decayed rate");
  add("ai.onnx.preview.training.Momentum", importMomentum,
      "elementwise update of every (X, G, V), standard or Nesterov");
  add("ai.onnx.preview.training.Adam", importAdam,
      "elementwise update of every (X, G, V, H) with the bias-corrected "
      "rate");
  add("ai.onnx.preview.training.Gradient", importGradient,
      "the backward ops of the graph's ops from xs to y, built at import "
      "(static shapes; ops with a gradient rule)");
}
