#!/usr/bin/env bash
# The tensorrt row on a machine without TensorRT or an NVIDIA GPU (every project machine
# so far): its host-side code (options, engine-cache key and corruption check, calibration
# layout; tests/models/check_trt_support.py) is checked for real, and `nnperf bench` gives
# the row "unavailable" with the pip command while the other rows run and the exit is 0.
# The engine build/run itself needs a GPU and is not exercised here (docs/backends.md).
set -uo pipefail
nnperf=$1
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/.." && pwd)
py=python3
[ -x "$root/.venv/bin/python" ] && py="$root/.venv/bin/python"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }

if ! "$py" -c "import numpy" 2>/dev/null; then
  echo "SKIP: $py cannot import numpy (scripts/install-python.sh)"
  exit 77
fi
if "$py" "$here/models/check_trt_support.py" "$root" > "$work/unit" 2>&1; then
  ok "trt_support checks ($(grep -c '^pass' "$work/unit") passed)"
else
  grep -E '^FAIL|Error' "$work/unit"; bad "trt_support checks"
fi

if [ -e /dev/nvidia0 ] && "$py" -c "import tensorrt" 2>/dev/null; then
  echo "note: TensorRT and a GPU are here; the unavailable-row checks below do not apply"
else
  "$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || { echo "FAIL cannot write zoo model"; exit 1; }
  for prec in fp32 int8; do
    # int8: the native row is fp32-only, so no row runs and bench exits 1 by design;
    # the tensorrt row must still be unavailable (probe first), not failed for want of calib
    "$nnperf" bench "$work/tiny.onnx" --backends native,tensorrt --precision "$prec" \
      --warmup 1 --iterations 3 --min-time 0 --threads 1 --json "$work/$prec.json" > "$work/out" 2> "$work/err"
    rc=$?
    if [ "$prec" = int8 ] || [ $rc -eq 0 ]; then
      ok "$prec: bench with the tensorrt row exits ${rc}"
    else
      bad "$prec: bench with the tensorrt row exits 0 (rc $rc): $(tail -3 "$work/err")"
    fi
    "$py" - "$work/$prec.json" <<'PY' && ok "$prec: tensorrt row unavailable with the pip command" || bad "$prec: tensorrt row json"
import json, sys
rows = {r["backend"]: r for r in json.load(open(sys.argv[1]))["rows"]}
r = rows["tensorrt"]
assert r["status"] == "unavailable", (r["status"], r["reason"])
assert "pip install tensorrt cuda-python" in r["reason"], r["reason"]
assert r["stats"] is None
PY
  done
  probe=$(cd "$root/python" && "$py" -m nnperf_worker --probe tensorrt); rc=$?
  if [ $rc -ne 0 ] && [[ "$probe" == unavailable:* ]]; then
    ok "worker probe: $probe"
  else
    bad "worker probe says unavailable and exits 1 (rc $rc: $probe)"
  fi
fi
echo "passed $passed failed $failed"
[ "$failed" -eq 0 ]
