//===- CgcInterpMain.h - the interpreter's command-line tools ---*- C++ -*-===//
#ifndef CGC_TOOLS_CGCINTERPMAIN_H
#define CGC_TOOLS_CGCINTERPMAIN_H

namespace cgc {
/// `cgc-interp`: runs a model or cgc program on the reference interpreter;
/// returns the exit code (0 ok, 1 a --check mismatch, 2 any error).
int cgcInterpMain(int argc, char **argv);

/// `cgc-conformance`: runs the ONNX backend test suites on the interpreter
/// and checks the results against test/conformance/expected.txt.
int cgcConformanceMain(int argc, char **argv);
} // namespace cgc

#endif // CGC_TOOLS_CGCINTERPMAIN_H
