#!/usr/bin/env bash
# nnperf's ONNX->torch converter (python/nnperf_worker/onnx_to_torch.py) agrees with the
# native engine on zoo models and with PyTorch itself on torchvision exports, within 1e-4
# of the output scale, run eagerly and as TorchScript (trace + freeze; see
# check_onnx_to_torch.py for optimize_for_inference's own numerics).
set -euo pipefail
nnperf=$1
here=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
if ! "$py" -c "import torch, onnx" 2>/dev/null; then
  echo "SKIP: $py cannot import torch and onnx (Debian python3-torch python3-onnx; scripts/install-deps.sh)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
if "$py" "$here/models/check_onnx_to_torch_ops.py"; then
  echo "pass single ops"; passed=$((passed + 1))
else
  echo "FAIL single ops"; failed=$((failed + 1))
fi
for m in tiny mobilenet_v2 resnet18 efficientnet_lite0 squeezenet1_1; do
  "$nnperf" zoo "$m" -o "$work/$m.onnx" > /dev/null
  size=224; [ "$m" = tiny ] && size=32
  "$py" -c "import numpy as np; np.save('$work/$m.in.npy', np.random.default_rng(7).uniform(-1, 1, (2, 3, $size, $size)).astype(np.float32))"
  if "$nnperf" run "$work/$m.onnx" --input "input=$work/$m.in.npy" --output-dir "$work/$m.out" --quiet &&
     "$py" "$here/models/check_onnx_to_torch.py" "$work/$m.onnx" "$work/$m.in.npy" "$work/$m.out/"*.npy 1e-4; then
    echo "pass $m"; passed=$((passed + 1))
  else
    echo "FAIL $m"; failed=$((failed + 1))
  fi
done
# torchvision exports checked against PyTorch's own outputs: channel shuffle through
# Shape/Gather/Reshape/Transpose with a symbolic batch, HardSigmoid squeeze-excite, SiLU
for m in shufflenet_v2_x1_0 mobilenet_v3_small efficientnet_b0; do
  if "$py" "$here/models/export_torchvision.py" "$work" "$m" > "$work/export.log" 2>&1 &&
     "$py" "$here/models/check_onnx_to_torch.py" "$work/$m.onnx" "$work/$m.input.npy" "$work/$m.expected.npy" 1e-4; then
    echo "pass torchvision $m"; passed=$((passed + 1))
  else
    tail -3 "$work/export.log"; echo "FAIL torchvision $m"; failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
