#!/usr/bin/env bash
# nnperf bench --backends native,xnnpack on zoo:tiny: both rows run, xnnpack's outputs
# agree with native's within the bench tolerance; a model with an op the xnnpack backend
# cannot translate gives a row with status "unsupported" naming the op (no crash).
# Skips (exit 77) when nnperf was built without XNNPACK.
set -uo pipefail
source "$(dirname "$0")/common.sh"
quick=(--warmup 2 --iterations 10 --min-time 0 --threads 1 --processes 1)

if ! "$nnperf" backends | grep -q "^xnnpack *available"; then
  echo "SKIP: xnnpack backend unavailable: $("$nnperf" backends | grep '^xnnpack')"
  exit 77
fi

if "$nnperf" bench zoo:tiny --backends native,xnnpack --batch 1 "${quick[@]}" --json "$work/r.json" > "$work/out" 2> "$work/err"; then
  ok "bench native,xnnpack on zoo:tiny runs"
else
  bad "bench native,xnnpack on zoo:tiny runs: $(cat "$work/err")"
fi
$py - "$work/r.json" <<'PY' && ok "json: xnnpack row ok, within tolerance of native" || bad "json: xnnpack row ok, within tolerance of native"
import json, sys
rows = {r["backend"]: r for r in json.load(open(sys.argv[1]))["rows"]}
x = rows["xnnpack"]
assert rows["native"]["status"] == "ok" and x["status"] == "ok", x
assert x["accuracy"]["within_tol"] is True and x["accuracy"]["max_rel"] <= 1e-4, x["accuracy"]
assert len(x["samples_s"]) >= 10
PY

# a dynamic-shape scenario (symbolic H and W): a runtime per drawn shape, outputs match
"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null
$py -c "
import onnx, sys
m = onnx.load(sys.argv[1]); d = m.graph.input[0].type.tensor_type.shape.dim
d[2].dim_param = 'H'; d[3].dim_param = 'W'; onnx.save(m, sys.argv[2])" "$work/tiny.onnx" "$work/tiny_dyn.onnx"
"$nnperf" bench "$work/tiny_dyn.onnx" --backends native,xnnpack --shape "dynamic:Nx3x[24..40]x[24..40]" --batch 2 \
  "${quick[@]}" --json "$work/d.json" > /dev/null 2> "$work/err"
$py - "$work/d.json" <<'PY' && ok "dynamic scenario: xnnpack row ok, within tolerance" || bad "dynamic scenario: $(cat "$work/err")"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
x = rows[1]
assert x["status"] == "ok" and x["scenario"] == "dynamic:2x3x[24..40]x[24..40]", (x["status"], x["reason"])
assert x["stats"]["n"] >= 10 and x["accuracy"]["within_tol"] is True, x["accuracy"]
PY

# an op without a translation (Erf, from ONNX's own node tests) -> status unsupported
erf=/usr/share/libonnx-testdata/data/node/test_erf/model.onnx
if [ -f "$erf" ]; then
  "$nnperf" bench "$erf" --backends xnnpack "${quick[@]}" --json "$work/u.json" > "$work/out" 2> "$work/err"
  $py - "$work/u.json" <<'PY' && ok "unsupported op: row unsupported, op named" || bad "unsupported op: row unsupported, op named: $(cat "$work/out" "$work/err")"
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
assert r["status"] == "unsupported", r
assert "Erf" in (r.get("reason") or ""), r
PY
else
  echo "note: $erf missing (libonnx-testdata), unsupported-op case not run"
fi

# models from PyTorch's own exporter: squeezenet1_1 (Concat, ceil_mode MaxPool, Flatten)
# runs and agrees with native; shufflenet_v2_x1_0 (channel shuffle: Reshape of a spatial
# tensor, Transpose) is unsupported with the ops named
here=$(cd "$(dirname "$0")/.." && pwd)
if $py -c "import torch, torchvision" 2> /dev/null; then
  $py "$here/models/export_torchvision.py" "$work" squeezenet1_1 shufflenet_v2_x1_0 > "$work/export.log" 2>&1 ||
    bad "export with PyTorch: $(tail -3 "$work/export.log")"
  "$nnperf" bench "$work/squeezenet1_1.onnx" --backends native,xnnpack "${quick[@]}" --json "$work/sq.json" > /dev/null 2> "$work/err"
  $py - "$work/sq.json" <<'PY' && ok "torchvision squeezenet1_1: xnnpack ok, within tolerance" || bad "torchvision squeezenet1_1: $(cat "$work/err")"
import json, sys
rows = {r["backend"]: r for r in json.load(open(sys.argv[1]))["rows"]}
x = rows["xnnpack"]
assert x["status"] == "ok" and x["accuracy"]["within_tol"] is True, (x["status"], x["reason"], x["accuracy"])
PY
  "$nnperf" bench "$work/shufflenet_v2_x1_0.onnx" --backends xnnpack "${quick[@]}" --json "$work/sh.json" > /dev/null 2> "$work/err"
  $py - "$work/sh.json" <<'PY' && ok "torchvision shufflenet_v2_x1_0: unsupported, Transpose named" || bad "torchvision shufflenet_v2_x1_0: $(cat "$work/err")"
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
assert r["status"] == "unsupported" and "Transpose" in r["reason"], r
PY
else
  echo "note: PyTorch not importable by $py, torchvision cases not run"
fi

test_summary
