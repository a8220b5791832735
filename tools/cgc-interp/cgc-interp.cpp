//===- cgc-interp.cpp - run a model on the reference interpreter ----------===//

#include "cgc/Tools/cgc-interp/CgcInterpMain.h"

int main(int argc, char **argv) { return cgc::cgcInterpMain(argc, argv); }
