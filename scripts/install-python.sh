#!/usr/bin/env bash
# Creates the project's Python environment (.venv) for the external framework workers,
# from PyPI, with pinned versions (recorded in every result as the backend version).
#   onnxruntime  the ort-cpu backend (ONNX Runtime's CPU execution provider)
#   openvino     the openvino backend (OpenVINO's CPU plugin)
#   numpy        tensors in and out of the Python worker
# Uses Debian's python3 (python3-venv): the same interpreter on every machine.
set -euo pipefail
cd "$(dirname "$0")/.."
pins=(onnxruntime==1.32.0 openvino==2026.4.1 numpy==2.4.6)
if [ -x .venv/bin/python ] && .venv/bin/python - "${pins[@]}" <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    assert version(name) == want, (name, version(name), want)
PY
  echo "install-python: .venv has ${pins[*]}"
  exit 0
fi
[ -x .venv/bin/python ] || /usr/bin/python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check "${pins[@]}"
echo "install-python: .venv has ${pins[*]}"
