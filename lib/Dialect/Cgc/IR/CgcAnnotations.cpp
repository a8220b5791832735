//===- CgcAnnotations.cpp - typed access to cgc.* attributes --------------===//
//
// The accessors and the dialect's verification of the discardable
// attributes. Names and attribute types come from the helpers that ODS
// generates for CgcDialect's `discardableAttrs`, so no name is spelled here.
//
//===----------------------------------------------------------------------===//

#include "cgc/Dialect/Cgc/IR/CgcAnnotations.h"
#include "cgc/Dialect/Cgc/IR/CgcOps.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace cgc;

namespace {

using D = CgcDialect;

/// The attribute class ODS declared for a discardable attribute.
template <typename Helper>
using AttrOf = decltype(std::declval<Helper &>().getAttr(nullptr));

template <typename Helper> AttrOf<Helper> get(Operation *op) {
  return op->getAttrOfType<AttrOf<Helper>>(Helper::getNameStr());
}
template <typename Helper> void set(Operation *op, Attribute value) {
  op->setAttr(Helper::getNameStr(), cast<AttrOf<Helper>>(value));
}
template <typename Helper>
AttrOf<Helper> getArg(func::FuncOp func, unsigned i) {
  return func.getArgAttrOfType<AttrOf<Helper>>(i, Helper::getNameStr());
}
template <typename Helper>
void setArg(func::FuncOp func, unsigned i, Attribute value) {
  func.setArgAttr(i, Helper::getNameStr(), cast<AttrOf<Helper>>(value));
}
template <typename Helper>
AttrOf<Helper> getResult(func::FuncOp func, unsigned i) {
  return func.getResultAttrOfType<AttrOf<Helper>>(i, Helper::getNameStr());
}
template <typename Helper>
void setResult(func::FuncOp func, unsigned i, Attribute value) {
  func.setResultAttr(i, Helper::getNameStr(), cast<AttrOf<Helper>>(value));
}

std::optional<int64_t> toInt(IntegerAttr attr) {
  if (!attr)
    return std::nullopt;
  return attr.getInt();
}
std::optional<ArrayRef<int64_t>> toArray(DenseI64ArrayAttr attr) {
  if (!attr)
    return std::nullopt;
  return attr.asArrayRef();
}
IntegerAttr i64(Operation *op, int64_t value) {
  return Builder(op->getContext()).getI64IntegerAttr(value);
}

} // namespace

//===----------------------------------------------------------------------===//
// The ONNX interface
//===----------------------------------------------------------------------===//

std::string cgc::nodeName(Operation *op) {
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    return name.getName().str();
  return op->getName().getStringRef().str();
}

StringAttr cgc::getInputName(func::FuncOp func, unsigned i) {
  return getArg<D::NameAttrHelper>(func, i);
}
void cgc::setInputName(func::FuncOp func, unsigned i, StringRef name) {
  setArg<D::NameAttrHelper>(func, i, StringAttr::get(func.getContext(), name));
}
StringAttr cgc::getOutputName(func::FuncOp func, unsigned i) {
  return getResult<D::NameAttrHelper>(func, i);
}
void cgc::setOutputName(func::FuncOp func, unsigned i, StringRef name) {
  setResult<D::NameAttrHelper>(func, i,
                               StringAttr::get(func.getContext(), name));
}

ArrayAttr cgc::getInputDimNames(func::FuncOp func, unsigned i) {
  return getArg<D::DimNamesAttrHelper>(func, i);
}
void cgc::setInputDimNames(func::FuncOp func, unsigned i,
                           ArrayRef<StringRef> names) {
  setArg<D::DimNamesAttrHelper>(
      func, i, Builder(func.getContext()).getStrArrayAttr(names));
}

std::string cgc::describeUnboundInputDims(func::FuncOp func, unsigned i) {
  auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
  if (!type || type.hasStaticShape())
    return "";
  StringAttr inputName = getInputName(func, i);
  std::string input = inputName ? inputName.getValue().str()
                                 : "input_" + std::to_string(i);
  ArrayAttr dimNames = getInputDimNames(func, i);
  SmallVector<std::string> dims, named;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    StringRef name;
    if (dimNames && d < static_cast<int64_t>(dimNames.size()))
      name = cast<StringAttr>(dimNames[d]).getValue();
    bool hasName = !name.empty() && name != "?";
    dims.push_back("dim " + std::to_string(d) +
                   (hasName ? " '" + name.str() + "'" : std::string()));
    if (hasName && !llvm::is_contained(named, name.str()))
      named.push_back(name.str());
  }
  std::string text = "input '" + input + "' has " + llvm::join(dims, ", ") +
                     " unbound: ";
  // Unnamed dims can only be set through the whole shape.
  if (named.size() != dims.size())
    return text + "give its shape with --shape " + input + "=D0xD1x...";
  SmallVector<std::string> flags;
  for (const std::string &name : named)
    flags.push_back("--dim " + name + "=SIZE");
  return text + "give " + (named.size() > 1 ? "their sizes" : "its size") +
         " with " + llvm::join(flags, " ") + " (several sizes, --dim " +
         named.front() + "=1,2,4,8, compile shape buckets)";
}

LogicalResult cgc::emitUnboundInputErrors(func::FuncOp func) {
  bool ok = true;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (std::string unbound = describeUnboundInputDims(func, i);
        !unbound.empty()) {
      func.emitError(unbound);
      ok = false;
    }
  return success(ok);
}

/// The one value cgc.control_flow takes (device control flow is the default).
static constexpr llvm::StringLiteral kHostControlFlow = "host";

bool cgc::hasHostControlFlow(ModuleOp module) {
  auto mode = get<D::ControlFlowAttrHelper>(module);
  return mode && mode.getValue() == kHostControlFlow;
}
void cgc::setHostControlFlow(ModuleOp module) {
  set<D::ControlFlowAttrHelper>(
      module, StringAttr::get(module.getContext(), kHostControlFlow));
}

TargetAttr cgc::lookupTarget(Operation *op) {
  auto module = isa<ModuleOp>(op) ? cast<ModuleOp>(op)
                                  : op->getParentOfType<ModuleOp>();
  for (; module; module = module->getParentOfType<ModuleOp>())
    if (TargetAttr target = get<D::TargetAttrHelper>(module))
      return target;
  return nullptr;
}
void cgc::setTarget(ModuleOp module, TargetAttr target) {
  set<D::TargetAttrHelper>(module, target);
}

int64_t cgc::getRanks(ModuleOp module) {
  return toInt(get<D::RanksAttrHelper>(module)).value_or(1);
}
void cgc::setRanks(ModuleOp module, int64_t ranks) {
  set<D::RanksAttrHelper>(module, i64(module, ranks));
}

std::optional<int64_t> cgc::getDevices(ModuleOp module) {
  return toInt(get<D::DevicesAttrHelper>(module));
}
void cgc::setDevices(ModuleOp module, int64_t devices) {
  set<D::DevicesAttrHelper>(module, i64(module, devices));
}
void cgc::clearDevices(ModuleOp module) {
  module->removeAttr(D::DevicesAttrHelper::getNameStr());
}

FailureOr<int64_t> cgc::ranksToSplit(ModuleOp module, int64_t requested,
                                     bool train, std::string &error) {
  std::optional<int64_t> devices = getDevices(module);
  if (!devices)
    return requested ? requested : 1;
  std::string count = std::to_string(*devices) + " devices";
  if (requested && requested != *devices) {
    error = "--tensor-parallel=" + std::to_string(requested) +
            ", but the model's multi-device annotations shard it over " +
            count;
    return failure();
  }
  if (train) {
    error = "the model's multi-device annotations split it over " + count +
            ", which --train does not do (--data-parallel splits the batch)";
    return failure();
  }
  return *devices;
}

std::optional<int64_t> cgc::getShardAxis(Operation *constant) {
  return toInt(get<D::ShardAxisAttrHelper>(constant));
}
void cgc::setShardAxis(Operation *constant, int64_t axis) {
  set<D::ShardAxisAttrHelper>(constant, i64(constant, axis));
}
void cgc::clearShardAxis(Operation *constant) {
  constant->removeAttr(D::ShardAxisAttrHelper::getNameStr());
}

std::optional<int64_t> cgc::getRank(ModuleOp module) {
  return toInt(get<D::RankAttrHelper>(module));
}
void cgc::setRank(ModuleOp module, int64_t rank) {
  set<D::RankAttrHelper>(module, i64(module, rank));
}

//===----------------------------------------------------------------------===//
// The buffer plan
//===----------------------------------------------------------------------===//

std::optional<int64_t> cgc::getInputArenaOffset(func::FuncOp func, unsigned i) {
  return toInt(getArg<D::ArenaOffsetAttrHelper>(func, i));
}
void cgc::setInputArenaOffset(func::FuncOp func, unsigned i, int64_t offset) {
  setArg<D::ArenaOffsetAttrHelper>(func, i, i64(func, offset));
}
std::optional<int64_t> cgc::getOutputArenaOffset(func::FuncOp func,
                                                 unsigned i) {
  return toInt(getResult<D::ArenaOffsetAttrHelper>(func, i));
}
void cgc::setOutputArenaOffset(func::FuncOp func, unsigned i, int64_t offset) {
  setResult<D::ArenaOffsetAttrHelper>(func, i, i64(func, offset));
}

std::optional<int64_t> cgc::getWeightOffset(Operation *constant) {
  return toInt(get<D::WeightOffsetAttrHelper>(constant));
}
void cgc::setWeightOffset(Operation *constant, int64_t offset) {
  set<D::WeightOffsetAttrHelper>(constant, i64(constant, offset));
}

std::optional<ArrayRef<int64_t>> cgc::getResultOffsets(Operation *op) {
  return toArray(get<D::ResultOffsetsAttrHelper>(op));
}
void cgc::setResultOffsets(Operation *op, ArrayRef<int64_t> offsets) {
  set<D::ResultOffsetsAttrHelper>(
      op, DenseI64ArrayAttr::get(op->getContext(), offsets));
}

std::optional<ArrayRef<int64_t>> cgc::getBodyArgOffsets(Operation *loop) {
  return toArray(get<D::BodyArgOffsetsAttrHelper>(loop));
}
void cgc::setBodyArgOffsets(Operation *loop, ArrayRef<int64_t> offsets) {
  set<D::BodyArgOffsetsAttrHelper>(
      loop, DenseI64ArrayAttr::get(loop->getContext(), offsets));
}

std::optional<int64_t> cgc::getArenaBytes(func::FuncOp func) {
  return toInt(get<D::ArenaBytesAttrHelper>(func));
}
void cgc::setArenaBytes(func::FuncOp func, int64_t bytes) {
  set<D::ArenaBytesAttrHelper>(func, i64(func, bytes));
}
std::optional<int64_t> cgc::getWeightsBytes(func::FuncOp func) {
  return toInt(get<D::WeightsBytesAttrHelper>(func));
}
void cgc::setWeightsBytes(func::FuncOp func, int64_t bytes) {
  set<D::WeightsBytesAttrHelper>(func, i64(func, bytes));
}

std::optional<int64_t> cgc::getIntermediateBytes(func::FuncOp func) {
  return toInt(get<D::IntermediateBytesAttrHelper>(func));
}
std::optional<int64_t> cgc::getIntermediateLowerBound(func::FuncOp func) {
  return toInt(get<D::IntermediateLowerBoundAttrHelper>(func));
}
std::optional<int64_t> cgc::getIntermediateNaiveBytes(func::FuncOp func) {
  return toInt(get<D::IntermediateNaiveBytesAttrHelper>(func));
}
void cgc::setIntermediateStats(func::FuncOp func, int64_t bytes,
                               int64_t lowerBound, int64_t naiveBytes) {
  set<D::IntermediateBytesAttrHelper>(func, i64(func, bytes));
  set<D::IntermediateLowerBoundAttrHelper>(func, i64(func, lowerBound));
  set<D::IntermediateNaiveBytesAttrHelper>(func, i64(func, naiveBytes));
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

bool cgc::isInPlace(Operation *concat) {
  return static_cast<bool>(get<D::InPlaceAttrHelper>(concat));
}
void cgc::setInPlace(Operation *concat) {
  set<D::InPlaceAttrHelper>(concat, UnitAttr::get(concat->getContext()));
}

//===----------------------------------------------------------------------===//
// Tuning
//===----------------------------------------------------------------------===//

std::optional<StringRef> cgc::getTunedFrom(Operation *kernel) {
  if (StringAttr path = get<D::TunedAttrHelper>(kernel))
    return path.getValue();
  return std::nullopt;
}
void cgc::setTunedFrom(Operation *kernel, StringRef cachePath) {
  set<D::TunedAttrHelper>(kernel,
                          StringAttr::get(kernel->getContext(), cachePath));
}
std::optional<StringRef> cgc::getTuningKey(Operation *kernel) {
  if (StringAttr key = get<D::TuningKeyAttrHelper>(kernel))
    return key.getValue();
  return std::nullopt;
}
ArrayAttr cgc::getTuningCandidates(Operation *kernel) {
  return get<D::TuningCandidatesAttrHelper>(kernel);
}
void cgc::setTuningCandidates(Operation *kernel, StringRef key,
                              ArrayRef<Attribute> configs) {
  MLIRContext *context = kernel->getContext();
  set<D::TuningKeyAttrHelper>(kernel, StringAttr::get(context, key));
  set<D::TuningCandidatesAttrHelper>(kernel, ArrayAttr::get(context, configs));
}

//===----------------------------------------------------------------------===//
// Shape buckets
//===----------------------------------------------------------------------===//

std::optional<int64_t> cgc::getInputBucketAxis(func::FuncOp func, unsigned i) {
  return toInt(getArg<D::BucketAxisAttrHelper>(func, i));
}
void cgc::setInputBucketAxis(func::FuncOp func, unsigned i, int64_t axis) {
  setArg<D::BucketAxisAttrHelper>(func, i, i64(func, axis));
}
std::optional<int64_t> cgc::getOutputBucketAxis(func::FuncOp func, unsigned i) {
  return toInt(getResult<D::BucketAxisAttrHelper>(func, i));
}
void cgc::setOutputBucketAxis(func::FuncOp func, unsigned i, int64_t axis) {
  setResult<D::BucketAxisAttrHelper>(func, i, i64(func, axis));
}

std::optional<int64_t> cgc::getBucketValue(func::FuncOp func) {
  return toInt(get<D::BucketValueAttrHelper>(func));
}
void cgc::setBucketValue(func::FuncOp func, int64_t value) {
  set<D::BucketValueAttrHelper>(func, i64(func, value));
}

StringAttr cgc::getBucketDim(ModuleOp module) {
  return get<D::BucketDimAttrHelper>(module);
}
void cgc::setBucketDim(ModuleOp module, StringRef dim) {
  set<D::BucketDimAttrHelper>(module,
                              StringAttr::get(module.getContext(), dim));
}

bool cgc::isPadToBucket(ModuleOp module) {
  return static_cast<bool>(get<D::PadToBucketAttrHelper>(module));
}
void cgc::setPadToBucket(ModuleOp module) {
  set<D::PadToBucketAttrHelper>(module, UnitAttr::get(module.getContext()));
}

bool cgc::isInitializer(Operation *constant) {
  return static_cast<bool>(get<D::InitializerAttrHelper>(constant));
}
void cgc::setInitializer(Operation *constant) {
  set<D::InitializerAttrHelper>(constant,
                                UnitAttr::get(constant->getContext()));
}

void cgc::clearInitializer(Operation *constant) {
  constant->removeAttr(D::InitializerAttrHelper::getNameStr());
  constant->removeAttr(D::StatisticAttrHelper::getNameStr());
}

bool cgc::isStatistic(Operation *constant) {
  return static_cast<bool>(get<D::StatisticAttrHelper>(constant));
}
void cgc::setStatistic(Operation *constant) {
  set<D::StatisticAttrHelper>(constant, UnitAttr::get(constant->getContext()));
}

StringAttr cgc::getRunningStatistic(Operation *op) {
  return get<D::RunningStatisticAttrHelper>(op);
}
void cgc::setRunningStatistic(Operation *op, StringRef initializer) {
  set<D::RunningStatisticAttrHelper>(
      op, StringAttr::get(op->getContext(), initializer));
}
void cgc::clearRunningStatistic(Operation *op) {
  op->removeAttr(D::RunningStatisticAttrHelper::getNameStr());
}

ElementsAttr cgc::getInputState(func::FuncOp func, unsigned i) {
  return getArg<D::StateAttrHelper>(func, i);
}
void cgc::setInputState(func::FuncOp func, unsigned i, ElementsAttr initial) {
  setArg<D::StateAttrHelper>(func, i, initial);
}

std::optional<int64_t> cgc::getInputLabelClasses(func::FuncOp func,
                                                 unsigned i) {
  return toInt(getArg<D::LabelClassesAttrHelper>(func, i));
}
void cgc::setInputLabelClasses(func::FuncOp func, unsigned i,
                               int64_t classes) {
  setArg<D::LabelClassesAttrHelper>(func, i, i64(func, classes));
}

StringAttr cgc::getOutputUpdates(func::FuncOp func, unsigned i) {
  return getResult<D::UpdatesAttrHelper>(func, i);
}
void cgc::setOutputUpdates(func::FuncOp func, unsigned i,
                           StringRef stateName) {
  setResult<D::UpdatesAttrHelper>(func, i,
                                  StringAttr::get(func.getContext(), stateName));
}

std::optional<unsigned> cgc::stateInputUpdatedBy(func::FuncOp func,
                                                 unsigned i) {
  StringAttr name = getOutputUpdates(func, i);
  if (!name)
    return std::nullopt;
  for (unsigned input = 0; input < func.getNumArguments(); ++input)
    if (getInputState(func, input) && getInputName(func, input) == name)
      return input;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

namespace {

/// Where an attribute may appear.
enum Place : unsigned {
  OnOp = 1,       ///< an op other than a function or the module
  OnFunction = 2, ///< a func.func
  OnModule = 4,   ///< the builtin.module
  OnArgument = 8, ///< a func.func argument
  OnResult = 16,  ///< a func.func result
};

/// What the dialect knows of one attribute: its places, its type (the one
/// ODS declared), and a check of its value beyond the type where one is
/// cheap (null: none).
struct Rule {
  StringRef name;
  unsigned places;
  bool (*hasType)(Attribute);
  StringRef typeName;
  LogicalResult (*check)(Operation *op, Attribute value) = nullptr;
};

template <typename Helper>
Rule rule(unsigned places, StringRef typeName,
          LogicalResult (*check)(Operation *, Attribute) = nullptr) {
  return {Helper::getNameStr(), places,
          [](Attribute a) { return isa<AttrOf<Helper>>(a); }, typeName, check};
}

LogicalResult checkHost(Operation *op, Attribute value) {
  if (cast<StringAttr>(value).getValue() == kHostControlFlow)
    return success();
  return op->emitError() << "'" << D::ControlFlowAttrHelper::getNameStr()
                         << "' must be \"" << kHostControlFlow << "\"";
}

LogicalResult checkRanks(Operation *op, Attribute value) {
  int64_t ranks = cast<IntegerAttr>(value).getInt();
  if (ranks >= 1 && ranks <= kMaxRanks)
    return success();
  return op->emitError() << "'" << D::RanksAttrHelper::getNameStr()
                         << "' must be 1 to " << kMaxRanks << ", got " << ranks;
}

LogicalResult checkRank(Operation *op, Attribute value) {
  int64_t rank = cast<IntegerAttr>(value).getInt();
  int64_t ranks = getRanks(cast<ModuleOp>(op));
  if (rank >= 0 && rank < ranks)
    return success();
  return op->emitError() << "'" << D::RankAttrHelper::getNameStr()
                         << "' must be 0 to cgc.ranks - 1 (" << ranks - 1
                         << "), got " << rank;
}

LogicalResult checkDimNames(Operation *op, Attribute value) {
  if (llvm::all_of(cast<ArrayAttr>(value), llvm::IsaPred<StringAttr>))
    return success();
  return op->emitError() << "'" << D::DimNamesAttrHelper::getNameStr()
                         << "' must be an array of strings";
}

LogicalResult checkWeightOffset(Operation *op, Attribute) {
  if (isa<ConstantOp>(op))
    return success();
  return op->emitError() << "'" << D::WeightOffsetAttrHelper::getNameStr()
                         << "' belongs on a cgc.constant";
}

LogicalResult checkResultOffsets(Operation *op, Attribute value) {
  auto offsets = cast<DenseI64ArrayAttr>(value);
  if (offsets.size() == static_cast<int64_t>(op->getNumResults()))
    return success();
  return op->emitError() << "'" << D::ResultOffsetsAttrHelper::getNameStr()
                         << "' has " << offsets.size() << " offsets for "
                         << op->getNumResults() << " results";
}

LogicalResult checkBodyArgOffsets(Operation *op, Attribute value) {
  auto loop = dyn_cast<LoopOp>(op);
  if (!loop)
    return op->emitError() << "'" << D::BodyArgOffsetsAttrHelper::getNameStr()
                           << "' belongs on a cgc.loop";
  auto offsets = cast<DenseI64ArrayAttr>(value);
  if (offsets.size() == static_cast<int64_t>(loop.getBody().getNumArguments()))
    return success();
  return op->emitError() << "'" << D::BodyArgOffsetsAttrHelper::getNameStr()
                         << "' has " << offsets.size() << " offsets for "
                         << loop.getBody().getNumArguments()
                         << " body arguments";
}

LogicalResult checkInPlace(Operation *op, Attribute) {
  if (isa<ConcatOp>(op))
    return success();
  return op->emitError() << "'" << D::InPlaceAttrHelper::getNameStr()
                         << "' belongs on a cgc.concat";
}

LogicalResult checkOnKernel(Operation *op, Attribute) {
  if (isa<KernelOp>(op))
    return success();
  return op->emitError() << "tuning attributes belong on a cgc.kernel";
}

LogicalResult checkOnConstant(Operation *op, Attribute) {
  if (isa<ConstantOp>(op))
    return success();
  return op->emitError() << "'" << D::InitializerAttrHelper::getNameStr()
                         << "' belongs on a cgc.constant";
}

LogicalResult checkDevices(Operation *op, Attribute value) {
  int64_t devices = cast<IntegerAttr>(value).getInt();
  if (devices >= 2 && devices <= kMaxRanks)
    return success();
  return op->emitError() << "'" << D::DevicesAttrHelper::getNameStr()
                         << "' must be 2 to " << kMaxRanks << ", got "
                         << devices;
}

LogicalResult checkShardAxis(Operation *op, Attribute value) {
  auto constant = dyn_cast<ConstantOp>(op);
  int64_t axis = cast<IntegerAttr>(value).getInt();
  if (!constant)
    return op->emitError() << "'" << D::ShardAxisAttrHelper::getNameStr()
                           << "' belongs on a cgc.constant";
  int64_t rank = cast<ShapedType>(constant.getType()).getRank();
  if (axis >= 0 && axis < rank)
    return success();
  return op->emitError() << "'" << D::ShardAxisAttrHelper::getNameStr()
                         << "' must be an axis of the constant (0 to "
                         << rank - 1 << "), got " << axis;
}

ArrayRef<Rule> rules() {
  static const Rule table[] = {
      rule<D::NameAttrHelper>(OnArgument | OnResult, "a string"),
      rule<D::DimNamesAttrHelper>(OnArgument, "an array", checkDimNames),
      rule<D::ControlFlowAttrHelper>(OnModule, "a string", checkHost),
      rule<D::TargetAttrHelper>(OnModule, "a #cgc.target"),
      rule<D::RanksAttrHelper>(OnModule, "an integer", checkRanks),
      rule<D::RankAttrHelper>(OnModule, "an integer", checkRank),
      rule<D::DevicesAttrHelper>(OnModule, "an integer", checkDevices),
      rule<D::ShardAxisAttrHelper>(OnOp, "an integer", checkShardAxis),
      rule<D::ArenaOffsetAttrHelper>(OnArgument | OnResult, "an integer"),
      rule<D::WeightOffsetAttrHelper>(OnOp, "an integer", checkWeightOffset),
      rule<D::ResultOffsetsAttrHelper>(OnOp, "a DenseI64ArrayAttr",
                                       checkResultOffsets),
      rule<D::BodyArgOffsetsAttrHelper>(OnOp, "a DenseI64ArrayAttr",
                                        checkBodyArgOffsets),
      rule<D::ArenaBytesAttrHelper>(OnFunction, "an integer"),
      rule<D::WeightsBytesAttrHelper>(OnFunction, "an integer"),
      rule<D::IntermediateBytesAttrHelper>(OnFunction, "an integer"),
      rule<D::IntermediateLowerBoundAttrHelper>(OnFunction, "an integer"),
      rule<D::IntermediateNaiveBytesAttrHelper>(OnFunction, "an integer"),
      rule<D::InPlaceAttrHelper>(OnOp, "a unit attribute", checkInPlace),
      rule<D::TunedAttrHelper>(OnOp, "a string", checkOnKernel),
      rule<D::TuningKeyAttrHelper>(OnOp, "a string", checkOnKernel),
      rule<D::TuningCandidatesAttrHelper>(OnOp, "an array", checkOnKernel),
      rule<D::BucketAxisAttrHelper>(OnArgument | OnResult, "an integer"),
      rule<D::BucketValueAttrHelper>(OnFunction, "an integer"),
      rule<D::BucketDimAttrHelper>(OnModule, "a string"),
      rule<D::PadToBucketAttrHelper>(OnModule, "a unit attribute"),
      rule<D::InitializerAttrHelper>(OnOp, "a unit attribute",
                                     checkOnConstant),
      rule<D::StateAttrHelper>(OnArgument, "an elements attribute",
                               /*check=*/nullptr),
      rule<D::LabelClassesAttrHelper>(OnArgument, "an integer"),
      rule<D::UpdatesAttrHelper>(OnResult, "a string"),
      rule<D::RunningStatisticAttrHelper>(OnOp, "a string"),
      rule<D::StatisticAttrHelper>(OnOp, "a unit attribute", checkOnConstant),
  };
  return table;
}

StringRef placeNames(unsigned places) {
  switch (places) {
  case OnOp:
    return "an op";
  case OnFunction:
    return "a func.func";
  case OnModule:
    return "the module";
  case OnArgument:
    return "function arguments";
  default:
    return "function arguments and results";
  }
}

/// Checks `attr` found at `place` of `op`.
LogicalResult verifyAnnotation(Operation *op, NamedAttribute attr,
                               Place place) {
  StringRef name = attr.getName().strref();
  const Rule *rule =
      llvm::find_if(rules(), [&](const Rule &r) { return r.name == name; });
  if (rule == rules().end())
    return op->emitError() << "unknown attribute '" << name
                           << "' (cgc attributes are declared in "
                              "CgcDialect.td)";
  if (!(rule->places & place))
    return op->emitError() << "'" << name << "' belongs on "
                           << placeNames(rule->places);
  if (!rule->hasType(attr.getValue()))
    return op->emitError() << "'" << name << "' must be " << rule->typeName
                           << ", got " << attr.getValue();
  return rule->check ? rule->check(op, attr.getValue()) : success();
}

} // namespace

LogicalResult CgcDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  Place place = isa<ModuleOp>(op)       ? OnModule
                : isa<func::FuncOp>(op) ? OnFunction
                                        : OnOp;
  return verifyAnnotation(op, attr, place);
}

LogicalResult CgcDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                   unsigned,
                                                   NamedAttribute attr) {
  if (!isa<func::FuncOp>(op))
    return op->emitError() << "'" << attr.getName().strref()
                           << "' belongs on a func.func argument";
  return verifyAnnotation(op, attr, OnArgument);
}

LogicalResult CgcDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                      unsigned,
                                                      NamedAttribute attr) {
  if (!isa<func::FuncOp>(op))
    return op->emitError() << "'" << attr.getName().strref()
                           << "' belongs on a func.func result";
  return verifyAnnotation(op, attr, OnResult);
}

FailureOr<int64_t> cgc::gatherMinBytes(int64_t megabytes, std::string &error) {
  if (megabytes < 0 || megabytes > (1 << 20)) {
    error = "--tensor-parallel-gather-mb needs 0 to 1048576 megabytes";
    return failure();
  }
  return megabytes << 20;
}
