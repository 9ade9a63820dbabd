#!/usr/bin/env bash
# The tflite row (docs/backend-tflite.md): every op of nnperf's ONNX->TFLite converter
# against the native engine (check_tflite_ops.py), an ok tflite row on zoo:tiny within the
# fp32 tolerance of native, `nnperf convert --to tflite`, and a model with an op the
# converter lacks: the tflite row is 'unsupported' naming the op, the native row is kept.
set -euo pipefail
nnperf=$1
here=$(cd "$(dirname "$0")/.." && pwd)
py=${NNPERF_PYTHON:-$here/../.venv/bin/python}
if ! "$py" -c "import ai_edge_litert.interpreter, onnx, flatbuffers" 2>/dev/null; then
  echo "SKIP: $py cannot import ai_edge_litert, onnx and flatbuffers (scripts/install-python.sh)"
  exit 77
fi
export NNPERF_PYTHON=$py NNPERF_PYTHONPATH=$here/../python
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
check() { # NAME COMMAND...
  local name=$1; shift
  if "$@" > "$work/log" 2>&1; then echo "pass $name"; passed=$((passed + 1))
  else tail -5 "$work/log"; echo "FAIL $name"; failed=$((failed + 1)); fi
}
check "converter ops vs native" "$py" "$here/models/check_tflite_ops.py" "$nnperf" "$work/ops"
bench() { "$nnperf" bench "$1" --backends native,tflite --batch 1 --threads 1 --iterations 5 --min-time 0 \
            --processes 1 --no-history --json "$2"; }
row_ok() {
  bench zoo:tiny "$work/tiny.json" &&
  "$py" - "$work/tiny.json" <<'PY'
import json, sys
rows = {r["backend"]: r for r in json.load(open(sys.argv[1]))["rows"]}
t = rows["tflite"]
assert t["status"] == "ok", t["reason"]
assert t["accuracy"]["within_tol"], t["accuracy"]
PY
}
check "tflite row ok on zoo:tiny, within the fp32 tolerance" row_ok
convert_cli() {
  "$nnperf" convert zoo:tiny --to tflite -o "$work/tiny.tflite" && [ -s "$work/tiny.tflite" ] &&
  ! "$nnperf" convert zoo:tiny --to onnx -o "$work/x" 2>/dev/null &&
  head -c 100 /dev/zero | tr '\0' 'z' > "$work/bad.onnx" &&
  ! "$nnperf" convert "$work/bad.onnx" --to tflite -o "$work/bad.tflite" 2> "$work/err" &&
  grep -q "not a readable ONNX model" "$work/err" && [ "$(wc -l < "$work/err")" -eq 1 ]
}
check "nnperf convert --to tflite (and a corrupt file: one line, exit 1)" convert_cli
unsupported() {
  "$py" - "$work/erf.onnx" <<'PY'
import sys
from onnx import TensorProto as T, helper as h
g = h.make_graph([h.make_node("Relu", ["x"], ["r"]), h.make_node("Erf", ["r"], ["y"], name="erf_node")], "erf",
                 [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 8, 8])], [h.make_tensor_value_info("y", T.FLOAT, None)])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)]); m.ir_version = 8
open(sys.argv[1], "wb").write(m.SerializeToString())
PY
  bench "$work/erf.onnx" "$work/erf.json" || true  # an unsupported row is not a failure of the run
  "$py" - "$work/erf.json" <<'PY'
import json, sys
rows = {r["backend"]: r for r in json.load(open(sys.argv[1]))["rows"]}
assert rows["native"]["status"] == "ok", rows["native"]
assert rows["tflite"]["status"] == "unsupported", rows["tflite"]
assert "'Erf'" in rows["tflite"]["reason"] and "erf_node" in rows["tflite"]["reason"], rows["tflite"]["reason"]
print(rows["tflite"]["reason"])
PY
  ! "$nnperf" convert "$work/erf.onnx" --to tflite -o "$work/erf.tflite" 2> "$work/err" && grep -q "'Erf'" "$work/err"
}
check "op the converter lacks: tflite row unsupported naming it, native kept" unsupported
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
