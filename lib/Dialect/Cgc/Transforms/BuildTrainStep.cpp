//===- BuildTrainStep.cpp - an inference program becomes a training step --===//
//
// `cgc --train`: the imported forward program becomes one training step in
// the same dialect, so the rest of the pipeline partitions, fuses and plans
// it like inference:
//
//   @main(inputs..., label, state...) -> (loss, updated state...)
//
// The trainable initializers become state arguments (`cgc.state` holds the
// initial value), the loss is appended after the forward ops, then the
// backward ops (each op's gradient rule, DifferentiableOpInterface, in
// reverse program order, gradients of values with several uses summed), then
// the optimizer's updates. Each updated tensor is a result whose
// `cgc.updates` names the state argument it replaces; the optimizer's own
// state (momentum, Adam's moments, the step count) is state too, starting at
// zero. A running statistic (training BatchNormalization's mean and
// variance, marked by the importer) is state that each forward pass updates
// and no gradient reaches. With `optimizer=none` the results are the loss and
// the gradients. Ops nothing reads are swept at the end.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"
#include "cgc/Dialect/Cgc/IR/Gradients.h"
#include "cgc/Dialect/Cgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

namespace cgc {
#define GEN_PASS_DEF_CGCBUILDTRAINSTEP
#include "cgc/Dialect/Cgc/Transforms/Passes.h.inc"
} // namespace cgc

using namespace mlir;
using namespace cgc;

namespace {

/// `--optimizer=KIND[:key=value,...]`, with PyTorch's defaults.
struct OptimizerSpec {
  std::string kind; ///< sgd, adamw or none
  double lr = 0;
  double momentum = 0;
  double weightDecay = 0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  /// The learning-rate schedule: `warmup` steps rising linearly from 0,
  /// then `decay` (none, linear or cosine) to 0 at `totalSteps`.
  double warmup = 0, totalSteps = 0;
  std::string decay = "none";
  /// Micro-batches whose gradients are averaged into one update.
  double accumulate = 1;

  bool scheduled() const { return warmup > 0 || decay != "none"; }
};

FailureOr<OptimizerSpec> parseOptimizer(StringRef text, std::string &error) {
  OptimizerSpec spec;
  auto [kind, rest] = text.split(':');
  spec.kind = kind.str();
  if (kind == "sgd") {
    spec.lr = 0.01;
  } else if (kind == "adamw") {
    spec.lr = 1e-3;
    spec.weightDecay = 0.01;
  } else if (kind != "none") {
    error = "optimizer '" + kind.str() + "' is none of sgd, adamw, none";
    return failure();
  }
  SmallVector<StringRef> settings;
  if (!rest.empty())
    rest.split(settings, ',');
  for (StringRef setting : settings) {
    auto [key, value] = setting.split('=');
    auto number = [&](StringRef text, double &out) {
      if (text.trim().getAsDouble(out)) {
        error = "optimizer setting '" + setting.str() + "': '" +
                text.str() + "' is not a number";
        return false;
      }
      return true;
    };
    bool ok = true;
    if (key == "lr")
      ok = number(value, spec.lr);
    else if (key == "momentum" && kind == "sgd")
      ok = number(value, spec.momentum);
    else if (key == "weight_decay" && kind != "none")
      ok = number(value, spec.weightDecay);
    else if (key == "eps" && kind == "adamw")
      ok = number(value, spec.eps);
    else if (key == "betas" && kind == "adamw") {
      auto [b1, b2] = value.split('/');
      ok = number(b1, spec.beta1) && number(b2, spec.beta2);
    } else if (key == "warmup" && kind != "none")
      ok = number(value, spec.warmup);
    else if (key == "total_steps" && kind != "none")
      ok = number(value, spec.totalSteps);
    else if (key == "accumulate" && kind != "none")
      ok = number(value, spec.accumulate);
    else if (key == "decay" && kind != "none") {
      spec.decay = value.trim().str();
      if (spec.decay != "none" && spec.decay != "linear" &&
          spec.decay != "cosine") {
        error = "optimizer setting 'decay': '" + spec.decay +
                "' is none of none, linear, cosine";
        return failure();
      }
    } else {
      StringRef own = kind == "sgd"     ? "lr, momentum, weight_decay, "
                      : kind == "adamw" ? "lr, betas (B1/B2), eps, "
                                          "weight_decay, "
                                        : "";
      error = "optimizer setting '" + key.str() + "' is not one of " +
              (own.empty() ? std::string("(none take settings)")
                           : own.str() +
                                 "warmup, decay, total_steps, accumulate");
      return failure();
    }
    if (!ok)
      return failure();
  }
  if (spec.warmup < 0 || spec.warmup != std::floor(spec.warmup)) {
    error = "optimizer setting 'warmup' must be a whole number of steps";
    return failure();
  }
  if (spec.decay != "none" &&
      !(spec.totalSteps > spec.warmup &&
        spec.totalSteps == std::floor(spec.totalSteps))) {
    error = "optimizer setting 'decay=" + spec.decay +
            "' needs total_steps, a whole number of steps above warmup";
    return failure();
  }
  if (!(spec.accumulate >= 1 && spec.accumulate <= 1 << 20 &&
        spec.accumulate == std::floor(spec.accumulate))) {
    error = "optimizer setting 'accumulate' must be a whole number of "
            "micro-batches, 1 or more";
    return failure();
  }
  if (kind != "none" && !(spec.lr > 0)) {
    error = "optimizer learning rate must be positive";
    return failure();
  }
  return spec;
}

/// The name an initializer was imported under (its constant's NameLoc).
StringRef initializerName(ConstantOp constant) {
  if (auto name = dyn_cast<NameLoc>(constant->getLoc()))
    return name.getName().getValue();
  return "";
}

/// The op in messages; the diagnostic's location names its ONNX node.
std::string describe(Operation *op) {
  return "'" + op->getName().stripDialect().str() + "'";
}

/// An initializer the model keeps as a running statistic: the importer
/// marked the op that computes its next value.
struct RunningStatistic {
  ConstantOp constant;
  Operation *next = nullptr;
};

struct TrainableParam {
  std::string name;
  ConstantOp constant;
  BlockArgument argument;
};

struct CgcBuildTrainStepPass
    : cgc::impl::CgcBuildTrainStepBase<CgcBuildTrainStepPass> {
  using Base::Base;

  void runOnOperation() override {
    std::string error;
    FailureOr<OptimizerSpec> spec = parseOptimizer(optimizer, error);
    if (failed(spec)) {
      getOperation().emitError() << error;
      return signalPassFailure();
    }
    func::FuncOp func = mainFunction();
    if (!func || failed(buildStep(func, *spec)))
      return signalPassFailure();
  }

  func::FuncOp mainFunction() {
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    if (funcs.size() != 1) {
      getOperation().emitError()
          << "training needs one function, found " << funcs.size();
      return nullptr;
    }
    return funcs.front();
  }

  LogicalResult checkStatic(func::FuncOp func) {
    WalkResult walk = func.walk([&](Operation *op) {
      if (isa<IfOp, LoopOp>(op)) {
        op->emitError() << describe(op)
                        << ": training through control flow (If, Loop) is "
                           "not supported";
        return WalkResult::interrupt();
      }
      for (Value v : op->getResults())
        if (auto type = dyn_cast<RankedTensorType>(v.getType());
            type && !type.hasStaticShape()) {
          op->emitError() << describe(op) << ": training needs static "
                          << "shapes (bind them with --dim or --shape)";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  /// The output the loss is taken on: `loss-output`, or the only one.
  FailureOr<unsigned> lossOutputIndex(func::FuncOp func) {
    unsigned count = func.getNumResults();
    std::string names;
    for (unsigned i = 0; i < count; ++i) {
      StringAttr name = getOutputName(func, i);
      StringRef n = name ? name.getValue() : "";
      if (!lossOutput.empty() && n == lossOutput)
        return i;
      names += (i ? ", " : "") + n.str();
    }
    if (lossOutput.empty() && count == 1)
      return 0u;
    if (lossOutput.empty())
      func.emitError() << "the model has " << count << " outputs (" << names
                       << "): say which one the loss is taken on with "
                          "--loss-output";
    else
      func.emitError() << "--loss-output '" << lossOutput
                       << "' is not an output of the model (" << names << ")";
    return failure();
  }

  /// Whether `constant` is read only as a power's exponent: a setting of
  /// the model (torch writes x.pow(2)'s 2 as a constant), not a parameter;
  /// trained, its gradient x^p ln x is NaN wherever x < 0, and every step
  /// would be skipped as non-finite.
  static bool readOnlyAsExponent(ConstantOp constant) {
    Value v = constant.getResult();
    return !v.use_empty() && llvm::all_of(v.getUsers(), [&](Operation *user) {
      auto pow = dyn_cast<PowOp>(user);
      return pow && pow.getRhs() == v && pow.getLhs() != v;
    });
  }

  /// The float initializers to train: all of them, or those `trainable`
  /// names (an unknown name is an error); never a running statistic, and
  /// an initializer read only as an exponent (or as a statistic) only when
  /// named.
  FailureOr<SmallVector<TrainableParam>>
  findParams(func::FuncOp func,
             const llvm::StringMap<RunningStatistic> &statistics) {
    SmallVector<TrainableParam> params;
    llvm::StringSet<> wanted(llvm::from_range, trainable), found;
    func.walk([&](ConstantOp constant) {
      if (!isInitializer(constant) ||
          !isa<FloatType>(GradientBuilder::typeOf(constant.getResult())
                              .getElementType()))
        return;
      StringRef name = initializerName(constant);
      // Statistics an op reads train only when named; running ones never.
      bool named = wanted.contains(name);
      bool setting = isStatistic(constant) || readOnlyAsExponent(constant);
      if (statistics.contains(name) || (!wanted.empty() && !named) ||
          (setting && !named))
        return;
      found.insert(name);
      params.push_back({name.str(), constant, BlockArgument()});
    });
    for (const std::string &name : trainable) {
      if (statistics.contains(name)) {
        statistics.lookup(name).next->emitError()
            << "--trainable names '" << name
            << "', a running statistic the step updates from each batch, "
               "not a parameter to train";
        return failure();
      }
      if (!found.contains(name)) {
        func.emitError() << "--trainable names '" << name
                         << "', which is not a float initializer of the "
                            "model";
        return failure();
      }
    }
    return params;
  }

  /// The ops the importer marked as the next value of a running statistic
  /// (training BatchNormalization's mean and variance), by initializer.
  FailureOr<llvm::StringMap<RunningStatistic>>
  findRunningStatistics(func::FuncOp func) {
    llvm::StringMap<RunningStatistic> statistics;
    func.walk([&](ConstantOp constant) {
      if (isInitializer(constant))
        statistics[initializerName(constant)].constant = constant;
    });
    WalkResult walk = func.walk([&](Operation *op) {
      StringAttr name = getRunningStatistic(op);
      if (!name)
        return WalkResult::advance();
      RunningStatistic &statistic = statistics[name.getValue()];
      if (!statistic.constant) {
        op->emitError() << "the running statistic '" << name.getValue()
                        << "' is not an initializer of the model";
        return WalkResult::interrupt();
      }
      if (statistic.next) {
        op->emitError() << "the running statistic '" << name.getValue()
                        << "' is updated by two nodes; a tensor of state "
                           "takes one update a step";
        return WalkResult::interrupt();
      }
      statistic.next = op;
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    // Only the marked initializers are statistics.
    for (auto it = statistics.begin(); it != statistics.end();) {
      auto next = std::next(it);
      if (!it->second.next)
        statistics.erase(it);
      it = next;
    }
    return statistics;
  }

  /// Each running statistic becomes state whose result is its next value.
  /// Appended after the accumulation's guard: as in PyTorch, every forward
  /// pass updates them, micro-batches included.
  void keepRunningStatistics(
      func::FuncOp func, llvm::StringMap<RunningStatistic> &statistics,
      SmallVectorImpl<std::pair<Value, std::string>> &results) {
    // In program order, so the state arguments come in the model's order.
    SmallVector<RunningStatistic *> ordered;
    for (auto &entry : statistics)
      ordered.push_back(&entry.second);
    llvm::sort(ordered, [](RunningStatistic *a, RunningStatistic *b) {
      return a->next->isBeforeInBlock(b->next);
    });
    for (RunningStatistic *statistic : ordered) {
      std::string name = initializerName(statistic->constant).str();
      BlockArgument state =
          addState(func, name, statistic->constant.getValue());
      statistic->constant.getResult().replaceAllUsesWith(state);
      statistic->constant.erase();
      statistic->constant = nullptr;
      results.push_back({statistic->next->getResult(0), name});
    }
  }

  /// The loss of `y` under `loss`, built before `at`; adds the label
  /// argument it needs.
  FailureOr<Value> buildLoss(func::FuncOp func, Value y, OpBuilder &b,
                             Location loc) {
    GradientBuilder g(b, loc);
    RankedTensorType type = GradientBuilder::typeOf(y);
    if (!isa<FloatType>(type.getElementType())) {
      func.emitError() << "the loss output has element type "
                       << type.getElementType() << "; it must be float";
      return failure();
    }
    SmallVector<int64_t> all(type.getRank());
    std::iota(all.begin(), all.end(), 0);
    if (loss == "none") {
      if (type.getNumElements() != 1) {
        func.emitError() << "--loss=none takes the output as the loss, but "
                            "it has "
                         << type.getNumElements() << " elements, not 1";
        return failure();
      }
      return g.reshape(y, {});
    }
    if (loss == "mse") {
      Value label = addLabel(func, type);
      Value d = g.sub(y, label);
      return meanOfAll(g.mul(d, d), g);
    }
    if (loss == "cross_entropy") {
      if (type.getRank() < 2) {
        func.emitError() << "--loss=cross_entropy needs logits of rank 2 "
                            "or more ([N, C, ...]), got "
                         << type;
        return failure();
      }
      // Class indices [N, d...]; the mean over them of -log p[label].
      SmallVector<int64_t> labelShape(type.getShape());
      int64_t classes = labelShape[1];
      labelShape.erase(labelShape.begin() + 1);
      auto labelType =
          RankedTensorType::get(labelShape, b.getIntegerType(64));
      Value label = addLabel(func, labelType);
      setInputLabelClasses(func, firstStateArgument - 1, classes);
      Value logp = LogSoftmaxOp::create(b, loc, y, 1).getResult();
      Value hot = OneHotOp::create(b, loc, type, label,
                                   b.getI64IntegerAttr(classes),
                                   b.getI64IntegerAttr(1), b.getF64FloatAttr(0),
                                   b.getF64FloatAttr(1))
                      .getResult();
      // Over the classes first (a block a row), then the rows.
      Value picked = g.reduceSum(g.mul(logp, hot), {1}, false);
      return g.scale(meanOfAll(picked, g), -1.0);
    }
    func.emitError() << "loss '" << loss
                     << "' is none of mse, cross_entropy, none";
    return failure();
  }

  Value addLabel(func::FuncOp func, RankedTensorType type) {
    unsigned index = firstStateArgument;
    (void)func.insertArgument(index, type, {}, func.getLoc());
    setInputName(func, index, "label");
    ++firstStateArgument;
    return func.getArgument(index);
  }

  /// A state argument named `name` with `initial` as its value at load.
  BlockArgument addState(func::FuncOp func, StringRef name,
                         ElementsAttr initial) {
    unsigned index = func.getNumArguments();
    (void)func.insertArgument(index, initial.getType(), {}, func.getLoc());
    setInputName(func, index, name);
    setInputState(func, index, initial);
    return func.getArgument(index);
  }

  /// Reverse mode from the loss back to the parameters; the errors name
  /// the ONNX node of an op without a gradient.
  FailureOr<ReverseMode> backward(func::FuncOp func,
                                  ArrayRef<TrainableParam> params,
                                  Value lossValue, OpBuilder &b,
                                  Location loc) {
    SmallVector<Value> sources;
    for (const TrainableParam &p : params)
      sources.push_back(p.argument);
    ReverseMode reverse(func.getBody().front(), sources, lossValue);
    if (reverse.activeOps().empty()) {
      func.emitError() << "no trainable initializer reaches the loss";
      return failure();
    }
    GradientBuilder g(b, loc);
    Operation *failedOp = nullptr;
    bool hasRule = false;
    if (succeeded(reverse.build(g, g.scalarLike(1.0, lossValue), failedOp,
                                hasRule)))
      return reverse;
    if (!hasRule)
      failedOp->emitError()
          << describe(failedOp)
          << " has no gradient rule: cgc --train cannot differentiate "
             "through it (docs/training.md lists the ops that have one)";
    else
      failedOp->emitError() << describe(failedOp) << ": no gradient";
    return failure();
  }

  /// The optimizer's update of one parameter; appends the updated tensors
  /// and the state arguments they replace.
  void update(func::FuncOp func, const OptimizerSpec &spec,
              TrainableParam &p, Value grad, Value step, Value rate,
              GradientBuilder &g,
              SmallVectorImpl<std::pair<Value, std::string>> &results) {
    Value w = p.argument;
    // Without a schedule the rate is a constant of each tensor's type.
    auto lr = [&] {
      return rate ? g.cast(rate, GradientBuilder::typeOf(w).getElementType())
                  : g.scalarLike(spec.lr, w);
    };
    auto zeros = [&](StringRef suffix) {
      auto type = GradientBuilder::typeOf(w);
      Attribute zero = FloatAttr::get(type.getElementType(), 0.0);
      return addState(func, (p.name + suffix).str(),
                      DenseElementsAttr::get(type, zero));
    };
    if (spec.kind == "sgd") {
      // PyTorch's SGD: g += wd w; buf = momentum buf + g; w -= lr buf.
      if (spec.weightDecay != 0)
        grad = g.add(grad, g.scale(w, spec.weightDecay));
      if (spec.momentum != 0) {
        BlockArgument buffer = zeros(".momentum_buffer");
        grad = g.add(g.scale(buffer, spec.momentum), grad);
        results.push_back({grad, p.name + ".momentum_buffer"});
      }
      results.push_back({g.sub(w, g.mul(grad, lr())), p.name});
      return;
    }
    // PyTorch's AdamW: w *= 1 - lr wd; m, v moving averages of g and g^2;
    // w -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
    BlockArgument m = zeros(".exp_avg"), v = zeros(".exp_avg_sq");
    Value m2 = g.add(g.scale(m, spec.beta1), g.scale(grad, 1 - spec.beta1));
    Value v2 = g.add(g.scale(v, spec.beta2),
                     g.scale(g.mul(grad, grad), 1 - spec.beta2));
    Value one = g.scalarLike(1.0, step);
    Value bias1 = g.sub(one, g.pow(g.scalarLike(spec.beta1, step), step));
    Value bias2 = g.sub(one, g.pow(g.scalarLike(spec.beta2, step), step));
    Value denom = g.add(g.div(g.sqrt(v2), g.sqrt(bias2)),
                        g.scalarLike(spec.eps, w));
    Value stepSize = g.div(
        rate ? g.cast(rate, GradientBuilder::typeOf(step).getElementType())
             : g.scalarLike(spec.lr, step),
        bias1);
    Value decayed =
        rate ? g.mul(w, g.sub(g.scalarLike(1.0, w),
                              g.scale(lr(), spec.weightDecay)))
             : g.scale(w, 1 - spec.lr * spec.weightDecay);
    Value w2 = g.sub(decayed, g.mul(stepSize, g.div(m2, denom)));
    results.push_back({m2, p.name + ".exp_avg"});
    results.push_back({v2, p.name + ".exp_avg_sq"});
    results.push_back({w2, p.name});
  }

  LogicalResult buildStep(func::FuncOp func, const OptimizerSpec &spec) {
    if (failed(checkStatic(func)))
      return failure();
    FailureOr<unsigned> lossIndex = lossOutputIndex(func);
    if (failed(lossIndex))
      return failure();
    FailureOr<llvm::StringMap<RunningStatistic>> statistics =
        findRunningStatistics(func);
    if (failed(statistics))
      return failure();
    FailureOr<SmallVector<TrainableParam>> params =
        findParams(func, *statistics);
    if (failed(params))
      return failure();
    if (params->empty())
      return func.emitError() << "the model has no float initializers to "
                                 "train";

    if (dataParallel < 1 || dataParallel > kMaxRanks)
      return func.emitError() << "data parallelism needs 1 to " << kMaxRanks
                              << " ranks, got " << (int64_t)dataParallel;
    if (dataParallel > 1 && !statistics->empty())
      return func.emitError()
             << "data parallelism over " << (int64_t)dataParallel
             << " ranks: the running statistics of '"
             << statistics->begin()->getKey()
             << "' would differ between the ranks (each sees its part of "
                "the batch)";
    Operation *ret = func.getBody().front().getTerminator();
    OpBuilder b(ret);
    // The step's own ops are named by their part of it (--explain and the
    // remarks show them so); the backward ops by their forward node.
    auto named = [&](StringRef part) -> Location {
      return NameLoc::get(StringAttr::get(&getContext(), part));
    };
    Location loc = named("optimizer (" + spec.kind + ")");
    firstStateArgument = func.getNumArguments();
    for (TrainableParam &p : *params) {
      p.argument = addState(func, p.name, p.constant.getValue());
      p.constant.getResult().replaceAllUsesWith(p.argument);
      p.constant.erase();
    }
    // The initializers left are frozen: ordinary constants from here on.
    func.walk([](ConstantOp constant) { clearInitializer(constant); });
    // Read after the parameters replaced their constants: the output may
    // be one of them (a model whose output is a trained initializer).
    Value y = ret->getOperand(*lossIndex);
    FailureOr<Value> lossValue =
        buildLoss(func, y, b, named("loss (" + loss + ")"));
    if (failed(lossValue))
      return failure();
    FailureOr<ReverseMode> reverse =
        backward(func, *params, *lossValue, b, named("backward"));
    if (failed(reverse))
      return failure();

    GradientBuilder g(b, loc);
    SmallVector<std::pair<Value, std::string>> results;
    Value step, rate;
    if (spec.kind == "adamw" || spec.scheduled()) {
      // The steps taken before this one; Adam's t is one more.
      auto scalar = RankedTensorType::get({}, b.getF32Type());
      BlockArgument counter = addState(
          func, "step", DenseElementsAttr::get(scalar, b.getF32FloatAttr(0)));
      step = g.add(counter, g.scalarLike(1.0, counter));
      results.push_back({step, "step"});
      if (spec.scheduled())
        rate = scheduledRate(spec, counter, g);
    }
    std::optional<Accumulation> accumulation;
    if (spec.accumulate > 1)
      accumulation = startAccumulation(func, spec.accumulate, g);
    SmallVector<Value> grads;
    SmallVector<StringRef> untrained;
    // Data parallel: the whole batch's mean loss and gradients, on every
    // rank (the loss rides in the first bucket).
    SmallVector<Value> perRank = {*lossValue};
    for (TrainableParam &p : *params)
      if (Value grad = reverse->gradient(p.argument))
        perRank.push_back(grad);
    DenseMap<Value, Value> averaged =
        averageInBuckets(perRank, b, named("all-reduce"));
    Value reportedLoss = averaged.lookup(*lossValue);
    for (TrainableParam &p : *params) {
      Value grad = reverse->gradient(p.argument);
      if (!grad) {
        // Not on a path to the loss: it keeps its value (frozen).
        untrained.push_back(p.name);
        continue;
      }
      grad = averaged.lookup(grad);
      grads.push_back(grad);
      if (spec.kind == "none") {
        results.push_back({grad, "grad." + p.name});
        continue;
      }
      if (accumulation)
        grad = accumulate(func, p, grad, *accumulation, g);
      update(func, spec, p, grad, step, rate, g, results);
    }
    if (!untrained.empty())
      func.emitWarning() << "initializer" << (untrained.size() > 1 ? "s" : "")
                         << " '" << llvm::join(untrained, "', '")
                         << "' reach no loss through ops with gradients "
                            "(unused, or read at compile time as Clip's "
                            "bounds are): not trained";
    if (accumulation)
      finishAccumulation(func, *accumulation, g, results);
    if (spec.kind != "none") {
      keepRunningStatistics(func, *statistics, results);
      skipNonFiniteSteps(func, reportedLoss, grads, g, results);
      advanceRandomMasks(func, g, results);
    }
    setResults(func, ret, reportedLoss, results, spec.kind == "none");
    if (dataParallel > 1)
      setRanks(func->getParentOfType<ModuleOp>(), dataParallel);
    for (auto &entry : *statistics)
      clearRunningStatistic(entry.second.next);
    eraseDeadOps(func);
    return success();
  }

  /// `v` averaged over the data-parallel ranks (a cgc.all_reduce, then
  /// 1 / N); `v` itself with one rank.
  Value meanOverRanks(Value v, OpBuilder &b, Location loc) {
    if (dataParallel == 1)
      return v;
    GradientBuilder g(b, loc);
    Value sum = AllReduceOp::create(b, loc, v.getType(), v,
                                    b.getI64IntegerAttr(dataParallel));
    return g.scale(sum, 1.0 / (double)dataParallel);
  }

  /// Every gradient in `grads` averaged over the data-parallel ranks, by
  /// buckets (as DistributedDataParallel's): the gradients in the order
  /// the backward computes them, cut into buckets of at most
  /// `bucketBytes` (a larger gradient alone), each bucket flattened and
  /// joined into one tensor, summed by one cgc.all_reduce, divided by N
  /// and split back. A bucket's ops follow its last gradient, so its
  /// all-reduce may run while the backward goes on. One NCCL call a bucket
  /// instead of one a gradient: small models' steps pay a collective's
  /// latency a few times instead of a hundred. With one rank, `grads`
  /// themselves; with bucketBytes 0, one all-reduce a gradient.
  DenseMap<Value, Value> averageInBuckets(ArrayRef<Value> grads,
                                          OpBuilder &b, Location loc) {
    DenseMap<Value, Value> averaged;
    if (dataParallel == 1) {
      for (Value grad : grads)
        averaged[grad] = grad;
      return averaged;
    }
    SmallVector<Value> ordered = readyOrder(grads);
    OpBuilder::InsertionGuard guard(b);
    for (ArrayRef<Value> bucket : cutIntoBuckets(ordered)) {
      // After the bucket's last gradient (the ops that compute a
      // gradient are ordered before its readers).
      Value last = bucket.back();
      if (Operation *def = last.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(last.getParentBlock());
      if (bucket.size() == 1) {
        averaged[last] = meanOverRanks(last, b, loc);
        continue;
      }
      GradientBuilder g(b, loc);
      SmallVector<Value> flat;
      SmallVector<int64_t> sizes;
      for (Value grad : bucket) {
        int64_t n = GradientBuilder::typeOf(grad).getNumElements();
        flat.push_back(g.reshape(grad, {n}));
        sizes.push_back(n);
      }
      Value joined = ConcatOp::create(b, loc, flat, 0).getResult();
      Value mean = meanOverRanks(joined, b, loc);
      auto split = SplitOp::create(b, loc, mean, 0, sizes);
      for (auto [i, grad] : llvm::enumerate(bucket))
        averaged[grad] =
            g.reshape(split.getResult(i), GradientBuilder::shapeOf(grad));
    }
    return averaged;
  }

  /// `grads` in the order their values are computed (block order; a
  /// gradient that is a block argument first), duplicates dropped.
  static SmallVector<Value> readyOrder(ArrayRef<Value> grads) {
    SmallVector<Value> ordered;
    DenseSet<Value> seen;
    for (Value grad : grads)
      if (seen.insert(grad).second)
        ordered.push_back(grad);
    llvm::stable_sort(ordered, [](Value a, Value b) {
      Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
      if (!x || !y)
        return !x && y;
      return x != y && x->isBeforeInBlock(y);
    });
    return ordered;
  }

  /// `ordered` cut into runs of one element type of at most bucketBytes
  /// each (a gradient larger than that alone; bucketBytes 0: one each).
  SmallVector<ArrayRef<Value>> cutIntoBuckets(ArrayRef<Value> ordered) {
    SmallVector<ArrayRef<Value>> buckets;
    size_t start = 0;
    uint64_t bytes = 0;
    for (size_t i = 0; i < ordered.size(); ++i) {
      RankedTensorType type = GradientBuilder::typeOf(ordered[i]);
      uint64_t size = (uint64_t)type.getNumElements() *
                      llvm::divideCeil(type.getElementTypeBitWidth(), 8);
      bool sameType = i == start || type.getElementType() ==
                                        GradientBuilder::typeOf(ordered[start])
                                            .getElementType();
      if (i > start && (!sameType || bytes + size > (uint64_t)bucketBytes)) {
        buckets.push_back(ordered.slice(start, i - start));
        start = i;
        bytes = 0;
      }
      bytes += size;
    }
    if (start < ordered.size())
      buckets.push_back(ordered.slice(start));
    return buckets;
  }

  /// What nothing reads: ONNX outputs no one uses (the statistics outputs
  /// of a training BatchNormalization), and whatever the backward built and
  /// the step did not take. Swept once the step is whole: during reverse
  /// mode a gradient still to be summed has no uses yet.
  static void eraseDeadOps(func::FuncOp func) {
    Block &body = func.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (isOpTriviallyDead(&op))
        op.erase();
  }

  /// Gradient accumulation over `micro` micro-batches, one per step: each
  /// step adds its gradients into the state `NAME.grad_sum`; the step that
  /// completes the count (the state `micro_steps`: micro-batches summed
  /// since the last update) updates with their mean and clears the sums,
  /// the others keep the weights and the optimizer's state as they are.
  /// As PyTorch's loop of (loss / micro).backward() with optimizer.step()
  /// and zero_grad() every micro-th batch; the schedule and Adam's t count
  /// updates, not micro-batches.
  struct Accumulation {
    Value complete; ///< this step's micro-batch completes an update
    Value count;    ///< micro-batches summed, this one included
    double micro;
    SmallVector<std::pair<Value, std::string>> sums;
  };

  Accumulation startAccumulation(func::FuncOp func, double micro,
                                 GradientBuilder &g) {
    auto scalar = RankedTensorType::get({}, g.builder().getF32Type());
    BlockArgument summed =
        addState(func, "micro_steps",
                 DenseElementsAttr::get(scalar, g.builder().getF32FloatAttr(0)));
    Accumulation acc;
    acc.count = g.add(summed, g.scalarLike(1.0, summed));
    acc.complete = g.lessOrEqual(g.scalarLike(micro, summed), acc.count);
    acc.micro = micro;
    return acc;
  }

  /// The gradient the update takes: the mean of the sums so far.
  Value accumulate(func::FuncOp func, const TrainableParam &p, Value grad,
                   Accumulation &acc, GradientBuilder &g) {
    auto type = GradientBuilder::typeOf(grad);
    std::string name = p.name + ".grad_sum";
    BlockArgument sum = addState(
        func, name,
        DenseElementsAttr::get(type, FloatAttr::get(type.getElementType(), 0)));
    Value total = g.add(sum, grad);
    acc.sums.push_back({total, name});
    return g.scale(total, 1.0 / acc.micro);
  }

  /// Every update so far takes effect only on a completing step; the sums
  /// and the count restart from zero there.
  void finishAccumulation(
      func::FuncOp func, Accumulation &acc, GradientBuilder &g,
      SmallVectorImpl<std::pair<Value, std::string>> &results) {
    for (auto &[value, name] : results)
      value = g.where(acc.complete, value, stateNamed(func, name));
    for (auto &[total, name] : acc.sums)
      results.push_back(
          {g.where(acc.complete, g.scalarLike(0.0, total), total), name});
    results.push_back(
        {g.where(acc.complete, g.scalarLike(0.0, acc.count), acc.count),
         "micro_steps"});
  }

  /// The learning rate of the step after `taken` steps, on the device:
  /// lr k / warmup while k < warmup, then lr times the decay of the
  /// progress p = (k - warmup) / (total_steps - warmup), held at 1 past the
  /// end: 1 - p (linear) or (1 + cos(pi p)) / 2 (cosine). As transformers'
  /// get_{linear,cosine}_schedule_with_warmup, stepped after each step
  /// (so a warmup's first step has rate 0), but 0 after total_steps.
  static Value scheduledRate(const OptimizerSpec &spec, Value taken,
                             GradientBuilder &g) {
    Value lr = g.scalarLike(spec.lr, taken);
    Value decayed = lr;
    if (spec.decay != "none") {
      Value progress = g.div(g.sub(taken, g.scalarLike(spec.warmup, taken)),
                             g.scalarLike(spec.totalSteps - spec.warmup, taken));
      Value one = g.scalarLike(1.0, taken);
      progress = g.where(g.greater(progress, one), one, progress);
      Value factor =
          spec.decay == "linear"
              ? g.sub(one, progress)
              : g.scale(g.add(one, CosOp::create(g.builder(), g.location(),
                                                 g.scale(progress, M_PI))
                                       .getResult()),
                        0.5);
      decayed = g.mul(lr, factor);
    }
    if (spec.warmup == 0)
      return decayed;
    Value warming = g.mul(lr, g.scale(taken, 1.0 / spec.warmup));
    return g.where(g.greater(g.scalarLike(spec.warmup, taken), taken), warming,
                   decayed);
  }

  /// A step whose loss or gradients are not finite changes no state: every
  /// update becomes where(finite, update, state), and the state
  /// `skipped_steps` counts such steps. The test runs on the device, in
  /// the step (no host synchronization): the loss plus the sum of every
  /// gradient is finite (a NaN or infinity anywhere makes it so, as does a sum that
  /// overflows float: a step worth skipping too).
  void skipNonFiniteSteps(func::FuncOp func, Value loss,
                          ArrayRef<Value> grads, GradientBuilder &optimizer,
                          SmallVectorImpl<std::pair<Value, std::string>> &results) {
    GradientBuilder g(optimizer.builder(),
                      NameLoc::get(StringAttr::get(&getContext(),
                                                   "non-finite check")));
    // Every gradient as one vector (a copy: one kernel), then summed in
    // two reductions: a reduction a gradient was a third of a small
    // model's kernels.
    Type lossType = GradientBuilder::typeOf(loss).getElementType();
    SmallVector<Value> flat;
    int64_t count = 0;
    for (Value grad : grads) {
      int64_t n = GradientBuilder::typeOf(grad).getNumElements();
      flat.push_back(g.cast(g.reshape(grad, {n}), lossType));
      count += n;
    }
    // Zeros up to whole rows of the two-stage sum.
    int64_t columns = sumColumns(count);
    if (int64_t pad = (columns - count % columns) % columns)
      flat.push_back(
          g.zeros(RankedTensorType::get({pad}, lossType)));
    Value total = loss;
    if (!grads.empty()) {
      Value all = flat.size() == 1
                      ? flat.front()
                      : ConcatOp::create(g.builder(), g.location(), flat, 0)
                            .getResult();
      total = g.add(loss, sumOfAll(all, columns, g));
    }
    Value finite = g.lessOrEqual(
        g.abs(total), g.scalarLike(std::numeric_limits<float>::max(), total));
    for (auto &[value, name] : results)
      value = g.where(finite, value, stateNamed(func, name));
    auto scalar = RankedTensorType::get({}, g.typeOf(loss).getElementType());
    BlockArgument skipped = addState(
        func, "skipped_steps",
        DenseElementsAttr::get(scalar, FloatAttr::get(scalar.getElementType(),
                                                      0.0)));
    results.push_back(
        {g.add(skipped, g.where(finite, g.scalarLike(0.0, skipped),
                                g.scalarLike(1.0, skipped))),
         "skipped_steps"});
  }

  /// Dropout draws a new mask every step: each `cgc.random_mask` reads
  /// the state `rng.offset`, which every step advances by one (skipped
  /// steps and micro-batches too: each sees a mask of its own). The
  /// backward's uses of a mask are the forward's value, so both see the
  /// same one.
  void advanceRandomMasks(
      func::FuncOp func, GradientBuilder &g,
      SmallVectorImpl<std::pair<Value, std::string>> &results) {
    SmallVector<RandomMaskOp> masks;
    func.walk([&](RandomMaskOp mask) { masks.push_back(mask); });
    if (masks.empty())
      return;
    auto scalar = RankedTensorType::get({}, g.builder().getI64Type());
    BlockArgument offset = addState(
        func, "rng.offset",
        DenseElementsAttr::get(scalar, g.builder().getI64IntegerAttr(0)));
    for (RandomMaskOp mask : masks)
      mask.getOffsetMutable().assign(offset);
    Value one = ConstantOp::create(
        g.builder(), offset.getLoc(),
        DenseElementsAttr::get(scalar, g.builder().getI64IntegerAttr(1)));
    results.push_back({g.add(offset, one), "rng.offset"});
  }

  /// The mean of every element: over the last dim, then over the rest
  /// (equal rows, so the mean of the row means), so no single block
  /// reduces a large loss tensor alone.
  static Value meanOfAll(Value v, GradientBuilder &g) {
    int64_t rank = GradientBuilder::typeOf(v).getRank();
    if (rank >= 2)
      v = g.reduceMean(v, {rank - 1}, /*keepdims=*/false);
    SmallVector<int64_t> rest(GradientBuilder::typeOf(v).getRank());
    std::iota(rest.begin(), rest.end(), 0);
    return g.reduceMean(v, rest, /*keepdims=*/false);
  }

  /// The row length of sumOfAll over `n` elements: a power of two at
  /// least sqrt(n), so rows and columns are both about sqrt(n).
  static int64_t sumColumns(int64_t n) {
    int64_t columns = 1;
    while (columns * columns < n)
      columns *= 2;
    return columns;
  }

  /// The sum of the vector `v` (a whole number of `columns`), in two
  /// reductions over a [rows, columns] view: a block reduces each row,
  /// then one block the row sums (one reduction over a large vector would
  /// leave all of it to a single block: 0.29 ms for the gradients of
  /// GPT-2's step at batch 32 on an H100).
  static Value sumOfAll(Value v, int64_t columns, GradientBuilder &g) {
    int64_t n = GradientBuilder::typeOf(v).getNumElements();
    if (n <= columns)
      return g.reduceSum(v, {0}, /*keepdims=*/false);
    Value rows = g.reduceSum(g.reshape(v, {n / columns, columns}), {1},
                             /*keepdims=*/false);
    return g.reduceSum(rows, {0}, /*keepdims=*/false);
  }

  static Value stateNamed(func::FuncOp func, StringRef name) {
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (getInputState(func, i) && getInputName(func, i) == name)
        return func.getArgument(i);
    llvm_unreachable("an update without its state");
  }

  void setResults(func::FuncOp func, Operation *ret, Value lossValue,
                  ArrayRef<std::pair<Value, std::string>> results,
                  bool gradientsOnly) {
    SmallVector<Value> values{lossValue};
    for (const auto &entry : results)
      values.push_back(entry.first);
    ret->setOperands(values);
    SmallVector<Type> types;
    for (Value v : values)
      types.push_back(v.getType());
    func.setType(
        FunctionType::get(&getContext(), func.getArgumentTypes(), types));
    // The forward results' attributes (names, sharding) do not describe
    // the step's results: dropped (setAllResultAttrs would need one per
    // new result).
    func.removeResAttrsAttr();
    setOutputName(func, 0, "loss");
    for (auto [i, entry] : llvm::enumerate(results)) {
      setOutputName(func, i + 1, entry.second);
      if (!gradientsOnly)
        setOutputUpdates(func, i + 1, entry.second);
    }
  }

  unsigned firstStateArgument = 0;
};

} // namespace
