#!/usr/bin/env bash
# Prints the markdown table of docs/islands-and-planning.md: islands, eager
# regions, kernels and the arena plan of every shared model (cgc --explain).
#   utils/dev/explain_report.sh [CGC] [MODELS_DIR]
set -eu
CGC=${1:-build/bin/cgc}
MODELS=${2:-../shared/models}
echo '| model | islands | eager regions | kernels | arena bytes | lower bound | naive | intermediates: planned / lower bound / naive |'
echo '| --- | --- | --- | --- | --- | --- | --- | --- |'
for spec in mlp8x512 squeezenet1_1 gpt2_tiny "mobilenet_v2_dynbatch --dim N=1" control_flow; do
  set -- $spec
  out=$("$CGC" "$MODELS/$1.onnx" "${@:2}" --explain)
  islands=$(grep -c '^island' <<< "$out" || true)
  eager=$(grep -c '^eager' <<< "$out" || true)
  kernels=$(sed -n 's/^kernels: //p' <<< "$out")
  read -r a lb nv <<< "$(sed -n 's/^arena: \([0-9]*\) bytes, lower bound \([0-9]*\), naive \([0-9]*\)/\1 \2 \3/p' <<< "$out")"
  read -r ia il inv <<< "$(sed -n 's/^intermediates: \([0-9]*\) bytes, lower bound \([0-9]*\), naive \([0-9]*\).*/\1 \2 \3/p' <<< "$out")"
  echo "| $spec | $islands | $eager | $kernels | $a | $lb | $nv | $ia / $il / $inv |"
done
