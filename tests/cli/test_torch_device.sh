#!/usr/bin/env bash
# The torch rows' device and the edge metrics (issues 23, 28), on a machine without a GPU:
# --device cuda rows are "unavailable" with the reason and the run exits 0; the CUDA code
# path's fp16 (module.half, half inputs, float32 outputs) runs on --device cpu and agrees
# with native fp32; --realistic twin rows (C and Python workers) run and agree; every ok
# row has its footprint (runtime files loaded, model file) and an energy that is a counter
# or "not available here"; torch-compile on a warm Inductor cache (in the build folder)
# has its compile phase, and a graph break is the row's reason.
set -uo pipefail
nnperf=$1
here=$(cd "$(dirname "$0")/.." && pwd)
tpy=${NNPERF_TORCH_PYTHON:-${NNP_CACHE:-$HOME/.cache/nnperf}/venv-torch2/bin/python}
if ! "$tpy" -c "import torch, onnx" 2>/dev/null; then
  echo "SKIP: $tpy cannot import torch and onnx (PyTorch 2: scripts/install-torch2.sh)"
  exit 77
fi
inductor_cache="$(cd "$(dirname "$nnperf")" && pwd)/inductor-test-cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
quick=(--warmup 2 --iterations 10 --min-time 0 --threads 1 --processes 1 --no-history)
"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || { echo "FAIL cannot write zoo model"; exit 1; }

# 1. no GPU: the issue's command writes an unavailable row with its reason; since the exit
# rule of issue 25 ("nothing asked for could run" is exit 1), it exits 1
if [ ! -e /dev/nvidia0 ]; then
  "$nnperf" bench "$work/tiny.onnx" --backends torch-eager --device cuda --precision fp16 "${quick[@]}" \
       --json "$work/cuda.json" > "$work/cuda.out" 2>&1
  if [ $? -eq 1 ]; then
    "$tpy" - "$work/cuda.json" <<'PY' && ok "--device cuda without a GPU: unavailable, reason, exit 1" || bad "cuda row"
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
assert r["status"] == "unavailable" and "CUDA" in r["reason"], (r["status"], r["reason"])
assert r["device"] == "cuda" and r["label"].endswith(" cuda"), (r["device"], r["label"])
PY
  else
    bad "--device cuda exits 1: $(tail -3 "$work/cuda.out")"
  fi
fi
"$nnperf" bench "$work/tiny.onnx" --device tpu > /dev/null 2>&1
[ $? -eq 2 ] && ok "--device tpu is a usage error" || bad "--device tpu is a usage error"

# 2. fp16 through the device code path on the CPU, --realistic twins, footprint, energy
# (exit 1 is expected: native has no fp16, so its fp16 rows are 'unsupported')
"$nnperf" bench "$work/tiny.onnx" --backends native,torch-eager --precision fp32,fp16 --device cpu --realistic \
  "${quick[@]}" --json "$work/r.json" --csv "$work/r.csv" > "$work/r.out" 2>&1
[ -s "$work/r.json" ] || bad "fp16 and realistic rows: $(tail -3 "$work/r.out")"
"$tpy" - "$work/r.json" "$work/tiny.onnx" <<'PY' && ok "fp16 agrees, realistic twins agree, footprint and energy" || bad "rows"
import json, os, sys
rows = {r["label"]: r for r in json.load(open(sys.argv[1]))["rows"]}
size = os.path.getsize(sys.argv[2])
for label in ("torch-eager fp16 t1 b1", "torch-eager fp16 t1 b1 realistic", "torch-eager fp32 t1 b1 realistic",
              "native fp32 t1 b1 realistic"):
    r = rows[label]
    assert r["status"] == "ok", (label, r["status"], r["reason"])
    assert r["accuracy"]["compared"] and r["accuracy"]["within_tol"], (label, r["accuracy"])
    assert r["realistic"] == label.endswith("realistic"), label
for label, r in rows.items():
    if r["status"] != "ok":
        continue
    fp = r["footprint"]
    assert fp["model_bytes"] == size and fp["runtime_bytes"] > 1 << 20 and fp["runtime_files"] > 3, (label, fp)
    e = r["energy"]
    if not os.path.isdir("/sys/class/powercap"):
        assert e["j_per_inference"] is None and e["source"].startswith("not available here"), (label, e)
    else:
        assert e["j_per_inference"] is not None or "not available" in e["source"], (label, e)
torch_rt = rows["torch-eager fp32 t1 b1"]["footprint"]["runtime_bytes"]
assert torch_rt > 10 * rows["native fp32 t1 b1"]["footprint"]["runtime_bytes"], "torch loads far more than native"
PY
head -1 "$work/r.csv" | grep -q "runtime_bytes,model_bytes,energy_mj_per_inference" && ok "csv has the footprint and energy columns" || bad "csv columns"
grep -q "runtime MiB" "$work/r.out" && grep -q "not available here" "$work/r.out" && ok "table shows footprint and energy" || bad "table"

# 3. torch-compile: the compile is its own phase; a graph break is the row's reason
if "$nnperf" bench "$work/tiny.onnx" --backends native,torch-compile \
     --backend-options "torch-compile:cache_dir=$inductor_cache" "${quick[@]}" --json "$work/c.json" > "$work/c.out" 2>&1; then
  "$tpy" - "$work/c.json" <<'PY' && ok "torch-compile: ok, accurate, compile phase apart" || bad "torch-compile row"
import json, sys
r = {r["backend"]: r for r in json.load(open(sys.argv[1]))["rows"]}["torch-compile"]
assert r["status"] == "ok" and r["accuracy"]["within_tol"], (r["status"], r["reason"], r["accuracy"])
p = r["phases"]
assert p["compile_s"] > 0 and p["first_s"] < p["compile_s"] and p["load_s"] >= p["compile_s"], p
assert "mode=default" in r["note"] and "Dynamo+Inductor" in r["note"], r["note"]
PY
else
  bad "torch-compile bench: $(tail -3 "$work/c.out")"
fi
"$nnperf" bench "$work/tiny.onnx" --backends torch-compile --torch-model "$here/models/torch_factory_graph_break.py:graph_break" \
  --backend-options "torch-compile:cache_dir=$inductor_cache" "${quick[@]}" --json "$work/g.json" > /dev/null 2>&1
"$tpy" - "$work/g.json" <<'PY' && ok "graph break: the row's reason" || bad "graph break reason"
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
assert r["status"] == "unsupported" and "graph break" in r["reason"], (r["status"], r["reason"])
PY
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
