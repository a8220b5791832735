"""cgc_tune.label_times reads cgc-run --profile-kernels' lines: kernel
lines by kernel index, library lines by the kernel they compute, with or
without the TFLOP/s cgc-run prints after a library node's time; a library
node's time and its epilogue kernel's add up under one label."""
import json
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import cgc_tune  # noqa: E402

PROFILE = """kernel   0 conv_0123abcd                               5.00 us
kernel   1 elementwise_4567                            2.50 us
library   0 conv_3                                    40.00 us     62.0 TFLOP/s
library   1 gemm_4                                    10.00 us
"""
META = {"cgraph": {"graphs": [{"nodes": [
    {"op": "cudnn_conv_node", "label": "conv_3"},
    {"op": "kernel_node", "label": "conv_3", "kernel_index": 1},
    {"op": "kernel_node", "label": "stem", "kernel_index": 0},
    {"op": "cublaslt_matmul_node", "label": "gemm_4"}]}]}}

with tempfile.TemporaryDirectory() as pkg:
    with open(os.path.join(pkg, "metadata.json"), "w") as f:
        json.dump(META, f)
    times = cgc_tune.label_times(pkg, PROFILE)
for label in sorted(times):
    print("%s %.2f" % (label, times[label]))
