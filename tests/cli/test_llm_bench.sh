#!/usr/bin/env bash
# nnperf llm bench on the tiny seeded llama GGUF (tests/llm/make_tiny_gguf.py): the
# llama.cpp row runs through the real llama.cpp at concurrency 1 and 4, every request
# generates exactly --gen-len tokens, metrics and token times are in the JSON, the vllm row
# is unavailable with its reason; hostile models (not GGUF, truncated, absurd tensor sizes)
# and a prompt beyond the context each give one clear line and exit 1 (the other rows kept).
# Skips (77) when llama.cpp is not installed (scripts/install-llm.sh).
set -uo pipefail
nnperf=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export NNPERF_HISTORY=$work/history.db # never the user's history
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
cache=${NNP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nnperf}
py=$cache/venv-llm/bin/python
if [ ! -x "$(dirname "$nnperf")/nnperf-llama-worker" ] || [ ! -x "$py" ]; then
  echo "SKIP: llama.cpp worker or $py missing: run scripts/install-llm.sh, then rebuild"
  exit 77
fi
"$py" "$here/../llm/make_tiny_gguf.py" "$work/tiny.gguf" || { echo "FAIL cannot make the tiny GGUF"; exit 1; }
quick=(--prompt-len 24 --gen-len 12 --threads 1 --requests 4 --warmup 1)

if "$nnperf" llm bench "$work/tiny.gguf" --backends llama.cpp,vllm --concurrency 1,4 "${quick[@]}" \
     --json "$work/r.json" --csv "$work/r.csv" --html "$work/r.html" > "$work/out" 2> "$work/err"; then
  ok "llm bench on the tiny model exits 0"
else
  bad "llm bench on the tiny model exits 0: $(cat "$work/err")"
fi
/usr/bin/python3 - "$work/r.json" <<'PY' && ok "json: rows, exact token counts, metrics, agreement" || bad "json check"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["kind"] == "llm", d["kind"]
rows = d["rows"]
assert [r["status"] for r in rows] == ["ok", "unavailable", "ok", "unavailable"], [r["status"] for r in rows]
assert "CPU build" in rows[1]["reason"], rows[1]["reason"]
for r in (rows[0], rows[2]):
    meas = [q for q in r["requests"] if not q["warmup"]]
    assert len(meas) == 4, len(meas)
    assert all(len(q["token_t"]) == 12 for q in r["requests"]), "every request generates exactly gen-len tokens"
    assert all(q["token_t"] == sorted(q["token_t"]) for q in r["requests"]), "token times increase"
    m = r["metrics"]
    assert m["n_ok"] == 4 and m["ttft_s"]["n"] == 4 and m["tpot_s"]["n"] == 4 and m["itl_s"]["n"] == 44, m
    assert m["ttft_s"]["p50"] > 0 and r["decode_tok_per_s"] > 0 and r["prefill_tok_per_s"] > 0
    assert r["load_s"] > 0 and r["cold_start_s"] > r["load_s"] and r["peak_rss_bytes"] > 0 and r["kv_cache_bytes"] > 0
    # TPOT is (E2E - TTFT) / (tokens - 1) of the raw times: the median of 4 is the mean of the middle two
    t = sorted((x["token_t"][-1] - x["token_t"][0]) / 11 for x in meas)
    assert abs((t[1] + t[2]) / 2 - m["tpot_s"]["p50"]) < 1e-6, (t, m["tpot_s"]["p50"])
# batched sequences give the same greedy tokens as one at a time on this model
acc = rows[2]["accuracy"]
assert acc["compared"] and acc["first_token_agreement"] == 1.0, acc
assert [q["tokens"] for q in rows[0]["requests"] if not q["warmup"]] == \
       [q["tokens"] for q in rows[2]["requests"] if not q["warmup"]]
PY
# footprint and energy, as CNN rows have them (issue 23 items 4/5): the libraries the
# llama.cpp worker mapped (libllama, ggml) without the GGUF, the GGUF's bytes, and energy
# per output token from a counter or "not available here", never an estimate
/usr/bin/python3 - "$work/r.json" "$work/r.csv" "$work/tiny.gguf" "$work/out" "$work/r.html" <<'PY' && ok "footprint and energy in json, csv, table, html" || bad "footprint/energy"
import csv, json, os, sys
d = json.load(open(sys.argv[1]))
gguf = os.path.getsize(sys.argv[3])
for r in (d["rows"][0], d["rows"][2]):
    fp, en = r["footprint"], r["energy"]
    assert fp["model_bytes"] == gguf, (fp, gguf)
    assert fp["runtime_bytes"] > 1 << 20 and fp["runtime_files"] >= 3, fp  # libllama + ggml + libc at least
    assert en["source"], en
    if en["j_per_output_token"] is None:
        assert en["source"].startswith("not available here"), en
    else:
        assert en["j_per_output_token"] > 0 and en["source"].startswith("rapl"), en
rows = list(csv.DictReader(open(sys.argv[2])))
assert int(rows[0]["runtime_bytes"]) == d["rows"][0]["footprint"]["runtime_bytes"], rows[0]
assert int(rows[0]["model_bytes"]) == gguf and rows[0]["energy_source"], rows[0]
table = open(sys.argv[4]).read()
assert "mJ/tok" in table and "footprint: runtime MiB" in table and "energy (mJ per output token" in table, table
assert "mJ/tok" in open(sys.argv[5]).read()
PY
grep -q "^label,backend" "$work/r.csv" && [ "$(wc -l < "$work/r.csv")" -eq 5 ] && ok "csv: header + 4 rows" || bad "csv"
grep -q "<svg" "$work/r.html" && grep -q "TTFT per request" "$work/r.html" && ok "html: charts" || bad "html"

expect_fail() { # NAME FILE EXPECTED-TEXT
  "$nnperf" llm bench "$2" --backends llama.cpp "${quick[@]}" > "$work/o" 2> "$work/e"
  local rc=$?
  if [ $rc -eq 1 ] && [ "$(wc -l < "$work/e")" -eq 1 ] && grep -q "$3" "$work/e"; then ok "$1"; else
    bad "$1 (rc $rc): $(cat "$work/e")"; fi
}
echo "not a model" > "$work/text.gguf"
expect_fail "a file that is not GGUF" "$work/text.gguf" "not a GGUF file"
head -c 3000 "$work/tiny.gguf" > "$work/cut.gguf"
expect_fail "a truncated GGUF" "$work/cut.gguf" "truncated GGUF"
/usr/bin/python3 - "$work/tiny.gguf" "$work/absurd.gguf" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(b"token_embd.weight")  # name, then n_dims u32, then dims u64: make dim 0 absurd
b[i + 17 + 4: i + 17 + 12] = (1 << 45).to_bytes(8, "little")
open(sys.argv[2], "wb").write(bytes(b))
PY
expect_fail "a GGUF with absurd tensor sizes" "$work/absurd.gguf" "absurd size"

"$nnperf" llm bench "$work/tiny.gguf" --backends llama.cpp --prompt-len 24,600 --gen-len 12 --threads 1 \
  --requests 2 --warmup 1 --json "$work/ctx.json" > "$work/o" 2> "$work/e"
rc=$?
/usr/bin/python3 - "$work/ctx.json" <<'PY' && [ $rc -eq 1 ] && ok "prompt beyond the context: failed row, other row kept, exit 1" || bad "prompt beyond the context (rc $rc)"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert rows[0]["status"] == "ok", rows[0]
assert rows[1]["status"] == "failed" and "exceeds the model's context of 512" in rows[1]["reason"], rows[1]
PY
"$nnperf" llm bench "$work/tiny.gguf" --concurrency 0 > /dev/null 2>&1
[ $? -eq 2 ] && ok "bad --concurrency exits 2" || bad "bad --concurrency exits 2"

# history, compare, report and --resume read llm documents back (the result module's reader)
"$nnperf" history > "$work/hist" 2>&1
grep -qE "^[0-9]+ +[0-9T:Z-]+ +llm " "$work/hist" && ok "history lists the llm runs" || bad "history: $(cat "$work/hist")"
"$nnperf" compare "$work/r.json" "$work/r.json" > "$work/cmp" 2>&1
rc=$?
# one worker process per LLM row: no run-to-run noise measured, so compare says it cannot
# tell (issue 25's rule) rather than "same"; the ratio of a result with itself is exactly 1
[ $rc -eq 0 ] && grep -qE "TTFT .* 1\.000 .*inconclusive: BASE has 1 worker process" "$work/cmp" &&
  grep -qE "TPOT .* 1\.000 .*inconclusive" "$work/cmp" && grep -q "0 regressions" "$work/cmp" &&
  grep -q "vllm .*not compared (status unavailable" "$work/cmp" && ok "compare of an llm result with itself: ratio 1, inconclusive (one process), exit 0" ||
  bad "compare llm (rc $rc): $(cat "$work/cmp")"
"$nnperf" compare "$work/r.json" @1 > "$work/cmp2" 2>&1 && grep -q "TTFT" "$work/cmp2" &&
  ok "compare reads an llm run from the history" || bad "compare @1: $(cat "$work/cmp2")"
"$nnperf" report "$work/r.json" -o "$work/rep.html" > /dev/null 2>&1 && grep -q "TTFT" "$work/rep.html" &&
  ok "report renders an llm result" || bad "report of an llm result"
"$nnperf" llm bench "$work/tiny.gguf" --backends llama.cpp --concurrency 1 "${quick[@]}" --json "$work/part.json" \
  --quiet --no-history > /dev/null 2>&1
"$nnperf" llm bench "$work/tiny.gguf" --backends llama.cpp --concurrency 1,2 "${quick[@]}" --json "$work/full.json" \
  --resume "$work/part.json" --quiet --no-history > /dev/null 2> "$work/err"
rc=$?
/usr/bin/python3 - "$work/part.json" "$work/full.json" <<'PY' && [ $rc -eq 0 ] && ok "--resume keeps the finished llm row, runs the rest" || bad "--resume (rc $rc): $(cat "$work/err")"
import json, sys
part, full = (json.load(open(p)) for p in sys.argv[1:])
assert len(full["rows"]) == 2, len(full["rows"])
assert full["rows"][0]["requests"] == part["rows"][0]["requests"], "the kept row was measured again"
assert full["rows"][1]["concurrency"] == 2 and full["rows"][1]["status"] == "ok"
PY
"$nnperf" llm bench "$work/tiny.gguf" --backends llama.cpp --concurrency 1,2 --prompt-len 24 --gen-len 12 --threads 1 \
  --requests 8 --warmup 1 --resume "$work/part.json" --quiet --no-history > /dev/null 2> "$work/err"
[ $? -eq 1 ] && grep -q "resume with the same options" "$work/err" && ok "--resume with other --requests is refused" ||
  bad "--resume mismatch: $(cat "$work/err")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
