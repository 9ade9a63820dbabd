#!/usr/bin/env bash
# Native engine vs ONNX Runtime (and OpenVINO when installed): P50 latency at batch 1 and
# throughput at batch 16, 2 threads, on three zoo models, each through `nnperf bench --json`
# (one methodology for every backend). Prints the numbers and native/ort ratios
# (issue 5's goal: native P50 <= 1.0x ORT's), then each backend's achieved GFLOP/s (the
# model's FLOPs from `nnperf inspect` over P50, or times items/s at batch 16) against this
# CPU's measured FMA peak (build/bench/bench_fma_peak, when built). Not a test: timings
# on shared machines are noisy; the load average is printed, the JSON files stay in
# $OUT_DIR for a closer look.
#
# usage: bench/engine_vs_ort.sh [path/to/nnperf]   (env: MODELS, THREADS, ITER, MIN_TIME, OUT_DIR)
set -euo pipefail
NNPERF=${1:-$(dirname "$0")/../build/nnperf}
MODELS=${MODELS:-"mobilenet_v2 resnet18 efficientnet_lite0"}
THREADS=${THREADS:-2}
ITER=${ITER:-50}
MIN_TIME=${MIN_TIME:-1}
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/nnperf-engine-vs-ort.XXXXXX)}
mkdir -p "$OUT_DIR"
[ -x "$NNPERF" ] || { echo "engine_vs_ort: $NNPERF is not an executable (build first: make)" >&2; exit 1; }

backends=native,ort-cpu
if "$NNPERF" backends 2>/dev/null | grep -q '^openvino *available'; then backends=$backends,openvino; fi
if ! "$NNPERF" backends 2>/dev/null | grep -q '^ort-cpu *available'; then
  echo "engine_vs_ort: ort-cpu is not available (scripts/install-python.sh installs onnxruntime)" >&2
  exit 1
fi

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
PEAK_BIN=$(dirname "$NNPERF")/bench/bench_fma_peak
if [ -x "$PEAK_BIN" ]; then "$PEAK_BIN" "$THREADS" >"$OUT_DIR/fma_peak.txt"; else : >"$OUT_DIR/fma_peak.txt"; fi
for m in $MODELS; do
  "$NNPERF" inspect "zoo:$m" --json >"$OUT_DIR/$m.inspect.json"
  "$NNPERF" bench "zoo:$m" --backends "$backends" --batch 1,16 --threads "$THREADS" \
    --iterations "$ITER" --min-time "$MIN_TIME" --processes 1 --json "$OUT_DIR/$m.json" >/dev/null
done

python3 - "$OUT_DIR" $MODELS <<'PY'
import json, sys
out_dir, models = sys.argv[1], sys.argv[2:]
print(f"{'model':<20} {'backend':<10} {'P50 b1 ms':>10} {'b16 items/s':>12} {'native/x P50':>13} {'native/x thr':>13}")
for m in models:
    d = json.load(open(f"{out_dir}/{m}.json"))
    rows = {}
    for r in d["rows"]:
        if r["status"] != "ok":
            print(f"{m:<20} {r['backend']:<10} {r['status']}: {r['reason']}")
            continue
        rows.setdefault(r["backend"], {})[r["batch"]] = r
    nat = rows.get("native", {})
    for be, byb in rows.items():
        p50 = byb[1]["stats"]["p50"] * 1e3 if 1 in byb else float("nan")
        thr = byb[16]["items_per_s"] if 16 in byb else float("nan")
        rp = (nat[1]["stats"]["p50"] * 1e3 / p50) if 1 in nat and 1 in byb else float("nan")
        rt = (nat[16]["items_per_s"] / thr) if 16 in nat and 16 in byb else float("nan")
        print(f"{m:<20} {be:<10} {p50:>10.2f} {thr:>12.1f} {rp:>12.2f}x {rt:>12.2f}x")
print("native/x P50: native latency over x's (<= 1.0: native is as fast or faster);"
      " native/x thr: native throughput over x's (>= 1.0: native is as fast or faster)")
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
    for m in models:
        flops = json.load(open(f"{out_dir}/{m}.inspect.json"))["totals"]["flops"]
        for r in json.load(open(f"{out_dir}/{m}.json"))["rows"]:
            if r["status"] != "ok": continue
            g = flops / r["stats"]["p50"] * 1e-9 if r["batch"] == 1 else flops * r["items_per_s"] * 1e-9
            what = "P50 b1" if r["batch"] == 1 else f"b{r['batch']} items/s"
            print(f"{m:<20} {r['backend']:<10} {what:<14} {g:7.1f} GFLOP/s = {100 * g / nominal:5.1f}% of peak "
                  f"({flops / 1e9:.2f} GFLOP per item)")
print(f"JSON: {out_dir}")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
