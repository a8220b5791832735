#!/usr/bin/env bash
# Checks libcgrt on the GPU machine with the binaries built on the build
# machine: the full cgrt-tests suite (whose GPU tests skip elsewhere, and must
# not skip here) and cgc-run on the hand-written test package.
#
#   utils/gpu/gpu_runtime_check.sh [BUILD_DIR]        (default: build)
#
# Run it from the repository root. BUILD_DIR needs only what the runtime
# targets built (a few MB), e.g. with the device tool:
#   carry: BUILD_DIR/bin/cgrt-tests BUILD_DIR/bin/cgc-run BUILD_DIR/lib/libcgrt.so
#          BUILD_DIR/test/Runtime/testpkg BUILD_DIR/test/Runtime/testpkg-nosym
# or the whole runtime-only build folder (cmake -DCGC_RUNTIME_ONLY=ON -B
# build-rt; ninja -C build-rt), which is about 6 MB.
# Exits non-zero if anything fails; logs go to $OUT (or a temporary folder).

set -u
BUILD=${1:-build}
BIN=$BUILD/bin
PKG=$BUILD/test/Runtime/testpkg
LOGS=${OUT:-$(mktemp -d)}
mkdir -p "$LOGS"
failures=0

for f in "$BIN/cgrt-tests" "$BIN/cgc-run" "$BUILD/lib/libcgrt.so" \
         "$PKG/libmodel.so" "$PKG/weights.bin" "$PKG/kernels.cubin" \
         "$PKG/kernels.ptx" "$PKG/ref/y2.npy"; do
  if [ ! -e "$f" ]; then
    echo "gpu_runtime_check: missing $f; build cgrt-tests, cgc-run and" \
         "cgrt-test-package first and carry $BUILD here" >&2
    exit 2
  fi
done

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
  2>/dev/null || echo "(nvidia-smi not available)"

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

# expect NAME RC PATTERN CMD...: runs CMD, wants exit status RC and (unless
# PATTERN is empty) PATTERN in its output.
expect() {
  local name=$1 want=$2 pattern=$3
  shift 3
  local log="$LOGS/$name.log"
  "$@" >"$log" 2>&1
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "$name: exit $rc, expected $want (log: $log)"
    sed 's/^/    /' "$log" | tail -20
  elif [ -n "$pattern" ] && ! grep -qE "$pattern" "$log"; then
    fail "$name: output lacks /$pattern/ (log: $log)"
    sed 's/^/    /' "$log" | tail -20
  else
    pass "$name"
  fi
}

echo
echo "== cgrt-tests"
"$BIN/cgrt-tests" --gtest_color=no --gtest_output="xml:$LOGS/cgrt-tests.xml" \
  >"$LOGS/cgrt-tests.log" 2>&1
rc=$?
grep -E '^\[  (PASSED|FAILED|SKIPPED) \]|^\[==========\]' "$LOGS/cgrt-tests.log"
if [ "$rc" -ne 0 ]; then
  fail "cgrt-tests exited $rc (log: $LOGS/cgrt-tests.log)"
  grep -E '^\[  FAILED  \]' "$LOGS/cgrt-tests.log" | sed 's/^/    /'
else
  pass "cgrt-tests"
fi
# Skips a GPU machine may have, by their stated cause: the stub driver's own
# tests, the no-driver test, and the tests of cgc-compiled packages where no
# cgc sits next to cgrt-tests (the GPU machine has no MLIR to build one).
# Any other skip means a GPU test did not run.
skipped=$(python3 - "$LOGS/cgrt-tests.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
allowed = ("needs the stub driver", "a GPU driver", "no compiler")
for case in ET.parse(sys.argv[1]).iter("testcase"):
    skip = case.find("skipped")
    if skip is None:
        continue
    why = (skip.get("message") or skip.text or "").strip()
    why = why.split("\n")[-1].strip()
    mark = "allowed" if why.startswith(allowed) else "NOT ALLOWED"
    print("%s %s.%s: %s" % (mark, case.get("classname"), case.get("name"),
                            why[:160]))
PY
)
echo "$skipped" | grep -c '^allowed' | sed 's/^/skipped with an allowed cause: /'
if echo "$skipped" | grep -q '^NOT ALLOWED'; then
  fail "cgrt-tests skipped tests that must run on a GPU:"
  echo "$skipped" | grep '^NOT ALLOWED' | sed 's/^/    /'
fi

echo
echo "== cgc-run on the test package"
run=("$BIN/cgc-run" "$PKG")
expect check-and-bench 0 'bench: .*graph launch' \
  "${run[@]}" --inputs "$PKG/inputs" --check "$PKG/ref" --bench 2000
grep -E '^(check|bench)' "$LOGS/check-and-bench.log" | sed 's/^/    /'
expect indexed-input-files 0 'all outputs match' \
  "${run[@]}" --inputs "$PKG/inputs-indexed" --check "$PKG/ref"
expect mismatch-exits-1 1 "check 'y2' +FAIL.*first at \[0, 7\]" \
  "${run[@]}" --inputs "$PKG/inputs" --check "$PKG/ref-bad"
expect random-inputs-saved 0 'wrote' \
  "${run[@]}" --seed 3 --save-inputs "$LOGS/random-in" --outputs "$LOGS/random-out"
expect random-inputs-replayed 0 'all outputs match' \
  "${run[@]}" --inputs "$LOGS/random-in" --check "$LOGS/random-out" \
  --rtol 0 --atol 0
expect ptx-fallback 0 'JIT-compiled from PTX' \
  env CGRT_FAULT=cuModuleLoadData CGRT_VERBOSE=1 \
  "${run[@]}" --inputs "$PKG/inputs" --check "$PKG/ref"
expect launch-failure-named 2 "cuGraphLaunch failed for step 0 \(graph 0 'main'\)" \
  env CGRT_FAULT=cuGraphLaunch "${run[@]}"
expect oom-reported 2 'cuMemAlloc failed for the 5120-byte arena.*out of memory' \
  env CGRT_FAULT=cuMemAlloc:0:2 "${run[@]}"
expect no-driver 2 'no CUDA driver: cannot load /nonexistent/libcuda.so.1' \
  env CGRT_DRIVER_LIBRARY=/nonexistent/libcuda.so.1 "${run[@]}"
expect bad-device 2 'device ordinal 99 is out of range' \
  "${run[@]}" --device 99
corrupt="$LOGS/corrupt-package"
mkdir -p "$corrupt" && cp "$PKG"/* "$corrupt"/ 2>/dev/null
printf '\x01' | dd of="$corrupt/weights.bin" bs=1 seek=10 conv=notrunc 2>/dev/null
expect corrupt-weights 2 'checksum' "$BIN/cgc-run" "$corrupt"

echo
if [ "$failures" -ne 0 ]; then
  echo "gpu_runtime_check: $failures check(s) FAILED (logs in $LOGS)"
  exit 1
fi
echo "gpu_runtime_check: all checks passed (logs in $LOGS)"
