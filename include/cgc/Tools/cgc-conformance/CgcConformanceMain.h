//===- CgcConformanceMain.h - the cgc-conformance driver --------*- C++ -*-===//
#ifndef CGC_TOOLS_CGC_CONFORMANCE_CGCCONFORMANCEMAIN_H
#define CGC_TOOLS_CGC_CONFORMANCE_CGCCONFORMANCEMAIN_H

namespace cgc {
/// `cgc-conformance`: runs the ONNX backend test suites on the interpreter
/// and checks the results against test/conformance/expected.txt.
int cgcConformanceMain(int argc, char **argv);
} // namespace cgc

#endif // CGC_TOOLS_CGC_CONFORMANCE_CGCCONFORMANCEMAIN_H
