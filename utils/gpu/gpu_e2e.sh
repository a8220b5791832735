#!/usr/bin/env bash
# On the GPU machine: runs every compiled package under CARRY (folders with
# a libmodel.so) against its reference outputs (CARRY/<name>-data/ref, made
# by utils/models/make_reference.py with onnxruntime on CPU) and times it.
#
#   utils/gpu/gpu_e2e.sh CARRY RUNTIME_BUILD [RTOL ATOL BENCH]
#
# RUNTIME_BUILD holds bin/cgc-run and lib/libcgrt.so. Prints one line per
# model; exits non-zero if any model fails to load, run or match.
set -u
CARRY=$1
RT=$2
RTOL=${3:-1e-3}
ATOL=${4:-1e-4}
BENCH=${5:-2000}
status=0
for pkg in "$CARRY"/*/; do
  pkg=${pkg%/}
  name=$(basename "$pkg")
  [ -f "$pkg/libmodel.so" ] || continue
  data="$CARRY/$name-data"
  echo "== $name"
  if "$RT/bin/cgc-run" "$pkg" --inputs "$data/inputs" --check "$data/ref" \
       --rtol "$RTOL" --atol "$ATOL" --bench "$BENCH"; then
    echo "RESULT $name: PASS"
  else
    echo "RESULT $name: FAIL"
    status=1
  fi
done
exit $status
