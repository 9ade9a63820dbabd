#!/usr/bin/env bash
# The native plan cache through the command line: coldstart --cache writes it on the
# first start and hits it afterwards; a flipped byte, a truncated file and a file from
# another nnperf version are each reported (the reason is in the load note) and rebuilt,
# never trusted; bench --cache reaches the native rows.
set -uo pipefail
nnperf=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || { echo "FAIL cannot write zoo model"; exit 1; }

out=$("$nnperf" coldstart "$work/tiny.onnx" --runs 2 --cache "$work/c" --json "$work/cs.json" 2>&1)
rc=$?
[ $rc = 0 ] && ok "coldstart --cache exits 0" || bad "coldstart --cache exit $rc: $out"
grep -q "plan cache: miss (written)" <<<"$out" && ok "first cached start writes the cache" || bad "no miss note: $out"
grep -q "plan cache: hit" <<<"$out" && ok "later starts hit the cache" || bad "no hit note: $out"
grep -qE "^cold start P50: [0-9.]+ ms without the plan cache, [0-9.]+ ms with a warm one: [0-9.]+x (faster|slower)$" <<<"$out" &&
  ok "ratio line: a speed-up in ms, said as faster/slower" || bad "no ratio line: $out"
! grep -qE "[0-9] s( |$)" <<<"$out" && ok "one unit (ms) in the cold-start output" || bad "seconds mixed in: $out"
/usr/bin/python3 - "$work/cs.json" <<'PY' && ok "one JSON document holds the three series" || bad "JSON series: $(head -c 400 "$work/cs.json")"
import json, sys
c = json.load(open(sys.argv[1]))["coldstart"]
assert c["runs"] == 2 and c["cold_cache"]["runs"] == 1 and c["warm_cache"]["runs"] == 2, c
assert "hit" in c["warm_cache"]["note"] and "miss" in c["cold_cache"]["note"], c
assert len(c["warm_cache"]["cold_start"]["samples_s"]) == 2
PY
f=$(ls "$work"/c/plan-*.nnpplan 2>/dev/null | head -1)
[ -n "$f" ] && ok "cache file in DIR" || { bad "no cache file in $work/c"; echo "$passed passed, $failed failed"; exit 1; }
cp "$f" "$work/good"

# corrupt cases: each start must say why it rebuilt, then the warm series hits again
check_rebuilt() { # name expected-reason
  local o
  o=$("$nnperf" coldstart "$work/tiny.onnx" --runs 1 --cache "$work/c" 2>&1)
  if grep -q "plan cache: rebuilt, the file was corrupt or stale: .*$2" <<<"$o" && grep -q "plan cache: hit" <<<"$o"; then
    ok "$1 rebuilt with the reason"
  else
    bad "$1: $o"
  fi
  cmp -s "$f" "$work/good" && ok "$1: rebuilt file equals the original" || bad "$1: rebuilt file differs"
}
/usr/bin/python3 -c 'import sys; b=bytearray(open(sys.argv[1],"rb").read()); b[len(b)//2]^=0x40; open(sys.argv[1],"wb").write(b)' "$f"
check_rebuilt "flipped byte" "checksum mismatch"
head -c 1000 "$work/good" > "$f"
check_rebuilt "truncated file" "truncated or extended"
/usr/bin/python3 -c 'import sys; b=bytearray(open(sys.argv[1],"rb").read()); b[32:40]=b"9.9.9\0\0\0"; open(sys.argv[1],"wb").write(b)' "$f"
check_rebuilt "other nnperf version" "written by nnperf 9.9.9"
: > "$f"
check_rebuilt "empty file" "empty file"

# --cache is the native backend's
o=$("$nnperf" coldstart "$work/tiny.onnx" --backend fault --cache "$work/c" 2>&1)
[ $? = 2 ] && grep -q "native backend" <<<"$o" && ok "coldstart --cache refuses other backends" || bad "other backend: $o"

# bench --cache: each native row gets a twin row run with the cache warm (filled before it
# is measured: its note says hit), the plain row does not touch the cache
o=$("$nnperf" bench "$work/tiny.onnx" --backend native --cache "$work/b" --iterations 3 --warmup 1 --processes 1 \
  --no-history --json "$work/bc.json" 2>&1)
ls "$work"/b/plan-*.nnpplan > /dev/null 2>&1 && ok "bench --cache writes the plan cache" || bad "bench --cache: $o"
if /usr/bin/python3 - "$work/bc.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
labels = [r["label"] for r in rows]
assert labels == ["native fp32 t%d b1" % rows[0]["threads"], "native fp32 t%d b1 cache" % rows[0]["threads"]], labels
assert all(r["status"] == "ok" for r in rows), rows
notes = [r.get("note", "") for r in rows]
assert "plan cache" not in notes[0] and "plan cache: hit" in notes[1], notes
assert all(r["phases"]["cold_start_s"] > 0 for r in rows), rows
PY
then ok "bench --cache: a warm-cache twin row beside the plain native row"; else bad "bench --cache rows: $o"; fi

echo "$passed passed, $failed failed"
[ $failed = 0 ]
