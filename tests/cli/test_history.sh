#!/usr/bin/env bash
# nnperf history: every bench run is stored (unless --no-history) in $NNPERF_HISTORY; the
# list shows it; show prints its table; export gives back the result JSON byte for byte;
# the database holds the rows and the raw samples per process; ids work in compare.
set -uo pipefail
nnperf=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export NNPERF_HISTORY="$work/sub/dir/history.db" # folders are created on first use
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
py=/usr/bin/python3
quick=(--warmup 2 --iterations 30 --min-time 0 --threads 1 --processes 3)

"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || { echo "FAIL cannot write zoo model"; exit 1; }
"$nnperf" history > "$work/out" 2>&1 && grep -q "no runs" "$work/out" && ok "empty history" || bad "empty history: $(cat "$work/out")"
"$nnperf" bench "$work/tiny.onnx" --backends native,fault --backend-options fault:mode=abort,after=2 --batch 1,2 \
  "${quick[@]}" --json "$work/r1.json" > /dev/null 2> "$work/err"
grep -q "stored as history run 1" "$work/err" && ok "bench says where it stored the run" || bad "bench: $(cat "$work/err")"
"$nnperf" bench "$work/tiny.onnx" --backends native "${quick[@]}" --no-history --quiet --json "$work/skip.json" > /dev/null 2>&1
"$nnperf" bench "$work/tiny.onnx" --backends native "${quick[@]}" --quiet --json "$work/r2.json" > /dev/null 2>&1
"$nnperf" history > "$work/out" 2>&1
[ "$(grep -c "tiny.onnx" "$work/out")" -eq 2 ] && grep -q -E "^1 .* 4 +2 " "$work/out" &&
  ok "list: 2 runs (--no-history honoured), run 1 has 4 rows, 2 ok" || bad "list: $(cat "$work/out")"
"$nnperf" history show 1 > "$work/out" 2>&1 && grep -q "native fp32 t1 b2" "$work/out" && grep -q "crashed" "$work/out" &&
  ok "show 1: the table" || bad "show 1: $(cat "$work/out")"
"$nnperf" history export 1 > "$work/e1.json" && cmp -s "$work/e1.json" "$work/r1.json" &&
  ok "export 1 is the bench's JSON byte for byte" || bad "export 1 differs from the bench's JSON"
"$nnperf" history export 2 -o "$work/e2.json" && cmp -s "$work/e2.json" "$work/r2.json" && ok "export -o" || bad "export -o"
# the tables hold the rows and the raw samples per process (sqlite3 through Python's module)
$py - "$NNPERF_HISTORY" "$work/r1.json" <<'PY' && ok "rows and per-process samples in SQL tables" || bad "SQL tables"
import json, sqlite3, struct, sys
db = sqlite3.connect(sys.argv[1])
res = json.load(open(sys.argv[2]))
rows = db.execute("SELECT idx, label, status, p50_s FROM rows WHERE run_id = 1 ORDER BY idx").fetchall()
assert [r[1] for r in rows] == [r["label"] for r in res["rows"]], rows
assert [r[2] for r in rows] == [r["status"] for r in res["rows"]], rows
for idx, row in enumerate(res["rows"]):
    blobs = db.execute("SELECT latencies_f64 FROM samples WHERE run_id = 1 AND row_idx = ? ORDER BY process", (idx,)).fetchall()
    got = [x for (b,) in blobs for x in struct.unpack(f"{len(b) // 8}d", b)]
    assert len(blobs) == (row["processes"] if row["samples_s"] else 0), (idx, len(blobs))
    assert [round(x, 15) for x in got] == [round(x, 15) for x in row["samples_s"]] or \
        all(abs(a - b) <= 1e-9 * b for a, b in zip(got, row["samples_s"])), idx
env = json.loads(db.execute("SELECT env_json FROM runs WHERE id = 1").fetchone()[0])
assert env["timestamp"] == res["env"]["timestamp"]
assert db.execute("PRAGMA user_version").fetchone()[0] == 1
PY
"$nnperf" compare 1 2 > "$work/out" 2>&1; rc=$?
grep -q "native fp32 t1 b1" "$work/out" && [ $rc -le 1 ] && ok "compare by history ids" || bad "compare 1 2 (exit $rc): $(cat "$work/out")"
"$nnperf" history show 9 > /dev/null 2> "$work/err"; rc=$?
[ $rc -eq 1 ] && grep -q "no run 9" "$work/err" && ok "unknown id: exit 1" || bad "unknown id (exit $rc): $(cat "$work/err")"
"$nnperf" history frobnicate > /dev/null 2>&1; [ $? -eq 2 ] && ok "unknown action: exit 2" || bad "unknown action"
echo "not a database, just text long enough to not be empty ......................................" > "$work/junk.db"
"$nnperf" history --history "$work/junk.db" > /dev/null 2> "$work/err"; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l < "$work/err")" -eq 1 ] && ok "a non-database: exit 1, one line ($(cat "$work/err"))" || bad "junk db (exit $rc): $(cat "$work/err")"
# a history that cannot be written does not fail the measurement
"$nnperf" bench "$work/tiny.onnx" --backends native "${quick[@]}" --quiet --history /proc/no/history.db > /dev/null 2> "$work/err"; rc=$?
[ $rc -eq 0 ] && grep -q "warning: run not stored" "$work/err" && ok "unwritable history: warning, exit 0" || bad "unwritable history (exit $rc): $(cat "$work/err")"
# concurrent runs take turns on the database
for k in 1 2 3; do "$nnperf" bench "$work/tiny.onnx" --backends native --warmup 1 --iterations 5 --min-time 0 --threads 1 --quiet > /dev/null 2>&1 & done
wait
[ "$("$nnperf" history | grep -c tiny.onnx)" -eq 5 ] && ok "3 concurrent runs all stored" || bad "concurrent runs: $("$nnperf" history)"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
