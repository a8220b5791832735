//===- CgcMain.h - the cgc driver -------------------------------*- C++ -*-===//
#ifndef CGC_TOOLS_CGC_CGCMAIN_H
#define CGC_TOOLS_CGC_CGCMAIN_H

namespace cgc {
/// Entry point of the `cgc` command-line compiler; returns the exit code.
int cgcMain(int argc, char **argv);
} // namespace cgc

#endif // CGC_TOOLS_CGC_CGCMAIN_H
