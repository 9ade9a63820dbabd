#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for a fixed number of executions.
#
#   scripts/fuzz.sh [RUNS] [TARGET...]
#
#   RUNS     executions per target (libFuzzer -runs=), default 1000000
#   TARGET   fuzz_onnx_load, fuzz_tensor_pb, fuzz_worker_protocol, fuzz_npy, fuzz_result_load, fuzz_shape_infer, fuzz_jpeg_read, fuzz_png_read, fuzz_plan_cache, fuzz_sse_stream (default: all)
#
# Configures and builds build-fuzz/ (CC=clang, -DNNP_FUZZ=ON, Debug; the library is
# compiled with -O1 -fsanitize=fuzzer-no-link,address,undefined, the targets linked with
# -fsanitize=fuzzer,address,undefined), then runs each target over two corpus folders:
# build-fuzz/fuzz-corpus/<target>/, where libFuzzer keeps the inputs it finds (it grows
# from run to run), and the seed corpus tests/fuzz/corpus/<name>/, which is only read.
# A finding (crash, leak, sanitizer report, timeout, out-of-memory) stops the script
# with a non-zero status; the reproducing input is written to build-fuzz/fuzz-artifacts/
# and can be replayed with `build-fuzz/tests/fuzz/<target> <file>`.
#
# Environment: JOBS (build parallelism, default 2), FUZZ_FLAGS (extra libFuzzer flags,
# e.g. "-max_len=8192 -rss_limit_mb=4096").
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-1000000}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_onnx_load fuzz_tensor_pb fuzz_worker_protocol fuzz_npy fuzz_result_load fuzz_shape_infer fuzz_jpeg_read fuzz_png_read fuzz_plan_cache fuzz_sse_stream fuzz_gguf)
build=$root/build-fuzz

CC=${CC:-clang} cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DNNP_FUZZ=ON >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target "${targets[@]}"

mkdir -p "$build/fuzz-artifacts"
for t in "${targets[@]}"; do
  corpus=$build/fuzz-corpus/$t
  seeds=$root/tests/fuzz/corpus/${t#fuzz_}
  mkdir -p "$corpus"
  echo "== $t: $runs executions over $corpus + $seeds"
  # shellcheck disable=SC2086
  if ! "$build/tests/fuzz/$t" -runs="$runs" -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$build/fuzz-artifacts/$t-" ${FUZZ_FLAGS:-} "$corpus" "$seeds"; then
    echo "fuzz.sh: $t found a problem; the input that shows it is in $build/fuzz-artifacts/" >&2
    exit 1
  fi
done
echo "fuzz.sh: no findings in ${targets[*]} ($runs executions each)"
