//===- Passes.td - cgc conversion passes -------------------*- tablegen -*-===//

#ifndef CGC_CONVERSION_PASSES_TD
#define CGC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def CgcLowerToCGraph : Pass<"cgc-lower-to-cgraph", "mlir::ModuleOp"> {
  let summary = "Turn every island into an explicit cgraph.graph and every "
                "function into a cgraph.schedule";
  let description = [{
    Generates the CUDA source of every `cgc.kernel` (one `cgraph.kernel`
    per distinct source) and adds, per island, a `cgraph.graph` of kernel
    nodes in program order. A node depends on an earlier node when their
    arena ranges conflict (read after write, write after read or write
    after write); edges implied by others are removed, so the graph keeps
    only the necessary dependencies.

    Each function gets a `cgraph.schedule`: everything the host runs, in
    order, a `cgraph.replay` per island and a `cgraph.eager` step per eager
    region whose host work (kernel launches, copies, branches and loops
    decided on the host, NonZero/Compress/Unique/Reshape computed there) is
    spelled out with its arena offsets. Requires --cgc-plan-buffers.

    Kernel -> kernel edges of a top-level graph are made programmatic
    (`programmatic` on `cgraph.kernel_node`) when the module's `cgc.target`
    has programmatic launch (sm_90 or newer; sm_90 without a target) and
    `programmatic-launch` is on: a kernel then triggers the next one's
    launch at its end and that one waits for it in its first instruction,
    which hides much of the launch gap between kernels. A schedule that
    replays a graph with conditional nodes gets `copy_io`: the runtime
    cannot rebind such a graph to the caller's buffers.
  }];
  let options = [
    Option<"programmaticLaunch", "programmatic-launch", "bool",
           /*default=*/"true",
           "Make kernel -> kernel edges of top-level graphs programmatic "
           "where the target allows it (false: ordinary edges)">
  ];
  let dependentDialects = ["cgc::cgraph::CGraphDialect"];
}

#endif // CGC_CONVERSION_PASSES_TD
