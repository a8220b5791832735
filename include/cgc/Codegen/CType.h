//===- CType.h - the C type of an element type ------------------*- C++ -*-===//
//
// One mapping from MLIR element types to C/CUDA type names, used by the
// kernel writers and by the host code of eager regions.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_CODEGEN_CTYPE_H
#define CGC_CODEGEN_CTYPE_H

#include "mlir/IR/Types.h"

#include <string>

namespace cgc {
namespace codegen {

/// The CUDA C++ type kernels compute `t` in, or "" when there is none:
/// f16 and bf16 compute in float (as the ONNX reference does).
std::string cType(mlir::Type t);

} // namespace codegen
} // namespace cgc

#endif // CGC_CODEGEN_CTYPE_H
