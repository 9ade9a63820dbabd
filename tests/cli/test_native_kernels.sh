#!/usr/bin/env bash
# The native backend's kernel switch and threads, end to end: fast kernels on 2 threads
# agree with the reference kernels on 1 (accuracy column within tolerance), the JSON
# records the threads used and which kernels ran, and an unknown option is refused.
set -uo pipefail
source "$(dirname "$0")/common.sh"
quick=(--warmup 2 --iterations 5 --min-time 0 --processes 1)

"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || { echo "FAIL cannot write zoo model"; exit 1; }
if "$nnperf" bench "$work/tiny.onnx" --backends native --threads 1 --backend-options native:kernels=reference \
     "${quick[@]}" --json "$work/ref.json" > /dev/null 2> "$work/err"; then ok "reference kernels run"
else bad "reference kernels run: $(cat "$work/err")"; fi
if "$nnperf" bench "$work/tiny.onnx" --backends native --threads 2 "${quick[@]}" --json "$work/fast.json" \
     > /dev/null 2> "$work/err"; then ok "fast kernels on 2 threads run"
else bad "fast kernels on 2 threads run: $(cat "$work/err")"; fi
/usr/bin/python3 - "$work/ref.json" "$work/fast.json" <<'PY' && ok "json: threads and kernels recorded" || bad "json: threads and kernels recorded"
import json, sys
ref = json.load(open(sys.argv[1]))["rows"][0]
fast = json.load(open(sys.argv[2]))["rows"][0]
assert ref["status"] == "ok" and fast["status"] == "ok", (ref["reason"], fast["reason"])
assert "reference" in ref["note"], ref["note"]
assert "reference" not in fast["note"], fast["note"]
assert fast["threads"] == 2, fast["threads"]
PY
# outputs of the two runs agree: nnperf run with the same seed, fast vs NNP_CPU_FEATURES=generic
if "$nnperf" run "$work/tiny.onnx" --output-dir "$work/a" --quiet && NNP_CPU_FEATURES=generic "$nnperf" run "$work/tiny.onnx" --output-dir "$work/b" --quiet; then
  /usr/bin/python3 - "$work/a" "$work/b" <<'PY' && ok "AVX2 and generic kernels agree" || bad "AVX2 and generic kernels agree"
import os, sys
import numpy as np
for f in os.listdir(sys.argv[1]):
    a, b = np.load(os.path.join(sys.argv[1], f)), np.load(os.path.join(sys.argv[2], f))
    assert np.allclose(a, b, rtol=1e-4, atol=1e-5), f
PY
else bad "nnperf run"; fi
if "$nnperf" bench "$work/tiny.onnx" --backends native --backend-options native:kernels=bogus "${quick[@]}" > "$work/out" 2>&1 \
   && ! grep -q "unknown option" "$work/out"; then bad "unknown native option refused: $(tail -3 "$work/out")"
else ok "unknown native option refused"; fi
test_summary
