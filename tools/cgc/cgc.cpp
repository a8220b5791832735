//===- cgc.cpp - the cgc compiler driver ----------------------------------===//

#include "cgc/Tools/cgc/CgcMain.h"

int main(int argc, char **argv) { return cgc::cgcMain(argc, argv); }
