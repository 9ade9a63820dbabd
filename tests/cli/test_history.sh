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
assert db.execute("PRAGMA user_version").fetchone()[0] == 2
assert [k for (k,) in db.execute("SELECT kind FROM runs ORDER BY id")] == ["bench", "bench"]
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


# nnperf load and coldstart runs are stored too: listed with their kind, shown with their
# table, exported byte for byte, their runs in the load_runs table
"$nnperf" load "$work/tiny.onnx" --backend fault --backend-options mode=none,sleep_ms=1 --qps 100 --duration 300ms \
  --json "$work/l.json" > /dev/null 2> "$work/err"
id=$(sed -n 's/.*stored as history run \([0-9]*\).*/\1/p' "$work/err")
"$nnperf" history > "$work/out" 2>&1
[ -n "$id" ] && grep -q -E "^$id .* load +1 +1 " "$work/out" && ok "load run $id listed as kind load" || bad "load run listed: $(cat "$work/err" "$work/out")"
"$nnperf" history show "$id" > "$work/out" 2>&1 && grep -q "^measure  *100.0" "$work/out" && ok "show: the load table" ||
  bad "show load: $(cat "$work/out")"
"$nnperf" history export "$id" | cmp -s - "$work/l.json" && ok "export of the load run is its --json byte for byte" || bad "load export differs"
"$nnperf" coldstart "$work/tiny.onnx" --runs 2 > /dev/null 2> "$work/err"
cid=$(sed -n 's/.*stored as history run \([0-9]*\).*/\1/p' "$work/err")
"$nnperf" history | grep -q -E "^$cid .* coldstart " && ok "coldstart run $cid listed" || bad "coldstart run: $(cat "$work/err")"
$py - "$NNPERF_HISTORY" "$work/l.json" "$id" <<'PY' && ok "load_runs table" || bad "load_runs table"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
runs = json.load(open(sys.argv[2]))["load"]["runs"]
got = db.execute("SELECT purpose, queries, completed, p99_s FROM load_runs WHERE run_id = ? ORDER BY idx", (int(sys.argv[3]),)).fetchall()
assert [(r["purpose"], r["queries"], r["completed"]) for r in runs] == [g[:3] for g in got], got
assert abs(got[0][3] - runs[0]["p99_s"]) <= 1e-8 * runs[0]["p99_s"]  # the JSON has 9 digits
PY
# a version 1 database (bench runs only) is upgraded when opened: kind 'bench', load_runs added
$py - "$work/v1.db" "$work/r2.json" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("""
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL, model TEXT NOT NULL,
  nnperf_version TEXT, command_line TEXT, seed INTEGER, noisy INTEGER NOT NULL, n_rows INTEGER NOT NULL,
  n_ok INTEGER NOT NULL, hostname TEXT, env_json TEXT NOT NULL, result_json TEXT NOT NULL);
CREATE TABLE rows (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, idx INTEGER NOT NULL,
  label TEXT, backend TEXT, backend_version TEXT, precision TEXT, threads INTEGER, batch INTEGER, scenario TEXT,
  status TEXT, reason TEXT, n INTEGER, p50_s REAL, p50_lo_s REAL, p50_hi_s REAL, p99_s REAL, cv REAL,
  items_per_s REAL, peak_rss_bytes INTEGER, load_s REAL, cold_start_s REAL, max_rel REAL, within_tol INTEGER,
  PRIMARY KEY (run_id, idx));
CREATE TABLE samples (run_id INTEGER NOT NULL, row_idx INTEGER NOT NULL, process INTEGER NOT NULL,
  latencies_f64 BLOB NOT NULL, PRIMARY KEY (run_id, row_idx, process));
PRAGMA user_version = 1;""")
db.execute("INSERT INTO runs VALUES (1, '2025-01-01T00:00:00Z', 'old.onnx', '0.1.0', 'nnperf bench old.onnx', 1, 0, 1, 1, 'h', '{}', ?)",
           (open(sys.argv[2]).read(),))
db.commit()
PY
"$nnperf" history --history "$work/v1.db" > "$work/out" 2>&1 && grep -q -E "^1 .* bench .*old.onnx" "$work/out" &&
  "$nnperf" load "$work/tiny.onnx" --backend fault --backend-options mode=none,sleep_ms=1 --qps 50 --duration 200ms \
    --history "$work/v1.db" > /dev/null 2>&1 && "$nnperf" history --history "$work/v1.db" | grep -q -E "^2 .* load " &&
  [ "$($py -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA user_version").fetchone()[0])' "$work/v1.db")" = 2 ] &&
  ok "a version 1 database is upgraded in place and keeps its runs" || bad "v1 upgrade: $(cat "$work/out")"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
