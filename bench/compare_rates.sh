#!/usr/bin/env bash
# compare's false-positive and detection rates on this machine, as it is right now
# (issue 25, docs/report.md). Each of PAIRS rounds runs three benches back to back: A, B
# (the same configuration again) and S (the same with a planted 20% slowdown,
# --backend-options native:delay_pct=20), then `nnperf compare A B` (any REGRESSION or
# improvement is a false positive) and `nnperf compare A S` (a REGRESSION is a catch).
# The load average and each run's oversubscription evidence (rows[].cpu.other_cpus) are
# printed with every round, so the rates come with the load they were measured under.
#
# usage: bench/compare_rates.sh NNPERF [PAIRS=20] [THREADS=1]
# The configuration is the one tests/cli/test_compare.sh uses (zoo:tiny, batch 4, 5 worker
# processes, 100 iterations / 1 s). About 30 s a round on an idle 2-core machine.
set -uo pipefail
nnperf=${1:?usage: compare_rates.sh NNPERF [PAIRS] [THREADS]}
pairs=${2:-20}
threads=${3:-1}
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || { echo "cannot write the zoo model" >&2; exit 1; }

run() { # run NAME [extra options]
  local name=$1; shift
  "$nnperf" bench "$work/tiny.onnx" --backends native --batch 4 --threads "$threads" --warmup 10 --iterations 100 \
    --min-time 1 --processes 5 --quiet --no-history --json "$work/$name.json" "$@" > "$work/$name.out" 2>&1
}
verdict() { # verdict BASE NEW: the row's verdict, its process-level ratio and why
  "$nnperf" compare "$work/$1.json" "$work/$2.json" --json "$work/cmp.json" > /dev/null 2>&1
  $py - "$work/cmp.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
print(f"{r['verdict']} proc {r['proc_ratio']:.3f} ({r['why'] or '-'})")
PY
}
other() { # the other work beside the row (CPUs), from the run's JSON
  $py -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"][0]; o=(r.get("cpu") or {}).get("other_cpus"); print("?" if o is None else f"{o:.2f}")' "$work/$1.json"
}

fp=0 caught=0 same_inc=0 slow_inc=0
for i in $(seq 1 "$pairs"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  run A && run B && run S --backend-options native:delay_pct=20 || { echo "bench failed: $(cat "$work"/*.out)" >&2; exit 1; }
  vs=$(verdict A B) vd=$(verdict A S)
  case $vs in REGRESSION*|improvement*) fp=$((fp + 1)) ;; inconclusive*) same_inc=$((same_inc + 1)) ;; esac
  case $vd in REGRESSION*) caught=$((caught + 1)) ;; inconclusive*) slow_inc=$((slow_inc + 1)) ;; esac
  echo "round $i load $load other_cpus A $(other A) B $(other B) S $(other S) | A-B: $vs | A-S: $vd"
done
echo "identical pairs: $fp false positives of $pairs ($same_inc inconclusive)"
echo "planted 20% slowdown: $caught caught of $pairs ($slow_inc inconclusive)"
