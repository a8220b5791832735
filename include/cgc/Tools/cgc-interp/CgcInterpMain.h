//===- CgcInterpMain.h - the cgc-interp driver ------------------*- C++ -*-===//
#ifndef CGC_TOOLS_CGC_INTERP_CGCINTERPMAIN_H
#define CGC_TOOLS_CGC_INTERP_CGCINTERPMAIN_H

namespace cgc {
/// `cgc-interp`: runs a model or cgc program on the reference interpreter;
/// returns the exit code (0 ok, 1 a --check mismatch, 2 any error).
int cgcInterpMain(int argc, char **argv);
} // namespace cgc

#endif // CGC_TOOLS_CGC_INTERP_CGCINTERPMAIN_H
