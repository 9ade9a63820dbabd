#!/usr/bin/env bash
# Native engine vs ONNX Runtime (and OpenVINO when installed): P50 latency at batch 1 and
# throughput at batch 16, 2 threads, on three zoo models, each through `nnperf bench --json`
# (one methodology for every backend). Prints the numbers and native/ort ratios
# (issue 5's goal: native P50 <= 1.0x ORT's), each backend's scaling from 1 thread to
# THREADS (b1: P50 at 1 thread / P50 at THREADS; b16: items/s at THREADS / at 1 thread)
# unless SCALING=0, then each backend's achieved GFLOP/s at THREADS (the model's FLOPs from
# `nnperf inspect` over P50, or times items/s at batch 16) against this CPU's measured FMA
# peak (build/bench/bench_fma_peak, when built). Not a test: timings on shared machines
# are noisy; the load average is printed before and after, the JSON files stay in
# $OUT_DIR for a closer look.
#
# usage: bench/engine_vs_ort.sh [path/to/nnperf]
#   env: MODELS, THREADS, ITER, MIN_TIME, OUT_DIR, SCALING (1: also 1 thread), BACKENDS
#   (default native,ort-cpu[,openvino]), NATIVE_OPTIONS (e.g. batch_lanes=0 to measure
#   the layer-at-a-time batch path)
set -euo pipefail
NNPERF=${1:-$(dirname "$0")/../build/nnperf}
MODELS=${MODELS:-"mobilenet_v2 resnet18 efficientnet_lite0"}
THREADS=${THREADS:-2}
ITER=${ITER:-50}
MIN_TIME=${MIN_TIME:-1}
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/nnperf-engine-vs-ort.XXXXXX)}
mkdir -p "$OUT_DIR"
[ -x "$NNPERF" ] || { echo "engine_vs_ort: $NNPERF is not an executable (build first: make)" >&2; exit 1; }

SCALING=${SCALING:-1}
backends=${BACKENDS:-native,ort-cpu}
if [ -z "${BACKENDS:-}" ] && "$NNPERF" backends 2>/dev/null | grep -q '^openvino *available'; then
  backends=$backends,openvino
fi
if [ -z "${BACKENDS:-}" ] && ! "$NNPERF" backends 2>/dev/null | grep -q '^ort-cpu *available'; then
  echo "engine_vs_ort: ort-cpu is not available (scripts/install-python.sh installs onnxruntime)" >&2
  exit 1
fi
threads=$THREADS
[ "$SCALING" = 1 ] && [ "$THREADS" != 1 ] && threads=1,$THREADS
native_opts=()
[ -n "${NATIVE_OPTIONS:-}" ] && native_opts=(--backend-options "native:$NATIVE_OPTIONS")

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
PEAK_BIN=$(dirname "$NNPERF")/bench/bench_fma_peak
if [ -x "$PEAK_BIN" ]; then "$PEAK_BIN" "$THREADS" >"$OUT_DIR/fma_peak.txt"; else : >"$OUT_DIR/fma_peak.txt"; fi
for m in $MODELS; do
  "$NNPERF" inspect "zoo:$m" --json >"$OUT_DIR/$m.inspect.json"
  "$NNPERF" bench "zoo:$m" --backends "$backends" --batch 1,16 --threads "$threads" "${native_opts[@]}" \
    --iterations "$ITER" --min-time "$MIN_TIME" --processes 1 --json "$OUT_DIR/$m.json" >/dev/null
done

python3 - "$OUT_DIR" "$THREADS" $MODELS <<'PY'
import json, sys
out_dir, T, models = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
nan = float("nan")
print(f"{T} threads:")
print(f"{'model':<20} {'backend':<10} {'P50 b1 ms':>10} {'b16 items/s':>12} {'native/x P50':>13} {'native/x thr':>13}"
      f" {'b1 x1->' + str(T) + 't':>10} {'b16 x1->' + str(T) + 't':>11}")
for m in models:
    d = json.load(open(f"{out_dir}/{m}.json"))
    rows = {}
    for r in d["rows"]:
        if r["status"] != "ok":
            print(f"{m:<20} {r['backend']:<10} t{r['threads']} b{r['batch']} {r['status']}: {r['reason']}")
            continue
        rows.setdefault(r["backend"], {})[(r["threads"], r["batch"])] = r
    nat = rows.get("native", {})
    p50 = lambda byb, t: byb[(t, 1)]["stats"]["p50"] * 1e3 if (t, 1) in byb else nan
    thr = lambda byb, t: byb[(t, 16)]["items_per_s"] if (t, 16) in byb else nan
    for be, byb in rows.items():
        print(f"{m:<20} {be:<10} {p50(byb, T):>10.2f} {thr(byb, T):>12.1f} {p50(nat, T) / p50(byb, T):>12.2f}x"
              f" {thr(nat, T) / thr(byb, T):>12.2f}x {p50(byb, 1) / p50(byb, T):>9.2f}x {thr(byb, T) / thr(byb, 1):>10.2f}x")
print("native/x P50: native latency over x's (<= 1.0: native is as fast or faster);"
      " native/x thr: native throughput over x's (>= 1.0: native is as fast or faster);"
      f" x1->{T}t: speed-up from 1 to {T} threads (nan: SCALING=0)")
print("noisy machine" if any(json.load(open(f"{out_dir}/{m}.json")).get("noisy") for m in models) else "")
# achieved GFLOP/s against the measured FMA peak: per core from one thread (the least
# disturbed figure on a shared machine), times the threads; the T-thread measurement too
peak1, peakT, threads = None, None, None
for line in open(f"{out_dir}/fma_peak.txt"):
    f = line.split()
    if f and f[0] == "threads":
        t, best = int(f[1]), max(float(f[3]), float(f[5]))
        if t == 1: peak1 = best
        peakT, threads = best, t
if peak1:
    nominal = peak1 * threads
    print(f"\nmeasured FP32 FMA peak: {peak1:.1f} GFLOP/s on 1 thread, so {nominal:.1f} on {threads} "
          f"(measured on {threads} together: {peakT:.1f}; AVX2 and AVX-512 peaks are the larger of the two)")
    print("GFLOP per item: the model's as `nnperf inspect` counts them (direct convolutions); a backend that"
          " multiplies less (native's Winograd 3x3 layers: 4 in place of 9 per output and input channel)"
          " shows the rate it would need to match without it, not the FLOPs its cores ran")
    for m in models:
        flops = json.load(open(f"{out_dir}/{m}.inspect.json"))["totals"]["flops"]
        for r in json.load(open(f"{out_dir}/{m}.json"))["rows"]:
            if r["status"] != "ok" or r["threads"] != threads: continue
            g = flops / r["stats"]["p50"] * 1e-9 if r["batch"] == 1 else flops * r["items_per_s"] * 1e-9
            what = "P50 b1" if r["batch"] == 1 else f"b{r['batch']} items/s"
            print(f"{m:<20} {r['backend']:<10} {what:<14} {g:7.1f} GFLOP/s = {100 * g / nominal:5.1f}% of peak "
                  f"({flops / 1e9:.2f} GFLOP per item)")
print(f"JSON: {out_dir}")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
