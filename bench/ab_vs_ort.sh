#!/usr/bin/env bash
# Two builds of nnperf against ONNX Runtime, interleaved: each round runs build A then
# build B, each one `nnperf bench` call with native and ort-cpu (batch 1), so every
# native number has an ORT number taken right beside it. Prints each call's P50 and min
# with the load average, then per build and model the median over the rounds of native
# P50 / ORT P50 and the min over min. On a shared machine this says more than one
# engine_vs_ort.sh run per build, whose rows see different loads. Not a test.
#
# usage: bench/ab_vs_ort.sh ROUNDS THREADS NNPERF_A NNPERF_B
#   env: MODELS (default "mobilenet_v2 efficientnet_lite0"), ITER (default 40)
#   e.g. bench/ab_vs_ort.sh 6 1 /tmp/main/build/nnperf build/nnperf
set -euo pipefail
[ $# -eq 4 ] || { sed -n 2,11p "$0" >&2; exit 2; }
ROUNDS=$1 THREADS=$2 A=$3 B=$4
MODELS=${MODELS:-"mobilenet_v2 efficientnet_lite0"}
ITER=${ITER:-40}
tmp=$(mktemp -d /tmp/nnperf-ab-vs-ort.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq "$ROUNDS"); do
  for m in $MODELS; do
    for v in A B; do
      bin=$A
      [ $v = B ] && bin=$B
      load=$(cut -d' ' -f1 /proc/loadavg)
      "$bin" bench "zoo:$m" --backends native,ort-cpu --batch 1 --threads "$THREADS" --processes 1 \
        --iterations "$ITER" --min-time 0.5 --warmup 10 --json "$tmp/r.json" >/dev/null
      python3 - "$tmp/r.json" "$i" "$m" "$v" "$load" >>"$tmp/rounds.txt" <<'PY'
import json, sys
path, i, m, v, load = sys.argv[1:]
s = {r["backend"]: r["stats"] for r in json.load(open(path))["rows"]}
n, o = s["native"], s["ort-cpu"]
print(i, m, v, load, n["p50"] * 1e3, n["min"] * 1e3, o["p50"] * 1e3, o["min"] * 1e3)
PY
      tail -n 1 "$tmp/rounds.txt"
    done
  done
done
python3 - "$tmp/rounds.txt" "$A" "$B" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
print(f"{'model':<20} {'build':<5} {'native P50':>11} {'ORT P50':>9} {'native/ORT P50':>15} {'min/min':>8} {'load':>11}")
for m in dict.fromkeys(r[1] for r in rows):
    for v in ("A", "B"):
        r = [[float(x) for x in row[3:]] for row in rows if row[1] == m and row[2] == v]
        load, np50, nmin, op50, omin = zip(*r)
        ratio = st.median(a / b for a, b in zip(np50, op50))
        print(f"{m:<20} {v:<5} {st.median(np50):8.2f} ms {st.median(op50):6.2f} ms {ratio:14.3f}x"
              f" {min(nmin) / min(omin):7.3f}x {min(load):5.2f}-{max(load):.2f}")
print(f"A: {sys.argv[2]}\nB: {sys.argv[3]}")
PY
