#!/usr/bin/env bash
# codegen_snapshot.sh CGC OUT: the generated code of every in-tree test model
# (and of ../shared/models where present) written to OUT, one folder a model
# and option set, for diffing before and after a refactor of the compiler:
#   utils/dev/codegen_snapshot.sh /tmp/old-cgc /tmp/before
#   utils/dev/codegen_snapshot.sh build/bin/cgc /tmp/after
#   diff -r /tmp/before /tmp/after
# Each folder keeps kernels.cu, model.cpp, model.h, metadata.json and the
# checksum of weights.bin; a model cgc refuses keeps its error message.
set -uo pipefail
cgc=$(realpath "$1")
out=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
snap() { # snap NAME MODEL [OPTIONS...]
  local name=$1 model=$2; shift 2
  local dir="$out/$name" tmp
  tmp=$(mktemp -d)
  mkdir -p "$dir"
  if "$cgc" "$model" --emit=package -o "$tmp/pkg" "$@" >"$tmp/log" 2>&1; then
    for f in kernels.cu model.cpp model.h metadata.json; do
      [ -f "$tmp/pkg/$f" ] && cp "$tmp/pkg/$f" "$dir/"
    done
    [ -f "$tmp/pkg/weights.bin" ] &&
      sha256sum <"$tmp/pkg/weights.bin" >"$dir/weights.sha256"
  else
    sed "s|$top/||g" "$tmp/log" >"$dir/error.txt"
  fi
  rm -rf "$tmp"
}
cd "$top"
while IFS= read -r model; do
  name=$(echo "${model%.*}" | tr '/' '_')
  snap "$name" "$model"
  snap "$name.sm_80" "$model" --arch=sm_80
done < <(find test examples -name '*.onnxtxt' -o -name '*.onnx' | grep -v fuzz | sort)
shared=$top/../shared/models
if [ -d "$shared" ]; then
  snap mlp8x512 "$shared/mlp8x512.onnx"
  snap squeezenet1_1 "$shared/squeezenet1_1.onnx"
  snap mobilenet_v2.N1 "$shared/mobilenet_v2_dynbatch.onnx" --dim N=1
  snap mobilenet_v2.buckets "$shared/mobilenet_v2_dynbatch.onnx" --dim N=1,2,4,8 --pad-to-bucket
  snap gpt2_tiny "$shared/gpt2_tiny.onnx"
  snap gpt2_tiny.deterministic "$shared/gpt2_tiny.onnx" --deterministic
  snap gpt2_tiny.sm_80 "$shared/gpt2_tiny.onnx" --arch=sm_80
  snap control_flow "$shared/control_flow.onnx"
  snap control_flow.host "$shared/control_flow.onnx" --control-flow=host
fi
echo "snapshot of $(ls "$out" | wc -l) compilations in $out"
