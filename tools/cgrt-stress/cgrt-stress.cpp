//===- cgrt-stress.cpp - concurrency and soak runs of a cgc package -------===//

#include "CgrtStress.h"

int main(int argc, char **argv) { return cgrtstress::stressMain(argc, argv); }
