//===- CgrtStress.h - the cgrt-stress tool ----------------------*- C++ -*-===//
//
// cgrt-stress PACKAGE_DIR MODE [options]: concurrency and soak runs of a
// package through libcgrt on a GPU, each checked output for output against
// the package's own single-threaded results, printing one summary line per
// run (docs/reliability.md has the modes and the figures):
//
//   own      T threads, each loading its own instance, N runs each
//   shared   T threads sharing one instance, N runs each (and benchmarks)
//   replays  N runs of one instance; device and host memory before and after
//   loads    N load/run/release cycles; memory before and after
//   faults   N cycles of a load that fails by an injected fault, then a good
//            load whose run fails by one, then a correct run; memory too
//
//===----------------------------------------------------------------------===//

#ifndef CGC_TOOLS_CGRT_STRESS_CGRTSTRESS_H
#define CGC_TOOLS_CGRT_STRESS_CGRTSTRESS_H

namespace cgrtstress {

/// The whole tool; returns the process exit code (0 pass, 1 a check failed,
/// 2 usage or set-up error, including no GPU).
int stressMain(int argc, char **argv);

} // namespace cgrtstress

#endif // CGC_TOOLS_CGRT_STRESS_CGRTSTRESS_H
