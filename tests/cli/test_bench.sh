#!/usr/bin/env bash
# nnperf bench end to end: a good run, the JSON/CSV it writes, workers that crash, hang,
# exhaust memory or fail (the other rows and the JSON survive, the reason is recorded),
# and bad arguments (exit 2).
set -uo pipefail
source "$(dirname "$0")/common.sh"
quick=(--warmup 2 --iterations 10 --min-time 0 --threads 1)

"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || { echo "FAIL cannot write zoo model"; exit 1; }

# a good run: table on stdout, JSON with raw samples, CSV
if "$nnperf" bench "$work/tiny.onnx" --backends native --batch 1,2 "${quick[@]}" --json "$work/r.json" --csv "$work/r.csv" > "$work/out" 2> "$work/err"; then
  ok "bench runs"
else
  bad "bench runs: $(cat "$work/err")"
fi
grep -q "native" "$work/out" && ok "table names the backend" || bad "table names the backend: $(cat "$work/out")"
$py - "$work/r.json" <<'PY' && ok "json: 2 ok rows, raw samples, stats, env" || bad "json: 2 ok rows, raw samples, stats, env"
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
assert d["schema_version"] == 1 and len(rows) == 2, rows
for r in rows:
    assert r["status"] == "ok", r
    s = r["samples_s"]
    assert len(s) >= 10 and r["stats"]["n"] == len(s), (len(s), r["stats"])
    assert sorted(s)[len(s) // 2] > 0
    assert r["stats"]["p50_ci"][0] <= r["stats"]["p50"] <= r["stats"]["p50_ci"][1]
    assert r["phases"]["cold_start_s"] > r["phases"]["first_s"] > 0
    assert r["memory"]["peak_rss_bytes"] > 0
assert rows[0]["batch"] == 1 and rows[1]["batch"] == 2
assert d["env"]["cpus_online"] >= 1
PY
[ "$(wc -l < "$work/r.csv")" -eq 3 ] && ok "csv: header + 2 rows" || bad "csv: header + 2 rows"

# two back-to-back runs of one configuration agree on P50 within the reported CI, or a
# run says it is noisy (the harness must never claim a precision it does not have).
# The host of these shared machines can change speed between two runs (a 9 ms / 12 ms
# bimodality was seen, invisible from inside either run): a pair gets a second chance;
# an overconfident interval fails both.
agree=1
for attempt in 1 2; do
  for k in 1 2; do
    "$nnperf" bench "$work/tiny.onnx" --backends native --warmup 5 --iterations 60 --min-time 0 --threads 1 \
      --json "$work/rep$k.json" > /dev/null 2>&1
  done
  $py - "$work/rep1.json" "$work/rep2.json" <<'PY' && { agree=0; break; }
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ra, rb = a["rows"][0], b["rows"][0]
lo_a, hi_a = ra["stats"]["p50_ci"]
lo_b, hi_b = rb["stats"]["p50_ci"]
overlap = lo_a <= hi_b and lo_b <= hi_a
print(f"P50 {ra['stats']['p50']*1e3:.3f} ms [{lo_a*1e3:.3f}, {hi_a*1e3:.3f}] vs {rb['stats']['p50']*1e3:.3f} ms "
      f"[{lo_b*1e3:.3f}, {hi_b*1e3:.3f}], noisy {a['noisy']}/{b['noisy']}")
assert overlap or a["noisy"] or b["noisy"]
PY
done
[ $agree -eq 0 ] && ok "back-to-back runs agree within the CI or are flagged noisy" || bad "back-to-back runs disagree without a noise flag, twice"

# a threads sweep: rows that differ in threads are not ranked, unless --allow-mixed
"$nnperf" bench "$work/tiny.onnx" --backends native --threads 1,2 --warmup 2 --iterations 10 \
  --min-time 0 > "$work/out" 2>&1
grep -q "n/a (differs: threads)" "$work/out" && ok "threads sweep: differing rows not ranked" || bad "threads sweep: $(cat "$work/out")"
"$nnperf" bench "$work/tiny.onnx" --backends native --threads 1,2 --warmup 2 --iterations 10 --min-time 0 \
  --allow-mixed > "$work/out" 2>&1
! grep -q "n/a (differs: threads)" "$work/out" && ok "--allow-mixed ranks them" || bad "--allow-mixed: $(cat "$work/out")"

# ONNX Runtime through the external (Python) worker: same inputs, outputs within the
# fp32 tolerance of the native reference; a missing framework is an "unavailable" row
# with its install hint and exit status 0
"$nnperf" bench "$work/tiny.onnx" --backends native,ort-cpu,openvino "${quick[@]}" --json "$work/ort.json" > "$work/out" 2> "$work/err"
rc=$?
$py - "$work/ort.json" <<'PY' && [ $rc -eq 0 ] && ok "ort-cpu and openvino rows: ok, accuracy within tolerance of native" || bad "framework rows (exit $rc): $(cat "$work/err") $(head -c 400 "$work/ort.json")"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
for r, name, lib in ((rows[1], "ort-cpu", "onnxruntime "), (rows[2], "openvino", "openvino ")):
    assert r["backend"] == name and r["status"] == "ok", (r["status"], r["reason"])
    assert r["backend_version"].startswith(lib), r["backend_version"]
    assert r["accuracy"]["compared"] and r["accuracy"]["within_tol"] and r["accuracy"]["max_rel"] < 1e-4, r["accuracy"]
    assert r["stats"]["n"] >= 10 and r["phases"]["cold_start_s"] > 0
assert rows[2]["phases"]["parse_s"] > 0 and rows[2]["phases"]["compile_s"] > 0  # openvino splits its load
PY
NNPERF_PYTHON=/nonexistent/python "$nnperf" bench "$work/tiny.onnx" --backends native,ort-cpu "${quick[@]}" \
  --json "$work/un.json" > "$work/out" 2>&1
rc=$?
$py -c "
import json, sys
r = json.load(open(sys.argv[1]))['rows'][1]
assert r['status'] == 'unavailable' and 'install' in r['reason'], r" "$work/un.json" && [ $rc -eq 0 ] &&
  grep -q "unavailable" "$work/out" && ok "missing framework: unavailable row, exit 0" || bad "missing framework (exit $rc): $(cat "$work/out")"

# a dynamic-shape scenario: a model with symbolic H and W, each iteration draws its shape
$py -c "
import onnx, sys
m = onnx.load(sys.argv[1]); d = m.graph.input[0].type.tensor_type.shape.dim
d[2].dim_param = 'H'; d[3].dim_param = 'W'; onnx.save(m, sys.argv[2])" "$work/tiny.onnx" "$work/tiny_dyn.onnx"
"$nnperf" bench "$work/tiny_dyn.onnx" --backends native,fault,ort-cpu,openvino --shape "dynamic:Nx3x[24..40]x[24..40]" --batch 2 \
  "${quick[@]}" --json "$work/d.json" > "$work/out" 2> "$work/err"
$py - "$work/d.json" <<'PY' && ok "dynamic scenario: own row, unsupported backend says so" || bad "dynamic scenario: $(cat "$work/err")"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert rows[0]["status"] == "ok" and rows[0]["scenario"] == "dynamic:2x3x[24..40]x[24..40]", rows[0]
assert rows[0]["stats"]["n"] >= 10
assert rows[1]["status"] == "unsupported" and "dynamic" in rows[1]["reason"], rows[1]
# ONNX Runtime handles the dynamic shapes itself; drawn shapes and inputs match the C worker's
assert rows[2]["status"] == "ok" and rows[2]["accuracy"]["within_tol"], rows[2]
assert rows[3]["status"] == "ok" and rows[3]["accuracy"]["within_tol"], rows[3]
PY
"$nnperf" bench "$work/tiny.onnx" --backends native --shape "dynamic:Nx3x[24..40]x[24..40]" "${quick[@]}" --json "$work/d2.json" > /dev/null 2>&1
$py -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; assert r['status']=='failed' and 'fixed at 32' in r['reason'], r" "$work/d2.json" &&
  ok "dynamic range on a fixed-size model: failed row naming the dimension" || bad "dynamic range on a fixed-size model"

# faulty workers between two good rows: the good rows and the JSON survive
fault_case() {
  local mode=$1 want=$2 pattern=$3
  shift 3
  "$nnperf" bench "$work/tiny.onnx" --backends native,fault,native --backend-options "fault:mode=$mode" \
    "${quick[@]}" --json "$work/f.json" "$@" > "$work/out" 2> "$work/err"
  local rc=$?
  if [ $rc -ne 1 ]; then bad "fault $mode: exit $rc, expected 1"; return; fi
  $py - "$work/f.json" "$want" "$pattern" <<'PY' && ok "fault $mode: row $want, other rows intact" || bad "fault $mode: $(cat "$work/f.json" | head -c 600)"
import json, re, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
assert len(rows) == 3, len(rows)
assert rows[0]["status"] == "ok" and rows[2]["status"] == "ok", [r["status"] for r in rows]
assert rows[1]["status"] == sys.argv[2], (rows[1]["status"], rows[1]["reason"])
assert re.search(sys.argv[3], rows[1]["reason"], re.I), rows[1]["reason"]
PY
}
fault_case segv crashed "signal 11|segmentation|SEGV"
fault_case abort crashed "signal 6|abort"
fault_case kill out-of-memory "signal 9"
fault_case exit crashed "status 3"
fault_case error failed "injected error"
fault_case hang timeout "time limit" --timeout 20
fault_case bomb out-of-memory "memory" --mem-limit 512

# an interrupted run leaves valid JSON of what finished
"$nnperf" bench "$work/tiny.onnx" --backends native,fault,native --backend-options fault:mode=hang \
  "${quick[@]}" --json "$work/i.json" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 50); do [ -s "$work/i.json" ] && break; sleep 0.2; done
sleep 0.5
kill -INT $pid
wait $pid
rc=$?
$py -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['rows'][0]['status']=='ok'" "$work/i.json" && [ $rc -eq 130 ] &&
  ok "Ctrl-C: exit 130, JSON valid with the finished row" || bad "Ctrl-C: exit $rc"

# bad arguments: exit 2 with a message
usage_case() {
  local name=$1 pattern=$2
  shift 2
  "$nnperf" bench "$@" > "$work/out" 2> "$work/err"
  local rc=$?
  [ $rc -eq 2 ] && grep -qiE -- "$pattern" "$work/err" && ok "bad argument: $name" || bad "bad argument: $name: exit $rc: $(cat "$work/err")"
}
usage_case "unknown backend" "unknown backend 'nosuch'" "$work/tiny.onnx" --backends nosuch
usage_case "malformed shape" "shape" "$work/tiny.onnx" --shape static:1xAx3
usage_case "batch 0" "batch" "$work/tiny.onnx" --batch 0
# a missing model is bad input (1), like zoo:nope, not a bad command line (README "Exit status")
"$nnperf" bench "$work/nope.onnx" > "$work/out" 2> "$work/err"; rc=$?
[ $rc -eq 1 ] && grep -q "not found" "$work/err" && ok "model not found: exit 1" || bad "model not found: exit $rc: $(cat "$work/err")"
usage_case "unknown option" "unknown option" "$work/tiny.onnx" --frobnicate
usage_case "unknown precision" "precision" "$work/tiny.onnx" --precision fp7
usage_case "malformed dynamic shape" "dynamic" "$work/tiny.onnx" --shape "dynamic:Nx3x[40..24]x32"
usage_case "dynamic shape without a range" "dynamic" "$work/tiny.onnx" --shape "dynamic:Nx3x32x32"

"$nnperf" backends > "$work/out" 2>&1 && grep -q "native *available" "$work/out" && ok "backends lists native" || bad "backends lists native"

test_summary
