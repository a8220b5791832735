#!/usr/bin/env bash
# On the GPU machine: the same models compiled by two versions of cgc, run
# side by side. For every package BEFORE/<name> with a twin AFTER/<name>:
#   - both run on the same seeded random inputs; AFTER's outputs must equal
#     BEFORE's bit for bit for deterministic packages (a name containing
#     "deterministic", compiled with --deterministic); others (split-K
#     products add their partial sums atomically, in varying order) within
#     cgc-run's default rtol 1e-4 / atol 1e-5, and the line shows how far a
#     second run of BEFORE itself moves;
#   - both are timed ROUNDS times, alternating, `cgc-run --bench N`, and
#     the medians of the rounds are printed with their ratio.
#
#   utils/gpu/compare_packages.sh BEFORE AFTER RUNTIME_BUILD [N ROUNDS]
#
# RUNTIME_BUILD holds bin/cgc-run and lib/libcgrt.so. Exits non-zero when a
# package fails to run or the outputs differ.
set -u
before=$1 after=$2 rt=$3 n=${4:-3000} rounds=${5:-3}
run=$rt/bin/cgc-run
work=$(mktemp -d)
status=0
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for pkg in "$before"/*/; do
  name=$(basename "$pkg")
  [ -f "$after/$name/libmodel.so" ] || continue
  exact=0
  [[ $name == *deterministic* ]] && exact=1
  if ! "$run" "$before/$name" -q --seed 7 --save-inputs "$work/$name.in" \
         --outputs "$work/$name.out" >/dev/null; then
    echo "RESULT $name: FAIL (BEFORE does not run)"
    status=1
    continue
  fi
  # How far BEFORE moves from one run to the next (atomics).
  "$run" "$before/$name" -q --inputs "$work/$name.in" \
    --check "$work/$name.out" --rtol 0 --atol 0 >"$work/$name.self"
  self=$(sed -n 's/.*max abs err \([^ ]*\).*/\1/p' "$work/$name.self" |
         sort -g | tail -1)
  tol=(--rtol 1e-4 --atol 1e-5)
  [ $exact = 1 ] && tol=(--rtol 0 --atol 0)
  if ! "$run" "$after/$name" -q --inputs "$work/$name.in" \
         --check "$work/$name.out" "${tol[@]}" >"$work/$name.check"; then
    echo "RESULT $name: FAIL (outputs differ or a run failed)"
    cat "$work/$name.check"
    status=1
    continue
  fi
  for r in $(seq "$rounds"); do
    for side in before after; do
      dir=$before/$name
      [ $side = after ] && dir=$after/$name
      "$run" "$dir" -q --bench "$n" 2>&1 |
        sed -n 's/.*median \([0-9.]*\) us.*/\1/p' >>"$work/$name.$side"
    done
  done
  b=$(median <"$work/$name.before")
  a=$(median <"$work/$name.after")
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", a / b}')
  worst=$(sed -n 's/.*max abs err \([^ ]*\).*/\1/p' "$work/$name.check" |
          sort -g | tail -1)
  what="bit-identical"
  [ "${tol[1]}" = 0 ] || what="max abs diff $worst (BEFORE vs itself: $self)"
  echo "RESULT $name: PASS outputs $what; median us before $b after $a (after/before $ratio; rounds: $(tr '\n' ' ' <"$work/$name.before")| $(tr '\n' ' ' <"$work/$name.after"))"
done
rm -rf "$work"
exit $status
