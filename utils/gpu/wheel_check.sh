#!/usr/bin/env bash
# A wheel of cgc on a machine without the build tree's packages (the GPU
# machine: no LLVM, MLIR, ONNX or protobuf): installs the wheel in FOLDER into
# the current Python, shows where the compiler's libraries resolve, then
# compiles FOLDER/tiny_mlp.onnx and FOLDER/mlp8x512.onnx in fp32 and bf16 from
# outside the checkout and compares model(x) on CUDA tensors with
# onnxruntime. Build the wheel for the GPU machine's Python first
# (docs/python.md, "Installing").
#   utils/gpu/wheel_check.sh FOLDER
set -u
W=$(cd "${1:?usage: wheel_check.sh FOLDER}" && pwd)
python3 -m pip install --no-deps --no-index --force-reinstall "$W"/cgc-*.whl 2>&1 | tail -1
PKG=$(cd /tmp && python3 -c "import cgc, os; print(os.path.dirname(cgc.__file__))")
echo "installed: $PKG"
ldd "$PKG/bin/cgc" | grep -E "onnx|protobuf|nvrtc|LLVM|not found"
ls /usr/lib/llvm-22 2>&1 | head -1; ls /usr/lib/x86_64-linux-gnu/libonnx* 2>&1 | head -1
cd /tmp && rm -rf wheel-check && mkdir wheel-check && cd wheel-check
env -u CGC_BUILD_DIR -u CGC_BINARY -u CGC_RUNTIME_LIB python3 - "$W" <<'PY'
import sys, time, numpy as np, onnxruntime, torch, cgc
from cgc import _compiler
w = sys.argv[1]
failed = 0
print("compiler:", _compiler.find_compiler(), "runtime:", cgc.find_runtime_library())
for name in ("tiny_mlp", "mlp8x512"):
    for precision in ("fp32", "bf16"):
        t = time.perf_counter()
        pkg = cgc.compile("%s/%s.onnx" % (w, name), "%s.%s" % (name, precision), precision=precision, progress=False)
        secs = time.perf_counter() - t
        m = cgc.load(pkg)
        rng = np.random.default_rng(0)
        feeds = {i.name: rng.standard_normal(i.shape).astype(i.numpy_dtype) for i in m.inputs}
        ref = onnxruntime.InferenceSession("%s/%s.onnx" % (w, name), providers=["CPUExecutionProvider"]).run(None, feeds)[0].astype(np.float64)
        y = m(*[torch.from_numpy(v).cuda() for v in feeds.values()]).cpu().numpy()
        err = np.linalg.norm(y - ref) / np.linalg.norm(ref)
        bound = 1e-4 if precision == "fp32" else 1e-2
        print("%s %s: compiled in %.1f s, call path %s, rel L2 vs onnxruntime %.2e (bound %g)" % (name, precision, secs, m.call_path, err, bound))
        failed += not err <= bound
        m.close()
sys.exit(1 if failed else 0)
PY
