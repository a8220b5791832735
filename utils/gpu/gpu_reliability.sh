#!/usr/bin/env bash
# The GPU rows of docs/reliability.md, on the GPU machine: runtime bad inputs
# and faults (cgrt-tests), threads with their own and with one shared instance,
# the soak (replays, load/unload cycles, fault cycles) with device and host
# memory before and after, and the same threads under compute-sanitizer
# (memcheck with leak check, racecheck, initcheck, synccheck).
#
#   utils/gpu/gpu_reliability.sh RT_DIR MLP_PACKAGE MLP_DATA
#
# RT_DIR is a runtime build folder (a CGC_RUNTIME_ONLY build does) holding
# bin/cgrt-tests, bin/cgrt-stress, bin/cgc-run, lib/libcgrt.so and
# test/Runtime/testpkg{,-nosym}; RT_DIR/src, if there, holds the test/Runtime
# sources the binaries were built from (for the counts). MLP_PACKAGE is
# mlp8x512 compiled by cgc, MLP_DATA what utils/models/make_reference.py wrote for
# it (inputs/, ref/). For example, prepared on the build machine:
#   cmake -G Ninja -S . -B build-rt -DCGC_RUNTIME_ONLY=ON && ninja -C build-rt \
#     cgrt-tests cgrt-stress cgc-run cgrt-test-package cgrt
#   build/bin/cgc ../shared/models/mlp8x512.onnx -o .carry/rel/mlp8x512
#   utils/models/make_reference.py ../shared/models/mlp8x512.onnx .carry/rel/mlp8x512-data
# and carried to the GPU machine (.carry/rt, .carry/rel). Every step has a
# time limit and the whole run keeps within $BUDGET seconds (default 330),
# skipping what no longer fits. The logs end up in $OUT (or a temporary
# folder) as gpu-reliability-logs.tar.gz, with summary.txt beside it: the
# summary lines, printed at the end too, are what docs/reliability.md quotes.
#
# Sizes: REPLAYS (1000000), LOADS (1000), FAULT_CYCLES (300), THREADS (8),
# THREAD_RUNS (2000 per thread), SAN_RUNS (25 per thread under a sanitizer).

set -u
RT=${1:?usage: gpu_reliability.sh RT_DIR MLP_PACKAGE MLP_DATA}
MLP=${2:?usage: gpu_reliability.sh RT_DIR MLP_PACKAGE MLP_DATA}
MLPDATA=${3:?usage: gpu_reliability.sh RT_DIR MLP_PACKAGE MLP_DATA}
BUDGET=${BUDGET:-330}
REPLAYS=${REPLAYS:-1000000}
LOADS=${LOADS:-1000}
FAULT_CYCLES=${FAULT_CYCLES:-300}
THREADS=${THREADS:-8}
THREAD_RUNS=${THREAD_RUNS:-2000}
SAN_RUNS=${SAN_RUNS:-25}
DEST=${OUT:-$(mktemp -d)}
LOGS=$(mktemp -d)
mkdir -p "$DEST"
HERE=$(cd "$(dirname "$0")" && pwd)
STRESS=$RT/bin/cgrt-stress
TESTPKG=$RT/test/Runtime/testpkg
START=$(date +%s)
SUMMARY=$LOGS/summary.txt
: >"$SUMMARY"
# Few files come back from the device machine: pack the logs on the way out.
pack() {
  tar czf "$DEST/gpu-reliability-logs.tar.gz" -C "$LOGS" . 2>/dev/null
  cp "$SUMMARY" "$DEST/summary.txt"
}
trap pack EXIT

for f in "$RT/bin/cgrt-tests" "$STRESS" "$RT/bin/cgc-run" \
         "$RT/lib/libcgrt.so" "$TESTPKG/libmodel.so" "$MLP/libmodel.so" \
         "$MLPDATA/ref"; do
  if [ ! -e "$f" ]; then
    echo "gpu_reliability: missing $f" >&2
    exit 2
  fi
done

note() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - ($(date +%s) - START))); }

# step NAME CAP CMD...: runs CMD with a limit of CAP seconds (less if the
# budget is nearly spent; skipped when under 10 s are left), output in
# $LOGS/NAME.log. Sets RC.
step() {
  local name=$1 cap=$2
  shift 2
  local limit
  limit=$(left)
  limit=$((limit - 5))
  [ "$limit" -gt "$cap" ] && limit=$cap
  if [ "$limit" -lt 10 ]; then
    note "$name: SKIPPED (budget spent)"
    RC=125
    return
  fi
  echo "== $name (limit ${limit}s): $*"
  local t0
  t0=$(date +%s)
  timeout -k 5 "$limit" "$@" >"$LOGS/$name.log" 2>&1
  RC=$?
  echo "   exit $RC in $(($(date +%s) - t0)) s"
  [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ] && note "$name: TIMED OUT after ${limit}s"
}

# The cgrt-stress summary lines of a log (and the fault table).
stress_lines() {
  grep -E '^cgrt-stress: [a-z]+: |^  (load|run): |^  first problem' "$1" |
    tee -a "$SUMMARY"
}

echo "== machine"
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
    2>/dev/null | sed 's/^/gpu: /' || echo "gpu: (nvidia-smi not available)"
  kernel=$(uname -r)
  case "$kernel" in
    4.4.0*) echo "kernel: $kernel (gVisor)" ;;
    *fc*) echo "kernel: $kernel (Firecracker)" ;;
    *) echo "kernel: $kernel" ;;
  esac
} | tee -a "$SUMMARY"
SAN=$(command -v compute-sanitizer || true)
for candidate in /usr/local/cuda/bin/compute-sanitizer \
                 /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [ -z "$SAN" ] && [ -x "$candidate" ] && SAN=$candidate
done
if [ -n "$SAN" ]; then
  note "compute-sanitizer: $("$SAN" --version 2>&1 | grep -m1 -i version)"
else
  note "compute-sanitizer: not found"
fi

# 1. Bad inputs and faults: the whole cgrt-tests suite, counted.
SOURCES=test/Runtime
[ -d "$RT/src" ] && SOURCES=$RT/src
step counts 60 python3 "$HERE/runtime_reliability_counts.py" \
  --cgrt-tests "$RT/bin/cgrt-tests" --sources "$SOURCES"
grep -E '^runtime |failed|not in this' "$LOGS/counts.log" | tee -a "$SUMMARY"

# 2. The reference cgrt-stress checks against is onnxruntime's, to tolerance.
step mlp-check 30 "$RT/bin/cgc-run" "$MLP" --inputs "$MLPDATA/inputs" \
  --check "$MLPDATA/ref" --bench 2000
grep -E '^(check|bench)|error' "$LOGS/mlp-check.log" | sed 's/^/mlp8x512: /' |
  tee -a "$SUMMARY"

# 3. Threads: an instance each, one shared; the test package and mlp8x512.
for pkg in testpkg mlp8x512; do
  dir=$TESTPKG
  [ "$pkg" = mlp8x512 ] && dir=$MLP
  for mode in own shared; do
    step "threads-$mode-$pkg" 40 "$STRESS" "$dir" "$mode" \
      --threads "$THREADS" --iterations "$THREAD_RUNS" --max-seconds 30
    note "[$pkg]"
    stress_lines "$LOGS/threads-$mode-$pkg.log"
  done
done

# 4. Soak on mlp8x512: replays, load/unload cycles.
step soak-replays 100 "$STRESS" "$MLP" replays --iterations "$REPLAYS" \
  --max-seconds 90
stress_lines "$LOGS/soak-replays.log"
step soak-loads 60 "$STRESS" "$MLP" loads --iterations "$LOADS" \
  --max-seconds 50
stress_lines "$LOGS/soak-loads.log"

# 5. The threads under compute-sanitizer.
# sanitize NAME TOOL CMD...: one sanitizer run and its summary line.
sanitize() {
  local name=$1 tool=$2
  shift 2
  local extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  step "$name" 45 "$SAN" --tool "$tool" "${extra[@]}" --error-exitcode 3 "$@"
  local log=$LOGS/$name.log
  local found
  found=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Device not supported|error' "$log" |
          grep -vE '^cgrt-stress' | head -3 | tr '\n' ' ')
  note "$name: exit $RC; ${found:-no sanitizer summary}"
  grep -E '^cgrt-stress: [a-z]+: |^\[  (PASSED|FAILED) ' "$log" |
    sed "s/^/  $name: /" | tee -a "$SUMMARY"
}
if [ -n "$SAN" ]; then
  sanitize memcheck-own "memcheck" "$STRESS" "$MLP" own --threads 4 \
    --iterations "$SAN_RUNS" --input-sets 4
  sanitize memcheck-shared "memcheck" "$STRESS" "$MLP" shared --threads 4 \
    --iterations "$SAN_RUNS" --input-sets 4
  sanitize racecheck-own "racecheck" "$STRESS" "$MLP" own --threads 4 \
    --iterations "$SAN_RUNS" --input-sets 4
  sanitize racecheck-shared "racecheck" "$STRESS" "$MLP" shared --threads 4 \
    --iterations "$SAN_RUNS" --input-sets 4
fi

# 6. Fault cycles with memory measured.
step soak-faults 35 "$STRESS" "$MLP" faults --iterations "$FAULT_CYCLES" \
  --max-seconds 25
stress_lines "$LOGS/soak-faults.log"

# 7. More sanitizers while time is left.
if [ -n "$SAN" ]; then
  sanitize memcheck-tests "memcheck" "$RT/bin/cgrt-tests" \
    '--gtest_filter=GpuTest.*Buffers*:GpuTest.Misaligned*:GpuTest.Threads*:GpuTest.Shared*:GpuTest.RunMatches*:GpuTest.ConcurrentRuns*:GpuTest.TwoModels*'
  sanitize initcheck-shared "initcheck" "$STRESS" "$MLP" shared --threads 2 \
    --iterations 10 --input-sets 2
  sanitize synccheck-shared "synccheck" "$STRESS" "$MLP" shared --threads 2 \
    --iterations 10 --input-sets 2
  sanitize racecheck-testpkg "racecheck" "$STRESS" "$TESTPKG" shared \
    --threads 4 --iterations "$SAN_RUNS"
fi

echo
note "total: $(($(date +%s) - START)) s"
echo "== summary (logs: $DEST/gpu-reliability-logs.tar.gz)"
cat "$SUMMARY"
