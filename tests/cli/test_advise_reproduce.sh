#!/usr/bin/env bash
# nnperf advise, issue 25: (a) every reproduce line it prints runs as printed, the INT8
# one included (its `nnperf quantize ... -o model-int8.onnx &&` step writes the model the
# bench part runs), for the recommendation and for the best candidate; (b) rows with too
# few samples are shown but never ranked (no recommendation from a P99 of 3 samples).
set -uo pipefail
source "$(dirname "$0")/common.sh"
quick=(--iterations 20 --warmup 2 --max-time 1 --quiet) # seconds per advise run
mkdir -p "$work/calib" "$work/run"
$py "$(dirname "$0")/calib_npy.py" "$work/calib" 5

# (a) the INT8 recommendation's reproduce line, run as printed (nnperf on PATH)
"$nnperf" advise zoo:tiny --steps 5 --p99 100s --accuracy-tol 50% --calib "$work/calib" "${quick[@]}" \
  > "$work/int8.txt" 2> "$work/int8.err"
line=$(sed -n 's/^reproduce: //p' "$work/int8.txt")
case "$line" in
  "nnperf quantize zoo:tiny --calib $work/calib -o model-int8.onnx && nnperf bench "*) ok "INT8 line quantizes first" ;;
  *) bad "INT8 reproduce line: '$line'"; cat "$work/int8.err" "$work/int8.txt" ;;
esac
if [ -n "$line" ] && (cd "$work/run" && PATH="$(dirname "$nnperf"):$PATH" bash -c "$line --no-history" > out.txt 2> err.txt); then
  [ -s "$work/run/model-int8.onnx" ] && grep -q "int8" "$work/run/out.txt" && ok "INT8 line runs as printed" \
    || bad "INT8 line ran but wrote no model or no int8 rows"
else
  bad "INT8 line failed: $(cat "$work/run/err.txt" 2> /dev/null)"
fi

# the best candidate of an unmet INT8 step: its line has the quantize step too
"$nnperf" advise zoo:tiny --steps 5 --p99 1us --calib "$work/calib" "${quick[@]}" > "$work/best.txt" 2> "$work/best.err"
grep -q "^best candidate: .*int8.*(step 5)" "$work/best.txt" || grep -q "^best candidate: " "$work/best.txt" \
  || bad "no best candidate: $(cat "$work/best.txt")"
if grep -q "^best candidate: .*(step 5)" "$work/best.txt"; then
  grep -q "^reproduce: nnperf quantize zoo:tiny --calib $work/calib -o model-int8.onnx && nnperf bench " "$work/best.txt" \
    && ok "best INT8 candidate's line quantizes first" || { bad "best INT8 candidate's line"; cat "$work/best.txt"; }
fi

# (b) 3 samples per row: nothing is ranked, every ok row says why
"$nnperf" advise zoo:tiny --steps 2 --p99 100s --iterations 3 --warmup 1 --max-time 1 --quiet \
  --json "$work/few.json" > "$work/few.txt" 2> "$work/few.err"
rc=$?
$py - "$work/few.json" <<'PY' && [ $rc -eq 1 ] && ok "3 samples: not ranked, exit 1" || { bad "few samples (exit $rc)"; cat "$work/few.txt" "$work/few.err"; }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["recommendation"] is None and j["best_candidate"] is None, (j["recommendation"], j["best_candidate"])
rows = [r for s in j["steps"] for r in s["rows"] if r["status"] == "ok"]
assert rows, j["steps"]
for r in rows:
    assert not r["meets"] and "too few samples" in r["why_not"], r
PY

test_summary
