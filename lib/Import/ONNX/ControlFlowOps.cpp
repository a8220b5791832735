//===- ControlFlowOps.cpp - importers of If, Loop and data-dependent ops --===//

#include "ImportHelpers.h"

using namespace mlir;
using namespace cgc;
using namespace cgc::onnx_import;

void cgc::onnx_import::registerControlFlowOps(ImporterTable &) {}
