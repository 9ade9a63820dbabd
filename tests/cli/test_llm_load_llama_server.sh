#!/usr/bin/env bash
# nnperf llm load against the real llama-server (scripts/install-llm.sh) on a tiny seeded
# model made here: closed loop at 1 and 2 streams, an open-loop Poisson row, the result
# document, and no server left running afterwards. Loopback only, bounded requests and
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
print("ok: llm-load document checks")
PY
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
  --gen-len 8 --slo ttft=10s,tpot=1s --json "$tmp/o.json" > "$tmp/o.out" 2>&1
rc=$?; cat "$tmp/o.out"
[ $rc = 0 ] && grep -q "rate 20/s *6 *0" "$tmp/o.out" || { echo "FAIL open loop rc=$rc"; fail=1; }
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
