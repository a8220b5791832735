#!/usr/bin/env bash
# Public model code trained by cgc's packages on the GPU (issue 16), from
# the repository root of the device machine. Carries .carry/rt (cgc-run,
# libcgrt, the native call path for Python 3.12), .carry/PART (packages
# packed by bench/transfer.py: NAME.OPTIMIZER folders compiled from
# utils/train/export_public_models.py's exports) and, when present,
# .carry/dropout (the dropout MLP's AdamW package, six batches and
# cgc-interp's losses and state for them).
#
#   utils/train/gpu_public_check.sh PART [public_curves.py options]
#
# 1. the dropout package's 6 steps against cgc-interp (losses within 1e-5
#    relative, rng.offset 6, every state tensor within 1e-5);
# 2. utils/train/public_curves.py over PART's packages: 100-step curves
#    against torch.optim on the module, the step's speed against eager,
#    the captured step and (speed rows) torch.compile. $OUT/curves_PART.json.
set -u
PART=$1; shift
ROOT=$(pwd)
RT=$ROOT/.carry/rt
OUT=${OUT:-/tmp/public-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=${CUDA_LIBS:-/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib}:$RT/lib
export CGC_RUNTIME_LIB=$RT/lib/libcgrt.so
export PYTHONUNBUFFERED=1
failed=0
if [ -d .carry/dropout ]; then
  D=.carry/dropout
  "$RT/bin/cgc-run" $D/pkg --steps 6 --inputs $D/steps -q --state-out "$OUT/dropout_state" \
    > "$OUT/dropout.txt" 2>&1 || { cat "$OUT/dropout.txt"; failed=1; }
  python3 - "$OUT" $D <<'PY' || failed=1
import glob, os, sys
import numpy as np
out, d = sys.argv[1:3]
loss = lambda f: [float(l.split("=")[1]) for l in open(f) if l.startswith("step")]
got, want = loss(out + "/dropout.txt"), loss(d + "/interp.txt")
rel = max(abs(a - b) / abs(b) for a, b in zip(got, want))
worst = 0.0
for f in glob.glob(d + "/interp_state/*.npy"):
    a = np.load(os.path.join(out, "dropout_state", os.path.basename(f)))
    b = np.load(f)
    worst = max(worst, float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30)))
offset = int(np.load(out + "/dropout_state/rng.offset.npy"))
ok = len(got) == 6 and rel <= 1e-5 and worst <= 1e-5 and offset == 6
print("dropout package: %s, losses %s, max rel diff %.2g against cgc-interp, "
      "state %.2g, rng.offset %d" % ("ok" if ok else "FAIL", got, rel, worst, offset))
sys.exit(0 if ok else 1)
PY
fi
rm -rf /tmp/pk && python3 bench/transfer.py unpack /tmp/pk .carry/$PART/$PART.tar.xz.* || failed=1
python3 utils/train/public_curves.py --packages /tmp/pk --out "$OUT/curves_$PART.json" "$@" || failed=1
echo "gpu_public_check: $([ $failed = 0 ] && echo ok || echo FAILED)"
exit $failed
