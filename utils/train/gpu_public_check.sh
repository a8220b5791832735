#!/usr/bin/env bash
# Public model code trained by cgc's packages on the GPU (issue 16), from
# the repository root of the device machine. Carries .carry/rt (cgc-run,
# libcgrt, the native call path for Python 3.12), .carry/PART (packages
# packed by bench/transfer.py: NAME.OPTIMIZER folders compiled from
# utils/train/export_public_models.py's exports) and, when present,
# .carry/dropout (the dropout MLP's AdamW package, six batches and
# cgc-interp's losses and state for them) and .carry/ksteps (the same with
# --steps-per-launch=3, two rings of 3 batches).
#
#   utils/train/gpu_public_check.sh PART [public_curves.py options]
#
# 1. the dropout and K-steps packages' 6 steps against cgc-interp (losses
#    and every state tensor, rng.offset included, within 1e-5 relative);
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
# A small package's steps against cgc-interp's: the losses within 1e-5
# relative, every state tensor within 1e-5, and rng.offset where present.
check_steps() {  # NAME FOLDER RUNS INPUTS
  local name=$1 d=$2 runs=$3 inputs=$4
  "$RT/bin/cgc-run" $d/pkg --steps $runs --inputs $d/$inputs -q --state-out "$OUT/${name}_state" \
    > "$OUT/$name.txt" 2>&1 || { cat "$OUT/$name.txt"; failed=1; return; }
  python3 - "$OUT" $d $name <<'PY' || failed=1
import glob, os, sys
import numpy as np
out, d, name = sys.argv[1:4]
loss = lambda f: [float(l.split("=")[1]) for l in open(f) if l.startswith("step")]
got, want = loss("%s/%s.txt" % (out, name)), loss(d + "/interp.txt")
rel = max(abs(a - b) / abs(b) for a, b in zip(got, want))
worst = 0.0
for f in glob.glob(d + "/interp_state/*.npy"):
    a = np.load(os.path.join(out, name + "_state", os.path.basename(f)))
    b = np.load(f)
    worst = max(worst, float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30)))
ok = len(got) == len(want) == 6 and rel <= 1e-5 and worst <= 1e-5
print("%s package: %s, losses %s, max rel diff %.2g against cgc-interp, "
      "state %.2g" % (name, "ok" if ok else "FAIL", got, rel, worst))
sys.exit(0 if ok else 1)
PY
}
# Dropout: six steps, six batches. K steps per launch: two launches of 3
# steps over rings of 3 batches, against cgc-interp's six plain steps.
[ -d .carry/dropout ] && check_steps dropout .carry/dropout 6 steps
[ -d .carry/ksteps ] && check_steps ksteps .carry/ksteps 2 ring
rm -rf /tmp/pk && python3 bench/transfer.py unpack /tmp/pk .carry/$PART/$PART.tar.xz.* || failed=1
python3 utils/train/public_curves.py --packages /tmp/pk --out "$OUT/curves_$PART.json" "$@" || failed=1
echo "gpu_public_check: $([ $failed = 0 ] && echo ok || echo FAILED)"
exit $failed
