#!/usr/bin/env bash
# nnperf bench --resume: a sweep killed mid-run (SIGKILL: no chance to clean up; SIGINT:
# Ctrl-C) and then resumed ends with the same row set as an uninterrupted run; the rows
# finished before the kill are kept byte for byte (not re-run); the row that was cut
# short is not recorded as failed; a resume with other options is refused (exit 2) and
# leaves the file alone.
set -uo pipefail
source "$(dirname "$0")/common.sh"

"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || { echo "FAIL cannot write zoo model"; exit 1; }
# Four rows of ~1 s each (min-time 1 s over 3 processes); native twice per batch, so
# rows 2 and 4 are compared with the reference rows 1 and 3.
args=("$work/tiny.onnx" --backends native,native --batch 1,2 --warmup 2 --iterations 10 --min-time 1
      --threads 1 --quiet)

"$nnperf" bench "${args[@]}" --json "$work/full.json" > /dev/null 2>&1 || bad "full run"

# rows.py FILE: the configuration and status of every row, one per line
cat > "$work/rows.py" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    print(r["label"], r["backend"], r["precision"], r["threads"], r["batch"], r["scenario"], r["status"])
PY

# interrupt SIG: starts the sweep, waits until one row is saved and the next is under
# way, sends SIG, checks what the file holds, then resumes.
interrupt() {
  local sig=$1 json=$work/$1.json
  "$nnperf" bench "${args[@]}" --json "$json" > /dev/null 2> "$work/$sig.err" &
  local pid=$!
  for _ in $(seq 600); do [ -s "$json" ] && break; sleep 0.1; done # slow under ASan on a busy machine
  sleep 0.4
  kill -"$sig" $pid
  wait $pid
  local rc=$?
  local before
  before=$($py -c "import json,sys; print(len(json.load(open(sys.argv[1]))['rows']))" "$json")
  if [ "$before" -ge 1 ] && [ "$before" -lt 4 ]; then ok "$sig: $before of 4 rows saved"; else bad "$sig: $before rows saved"; fi
  if [ "$sig" = INT ]; then
    [ $rc -eq 130 ] && grep -q -- "--resume" "$work/$sig.err" && ok "INT: exit 130, says how to resume" ||
      bad "INT: exit $rc: $(cat "$work/$sig.err")"
  fi
  $py -c "
import json, sys
rows = json.load(open(sys.argv[1]))['rows']
assert all(r['status'] == 'ok' for r in rows), [(r['status'], r['reason']) for r in rows]" "$json" &&
    ok "$sig: the row cut short is not recorded (no failed row)" || bad "$sig: a row cut short was recorded"
  cp "$json" "$work/$sig.before.json"
  if "$nnperf" bench "${args[@]}" --resume "$json" > /dev/null 2> "$work/$sig.resume.err"; then
    ok "$sig: --resume runs"
  else
    bad "$sig: --resume: $(cat "$work/$sig.resume.err")"
  fi
  if diff <($py "$work/rows.py" "$work/full.json") <($py "$work/rows.py" "$json") > "$work/diff"; then
    ok "$sig: resumed rows = a full run's rows"
  else
    bad "$sig: resumed rows differ from a full run's: $(cat "$work/diff")"
  fi
  $py - "$work/$sig.before.json" "$json" <<'PY' && ok "$sig: finished rows kept, not re-run; accuracy compared" || bad "$sig: kept rows / accuracy"
import json, sys
before = json.load(open(sys.argv[1]))["rows"]
after = json.load(open(sys.argv[2]))["rows"]
assert len(after) == 4, len(after)
for b, a in zip(before, after):
    assert a == b, (a["label"], "changed on resume")
for r in (after[1], after[3]):  # compared with the reference row, kept or not
    assert r["accuracy"]["compared"] and r["accuracy"]["within_tol"], r["accuracy"]
PY
}
interrupt KILL
interrupt INT

# other options: refused with exit 2, the file untouched
mismatch() {
  local name=$1 pattern=$2
  shift 2
  cp "$work/INT.before.json" "$work/m.json"
  "$nnperf" bench "$@" --resume "$work/m.json" > /dev/null 2> "$work/m.err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -qE -- "$pattern" "$work/m.err" && cmp -s "$work/m.json" "$work/INT.before.json"; then
    ok "mismatch: $name"
  else
    bad "mismatch: $name: exit $rc: $(cat "$work/m.err")"
  fi
}
mismatch "seed" "--seed was 1 there but is 7 now" "${args[@]}" --seed 7
mismatch "iterations" "--iterations was 10 there but is 11 now" "${args[@]}" --iterations 11
mismatch "batch list" "row 1 there is native fp32 t1 b1 .* this command's row 1 is native fp32 t1 b3" \
  "$work/tiny.onnx" --backends native,native --batch 3,2 --warmup 2 --iterations 10 --min-time 1 --threads 1 --quiet
mismatch "processes" "measured by 3 processes, --processes is 2 now" "${args[@]}" --processes 2

# a parent killed with SIGKILL takes its (hung) worker with it (PR_SET_PDEATHSIG), so
# no orphan competes with the --resume that follows
"$nnperf" bench "$work/tiny.onnx" --backends native,fault --backend-options fault:mode=hang --warmup 2 \
  --iterations 10 --min-time 0 --threads 1 --quiet --json "$work/h.json" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do [ -s "$work/h.json" ] && break; sleep 0.1; done
worker=""
for _ in $(seq 50); do worker=$(pgrep -P $pid | head -n 1); [ -n "$worker" ] && break; sleep 0.1; done
kill -KILL $pid
wait $pid 2> /dev/null
gone=0
for _ in $(seq 50); do kill -0 "$worker" 2> /dev/null || { gone=1; break; }; sleep 0.1; done
if [ -n "$worker" ] && [ $gone -eq 1 ]; then ok "SIGKILL of the parent ends its hung worker"; else
  bad "hung worker ${worker:-?} outlived its killed parent"; [ -n "$worker" ] && kill -KILL "$worker"; fi

# a file that is not a result
echo '{"schema_version": 1, "rows": 3}' > "$work/bad.json"
"$nnperf" bench "${args[@]}" --resume "$work/bad.json" > /dev/null 2> "$work/bad.err"
rc=$?
[ $rc -eq 1 ] && grep -q "not an nnperf result" "$work/bad.err" && ok "not a result: exit 1, says so" ||
  bad "not a result: exit $rc: $(cat "$work/bad.err")"
printf '{"rows": [' > "$work/trunc.json"
"$nnperf" bench "${args[@]}" --resume "$work/trunc.json" > /dev/null 2> "$work/trunc.err"
rc=$?
[ $rc -eq 1 ] && grep -q "not valid JSON" "$work/trunc.err" && ok "truncated JSON: exit 1, says so" ||
  bad "truncated JSON: exit $rc: $(cat "$work/trunc.err")"

test_summary
