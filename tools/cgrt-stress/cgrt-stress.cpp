//===- cgrt-stress.cpp - concurrency and soak runs of a cgc package -------===//

#include "cgc/Tools/cgrt-stress/CgrtStress.h"

int main(int argc, char **argv) { return cgrtstress::stressMain(argc, argv); }
