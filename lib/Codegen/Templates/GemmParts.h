//===- GemmParts.h - what the tiled GEMM template's files share -*- C++ -*-===//
//
// Private to the tiled template: Gemm.cpp writes the kernel, and takes its
// cp.async main loop from GemmAsyncLoop.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_LIB_CODEGEN_TEMPLATES_GEMMPARTS_H
#define CGC_LIB_CODEGEN_TEMPLATES_GEMMPARTS_H

#include "Gemm.h"

namespace cgc {
namespace codegen {

/// Register rows/columns of a thread are read in groups of this many
/// (float4, float2 or single floats), groups `group * threads` apart.
inline int64_t groupOf(int64_t t) {
  return t % 4 == 0 ? 4 : t % 2 == 0 ? 2 : 1;
}

/// Offset of register row/column `i` of a thread in its tile, for a
/// per-thread extent `t` and `threads` threads along that dim.
std::string lane(llvm::StringRef var, llvm::StringRef i, int64_t t,
                 int64_t threads);

/// The K loop of the cp.async template (after cgc_acc is declared): each
/// K slice is copied global -> shared by cp.async, `tile.stages` slices in
/// flight, so the copies take no registers and the kernel fits two blocks
/// a multiprocessor. An operand contiguous along K is stored [outer][BK]
/// with its 4-float chunks XOR-swizzled by (outer / group) % (BK / 4), so
/// that the four distinct rows a warp reads at once (float4 over 4 k) fall
/// in different banks; one contiguous along its outer dim is stored
/// [BK][outer] and read as rows, as in the register template. `KT`: K
/// slices of a block; `aTerms`/`bTerms`: the operands' bounds conditions.
std::string pipelinedMainLoop(const GemmProblem &p, const GemmTile &tile,
                              int64_t KT, llvm::ArrayRef<std::string> aTerms,
                              llvm::ArrayRef<std::string> bTerms);

} // namespace codegen
} // namespace cgc

#endif // CGC_LIB_CODEGEN_TEMPLATES_GEMMPARTS_H
