#!/usr/bin/env bash
# One prepared check on a machine with an NVIDIA GPU (issue 28): takes nnperf (the bundle of
# scripts/gpu-bundle.sh when carried in build-gpu/bundle, else builds it from source), then
# runs `nnperf bench` on mobilenet_v2 and resnet18 at batch 1 and 16, fp32 and fp16, with
# native (CPU, fp32: the accuracy reference; its fp16 rows are 'unsupported') and
# torch-eager, torchscript, torch-compile on CUDA, writing JSON, CSV and HTML per model
# under OUT. Needs nothing from a registry: it uses the python there that imports torch
# (NNPERF_TORCH_PYTHON, else python3), and onnx from that python or from a wheel in
# $NNP_WHEELS (default shared/wheels: pip install --no-index into OUT/pylib). Bounded to
# about 8 minutes: each model's bench has its own time limit, and the JSON is rewritten
# after every row, so a model cut short keeps the rows it finished.
#
#   scripts/gpu-check.sh OUT [--quick]     (--quick: batch 1 only, for a first look)
#
# On the lent GPU machines (no protobuf-c there; at most 8 files come back from $OUT): here
# `scripts/gpu-bundle.sh`, then there, with build-gpu/bundle carried:
#   scripts/gpu-check.sh /tmp/gc; tar czf $OUT/gpu-check.tgz -C /tmp gc
# A dry run of the same steps on a CPU-only machine (the script's plumbing, not a GPU
# result): NNP_GPU_CHECK_DEVICE=cpu NNP_GPU_CHECK_MODELS=tiny scripts/gpu-check.sh OUT --quick
set -uo pipefail
out=${1:?usage: scripts/gpu-check.sh OUT [--quick]}
quick=${2:-}
cd "$(dirname "$0")/.."
mkdir -p "$out"
out=$(cd "$out" && pwd)
t0=$(date +%s)
log() { echo "gpu-check [$(( $(date +%s) - t0 ))s]: $*"; }

device=${NNP_GPU_CHECK_DEVICE:-cuda}
models=${NNP_GPU_CHECK_MODELS:-mobilenet_v2 resnet18}
py=${NNPERF_TORCH_PYTHON:-$(command -v python3)}
if [ "$device" = cpu ]; then
  log "DRY RUN on the CPU (NNP_GPU_CHECK_DEVICE=cpu): checks the script, measures no GPU"
  "$py" -c "import torch" 2>/dev/null || { log "$py cannot import torch; set NNPERF_TORCH_PYTHON"; exit 1; }
elif ! "$py" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  log "$py cannot import torch with a CUDA device; set NNPERF_TORCH_PYTHON"; exit 1
else
  "$py" -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda, torch.cuda.get_device_name(0))" | tee "$out/torch.txt"
fi
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
if ! "$py" -c "import onnx" 2>/dev/null; then
  wheels=${NNP_WHEELS:-shared/wheels}
  log "onnx not importable: installing it from $wheels without a registry"
  "$py" -m pip install --quiet --no-index --find-links "$wheels" --target "$out/pylib" onnx > "$out/pip.log" 2>&1 ||
    { log "no onnx wheel for this python in $wheels (see $out/pip.log): carry onnx==1.23.2's wheel there"; exit 1; }
  export PYTHONPATH="$out/pylib${PYTHONPATH:+:$PYTHONPATH}"
fi
export NNPERF_TORCH_PYTHON="$py"
export NNPERF_PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"

nnperf=build-gpu/bundle/nnperf # scripts/gpu-bundle.sh's, carried; else built here
if ! "$nnperf" --version > /dev/null 2>&1; then
  nnperf=build-gpu/nnperf
  if ! "$nnperf" --version > /dev/null 2>&1; then
    log "building nnperf (Release, build-gpu/)"
    if ! { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release > "$out/build.log" 2>&1 &&
           cmake --build build-gpu -j"$(nproc)" --target nnperf_cli >> "$out/build.log" 2>&1; }; then
      tail -20 "$out/build.log"
      log "build failed (build.log): it needs protoc-c, libprotobuf-c, onnx.proto, jansson, sqlite3, curl," \
          "libjpeg, libpng; without them run scripts/gpu-bundle.sh elsewhere and carry build-gpu/bundle"
      exit 1
    fi
  fi
fi
log "nnperf: $nnperf ($("$nnperf" --version 2>&1 | head -1))"
"$nnperf" backends > "$out/backends.txt" 2>&1 || true

inductor=$(mktemp -d /tmp/nnperf-gpu-inductor-XXXXXX) # one cache per model, outside OUT: thousands of files
trap 'rm -rf "$inductor"' EXIT
batches=1,16
[ "$quick" = --quick ] && batches=1
for m in $models; do
  log "bench $m (batch $batches, fp32 and fp16)"
  timeout 220 "$nnperf" bench "zoo:$m" --backends native,torch-eager,torchscript,torch-compile --device "$device" \
    --precision fp32,fp16 --batch "$batches" --threads "$(nproc)" --processes 1 --warmup 10 --iterations 200 \
    --min-time 0.5 --max-time 5 --timeout 150 --backend-options "torch-compile:cache_dir=$inductor/$m" \
    --allow-mixed --no-history --json "$out/$m.json" --csv "$out/$m.csv" --html "$out/$m.html" \
    > "$out/$m.txt" 2> "$out/$m.err"
  log "$m: exit $? (1 is expected: native has no fp16)"
  cat "$out/$m.txt"
done
log "done: $(ls "$out"/*.json | tr '\n' ' ')"
