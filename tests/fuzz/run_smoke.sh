#!/usr/bin/env bash
# Smoke-runs the libFuzzer targets for a bounded time over the seed corpus.
#
#   tests/fuzz/run_smoke.sh BUILD_DIR SECONDS [TARGET...]
#
# BUILD_DIR is a build configured with CC=clang -DNNP_FUZZ=ON; TARGET defaults to every
# fuzz target (fuzz_onnx_load, fuzz_tensor_pb). Each target runs SECONDS seconds
# (-max_total_time) on a copy of its seed corpus in a temporary folder, so the repository
# is never written to. Exits non-zero on any finding (crash, leak, sanitizer report,
# timeout, out-of-memory) or when a target is missing; the crashing input is kept in the
# printed folder.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
build=$1
seconds=$2
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_onnx_load fuzz_tensor_pb)
here=$(cd "$(dirname "$0")" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/nnp-fuzz-smoke.XXXXXX")
keep=0
cleanup() { [ "$keep" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT

status=0
for t in "${targets[@]}"; do
  bin=""
  for c in "$build/tests/fuzz/$t" "$build/$t"; do
    if [ -x "$c" ]; then bin=$c; break; fi
  done
  if [ -z "$bin" ]; then
    echo "run_smoke: $t not found in $build (configure with CC=clang -DNNP_FUZZ=ON)" >&2
    status=1
    continue
  fi
  seeds="$here/corpus/${t#fuzz_}"
  corpus="$work/$t/corpus"
  mkdir -p "$corpus" "$work/$t/artifacts"
  if [ -d "$seeds" ]; then cp "$seeds"/* "$corpus"/; fi
  echo "run_smoke: $t for ${seconds}s over $(ls "$corpus" | wc -l) seeds"
  start=$(date +%s)
  # -timeout: one input taking longer than 10 s is a finding; -rss_limit_mb: the default
  # 2 GiB. -print_final_stats reports the executions per second.
  if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$work/$t/artifacts/" "$corpus" >"$work/$t/log" 2>&1; then
    echo "run_smoke: $t FAILED; last lines of its log:" >&2
    tail -n 60 "$work/$t/log" >&2
    echo "run_smoke: artifacts kept in $work/$t/artifacts" >&2
    keep=1
    status=1
    continue
  fi
  if grep -q -E "ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:" "$work/$t/log"; then
    echo "run_smoke: $t reported a finding:" >&2
    grep -E -A 20 "ERROR:|runtime error:" "$work/$t/log" | head -n 60 >&2
    keep=1
    status=1
    continue
  fi
  runs=$(grep -E "stat::number_of_executed_units" "$work/$t/log" | awk '{print $2}')
  eps=$(( (${runs:-0}) / ( $(date +%s) - start > 0 ? $(date +%s) - start : 1 ) ))
  echo "run_smoke: $t ok: ${runs:-?} executions (~${eps}/s), corpus $(ls "$corpus" | wc -l) inputs"
done
exit $status
