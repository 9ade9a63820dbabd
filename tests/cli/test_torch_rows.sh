#!/usr/bin/env bash
# The PyTorch rows end to end: `nnperf bench` with torch-eager and torchscript on zoo:tiny
# runs and agrees with the native row; --torch-model takes the model from a user's
# factory (SqueezeNet 1.1 in plain torch with the weights of the exported ONNX) and agrees too;
# torch-compile runs (PyTorch 2, Inductor's cache warm in the build folder); the GPU rows
# without a GPU are "unavailable" with an install command, and the run exits 0.
# The rows run on PyTorch 2 (scripts/install-torch2.sh); Debian's torch 1.13 (/usr/bin/python3)
# only exports the squeezenet model for --torch-model and reads the JSON.
set -uo pipefail
nnperf=$1
here=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
tpy=${NNPERF_TORCH_PYTHON:-${NNP_CACHE:-$HOME/.cache/nnperf}/venv-torch2/bin/python}
if ! "$py" -c "import torch, onnx" 2>/dev/null; then
  echo "SKIP: $py cannot import torch and onnx (Debian python3-torch python3-onnx; scripts/install-deps.sh)"
  exit 77
fi
if ! "$tpy" -c "import torch, onnx" 2>/dev/null; then
  echo "SKIP: $tpy cannot import torch and onnx (PyTorch 2: scripts/install-torch2.sh)"
  exit 77
fi
# Inductor's cache in the build folder: only the suite's first run compiles cold
inductor_cache="$(cd "$(dirname "$nnperf")" && pwd)/inductor-test-cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
quick=(--warmup 2 --iterations 10 --min-time 0 --threads 1)

"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || { echo "FAIL cannot write zoo model"; exit 1; }
if "$nnperf" bench "$work/tiny.onnx" --backends native,torch-eager,torchscript,torch-compile,ort-cuda,ort-trt,tensorrt \
     --backend-options "torch-compile:cache_dir=$inductor_cache" \
     "${quick[@]}" --json "$work/r.json" > "$work/out" 2> "$work/err"; then
  ok "bench with torch and GPU rows exits 0"
else
  bad "bench with torch and GPU rows exits 0: $(tail -3 "$work/err")"
fi
$py - "$work/r.json" <<'PY' && ok "json: torch rows ok and accurate, missing frameworks unavailable with install" || bad "json rows"
import json, sys
rows = {r["backend"]: r for r in json.load(open(sys.argv[1]))["rows"]}
for b in ("torch-eager", "torchscript", "torch-compile"):
    r = rows[b]
    assert r["status"] == "ok", (b, r["status"], r["reason"])
    assert r["backend_version"].startswith("torch 2."), r["backend_version"]
    assert r["accuracy"]["compared"] and r["accuracy"]["within_tol"], (b, r["accuracy"])
    assert r["phases"]["load_s"] is not None and r["phases"]["first_s"] is not None, r["phases"]
    assert len(r["samples_s"]) >= 10, len(r["samples_s"])
must_be_unavailable = ["ort-cuda", "ort-trt", "tensorrt"] if not __import__("os").path.exists("/dev/nvidia0") else []
for b in must_be_unavailable:
    r = rows[b]
    assert r["status"] == "unavailable", (b, r["status"])
    assert "install" in r["reason"] and "pip install" in r["reason"], (b, r["reason"])
    assert r["stats"] is None, b
print("checked", sorted(rows))
PY

# --torch-model: the user's nn.Module in place of the ONNX conversion
if $py "$here/models/export_torchvision.py" --weights "$work" squeezenet1_1 > "$work/export.log" 2>&1; then
  if NNP_TEST_SQUEEZENET_WEIGHTS="$work/squeezenet1_1.weights.npz" "$nnperf" bench "$work/squeezenet1_1.onnx" --backends native,torch-eager --torch-model \
       "$here/models/torch_factory_squeezenet.py:squeezenet" --warmup 1 --iterations 3 --min-time 0 --threads 1 \
       --json "$work/f.json" > "$work/fout" 2> "$work/ferr"; then
    $py - "$work/f.json" <<'PY' && ok "--torch-model row runs the factory's module and agrees" || bad "--torch-model json"
import json, sys
rows = {r["backend"]: r for r in json.load(open(sys.argv[1]))["rows"]}
r = rows["torch-eager"]
assert r["status"] == "ok", r["reason"]
assert "model from" in r["note"] and "squeezenet" in r["note"], r["note"]
assert r["accuracy"]["within_tol"], r["accuracy"]
PY
  else
    bad "--torch-model bench: $(tail -3 "$work/ferr")"
  fi
else
  bad "export squeezenet: $(tail -3 "$work/export.log")"
fi

# a factory that does not exist: the row fails with a reason naming it, the run goes on
"$nnperf" bench "$work/tiny.onnx" --backends native,torch-eager --torch-model "$work/nope.py:f" "${quick[@]}" \
  --json "$work/n.json" > /dev/null 2>&1
$py - "$work/n.json" <<'PY' && ok "missing factory: row says why" || bad "missing factory: row says why"
import json, sys
rows = {r["backend"]: r for r in json.load(open(sys.argv[1]))["rows"]}
assert rows["native"]["status"] == "ok"
assert rows["torch-eager"]["status"] != "ok" and "nope.py" in rows["torch-eager"]["reason"], rows["torch-eager"]
PY
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
