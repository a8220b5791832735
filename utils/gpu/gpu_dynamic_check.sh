#!/usr/bin/env bash
# The GPU checks of dynamic work inside graphs (docs/dynamic.md), on the GPU
# machine, from the repository root:
#   - cgrt-tests (shape buckets, padding, zero-copy I/O, and everything else);
#   - mobilenet_v2_dynbatch compiled once with --dim N=1,2,4,8,16
#     --pad-to-bucket: every bucket and the padded N=3 against onnxruntime
#     (references made there), latency per bucket;
#   - control_flow.onnx with If and Loop as conditional nodes: both branches
#     against onnxruntime, exactly, and its latency;
#   - mlp8x512 at batch 1: device I/O copied through the slots vs zero-copy.
#
#   utils/gpu/gpu_dynamic_check.sh DIR
#
# DIR (prepared on the build machine, see docs/dynamic.md) holds rt/ (bin/
# cgrt-tests, bin/cgc-run, lib/libcgrt.so, test/Runtime/testpkg{,-nosym}),
# models/ (the ONNX files), mobilenet/, control_flow/ and mlp8x512/ (the
# packages), control_flow-{then,else}/ (inputs and references), cases/
# (utils/models/control_flow_cases.py) and nodes/ (utils/gpu/gpu_kernel_check.py
# --filter '^test_(if|loop|range)'). Logs go to
# $OUT (or a temporary folder); the summary lines are printed at the end.

set -u
DIR=${1:?usage: gpu_dynamic_check.sh DIR}
LOGS=${OUT:-$(mktemp -d)}
RUN=$DIR/rt/bin/cgc-run
SUMMARY=$LOGS/dynamic-summary.txt
: > "$SUMMARY"
failures=0
say() { echo "$*" | tee -a "$SUMMARY"; }
step() { # NAME COMMAND...: runs, logs, records pass or fail
  local name=$1; shift
  if "$@" > "$LOGS/$name.log" 2>&1; then say "PASS $name"; else
    say "FAIL $name (exit $?)"; failures=$((failures + 1)); tail -5 "$LOGS/$name.log"; fi
}

say "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
say "date: $(date -u '+%Y-%m-%d %H:%M UTC')"

step cgrt-tests "$DIR/rt/bin/cgrt-tests" --gtest_brief=1
grep -E "tests ran|PASSED|FAILED|SKIPPED" "$LOGS/cgrt-tests.log" | head -5 | tee -a "$SUMMARY"

# Shape buckets: references from onnxruntime (CPU) for every size.
for n in 1 2 3 4 8 16; do
  python3 utils/models/make_reference.py "$DIR/models/mobilenet_v2_dynbatch.onnx" \
    "$LOGS/mb$n" --dim N=$n --seed $n > /dev/null 2>&1 ||
    say "FAIL reference N=$n"
  step "mobilenet-N$n" "$RUN" "$DIR/mobilenet" --inputs "$LOGS/mb$n/inputs" \
    --check "$LOGS/mb$n/ref" --rtol 1e-3 --atol 1e-4 --bench 200 -q
  say "  N=$n: $(grep -E '^check|^bench' "$LOGS/mobilenet-N$n.log" | tr '\n' ' ')"
  rm -rf "$LOGS/mb$n"
done
# A size above every bucket is refused with a message naming the buckets.
python3 - "$DIR/mobilenet" "$LOGS/mb32" <<'PY'
import json, os, sys
import numpy as np
meta = json.load(open(os.path.join(sys.argv[1], "metadata.json")))
os.makedirs(sys.argv[2], exist_ok=True)
for io in meta["inputs"]:
    shape = [32] + io["shape"][1:]
    np.save(os.path.join(sys.argv[2], io["name"] + ".npy"), np.zeros(shape, np.float32))
PY
if "$RUN" "$DIR/mobilenet" --inputs "$LOGS/mb32" -q > "$LOGS/mobilenet-N32.log" 2>&1; then
  say "FAIL mobilenet-N32 ran"; failures=$((failures + 1))
else
  say "PASS mobilenet-N32 refused: $(grep -o 'match no shape bucket.*' "$LOGS/mobilenet-N32.log" | head -1)"
fi
rm -rf "$LOGS/mb32"

# Conditional nodes: both branches, exactly.
for branch in then else; do
  step "control_flow-$branch" "$RUN" "$DIR/control_flow" \
    --inputs "$DIR/control_flow-$branch/inputs" \
    --check "$DIR/control_flow-$branch/ref" --rtol 1e-6 --atol 1e-7 \
    --bench 500 -q
  say "  $branch: $(grep -E '^check|^bench' "$LOGS/control_flow-$branch.log" | tr '\n' ' ')"
done
# More control flow: early exit, zero trips, nesting (utils/models/control_flow_cases.py),
# and the backend node tests with If or Loop that compile.
for c in "$DIR"/cases/*/; do
  step "case-$(basename "$c")" "$RUN" "$c/pkg" --inputs "$c/in" --check "$c/ref" \
    --rtol 1e-5 --atol 1e-6 -q
done
if [ -f "$DIR/nodes/run_all.sh" ]; then
  OUT=$LOGS bash "$DIR/nodes/run_all.sh" "$DIR/rt" 2>&1 | tail -3 | tee -a "$SUMMARY"
fi
step control_flow-graphs "$RUN" "$DIR/control_flow" --dump-graphs "$LOGS/cf-graphs" -q
say "  dumped: $(ls "$LOGS/cf-graphs" 2>/dev/null | tr '\n' ' ') conditional nodes: $(grep -ci conditional "$LOGS"/cf-graphs/*.dot 2>/dev/null | tr '\n' ' ')"

# Zero-copy I/O: the MLP at batch 1, three timings in one process.
step mlp-zero-copy "$RUN" "$DIR/mlp8x512" --bench 5000 --bench-io -q
grep bench "$LOGS/mlp-zero-copy.log" | tee -a "$SUMMARY"

say "gpu_dynamic_check: $failures failure(s)"
exit $((failures > 0))
