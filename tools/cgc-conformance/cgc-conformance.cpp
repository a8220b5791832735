//===- cgc-conformance.cpp - the ONNX backend tests on the interpreter ----===//

#include "cgc/Tools/cgc-conformance/CgcConformanceMain.h"

int main(int argc, char **argv) { return cgc::cgcConformanceMain(argc, argv); }
