#!/usr/bin/env bash
# Installs what nnperf needs to build and test, from Debian's packages. Idempotent: a
# package already installed is not touched, and apt-get runs only when one is missing.
#
#   cmake, gcc            the build
#   protobuf-c-compiler   protoc-c generates the ONNX parser from onnx.proto at build time
#   libprotobuf-c-dev     the protobuf-c runtime the generated parser links against
#   libonnx-dev           ships onnx.proto (/usr/include/onnx/onnx.proto), the format's definition
#   libonnx-testdata      the ONNX backend node tests: nnperf's conformance suite
#   clang, libclang-rt-14-dev   libFuzzer + sanitizer runtimes for the fuzz targets
#   python3-torch, python3-torchvision, python3-onnx, python3-numpy, libopenblas-dev
#                         export real torchvision models to ONNX and compute PyTorch's
#                         reference outputs for the model tests; also the torch-eager /
#                         torchscript benchmark rows (their worker runs under /usr/bin/python3)
#   python3-venv          the project's .venv for the Python framework workers
#                         (scripts/install-python.sh fills it from PyPI)
#   libjpeg-dev, libpng-dev   decode JPEG/PNG calibration photographs for INT8 (src/quant)
#   opencv-doc, darknet   real photographs (and ImageNet label lists) for INT8 calibration and
#                         validation sets (scripts/photo-sets.sh); no download at run time
#   libxnnpack-dev, libpthreadpool-dev   the `xnnpack` backend (XNNPACK's subgraph C API and
#                         the thread pool it runs on); without them it is built out
#   libjansson-dev        reads result JSON back (nnperf report, compare, history export,
#                         bench --resume)
#   libsqlite3-dev        the run history database (nnperf history, compare by run id)
#   libcurl4-openssl-dev  nnperf llm load's HTTP client: streams OpenAI-compatible completions
#                         from llama-server or any endpoint (well-kept HTTP, timeouts, TLS)
#   chromium              test-only: renders the HTML report headless for the screenshot test
#   python3-pil           test-only: checks the report screenshot is not blank (pixel variance);
#                         writes the seed images of the JPEG/PNG fuzz corpora
#   munge, slurmctld, slurmd, slurm-client   `nnperf sweep --slurm` talks to Slurm through
#                         sbatch/squeue/scancel; its test starts a one-node cluster on loopback
#                         (tests/cli/slurm_cluster.sh); nnperf itself needs none of them
set -euo pipefail

packages=(cmake make gcc pkg-config protobuf-c-compiler libprotobuf-c-dev libonnx-dev libonnx-testdata
          clang libclang-rt-14-dev
          python3-numpy python3-onnx python3-torch python3-torchvision libopenblas-dev python3-venv
          libxnnpack-dev libpthreadpool-dev
          libjansson-dev libsqlite3-dev chromium python3-pil
          libjpeg-dev libpng-dev opencv-doc darknet libcurl4-openssl-dev
          munge slurmctld slurmd slurm-client)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} Debian packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
