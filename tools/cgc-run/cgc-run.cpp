//===- cgc-run.cpp - run, check and time a cgc package --------------------===//

#include "cgc/Tools/cgc-run/CgcRun.h"

int main(int argc, char **argv) { return cgcrun::cgcRunMain(argc, argv); }
