#!/usr/bin/env bash
# nnperf advise on zoo:tiny: a loose target is met by the first step and the flow stops
# there; an impossible target runs every step, exits 1, names the best candidate and
# leaves no row without a reason; the accuracy gate alone decides the INT8 step (a tiny
# tolerance rejects it, a loose one accepts it); the --json file parses; bad command
# lines exit 2. Short runs only: the bounds are far from any real latency.
set -uo pipefail
source "$(dirname "$0")/common.sh"
quick=(--iterations 20 --warmup 2 --max-time 1 --quiet) # seconds per advise run

# 1. loose bound: step 1 meets, nothing after it runs
"$nnperf" advise zoo:tiny --p99 100s "${quick[@]}" --json "$work/loose.json" > "$work/loose.txt" 2> "$work/loose.err"
rc=$?
[ $rc -eq 0 ] && ok "loose bound exits 0" || { bad "loose bound exit $rc"; cat "$work/loose.err"; }
grep -q '^recommendation: .*(step 1, baseline)' "$work/loose.txt" && ok "loose bound: step 1 recommended" \
  || { bad "loose bound: no step-1 recommendation"; cat "$work/loose.txt"; }
grep -q '^reproduce: nnperf bench zoo:tiny --backends native' "$work/loose.txt" && ok "loose bound: reproduce command" \
  || bad "loose bound: no reproduce command"
$py - "$work/loose.json" <<'PY' && ok "loose JSON: step 1 met, steps 2-5 not run" || bad "loose JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["recommendation"]["step"] == 1, j["recommendation"]
assert j["recommendation"]["command"].startswith("nnperf bench zoo:tiny")
assert [s["ran"] for s in j["steps"]] == [True, False, False, False, False], [s["ran"] for s in j["steps"]]
r = j["steps"][0]["rows"][0]
assert r["meets"] and r["status"] == "ok" and r["p99_s"] > 0 and r["max_rel"] is not None, r
PY

# 2. impossible bound: every step measured, exit 1, best candidate named, every row says why not
"$nnperf" advise zoo:tiny --p99 1us --max-mem 1M "${quick[@]}" --json "$work/imp.json" > "$work/imp.txt" 2> "$work/imp.err"
rc=$?
[ $rc -eq 1 ] && ok "impossible bound exits 1" || { bad "impossible bound exit $rc"; cat "$work/imp.err"; }
grep -q '^no configuration meets the targets' "$work/imp.txt" && grep -q '^best candidate: ' "$work/imp.txt" \
  && ok "impossible bound: says so, names the best candidate" || { bad "impossible bound text"; cat "$work/imp.txt"; }
for s in baseline onnxruntime hardware "static shape" int8; do
  grep -q "^[1-5] *$s " "$work/imp.txt" || bad "evidence table lacks step '$s'"
done
$py - "$work/imp.json" <<'PY' && ok "impossible JSON: all steps ran, every row has a reason" || bad "impossible JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["recommendation"] is None
assert j["best_candidate"] and j["best_candidate"]["why_not"], j["best_candidate"]
steps = j["steps"]
assert all(s["ran"] for s in steps[:4]), [(s["name"], s["ran"], s["note"]) for s in steps]
rows = [r for s in steps for r in s["rows"]]
assert len(rows) >= 4
for r in rows:
    assert not r["meets"] and r["why_not"], r
    if r["status"] == "ok":
        assert "P99" in r["why_not"] and "memory" in r["why_not"], r
    if r["status"] == "skipped":
        assert r["why_not"].startswith("unavailable: "), r
# step 1's native fp32 reference: accuracy is checked for every ok non-reference row
assert all(r["max_rel"] is not None for r in rows if r["status"] == "ok")
PY

# 3. accuracy gate on the INT8 step: a tolerance below INT8's error rejects every INT8 row
#    for accuracy; a loose one lets the same rows through
"$nnperf" advise zoo:tiny --steps 5 --p99 100s --accuracy-tol 0.0001% "${quick[@]}" --json "$work/acc.json" \
  > "$work/acc.txt" 2> "$work/acc.err"
rc=$?
[ $rc -eq 1 ] && ok "INT8 with a tiny tolerance exits 1" || { bad "tiny tolerance exit $rc"; cat "$work/acc.err" "$work/acc.txt"; }
$py - "$work/acc.json" <<'PY' && ok "tiny tolerance: every ok INT8 row fails on accuracy" || bad "tiny tolerance JSON"
import json, sys
j = json.load(open(sys.argv[1]))
rows = [r for r in j["steps"][4]["rows"] if r["status"] == "ok"]
assert rows, j["steps"][4]
for r in rows:
    assert "int8" in r["label"] and r["max_rel"] > 1e-6 and not r["accuracy_ok"], r
    assert r["why_not"].startswith("accuracy"), r
PY
"$nnperf" advise zoo:tiny --steps 5 --p99 100s --accuracy-tol 50% "${quick[@]}" > "$work/acc2.txt" 2> "$work/acc2.err"
rc=$?
[ $rc -eq 0 ] && grep -q '^recommendation: .*int8.*(step 5, int8)' "$work/acc2.txt" \
  && ok "INT8 with a loose tolerance is recommended" || { bad "loose tolerance INT8 (exit $rc)"; cat "$work/acc2.err" "$work/acc2.txt"; }
grep -q '^reproduce: nnperf quantize zoo:tiny --calib CALIB_DIR -o model-int8.onnx && nnperf bench' "$work/acc2.txt" \
  && ok "INT8 reproduce command quantizes first" || bad "INT8 reproduce command"

# 3b. without --accuracy-tol, int8 rows are judged by bench's int8 tolerance (cosine, top-1),
#     not by the 1% max_rel default: mobilenet_v2's INT8 rows are off by ~3% in their worst
#     element and pass; the same 1% given explicitly bounds them and rejects them
"$nnperf" advise zoo:mobilenet_v2 --steps 5 --p99 100s "${quick[@]}" --json "$work/mb.json" > "$work/mb.txt" 2> "$work/mb.err"
rc=$?
$py - "$work/mb.json" <<'PY' && [ $rc -eq 0 ] && ok "default tolerance: int8 rows judged by bench's int8 criterion" \
  || { bad "default tolerance int8 (exit $rc)"; cat "$work/mb.err" "$work/mb.txt"; }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["targets"]["accuracy_tol_bounds_int8"] is False, j["targets"]
rows = [r for r in j["steps"][4]["rows"] if r["status"] == "ok"]
assert any(r["max_rel"] > 0.01 for r in rows), rows  # else this case tests nothing
for r in rows:
    assert r["accuracy_ok"] and "max rel" not in r["why_not"], r
PY
"$nnperf" advise zoo:mobilenet_v2 --steps 5 --p99 100s --accuracy-tol 1% "${quick[@]}" --json "$work/mb1.json" \
  > "$work/mb1.txt" 2> "$work/mb1.err"
$py - "$work/mb1.json" <<'PY' && ok "--accuracy-tol 1% given: it bounds int8 rows too" || bad "explicit 1% int8"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["targets"]["accuracy_tol_bounds_int8"] is True, j["targets"]
for r in j["steps"][4]["rows"]:
    if r["status"] == "ok" and r["max_rel"] > 0.01:
        assert not r["accuracy_ok"] and "max rel error" in r["why_not"], r
PY

# 4. bench --int8-model (what step 5 runs): the int8 rows run the QDQ file, are labelled int8,
#    and are compared with the fp32 model's native row, not with a QDQ row
"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || bad "zoo tiny"
mkdir -p "$work/calib"
$py "$(dirname "$0")/calib_npy.py" "$work/calib" 5
"$nnperf" quantize "$work/tiny.onnx" --calib "$work/calib" -o "$work/q.onnx" > /dev/null 2> "$work/q.err" \
  || { bad "quantize for --int8-model"; cat "$work/q.err"; }
"$nnperf" bench "$work/tiny.onnx" --backends native,ort-cpu --precision fp32,int8 --int8-model "$work/q.onnx" \
  --iterations 10 --min-time 0 --warmup 1 --processes 1 --no-history --quiet --json "$work/b.json" 2> "$work/b.err"
rc=$?
[ $rc -eq 0 ] || { bad "bench --int8-model exit $rc"; cat "$work/b.err"; }
$py - "$work/b.json" <<'PY' && ok "bench --int8-model: int8 rows vs the fp32 native reference" || bad "bench --int8-model JSON"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
labels = [r["label"] for r in rows]
assert labels == ["native fp32 t%d b1" % rows[0]["threads"], "ort-cpu fp32 t%d b1" % rows[0]["threads"],
                  "native int8 t%d b1" % rows[0]["threads"], "ort-cpu int8 t%d b1" % rows[0]["threads"]], labels
for r in rows[2:]:
    assert r["status"] == "ok" and r["precision"] == "int8", r
    acc = r["accuracy"]
    assert acc["reference"] == labels[0] and 0 < acc["max_rel"] < 0.5, acc
PY
"$nnperf" bench "$work/tiny.onnx" --precision int8 --int8-model "$work/nope.onnx" > /dev/null 2>&1
[ $? -eq 1 ] && ok "bench --int8-model missing file exits 1 (bad input, issue 25's rule)" || bad "bench --int8-model missing file"

# 5. bad command lines: exit 2, one line
expect2() {
  local what=$1; shift
  "$nnperf" advise "$@" > /dev/null 2> "$work/err"
  local rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l < "$work/err")" -ge 1 ] && ok "usage: $what" || bad "usage: $what (exit $rc)"
}
expect2 "no --p99" zoo:tiny
expect2 "bad --p99" zoo:tiny --p99 fast
expect2 "bad --max-mem" zoo:tiny --p99 10ms --max-mem lots
expect2 "bad --accuracy-tol" zoo:tiny --p99 10ms --accuracy-tol -1%
expect2 "bad --steps" zoo:tiny --p99 10ms --steps 9
expect2 "missing model" "$work/nope.onnx" --p99 10ms
expect2 "no model" --p99 10ms

test_summary
