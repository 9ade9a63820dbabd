#!/usr/bin/env bash
# nnperf llm bench's llama.cpp row against llama.cpp's own llama-bench, in one run, on the
# same model, threads and lengths (a benchmark, not a test: it prints ratios):
#   decode tokens/s  vs llama-bench tg at depth PROMPT  (-n GEN -d PROMPT)
#   prefill tokens/s vs llama-bench pp                   (-p PROMPT)
# and the worker's own time per generated token (clock reads, bookkeeping: the harness)
# against TPOT. Both sides run with weight repacking off (llama-bench --repack 0; see
# docs/llm.md). Usage: bench/llm_crosscheck.sh [NNPERF] [MODEL.gguf]
set -euo pipefail
nnperf=${1:-build/nnperf}
cache=${NNP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nnperf}
model=${2:-$cache/models/SmolLM2-135M-Instruct.Q4_1.gguf}
threads=${THREADS:-2} prompt=${PROMPT:-128} gen=${GEN:-64} rounds=${ROUNDS:-2}
lb=$cache/llama-0.3.36/bin/llama-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for r in $(seq "$rounds"); do # alternate the two tools, so drift hits both
  "$nnperf" llm bench "$model" --backends llama.cpp --threads "$threads" --prompt-len "$prompt" --gen-len "$gen" \
    --requests 8 --warmup 2 --backend-options llama.cpp:repack=0 --quiet --json "$work/n$r.json"
  "$lb" -m "$model" -t "$threads" -p "$prompt" -n 0 -r 5 --repack 0 -o json > "$work/pp$r.json" 2>/dev/null
  "$lb" -m "$model" -t "$threads" -p 0 -n "$gen" -d "$prompt" -r 5 --repack 0 -o json > "$work/tg$r.json" 2>/dev/null
done
python3 - "$work" "$rounds" <<'PY'
# after the rounds: the median of the paired ratios (each round's nnperf number over the
# llama-bench number taken beside it), judged against issue 21's goals: within 10% of
# llama-bench, and harness time per token under 1% of TPOT. Exit 1 when a goal is missed,
# so `make crosscheck` says so.
import json, sys, statistics
work, rounds = sys.argv[1], int(sys.argv[2])
dec, pre, har = [], [], []
for r in range(1, rounds + 1):
    row = json.load(open(f"{work}/n{r}.json"))["rows"][0]
    pp = json.load(open(f"{work}/pp{r}.json"))[0]["avg_ts"]
    tg = json.load(open(f"{work}/tg{r}.json"))[0]["avg_ts"]
    tpot = row["metrics"]["tpot_s"]["p50"]
    over = row["harness_overhead_per_token_s"]
    dec.append(row["decode_tok_per_s"] / tg)
    pre.append(row["prefill_tok_per_s"] / pp)
    har.append(over / tpot)
    print(f"round {r}: decode {row['decode_tok_per_s']:.1f} vs tg {tg:.1f} tok/s (ratio {dec[-1]:.3f}); "
          f"prefill {row['prefill_tok_per_s']:.1f} vs pp {pp:.1f} (ratio {pre[-1]:.3f}); "
          f"harness {over*1e6:.1f} us/token = {har[-1]*100:.3f}% of TPOT {tpot*1e3:.2f} ms")
ok = True
for name, vals, test, goal in (("decode / tg", dec, lambda m: abs(m - 1) <= 0.10, "within 10%"),
                               ("prefill / pp", pre, lambda m: abs(m - 1) <= 0.10, "within 10%"),
                               ("harness / TPOT", har, lambda m: m < 0.01, "under 1%")):
    m = statistics.median(vals)
    good = test(m)
    ok = ok and good
    shown = f"{m*100:.3f}%" if name.startswith("harness") else f"{m:.3f}"
    print(f"median of {len(vals)} paired ratios, {name}: {shown}: {'pass' if good else 'FAIL'} (goal: {goal})")
sys.exit(0 if ok else 1)
PY
