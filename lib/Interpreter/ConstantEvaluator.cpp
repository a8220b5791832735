//===- ConstantEvaluator.cpp - the interpreter as the folds' evaluator ----===//
//
// Attaches cgc::ConstantEvaluatorInterface to the cgc dialect: the `fold`
// hooks compute through the same kernels that run the ONNX backend tests,
// so there is one evaluator of op semantics in the compiler.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "cgc/Dialect/Cgc/IR/CgcConstantEvaluator.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::interp;

namespace {

/// The attribute holding `t`, of type `type` (whose element type `t` has).
DenseElementsAttr attrFromTensor(RankedTensorType type, const HostTensor &t) {
  Type element = type.getElementType();
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    for (int64_t i = 0; i < t.numElements(); ++i) {
      // Exact: the kernel already rounded the value to the element type.
      APFloat v(t.getF(i));
      bool lost;
      v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      values.push_back(v);
    }
    return DenseElementsAttr::get(type, values);
  }
  auto intType = cast<IntegerType>(element);
  SmallVector<APInt> values;
  for (int64_t i = 0; i < t.numElements(); ++i)
    values.push_back(APInt(intType.getWidth(), t.getU(i),
                           /*isSigned=*/false, /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, values);
}

class InterpreterEvaluator : public ConstantEvaluatorInterface {
public:
  using ConstantEvaluatorInterface::ConstantEvaluatorInterface;

  DenseElementsAttr evaluate(Operation *op,
                             ArrayRef<DenseElementsAttr> operands) const final {
    // A kernel's run-time error (an index out of range, a division by zero)
    // means "do not fold": it is reported when the program runs.
    ScopedDiagnosticHandler silence(op->getContext(),
                                    [](Diagnostic &) { return success(); });
    SmallVector<TensorRef> tensors;
    for (DenseElementsAttr operand : operands) {
      std::string error;
      FailureOr<HostTensor> t = tensorFromAttr(operand, error);
      if (failed(t))
        return nullptr;
      tensors.push_back(share(std::move(*t)));
    }
    Interpreter interpreter(InterpreterOptions{});
    Results results = interpreter.evaluate(op, tensors);
    if (failed(results))
      return nullptr;
    return attrFromTensor(cast<RankedTensorType>(op->getResult(0).getType()),
                          *results->front());
  }
};

void attach(CgcDialect *dialect) {
  if (!dialect->getRegisteredInterface<ConstantEvaluatorInterface>())
    dialect->addInterfaces<InterpreterEvaluator>();
}

} // namespace

void cgc::interp::registerConstantEvaluator(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, CgcDialect *dialect) {
    attach(dialect);
  });
}

void cgc::interp::registerConstantEvaluator(MLIRContext *context) {
  attach(context->getOrLoadDialect<CgcDialect>());
}
