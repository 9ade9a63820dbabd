#!/usr/bin/env bash
# The native engine against ONNX Runtime and OpenVINO on torchvision models a user would
# bring (issue 20): each model exported by Debian's torch 1.13 (torch.onnx.export, opset
# 13, seeded weights, symbolic batch; tests/models/export_torchvision.py), checked against
# PyTorch's own output (nnperf run, relative error <= 1e-4 of the output scale), then
# `nnperf bench --backends native,ort-cpu,openvino --batch 1,16 --threads 2`. Prints per
# model native / ort-cpu / openvino P50 at batch 1 and items/s at batch 16, native over
# the best peer, and the geometric means over the models. Not a test: timings on a
# shared machine are noisy (the load average is printed before and after; the JSON files
# stay in $OUT_DIR).
#
# usage: bench/models_vs_peers.sh [path/to/nnperf]
#   env: MODELS (any torchvision classification/segmentation names; default the public
#   set below), THREADS (2), ITER (30), MIN_TIME (1), MODEL_DIR (exports are kept and
#   reused there; default ~/.cache/nnperf/torchvision), OUT_DIR, BATCHES (1,16)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
NNPERF=${1:-$here/build/nnperf}
MODELS=${MODELS:-"efficientnet_b0 efficientnet_b3 mobilenet_v3_small mobilenet_v3_large regnet_x_400mf
  regnet_y_800mf squeezenet1_0 densenet121 resnext50_32x4d inception_v3 vit_b_16 swin_t resnet50 wide_resnet50_2"}
THREADS=${THREADS:-2}
ITER=${ITER:-30}
MIN_TIME=${MIN_TIME:-1}
BATCHES=${BATCHES:-1,16}
MODEL_DIR=${MODEL_DIR:-$HOME/.cache/nnperf/torchvision}
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/nnperf-models-vs-peers.XXXXXX)}
mkdir -p "$MODEL_DIR" "$OUT_DIR"
[ -x "$NNPERF" ] || { echo "models_vs_peers: $NNPERF is not an executable (build first: make)" >&2; exit 1; }
/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null ||
  { echo "models_vs_peers: Debian's python3-torch and python3-torchvision are needed (scripts/install-deps.sh)" >&2; exit 1; }
backends=native
for b in ort-cpu openvino; do
  if "$NNPERF" backends 2>/dev/null | grep -q "^$b *available"; then backends=$backends,$b
  else echo "models_vs_peers: $b is not available (scripts/install-python.sh installs it); left out" >&2; fi
done

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for m in $MODELS; do
  if [ ! -f "$MODEL_DIR/$m.expected.npy" ]; then
    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 "$here/tests/models/export_torchvision.py" --batch 1 "$MODEL_DIR" "$m" \
      >"$OUT_DIR/$m.export.log" 2>&1 || { echo "$m: export failed: $(tail -1 "$OUT_DIR/$m.export.log")"; continue; }
  fi
  check="" # a failed run must not report the previous model's comparison
  if "$NNPERF" run "$MODEL_DIR/$m.onnx" --input "input=$MODEL_DIR/$m.input.npy" --output-dir "$OUT_DIR/$m.out" \
       --quiet 2>"$OUT_DIR/$m.run.err" &&
     check=$(/usr/bin/python3 "$here/tests/models/compare_npy.py" "$OUT_DIR/$m.out/output.npy" \
       "$MODEL_DIR/$m.expected.npy" 1e-4); then
    echo "$m: matches PyTorch: $check"
  else
    echo "$m: DOES NOT MATCH PyTorch: ${check:-$(tail -1 "$OUT_DIR/$m.run.err")}"
  fi
  "$NNPERF" bench "$MODEL_DIR/$m.onnx" --backends "$backends" --batch "$BATCHES" --threads "$THREADS" \
    --iterations "$ITER" --min-time "$MIN_TIME" --processes 1 --no-history --json "$OUT_DIR/$m.json" >/dev/null ||
    echo "$m: nnperf bench failed (see $OUT_DIR/$m.json)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$OUT_DIR" $MODELS <<'PY'
import json, math, os, sys
out_dir, models = sys.argv[1], sys.argv[2:]
nan = float("nan")
print(f"\n{'model':<20} {'native ms':>10} {'ort ms':>9} {'ov ms':>9} {'nat/best':>9}   "
      f"{'native/s':>9} {'ort/s':>9} {'ov/s':>9} {'nat/best':>9}")
lat, thr = [], []
for m in models:
    path = f"{out_dir}/{m}.json"
    if not os.path.exists(path):
        print(f"{m:<20} no result")
        continue
    rows = {}
    for r in json.load(open(path))["rows"]:
        if r["status"] == "ok":
            rows[(r["backend"], r["batch"])] = r
        else:
            print(f"{m:<20} {r['backend']} b{r['batch']}: {r['status']}: {r.get('reason', '')}")
    p50 = lambda b: rows[(b, 1)]["stats"]["p50"] * 1e3 if (b, 1) in rows else nan
    ips = lambda b: rows[(b, 16)]["items_per_s"] if (b, 16) in rows else nan
    peers_p50 = [p50(b) for b in ("ort-cpu", "openvino") if not math.isnan(p50(b))]
    peers_ips = [ips(b) for b in ("ort-cpu", "openvino") if not math.isnan(ips(b))]
    rl = p50("native") / min(peers_p50) if peers_p50 else nan
    rt = ips("native") / max(peers_ips) if peers_ips else nan
    if not math.isnan(rl): lat.append(rl)
    if not math.isnan(rt): thr.append(rt)
    print(f"{m:<20} {p50('native'):>10.2f} {p50('ort-cpu'):>9.2f} {p50('openvino'):>9.2f} {rl:>8.2f}x   "
          f"{ips('native'):>9.1f} {ips('ort-cpu'):>9.1f} {ips('openvino'):>9.1f} {rt:>8.2f}x")
g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else nan
print(f"\ngeometric mean, batch 1: native P50 / best peer P50 = {g(lat):.2f}x over {len(lat)} models "
      f"(<= 1.0: native as fast or faster); worst {max(lat) if lat else nan:.2f}x")
print(f"geometric mean, batch 16: native items/s / best peer items/s = {g(thr):.2f}x over {len(thr)} models "
      f"(>= 1.0: native as fast or faster)")
PY
