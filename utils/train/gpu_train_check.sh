#!/usr/bin/env bash
# Training packages on the GPU (issue 16), from the repository root of the
# device machine, carrying .carry/rt (cgc-run, libcgrt, the native call
# path), .carry/small (test/Training/Inputs/mlp.onnxtxt's steps compiled
# with three optimizer/loss settings, and cgc-interp's losses for them) and
# .carry/trainpack (bench/train_step.py build, packed by bench/transfer.py).
#
#   1. cgc-run --steps 5 on each small package against the interpreter's
#      losses (the same seeded batch): rel. difference <= 1e-5.
#   2. bench/train_step.py run: loss curves against PyTorch and the step's
#      latency against PyTorch's peers (results in $OUT).
set -u
ROOT=$(pwd)
RT=$ROOT/.carry/rt
OUT=${OUT:-/tmp/train-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=${CUDA_LIBS:-/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib}:$RT/lib
export CGC_RUNTIME_LIB=$RT/lib/libcgrt.so
PYTHON=${PYTHON:-python3}
failed=0
for n in sgd adamw ce; do
  if ! "$RT/bin/cgc-run" ".carry/small/$n" --steps 5 -q > "$OUT/small_$n.txt" 2>&1; then
    echo "small $n: cgc-run failed"; cat "$OUT/small_$n.txt"; failed=1; continue
  fi
  "$PYTHON" - "$OUT/small_$n.txt" ".carry/small/$n.interp.txt" "$n" <<'PY' || failed=1
import sys
got = [float(l.split("=")[1]) for l in open(sys.argv[1]) if l.startswith("step")]
ref = [float(l.split("=")[1]) for l in open(sys.argv[2]) if l.startswith("step")]
rel = max(abs(a - b) / abs(b) for a, b in zip(got, ref))
ok = len(got) == len(ref) == 5 and rel <= 1e-5
print("small %s: %s, max rel diff %.3g against cgc-interp (gpu %s)" % (
    sys.argv[3], "ok" if ok else "FAIL", rel, got))
sys.exit(0 if ok else 1)
PY
done
# A step whose loss is not finite changes nothing and is counted, on the
# device: lr 1e25 makes step 2's and 3's losses infinite.
if "$RT/bin/cgc-run" .carry/small/huge --steps 3 -q --state-out "$OUT/huge_state" > "$OUT/small_huge.txt" 2>&1; then
  "$PYTHON" - "$OUT" <<'PY' || failed=1
import sys, numpy as np, math
out = sys.argv[1]
losses = [float(l.split("=")[1]) for l in open(out + "/small_huge.txt") if l.startswith("step")]
skipped = float(np.load(out + "/huge_state/skipped_steps.npy"))
ok = math.isfinite(losses[0]) and not any(map(math.isfinite, losses[1:])) and skipped == 2
print("small huge-lr: %s, losses %s, skipped_steps %g" % ("ok" if ok else "FAIL", losses, skipped))
sys.exit(0 if ok else 1)
PY
else
  echo "small huge-lr: cgc-run failed"; cat "$OUT/small_huge.txt"; failed=1
fi
rm -rf /tmp/train && "$PYTHON" bench/transfer.py unpack /tmp/train .carry/trainpack/train.tar.xz.* || failed=1
"$PYTHON" bench/train_step.py run --dir /tmp/train --out "$OUT" ${TRAIN_ARGS:-} || failed=1
echo "gpu_train_check: $([ $failed = 0 ] && echo ok || echo FAILED)"
exit $failed
