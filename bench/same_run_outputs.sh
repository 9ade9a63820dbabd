#!/usr/bin/env bash
# Bit-for-bit check of a refactor: `nnperf run` on the zoo models with two builds (BASE, the
# branch point; NEW, the change), under each NNP_CPU_FEATURES level and batch size, must
# write the same output files byte for byte and print the same summary (shapes, min/max/mean;
# the timing line aside).
#   bench/same_run_outputs.sh BASE_NNPERF NEW_NNPERF [MODELS...]
# Default models: mobilenet_v2 resnet18 efficientnet_lite0. Levels: the CPU's own (unset),
# avx2, generic. Batches 1 and 4 (batch 4 may take the batch-lanes path).
# Exit 0 when every pair matches, 1 otherwise; one line per case.
set -u
base=${1:?usage: same_run_outputs.sh BASE_NNPERF NEW_NNPERF [MODELS...]}
new=${2:?usage: same_run_outputs.sh BASE_NNPERF NEW_NNPERF [MODELS...]}
shift 2
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(mobilenet_v2 resnet18 efficientnet_lite0)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
# the printed summary without its timings and output folder, which differ run to run
summary() { grep -v -e '^time ' -e '^wrote ' "$1"; }
for m in "${models[@]}"; do
  for level in native avx2 generic; do
    for batch in 1 4; do
      case_id="$m level=$level batch=$batch"
      for which in base new; do
        bin=$base; [ $which = new ] && bin=$new
        dir="$work/$which"; rm -rf "$dir"; mkdir -p "$dir"
        env_args=(); [ $level != native ] && env_args=(NNP_CPU_FEATURES=$level)
        if ! env "${env_args[@]}" "$bin" run "zoo:$m" --batch $batch --output-dir "$dir" \
             > "$dir.stdout" 2> "$dir.stderr"; then
          echo "FAIL $case_id: $which run failed: $(tail -1 "$dir.stderr")"; fail=1; continue 2
        fi
      done
      n=$(ls "$work/base" | wc -l)
      if [ "$n" -gt 0 ] && diff -r "$work/base" "$work/new" > /dev/null &&
         cmp -s <(summary "$work/base.stdout") <(summary "$work/new.stdout"); then
        echo "same $case_id ($n output files, $(cat "$work/base"/* | sha256sum | cut -c1-12))"
      else
        echo "FAIL $case_id: outputs differ"; fail=1
      fi
    done
  done
done
exit $fail
