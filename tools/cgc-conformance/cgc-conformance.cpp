//===- cgc-conformance.cpp - the ONNX backend tests on the interpreter ----===//

#include "cgc/Tools/CgcInterpMain.h"

int main(int argc, char **argv) { return cgc::cgcConformanceMain(argc, argv); }
