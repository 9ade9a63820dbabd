#!/usr/bin/env bash
# nnperf sweep PLAN with an "llm" section, on this machine, on the tiny seeded GGUF
# (tests/llm/make_tiny_gguf.py): the plan's LLM rows run through the LLM workload of
# `nnperf llm bench` beside its inference rows, each row is written to the results folder
# with its host, collect merges the LLM rows into one llm document (and the history), an
# unavailable backend is a row with its reason (not a failure), and --resume reruns only
# the missing rows wherever they sit in the row order, leaving the kept files untouched.
# Skips (77) when llama.cpp is not installed (scripts/install-llm.sh). A few seconds.
set -uo pipefail
nnperf=$(realpath "$1")
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
mkdir "$work/models"
"$py" "$here/../llm/make_tiny_gguf.py" "$work/models/tiny.gguf" || { echo "FAIL cannot make the tiny GGUF"; exit 1; }
cd "$work"
# the model path is relative to the plan's folder, not to where nnperf runs
cat >plan.json <<'EOF'
{"name": "mixed", "models": ["zoo:tiny"], "backends": ["native"], "threads": [1],
 "loop": {"warmup": 2, "iterations": 10, "min_time_s": 0.05, "max_time_s": 2, "processes": 1, "timeout_s": 60},
 "llm": {"models": ["models/tiny.gguf"], "backends": ["llama.cpp", "vllm"], "prompt_lengths": [16, 24],
         "gen_length": 8, "concurrency": [1], "requests": 4, "warmup": 1}}
EOF
mkdir elsewhere
(cd elsewhere && "$nnperf" sweep ../plan.json) >out.txt 2>err.txt
rc=$?
[ $rc -eq 0 ] && ok "a plan with inference and LLM rows runs here, exit 0 (vllm unavailable is no failure)" ||
  bad "sweep (rc $rc): $(cat err.txt)"
grep -q "tiny.gguf llama.cpp t1 p24 g8 c1" out.txt && grep -q "TTFT P50" out.txt && ok "the LLM table is shown" ||
  bad "no LLM table: $(cat out.txt)"
/usr/bin/python3 - <<'PY' && ok "collect: bench rows in collected.json, LLM rows in one llm document, each with its host" || bad "collect"
import glob, json
bench = json.load(open("mixed.results/collected.json"))
assert bench["kind"] == "bench" and [r["label"] for r in bench["rows"]] == ["zoo:tiny native fp32 t1 b1"], bench["rows"]
d = json.load(open("mixed.results/collected-llm.json"))
assert d["kind"] == "llm" and d["requests"] == 4 and d["warmup"] == 1, d["kind"]
rows = {r["label"]: r for r in d["rows"]}
want = {f"tiny.gguf {b} t1 p{p} g8 c1" for b in ("llama.cpp", "vllm") for p in (16, 24)}
assert set(rows) == want, sorted(rows)
for label, r in rows.items():
    assert r["host"]["class"] == "local" and r["host"]["job_id"] == "" and r["host"]["env"]["cpu_model"], r["host"]
    if r["backend"] == "vllm":
        assert r["status"] == "unavailable" and r["reason"], r
        continue
    assert r["status"] == "ok" and r["metrics"]["n_ok"] == 4, r["status"]
    assert all(len(q["token_t"]) == 8 for q in r["requests"]), "every request generates exactly gen_length tokens"
    assert r["metrics"]["ttft_s"]["p50"] > 0 and r["decode_tok_per_s"] > 0
# one file per row, each a complete llm document of one row
files = glob.glob("mixed.results/rows/local/*.json")
assert len(files) == 5, files
assert sum(json.load(open(f))["kind"] == "llm" for f in files) == 4
PY
"$nnperf" history >hist.txt 2>&1
grep -qE "^[0-9]+ +[0-9T:Z-]+ +llm " hist.txt && ok "collect stored the LLM rows in the history" || bad "history: $(cat hist.txt)"

# --resume: the 1st and 3rd row of the LLM group's order gone (not a prefix of it)
ls mixed.results/rows/local/*.json | while read -r f; do
  printf '%s %s\n' "$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows"][0]["label"].replace(" ", "_"))' "$f")" "$f"
done >files.txt
rm "$(awk '$1 == "llama.cpp_t1_p16_g8_c1" {print $2}' files.txt)" "$(awk '$1 == "llama.cpp_t1_p24_g8_c1" {print $2}' files.txt)"
md5sum mixed.results/rows/local/*.json | sort >kept.md5
"$nnperf" sweep plan.json --resume --no-history >/dev/null 2>resume.txt
rc=$?
[ $rc -eq 0 ] && md5sum -c --quiet kept.md5 && [ "$(ls mixed.results/rows/local/*.json | wc -l)" -eq 5 ] &&
  grep -q "tiny.gguf (local): 2 rows run, 2 kept" resume.txt && grep -q "zoo:tiny (local): 0 rows run, 1 kept" resume.txt &&
  ok "--resume reran the 2 missing LLM rows only; kept rows (and the unavailable ones) untouched" ||
  bad "--resume (rc $rc): $(cat resume.txt)"

# a malformed llm section: one line naming the field, exit 2, nothing run
expect_plan_error() { # NAME LLM-SECTION EXPECTED
  echo "{\"llm\": $2}" >bad.json
  "$nnperf" sweep bad.json >o.txt 2>e.txt
  local rc=$?
  if [ $rc -eq 2 ] && [ "$(wc -l <e.txt)" -eq 1 ] && grep -q -- "$3" e.txt && [ ! -e bad.results ]; then ok "$1"; else
    bad "$1 (rc $rc): $(cat e.txt)"; fi
}
echo "not a model" >models/text.gguf
expect_plan_error "llm model not a GGUF" '{"models": ["models/text.gguf"]}' "bad.json: llm.models: .*text.gguf: not a GGUF file"
expect_plan_error "llm model missing" '{"models": ["models/none.gguf"]}' "llm.models: .*none.gguf: cannot open"
expect_plan_error "llm unknown field" '{"models": ["models/tiny.gguf"], "prompts": [8]}' "llm.prompts: unknown field"
expect_plan_error "llm prompt length 0" '{"models": ["models/tiny.gguf"], "prompt_lengths": [0]}' \
  "llm.prompt_lengths: 0: wants integers in 1..1048576"
expect_plan_error "llm requests not a number" '{"models": ["models/tiny.gguf"], "requests": "8"}' \
  "llm.requests: wants a number in 1..100000"
expect_plan_error "llm gen_length not whole" '{"models": ["models/tiny.gguf"], "gen_length": 2.5}' "whole numbers"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
