#!/usr/bin/env bash
# PyTorch 2 from PyPI, once per machine, in a machine-wide venv every checkout reuses
# ($NNP_CACHE/venv-torch2, NNP_CACHE defaulting to ~/.cache/nnperf): the wheel set is
# about 5.5 GB installed (PyPI's Linux torch is the CUDA build; it runs on the CPU), far too
# much to reinstall per clone.
#
#   torch          the LLM rows' PyTorch baseline (`nnperf llm bench --backends torch`)
#   transformers   its generate() and the GGUF loader that dequantises SmolLM2's weights
#   gguf           transformers' GGUF reader
#   accelerate     transformers refuses GGUF files without it
#   numpy          tensors in and out of the worker
#   onnx           the torch rows (torch-eager, torchscript, torch-compile) read the row's ONNX
#                  model with onnx.load and convert it (python/nnperf_worker/onnx_to_torch.py)
# Idempotent: a stamp records the pins; a venv with other pins is upgraded in place.
set -euo pipefail
cd "$(dirname "$0")/.."
pins=(torch==2.14.1 transformers==5.23.0 gguf==0.19.0 accelerate==1.15.0 numpy==2.4.6 onnx==1.23.2)
cache="${NNP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nnperf}"
venv="$cache/venv-torch2"
stamp="$venv/.stamp-$(echo "${pins[*]}" | md5sum | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  mkdir -p "$cache"
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
  echo "install-torch2: installing ${pins[*]} into $venv (about 5.5 GB, once per machine)"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
  touch "$stamp"
fi
echo "install-torch2: $venv has ${pins[*]}"
