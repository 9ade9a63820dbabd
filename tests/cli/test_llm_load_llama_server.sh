#!/usr/bin/env bash
# nnperf llm load against the real llama-server (scripts/install-llm.sh) on a tiny seeded
# model made here: closed loop at 1 and 2 streams, an open-loop Poisson row, the result
# document read back by history, report and compare, --repack, and no server left running
# afterwards. Loopback only, bounded requests and
# times (`timeout` around every run). Skips (77) where llama-server or the LLM venv is
# not installed.
set -u
NNPERF="$1"; SRC="$(cd "$(dirname "$0")/../.." && pwd)"
cache="${NNP_CACHE:-$HOME/.cache/nnperf}"
py="$cache/venv-llm/bin/python"
server="${NNP_LLAMA_SERVER:-$cache/llama-0.3.36/bin/llama-server}"
[ -x "$server" ] && [ -x "$py" ] || { echo "skip: llama-server or venv-llm missing (scripts/install-llm.sh)"; exit 77; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$py" "$SRC/tests/llm/make_tiny_gguf.py" "$tmp/tiny.gguf" >/dev/null || { echo "FAIL: tiny GGUF"; exit 1; }
fail=0
export NNPERF_HISTORY="$tmp/history.db"   # run ids below start at 1
timeout 240 "$NNPERF" llm load "$tmp/tiny.gguf" --threads 1 --concurrency 1,2 --num-requests 4 --prompt-len 16 \
  --gen-len 8 --timeout 30 --json "$tmp/c.json" --csv "$tmp/c.csv" --html "$tmp/c.html" > "$tmp/c.out" 2>&1
rc=$?; cat "$tmp/c.out"
[ $rc = 0 ] || { echo "FAIL closed loop rc=$rc"; fail=1; }
python3 - "$tmp/c.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["kind"] == "llm-load" and d["backend"] == "llama-server", d["kind"]
rows = d["rows"]
assert [r["concurrency"] for r in rows] == [1, 2], rows
for r in rows:
    assert r["ok"] == 4 and r["failed"] == 0, (r["label"], r["failures"])
    assert r["output_tokens"] == 4 * 8, r["output_tokens"]   # ignore_eos: exactly gen-len each
    assert r["latency"]["ttft"]["p50_s"] > 0 and r["latency"]["tpot"]["n"] == 4
    assert r["server_timings"]["requests"] == 4
assert rows[0]["load_s"] > 0 and rows[0]["cold_start_s"] >= rows[0]["load_s"], rows[0]
assert rows[1]["load_s"] is None   # same server: load and cold start belong to its first row
# --repack auto: on unless the CPU has AMX; the server got the matching flag, the row says why
amx = " amx_tile" in open("/proc/cpuinfo").read()
for r in rows:
    assert r["repack"] == ("off" if amx else "on"), r["repack"]
    assert (" --no-repack " if amx else " --repack ") in r["server_args"] + " ", r["server_args"]
    assert r["note"].startswith("repack %s (auto)" % r["repack"]), r["note"]
    assert len(r["requests"]) == 4 + r["concurrency"], len(r["requests"])  # warm-ups kept, flagged
    assert sum(q["warmup"] for q in r["requests"]) == r["concurrency"]
print("ok: llm-load document checks")
PY
# history, report and compare read the document back (src/result/result_read_llm_load.c)
grep -q "stored as history run 1" "$tmp/c.out" && "$NNPERF" history | grep -q "^1 .* llm-load *2 *2 " &&
  "$NNPERF" history show 1 | grep -q "^concurrency 2 *4 *0" && "$NNPERF" report @1 -o "$tmp/r.html" &&
  grep -q "<svg" "$tmp/r.html" && echo "ok: history list/show and report of an llm-load run" ||
  { echo "FAIL history/report: $("$NNPERF" history 2>&1)"; fail=1; }
"$NNPERF" history export 1 | cmp -s - "$tmp/c.json" || { echo "FAIL: history export differs from --json"; fail=1; }
# NEW: every token 3x later (TTFT and TPOT x3); its concurrency-2 row another configuration
python3 - "$tmp/c.json" "$tmp/slow.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for q in d["rows"][0]["requests"]:
    q["token_t"] = [3 * t for t in q["token_t"]]
    q["t_done"] = q["t_sent"] + 3 * (q["t_done"] - q["t_sent"])
d["rows"][1]["concurrency"] = 3
json.dump(d, open(sys.argv[2], "w"))
PY
"$NNPERF" compare @1 "$tmp/slow.json" > "$tmp/cmp.out" 2>&1; rc=$?; cat "$tmp/cmp.out"
python3 - "$tmp/cmp.out" <<'PY' && [ $rc = 0 ] || { echo "FAIL compare of llm-load documents rc=$rc"; fail=1; }
import re, sys
out = open(sys.argv[1]).read()
# per metric: base P50, new P50, ratio, CI, p, base P99, new P99, verdict (one server run: inconclusive)
m = {k: re.search(r"^  %s +([\d.]+) +([\d.]+) +([\d.]+) .* inconclusive: BASE has 1 worker process" % k, out, re.M)
     for k in ("TTFT", "TPOT")}
assert all(m.values()), out
for k, x in m.items():
    assert 2.9 < float(x.group(3)) < 3.1, (k, x.group(0))
assert "concurrency 2: only in BASE" in out and "concurrency 2: only in NEW" in out, out
print("ok: compare judges per-request TTFT/TPOT of llm-load rows (ratio 3 seen), unmatched rows said")
PY
# --repack: parsed strictly, and off means --no-repack on the server's command line
timeout 10 "$NNPERF" llm load "$tmp/tiny.gguf" --repack maybe > "$tmp/rp.out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "repack 'maybe'" "$tmp/rp.out" || { echo "FAIL --repack maybe rc=$rc"; cat "$tmp/rp.out"; fail=1; }
timeout 10 "$NNPERF" llm load --endpoint http://127.0.0.1:9 --repack on > "$tmp/rp.out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "only for --backend llama-server" "$tmp/rp.out" || { echo "FAIL --repack with --endpoint rc=$rc"; fail=1; }
# footprint and energy, as CNN rows have them (issue 23 items 4/5): the files the
# llama-server process mapped (/proc/PID/maps: libllama, ggml, the binary; not the GGUF),
# the GGUF's bytes, energy per output token or "not available here" - never estimated
python3 - "$tmp/c.json" "$tmp/c.csv" "$tmp/tiny.gguf" "$tmp/c.out" "$tmp/c.html" <<'PY' || fail=1
import csv, json, os, sys
d = json.load(open(sys.argv[1]))
gguf = os.path.getsize(sys.argv[3])
for r in d["rows"]:
    fp, en = r["footprint"], r["energy"]
    assert fp["model_bytes"] == gguf and fp["runtime_bytes"] > 1 << 20 and fp["runtime_files"] >= 3, fp
    assert (en["j_per_output_token"] is None) == en["source"].startswith("not available here"), en
c = list(csv.DictReader(open(sys.argv[2])))
assert int(c[0]["runtime_bytes"]) == d["rows"][0]["footprint"]["runtime_bytes"] and c[0]["energy_source"], c[0]
out = open(sys.argv[4]).read()
assert "footprint: runtime" in out and "energy" in out, out
assert "energy mJ/output token" in open(sys.argv[5]).read()
print("ok: llm-load footprint and energy")
PY
grep -q "<svg" "$tmp/c.html" || { echo "FAIL: no chart in the HTML"; fail=1; }
timeout 120 "$NNPERF" llm load "$tmp/tiny.gguf" --threads 1 --request-rate 20 --num-requests 6 --prompt-len 16 \
  --gen-len 8 --slo ttft=10s,tpot=1s --repack off --no-history --json "$tmp/o.json" > "$tmp/o.out" 2>&1
rc=$?; cat "$tmp/o.out"
[ $rc = 0 ] && grep -q "rate 20/s *6 *0" "$tmp/o.out" || { echo "FAIL open loop rc=$rc"; fail=1; }
python3 -c "
import json, sys; r = json.load(open(sys.argv[1]))['rows'][0]
assert r['repack'] == 'off' and ' --no-repack ' in r['server_args'] and r['note'] == 'repack off (--repack off)', r
" "$tmp/o.json" || { echo "FAIL: --repack off did not reach the server"; fail=1; }
grep -q "stored as history" "$tmp/o.out" && { echo "FAIL: --no-history stored the run"; fail=1; }
# the explain rungs: each row says what changed; the tiny model's 16-wide heads cannot hold
# a q8_0 KV cache (block 32), so that rung is a row saying it did not run and the others go on
timeout 120 "$NNPERF" llm load "$tmp/tiny.gguf" --explain --concurrency 2 --threads 1 --num-requests 4 \
  --prompt-len 32 --gen-len 8 --no-history --json "$tmp/x.json" > "$tmp/x.out" 2>&1
rc=$?
python3 - "$tmp/x.json" <<'PY' && [ $rc = 0 ] || { echo "FAIL explain rc=$rc"; cat "$tmp/x.out"; fail=1; }
import json, sys
rows = {r["label"]: r for r in json.load(open(sys.argv[1]))["rows"]}
amx = " amx_tile" in open("/proc/cpuinfo").read()
want = ["batching off (1 slot)", "batching on (2 slots)", "prefix cache off", "prefix cache on", "KV cache q8_0"]
assert list(rows) == want + ([] if amx else ["repack off"]), list(rows)
assert rows["batching off (1 slot)"]["slots"] == 1 and rows["batching on (2 slots)"]["slots"] == 2
assert rows["prefix cache off"]["cache_prompt"] == 0 and rows["prefix cache on"]["cache_prompt"] == 1
assert rows["prefix cache on"]["shared_prefix"] == 24
q8 = rows["KV cache q8_0"]
assert q8["ok"] == 0 and q8["note"].startswith("not run") and q8["failures"][0]["cause"] == "server", q8
if not amx:
    r = rows["repack off"]
    assert r["repack"] == "off" and " --no-repack " in r["server_args"] and "explain rung" in r["note"], r
    assert r["ok"] == 4
print("ok: explain rungs, a rung whose server cannot start is a row, the others run")
PY
# Ctrl-C during a run: the run stops (exit 130) and takes its llama-server with it
timeout 120 "$NNPERF" llm load "$tmp/tiny.gguf" --threads 1 --concurrency 1 --num-requests 100000 --prompt-len 16 \
  --gen-len 64 > "$tmp/int.out" 2>&1 &
runner=$!
for _ in $(seq 200); do grep -qs "concurrency 1: 100000" "$tmp/int.out" && break; sleep 0.1; done
sleep 0.5; pkill -INT -f "llm load $tmp/tiny.gguf" ; wait $runner; rc=$?
[ $rc = 130 ] && grep -q "interrupted" "$tmp/int.out" || { echo "FAIL Ctrl-C: rc=$rc"; cat "$tmp/int.out"; fail=1; }
# never left running: no llama-server serves the test's model any more
if pgrep -f "$tmp/tiny.gguf" >/dev/null; then echo "FAIL: llama-server still running"; fail=1; fi
exit $fail
