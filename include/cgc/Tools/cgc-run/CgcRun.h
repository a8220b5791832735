//===- CgcRun.h - the cgc-run tool ------------------------------*- C++ -*-===//
//
// cgc-run DIR [--inputs DIR|random] [--outputs DIR] [--check REFDIR
//   [--rtol R --atol A]] [--bench N]: loads a package with libcgrt, runs one
// inference on .npy (or seeded random) inputs, writes and/or checks the
// outputs and times the model. The pieces are exposed for the unit tests.
//
//===----------------------------------------------------------------------===//

#ifndef CGC_TOOLS_CGC_RUN_CGCRUN_H
#define CGC_TOOLS_CGC_RUN_CGCRUN_H

#include "Npy.h"

#include <string>

namespace cgcrun {

/// The whole tool; returns the process exit code (0 ok, 1 --check mismatch,
/// 2 any error).
int cgcRunMain(int argc, char **argv);

/// The numpy dtype that carries the bit patterns of a dtype numpy lacks:
/// uint16 for bfloat16, uint8 for the float8/float4 types and uint4/uint2,
/// int8 for int4/int2 (ml_dtypes arrays viewed so); else `dtype` itself.
cgrt_dtype carrierOf(cgrt_dtype dtype);

/// A .npy `file` of the carrier type holds the bit patterns of the dtype
/// `want` (as the ONNX backend test data stores bfloat16): relabels it.
/// False with a `message` naming `path` when a sub-byte integer value is
/// outside its type's range (a kernel would read it as it is).
bool relabelBitPatterns(HostTensor *file, cgrt_dtype want,
                        const std::string &path, std::string *message);

/// Fills `tensor` (dtype and shape already set) with deterministic values
/// from `seed`: floats uniform in [-1, 1), integers in [0, 8) (int2 in
/// [-2, 1], uint2 in [0, 3]), bools 0/1; the float8/float4 types take the
/// bit patterns 0-7 (small values).
void fillRandom(HostTensor *tensor, uint64_t seed);

/// Result of comparing one output with its reference.
struct Comparison {
  bool ok = true;
  std::string error; ///< set when the tensors cannot be compared at all
  double maxAbsError = 0;
  double maxRelError = 0;
  uint64_t mismatches = 0;
  uint64_t firstMismatch = 0; ///< flat index
  long double firstGot = 0, firstExpected = 0;
  /// ||got - ref|| / ||ref|| over the elements where the reference is
  /// finite (0 for a zero reference equal to got): the measure a reduced
  /// precision is held to.
  double relL2 = 0;
  /// Elements that are infinite or NaN where the reference is finite: an
  /// overflow (f16's range ends at 65504) or a NaN the reference lacks.
  uint64_t nonFiniteWhereFinite = 0;
};

/// numpy.allclose semantics per element, |got - ref| <= atol + rtol * |ref|,
/// with NaN equal to NaN and infinities equal to themselves; integer and bool
/// tensors must match exactly. Shapes must be equal. The relative L2 error
/// and the non-finite count are measured alongside.
Comparison compareTensors(const HostTensor &got, const HostTensor &expected,
                          double rtol, double atol);

} // namespace cgcrun

#endif // CGC_TOOLS_CGC_RUN_CGCRUN_H
