#!/usr/bin/env bash
# Two (or more) builds of bench_conv_layers compared layer by layer on a shared machine:
# the binaries run interleaved, ROUNDS times each, and each layer keeps its minimum (the
# least disturbed run of each build, taken over the same stretch of time). Prints ms per
# layer and the last build's ratio to the first, with the load average before and after.
# Not a test.
#
# usage: bench/conv_layers_ab.sh ROUNDS THREADS BATCH FILTER BIN_A BIN_B [BIN...]
#   e.g. bench/conv_layers_ab.sh 6 1 1 rn18 /tmp/main/bench_conv_layers build/bench/bench_conv_layers
# ALGO=blocked (or direct, im2col) is passed on as bench_conv_layers' algorithm argument.
set -euo pipefail
[ $# -ge 6 ] || { sed -n 2,10p "$0" >&2; exit 2; }
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$@" <<'PY'
import os, subprocess, sys
rounds, threads, batch, filt = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
bins = sys.argv[5:]
best = [dict() for _ in bins]
order = []
for _ in range(rounds):
    for i, b in enumerate(bins):
        out = subprocess.run([b, threads, batch, filt, os.environ.get("ALGO", "auto")], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines()[2:]:  # "  %-28s %10.4f ..." rows
            try:
                name, ms = line[2:30].strip(), float(line[31:41])
            except ValueError:
                continue
            if name not in order: order.append(name)
            best[i][name] = min(best[i].get(name, float("inf")), ms)
print(f"{'layer (best ms)':<30}" + "".join(f"{('build ' + str(i)):>12}" for i in range(len(bins))) + "   last/first")
for name in order:
    v = [b.get(name, float("nan")) for b in best]
    print(f"{name:<30}" + "".join(f"{x:>12.4f}" for x in v) + f"   {v[-1] / v[0]:.3f}")
for i, b in enumerate(bins): print(f"build {i}: {b}")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
