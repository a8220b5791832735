#!/usr/bin/env bash
# The user's path on a GPU, through the Python package: compile (here, on
# the build machine: the GPU machine has no MLIR) -> load -> run of
# mlp8x512 and mobilenet_v2 (N=1) with numpy and torch CUDA inputs against
# onnxruntime, the C/C++/Python examples, and the runtime's graph dumps.
#
#   TORCH_PYTHON=... utils/gpu/gpu_python_check.sh prepare   # build machine: fills .carry/py, .carry/rt
#   utils/gpu/gpu_python_check.sh run         # GPU machine, from the repository root
#
# With the device tool: carry [".carry/py", ".carry/rt"] and run
#   utils/gpu/gpu_python_check.sh run
# Logs and graph dumps go to $OUT/logs.tar.gz (kept in a temporary folder
# without $OUT), the timings' JSON beside it; the summary line
# is `gpu_python_check: N passed, M failed`. Exits non-zero on a failure.

set -u
MODE=${1:-}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=$ROOT/.carry/py
RT=$ROOT/.carry/rt

prepare() {
  set -e
  local build=${BUILD:-$ROOT/build} models=${SHARED_MODELS:-$ROOT/../shared/models}
  rm -rf "$PY" "$RT"
  mkdir -p "$PY/packages" "$PY/models" "$PY/examples" "$RT/bin" "$RT/lib" \
           "$RT/test/Runtime"
  cp "$models/mlp8x512.onnx" "$models/mobilenet_v2_dynbatch.onnx" "$PY/models/"
  local cgc=$build/bin/cgc
  "$cgc" "$models/mlp8x512.onnx" -o "$PY/packages/mlp8x512"
  "$cgc" "$models/mobilenet_v2_dynbatch.onnx" --dim N=1 -o "$PY/packages/mobilenet_v2"
  "$cgc" "$ROOT/examples/tiny_mlp/model.onnx" -o "$PY/packages/tiny_mlp"
  "$cgc" "$ROOT/python/tests/data/eager_region.onnxtxt" -o "$PY/packages/eager_region"
  "$cgc" "$ROOT/python/tests/data/buckets.onnxtxt" --dim=N=1,2,4 --pad-to-bucket \
    -o "$PY/packages/buckets"
  # int4/float8 I/O; the model needs the venv's onnx (1.16 or later).
  "${PYTHON:-$build/venv/bin/python}" "$ROOT/python/tests/data/narrow_types_model.py" "$PY/models/narrow_types.onnx"
  "$cgc" "$PY/models/narrow_types.onnx" -o "$PY/packages/narrow_types"
  # The compile-time pictures, to set beside the run-time graph dumps.
  "$cgc" "$models/mobilenet_v2_dynbatch.onnx" --dim N=1 --explain --format=dot \
    -o "$PY/mobilenet_v2.explain.dot"
  # Sources are not needed to run a package.
  rm -f "$PY"/packages/*/kernels.cu "$PY"/packages/*/model.cpp
  make -s -C "$ROOT/examples/c" PACKAGE="$PY/packages/tiny_mlp" OUT="$PY/examples" CGC_BUILD="$build"
  make -s -C "$ROOT/examples/cpp" OUT="$PY/examples" CGC_BUILD="$build"
  cp -P "$build"/lib/libcgrt.so* "$RT/lib/"
  cp "$build/bin/cgc-run" "$build/bin/cgrt-tests" "$RT/bin/"
  cp -r "$build/test/Runtime/testpkg" "$build/test/Runtime/testpkg-nosym" "$RT/test/Runtime/"
  # The native call path for the GPU machine's Python (GPU_PYTHON, 3.12
  # there), built here against that interpreter's headers: a runtime-only
  # build of _cgc_native alone, put beside libcgrt.so where cgc looks.
  local gpu_python=${GPU_PYTHON:-$(PYENV_VERSION=3.12 python3.12 -c 'import sys; print(sys.executable)' 2>/dev/null || ls /root/.pyenv/versions/3.12*/bin/python3.12 2>/dev/null | head -1)}
  if [ -z "$gpu_python" ]; then
    echo "no Python 3.12 here for the GPU machine's native call path: set GPU_PYTHON" >&2
    return 1
  fi
  local nanobind_dir
  nanobind_dir=$("${PYTHON:-$build/venv/bin/python}" -m nanobind --cmake_dir)
  cmake -G Ninja -S "$ROOT" -B "$build/native-gpu-python" -DCMAKE_BUILD_TYPE=Release \
    -DCGC_RUNTIME_ONLY=ON -DCGC_PYTHON_NATIVE=ON -DPython_EXECUTABLE="$gpu_python" \
    -Dnanobind_DIR="$nanobind_dir" >/dev/null
  ninja -C "$build/native-gpu-python" _cgc_native >/dev/null
  cp "$build"/native-gpu-python/lib/_cgc_native.*.so "$RT/lib/"
  # The packages of python/tests/test_torch.py's GPU tests, compiled here
  # from a CPU export (TORCH_PYTHON: an interpreter with the GPU machine's
  # torch version; the cache key is the exported model's).
  if [ -n "${TORCH_PYTHON:-}" ]; then
    (cd "$ROOT/python/tests" && CGC_CACHE_DIR=$PY/cgc-cache PYTHONPATH=$ROOT/python \
      "$TORCH_PYTHON" test_torch.py --fill-cache >/dev/null)
    for example in graphed_callables torch_compile; do
      CGC_CACHE_DIR=$PY/cgc-cache "$TORCH_PYTHON" "$ROOT/examples/pytorch/$example.py" \
        --compile-only >/dev/null
    done
  fi
  du -sh "$PY" "$RT"
}

run() {
  # Logs in a folder of their own, packed into $OUT/logs.tar.gz at the end
  # (the device tool brings back a few files only).
  local logs passed=0 failed=0
  logs=$(mktemp -d)
  mkdir -p "$logs"
  export CGC_RUNTIME_LIB=$RT/lib/libcgrt.so CGC_BUILD_DIR=$RT LD_LIBRARY_PATH=$RT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export CGC_TEST_PACKAGES=$PY/packages CGC_SHARED_MODELS=$PY/models
  export CGC_CACHE_DIR=$PY/cgc-cache
  echo "== $(date -u '+%Y-%m-%d %H:%M UTC') $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null \
    || echo "(no nvidia-smi)"
  python3 -c 'import sys, numpy, onnxruntime, torch; print("python", sys.version.split()[0], "numpy", numpy.__version__, "onnxruntime", onnxruntime.__version__, "torch", torch.__version__, "cuda", torch.cuda.is_available())'
  # step NAME CMD...: runs CMD with its output in $logs/NAME.log.
  step() {
    local name=$1
    shift
    if "$@" >"$logs/$name.log" 2>&1; then
      echo "PASS: $name"; passed=$((passed + 1))
    else
      echo "FAIL: $name (exit $?)"; failed=$((failed + 1))
    fi
    sed 's/^/    /' "$logs/$name.log" | tail -${TAIL:-12}
  }
  # 1. The Python package's tests, the shared models among them: compile is
  #    skipped (no compiler), load/run/torch/onnxruntime are not.
  TAIL=40 step python-tests python3 -m unittest discover -s python/tests -v
  # 2. The same path written out, with timings: numpy and torch CUDA inputs.
  TAIL=20 step python-e2e python3 - <<'PYEOF'
import os, sys, time
sys.path.insert(0, "python")
import numpy as np, onnxruntime, torch, cgc
pk, md = os.environ["CGC_TEST_PACKAGES"], os.environ["CGC_SHARED_MODELS"]
ok = True
for name, onnx_file in [("mlp8x512", "mlp8x512.onnx"),
                        ("mobilenet_v2", "mobilenet_v2_dynbatch.onnx")]:
    t0 = time.perf_counter()
    model = cgc.load(os.path.join(pk, name))
    load_ms = (time.perf_counter() - t0) * 1e3
    rng = np.random.default_rng(1)
    feeds = {t.name: rng.standard_normal(t.shape).astype(t.numpy_dtype) for t in model.inputs}
    sess = onnxruntime.InferenceSession(os.path.join(md, onnx_file), providers=["CPUExecutionProvider"])
    ref = sess.run(None, feeds)[0].astype(np.float64)
    y = model.run(feeds)[model.outputs[0].name]
    yt = model(*[torch.from_numpy(feeds[t.name]).cuda() for t in model.inputs])
    err = lambda a: np.linalg.norm(np.asarray(a, np.float64) - ref) / np.linalg.norm(ref)
    e_np, e_t = err(y), err(yt.cpu().numpy())
    b = model.benchmark(100, 1000)
    print("%s: load %.0f ms; rel L2 vs onnxruntime numpy %.2e torch-cuda %.2e; "
          "max abs %.2e; graph median %.1f us p99 %.1f us, %d launch(es)"
          % (name, load_ms, e_np, e_t, np.max(np.abs(y - ref)), b.median_us, b.p99_us,
             b.launches_per_inference))
    ok &= e_np < 1e-4 and e_t < 1e-4 and yt.is_cuda
    model.close()
sys.exit(0 if ok else 1)
PYEOF
  # 2b. The Python call against the C runtime (native path on torch CUDA
  #     tensors), same process.
  TAIL=10 step python-call python3 bench/python_call.py "$PY/packages/mlp8x512" \
    "$PY/packages/mobilenet_v2" "$PY/packages/tiny_mlp" --json "$logs/python_call.json"
  # 3. The examples: C and C++ binaries built on the build machine, the
  #    Python one; same numbers, onnxruntime agrees.
  local tiny=$PY/packages/tiny_mlp
  step example-c "$PY/examples/tiny_mlp_c" "$tiny"
  step example-cpp "$PY/examples/run_package" "$tiny"
  step example-cpp-mobilenet "$PY/examples/run_package" "$PY/packages/mobilenet_v2"
  step example-python python3 examples/python/tiny_mlp.py --package "$tiny"
  for example in load_package graphed_callables torch_compile; do
    step "example-pytorch-$example" python3 "examples/pytorch/$example.py" \
      $([ $example = load_package ] && echo --package "$tiny")
  done
  step examples-agree bash -c "diff <(grep -E '^(y\\[|sum)' '$logs/example-c.log') <(grep -E '^(y\\[|sum)' '$logs/example-cpp.log') && diff <(grep -E '^(y\\[|sum)' '$logs/example-c.log') <(grep -E '^(y\\[|sum)' '$logs/example-python.log') && grep -E '^(y\\[|sum)' '$logs/example-c.log'"
  # 4. Graph dumps: cgc-run, Python, and the gtest of cgrt_model_dump_graphs.
  step dump-cgc-run "$RT/bin/cgc-run" "$PY/packages/mobilenet_v2" --dump-graphs "$logs/graphs-mobilenet_v2"
  step dump-python python3 -c "
import sys; sys.path.insert(0, 'python'); import cgc
with cgc.load('$PY/packages/mlp8x512') as m:
    for p in m.dump_graphs('$logs/graphs-mlp8x512'): print(p, p.stat().st_size, 'bytes')"
  step dump-compare bash -c "
    k=\$(grep -c 'KERNEL' '$logs'/graphs-mobilenet_v2/graph0_*.dot || true)
    n=\$(python3 -c \"import json; print(json.load(open('$PY/packages/mobilenet_v2/metadata.json'))['graphs'][0]['nodes'])\")
    e=\$(grep -c '\\[matmul\\]\\|\\[conv\\]\\|\\[single\\]\\|\\[reduce\\]\\|\\[norm\\]\\|\\[elementwise\\]' '$PY/mobilenet_v2.explain.dot')
    echo \"mobilenet_v2: runtime graph dump \$k kernel-node lines, package metadata \$n nodes, --explain \$e kernels\"
    test \"\$k\" -gt 0"
  step cgrt-tests-dump "$RT/bin/cgrt-tests" --gtest_filter='*Dump*'
  # 5. Runs on the caller's stream and inside the caller's graph capture.
  step cgrt-tests-async "$RT/bin/cgrt-tests" --gtest_filter='AsyncRun*:ZeroCopy*'
  echo "gpu_python_check: $passed passed, $failed failed (logs in $logs)"
  if [ -n "${OUT:-}" ]; then
    tar czf "$OUT/logs.tar.gz" -C "$logs" . && cp "$logs"/*.json "$OUT/" 2>/dev/null
  fi
  [ "$failed" -eq 0 ]
}

case $MODE in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: $0 prepare|run" >&2; exit 2 ;;
esac
