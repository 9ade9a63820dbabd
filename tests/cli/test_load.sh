#!/usr/bin/env bash
# nnperf load and nnperf coldstart end to end. The fault backend with mode=none,sleep_ms=N
# is a server of known, fixed service time, so queueing theory is checkable: latency
# grows with the offered rate, slowly below capacity and steeply past it, achieved QPS
# saturates at capacity, and the max-QPS search lands on the same rate twice.
set -uo pipefail
nnperf=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
py=/usr/bin/python3
"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || { echo "FAIL cannot write zoo model"; exit 1; }
sleep5=(--backend fault --backend-options mode=none,sleep_ms=5)

# The queueing checks need a service time the sleep dominates: measure the worker's own
# overhead per query (model + protocol) first. Under a sanitizer debug build it can be
# tens of ms, and then the sleep no longer sets the capacity: skip, saying so.
"$nnperf" load "$work/tiny.onnx" --backend fault --backend-options mode=none,sleep_ms=0 --scenario single-stream \
  --duration 500ms --json "$work/overhead.json" > /dev/null 2>&1
overhead_ms=$($py -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["load"]["runs"][-1]["p50_s"]*1e3, 2))' "$work/overhead.json" 2>/dev/null || echo 999)
if $py -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 2 else 1)' "$overhead_ms"; then
queueing=1
else
queueing=0
echo "skip sweep and find-max-qps checks: worker overhead ${overhead_ms} ms per query (sanitizer build or loaded machine), the 5/20 ms sleep would not set the service time"
fi


# every scenario runs and writes valid JSON with its load section
for sc in single-stream multi-stream server offline; do
  if "$nnperf" load "$work/tiny.onnx" "${sleep5[@]}" --scenario $sc --duration 500ms --qps 50 --json "$work/$sc.json" > "$work/out" 2> "$work/err" &&
     $py - "$work/$sc.json" $sc $queueing <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
L = d["load"]
assert d["schema_version"] == 1 and d["schema_minor"] >= 1 and L["scenario"] == sys.argv[2], d
m = [r for r in L["runs"] if r["purpose"] == "measure"][-1]
assert m["completed"] > 0 and m["p50_s"] >= 0.005, m   # never faster than the sleep
assert m["dropped"] == 0 or sys.argv[3] == "0", m       # a slow (sanitizer) worker may fall behind
assert m["p50_s"] <= m["p90_s"] <= m["p99_s"] <= m["p999_s"] <= m["max_s"], m
assert L["startup"][0]["cold_start_s"] > 0
PY
  then ok "scenario $sc"; else bad "scenario $sc: $(cat "$work/err" "$work/out" | head -c 600)"; fi
done

if [ $queueing -eq 1 ]; then
# server: same seed, same schedule -> same number of queries; the sweep curve
"$nnperf" load "$work/tiny.onnx" "${sleep5[@]}" --sweep --duration 1s --json "$work/sweep.json" > "$work/out" 2> "$work/err"
if $py - "$work/sweep.json" <<'PY'
import json, sys
L = json.load(open(sys.argv[1]))["load"]
cap = L["capacity_qps"]
s = [r for r in L["runs"] if r["purpose"] == "sweep"]
assert len(s) == 12, len(s)
p99 = [r["p99_s"] for r in s]
# monotone within noise (shared machine, 16..180 queries per point): at most two points
# fall below half the second highest point before them (the first point: below half of
# point 0). A stall inflates one low-load P99 (a run beside a benchmark on the other core
# had two: P99 0.147 s at 40% and 0.51 s at 70% load, between 0.03-0.07 s neighbours);
# measured against the highest earlier point, one stall at 30% load (0.059 s between
# 0.011 and 0.023 s) made the four points after it count as drops. The knee checks
# below still ask for the growth.
def ref(i):
    return p99[0] if i == 1 else sorted(p99[:i])[-2]
drops = [i for i in range(1, 12) if p99[i] < 0.5 * ref(i)]
assert len(drops) <= 2, ("not monotone", drops, p99)
# the knee near capacity: flat below, steep past it (M/D/1: P99 at 120% grows with the run)
base = min(p99[:3])
assert p99[11] > 6 * base, ("no knee", p99)
assert p99[11] > 2.5 * p99[6], ("no knee between 70% and 120%", p99)
assert max(p99[:6]) < 0.5 * p99[11], ("latency at half load already near the overload level", p99)
# achieved QPS follows the offered rate below capacity and saturates above it
for r in s[:6]:
    assert r["achieved_qps"] > 0.8 * r["target_qps"], r
assert s[11]["achieved_qps"] < 1.1 * cap, (s[11], cap)
print("p99 ms:", " ".join(f"{x*1e3:.1f}" for x in p99), "capacity", round(cap, 1))
PY
then ok "sweep: latency vs QPS monotone with a knee near capacity"; else bad "sweep: $(head -c 800 "$work/err") $(cat "$work/out")"; fi

# find-max-qps twice: within 15% (runs differ only by machine noise: same seed, same arrivals).
# Not 10%: the search's range is 1.2x the measured capacity, which itself moves with the
# machine, and P99 near the knee is steep; CI's ASan build once gave 31.1 and 34.6 QPS
# (capacities 46.5 and 44.0 queries/s), 10.3% apart, on a correct search
fm=(--backend fault --backend-options mode=none,sleep_ms=20 --find-max-qps --p99 150ms --duration 3s --confirm 1)
"$nnperf" load "$work/tiny.onnx" "${fm[@]}" --json "$work/m1.json" > "$work/o1" 2>&1
"$nnperf" load "$work/tiny.onnx" "${fm[@]}" --json "$work/m2.json" > "$work/o2" 2>&1
if $py - "$work/m1.json" "$work/m2.json" <<'PY'
import json, sys
a, b = (json.load(open(p))["load"]["max_qps"] for p in sys.argv[1:3])
print("max qps", a, b)
assert a and b and a > 0 and b > 0, (a, b)
assert abs(a - b) <= 0.15 * max(a, b), (a, b)
PY
then ok "find-max-qps reproducible within 15%"; else bad "find-max-qps: $(tail -3 "$work/o1") / $(tail -3 "$work/o2")"; fi
fi

# --streams: one worker serving several queries at once. The fault backend's sleep takes
# no CPU, so 4 streams must serve well over twice what 1 does (ideal: 4x)
for k in 1 4; do
  "$nnperf" load "$work/tiny.onnx" --backend fault --backend-options mode=none,sleep_ms=10 --scenario offline \
    --duration 1s --streams $k --no-history --json "$work/st$k.json" > /dev/null 2> "$work/err$k"
done
if $py - "$work/st1.json" "$work/st4.json" <<'PY'
import json, sys
a, b = (json.load(open(p))["load"] for p in sys.argv[1:3])
print("offline capacity, 1 and 4 streams:", round(a["capacity_qps"], 1), round(b["capacity_qps"], 1))
assert a["streams"] == 1 and b["streams"] == 4, (a["streams"], b["streams"])
assert b["capacity_qps"] > 2.5 * a["capacity_qps"], (a["capacity_qps"], b["capacity_qps"])
PY
then ok "--streams 4: one worker serves 4 queries at once"; else bad "--streams: $(cat "$work/err1" "$work/err4")"; fi

# A latency-vs-QPS sweep on real backends (CPU-bound service, a shared machine: loose
# checks): the rates past capacity queue, so P99 there is well above P99 at low load, and
# the result document holds every point
sweep_check() { # name json
  $py - "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
L = d["load"]
s = [r for r in L["runs"] if r["purpose"] == "sweep"]
assert d["kind"] == "load" and len(s) == 12, len(s)
p99 = [r["p99_s"] for r in s]
low, high = min(p99[:3]), max(p99[9:])
print("  p99 ms:", " ".join(f"{x*1e3:.2f}" for x in p99), "capacity", round(L["capacity_qps"], 1))
assert high > 2 * low, ("P99 does not rise near saturation", p99)
assert all(len(r["samples_s"]) == min(r["completed"], 1000) for r in s)
PY
}
"$nnperf" load zoo:tiny --backend native --sweep --duration 500ms --no-history --json "$work/swn.json" > /dev/null 2> "$work/err"
sweep_check native "$work/swn.json" && ok "native sweep: P99 rises near saturation" || bad "native sweep: $(cat "$work/err")"
if "$nnperf" backends 2>/dev/null | grep -q "^ort-cpu  *available"; then
  "$nnperf" load zoo:tiny --backend ort-cpu --sweep --duration 500ms --no-history --json "$work/swo.json" > /dev/null 2> "$work/err"
  sweep_check ort-cpu "$work/swo.json" && ok "ort-cpu sweep: P99 rises near saturation" || bad "ort-cpu sweep: $(cat "$work/err")"
  "$nnperf" load zoo:tiny --backend ort-cpu --qps 200 --duration 500ms --streams 2 --no-history --json "$work/so.json" > /dev/null 2> "$work/err"
  $py -c 'import json,sys; L=json.load(open(sys.argv[1]))["load"]; r=L["runs"][-1]; assert L["streams"] == 2 and r["completed"] == r["queries"] > 0, L' "$work/so.json" &&
    ok "ort-cpu --streams 2: one shared session serves" || bad "ort-cpu --streams 2: $(cat "$work/err")"
else
  echo "skip ort-cpu sweep and streams: onnxruntime not available ($("$nnperf" backends 2>&1 | grep ort-cpu))"
fi

# Python workers serve too (skipped with the reason when the framework is missing)
if "$nnperf" backends 2>/dev/null | grep -q "^ort-cpu  *available"; then
  if "$nnperf" load "$work/tiny.onnx" --backend ort-cpu --scenario server --qps 100 --duration 500ms > "$work/out" 2> "$work/err" &&
     grep -q "measure" "$work/out"; then ok "ort-cpu serve mode"; else bad "ort-cpu serve: $(cat "$work/err")"; fi
else
  echo "skip ort-cpu serve mode: onnxruntime not available ($("$nnperf" backends 2>&1 | grep ort-cpu))"
fi

# coldstart: fresh processes, phases and their distribution
if "$nnperf" coldstart "$work/tiny.onnx" --runs 3 --json "$work/cs.json" > "$work/out" 2> "$work/err" &&
   $py - "$work/cs.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["coldstart"]
assert c["runs"] == 3 and len(c["cold_start"]["samples_s"]) == 3
assert 0 < c["cold_start"]["p50_s"] <= c["cold_start"]["p99_s"]
assert c["spawn_to_ready"]["p50_s"] < c["cold_start"]["p50_s"]
PY
then ok "coldstart"; else bad "coldstart: $(cat "$work/err" "$work/out" | head -c 600)"; fi

# a worker that crashes mid-run: one-line error naming the signal, exit 1
"$nnperf" load "$work/tiny.onnx" --backend fault --backend-options mode=segv,after=5 --qps 50 --duration 1s > "$work/out" 2> "$work/err"
rc=$?
if [ $rc -eq 1 ] && grep -Eq "signal 11|SEGV" "$work/err" && [ "$(wc -l < "$work/err")" -eq 1 ]; then ok "crashing worker: exit 1, reason"; else bad "crash: rc $rc $(cat "$work/err")"; fi

# bad arguments: exit 2
for args in "--scenario nope" "--qps -3" "--find-max-qps" "--duration 5parsecs" "--scenario offline --sweep" "--instances 0" \
    "--streams 17" "--scenario single-stream --streams 2"; do
  "$nnperf" load "$work/tiny.onnx" $args > /dev/null 2> "$work/err"
  rc=$?
  if [ $rc -eq 2 ]; then ok "load $args: exit 2"; else bad "load $args: exit $rc $(cat "$work/err")"; fi
done
"$nnperf" coldstart "$work/tiny.onnx" --runs 0 > /dev/null 2>&1
[ $? -eq 2 ] && ok "coldstart --runs 0: exit 2" || bad "coldstart --runs 0"

# an offline run has no target or offered rate: "-", not "0.0" (issue 25)
out=$("$nnperf" load "$work/tiny.onnx" --backend native --scenario offline --duration 0.5 --no-history 2>&1)
grep -qE "^measure +- +- +[0-9]" <<<"$out" && ! grep -qE "^measure +0\.0 " <<<"$out" &&
  ok "offline: target/s and offered/s are '-'" || bad "offline rates: $out"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
