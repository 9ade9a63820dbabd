#!/usr/bin/env bash
# torchvision CNNs exported to ONNX by PyTorch's exporter run on nnperf's engine and
# match PyTorch's outputs within 1e-4 of the output scale (batch 2, symbolic batch dim).
# swin_t: shifted-window attention (Mod, ScatterND, Dropout exported in training mode
# with ratio 0, LayerNorm decomposed, batched-head MatMul).
set -euo pipefail
nnperf=$1
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
models="mobilenet_v2 resnet18 squeezenet1_1 shufflenet_v2_x1_0 swin_t"
/usr/bin/python3 "$here/models/export_torchvision.py" "$work" $models > "$work/export.log" 2>&1 || {
  cat "$work/export.log"; echo "FAIL: export with PyTorch failed"; exit 1; }
passed=0 failed=0
for m in $models; do
  if "$nnperf" run "$work/$m.onnx" --input "input=$work/$m.input.npy" --output-dir "$work/$m.out" --quiet &&
     /usr/bin/python3 "$here/models/compare_npy.py" "$work/$m.out/output.npy" "$work/$m.expected.npy" 1e-4; then
    echo "pass $m"; passed=$((passed + 1))
  else
    echo "FAIL $m"; failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
