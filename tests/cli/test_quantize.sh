#!/usr/bin/env bash
# nnperf quantize end to end on zoo:tiny with generated PNG/JPEG photos-to-be: every
# calibrator writes a QDQ model that the native engine runs and compares against FP32;
# a saved calibration table reproduces the same model byte for byte; ONNX Runtime (the
# project's .venv) runs the QDQ model and agrees with the native engine's output; and
# bad command lines (exit 2) and bad data (exit 1, one line) are refused.
set -uo pipefail
nnperf=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
py=/usr/bin/python3

if ! $py -c 'import PIL' 2>/dev/null; then
  echo "skip: python3-pil is not installed (scripts/install-deps.sh)"
  exit 77
fi
"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || { echo "FAIL cannot write zoo model"; exit 1; }
mkdir -p "$work/calib" "$work/val"
$py - "$work" <<'PY'
import sys, random
from PIL import Image, ImageDraw
random.seed(3)
w = sys.argv[1]
for k in range(10):
    im = Image.new("RGB", (random.randint(40, 90), random.randint(40, 90)), tuple(random.randint(0, 255) for _ in range(3)))
    d = ImageDraw.Draw(im)
    for _ in range(6):
        x0, y0 = random.randint(0, 30), random.randint(0, 30)
        d.ellipse([x0, y0, x0 + random.randint(5, 40), y0 + random.randint(5, 40)], fill=tuple(random.randint(0, 255) for _ in range(3)))
    folder = "calib" if k < 6 else "val"
    im.save(f"{w}/{folder}/img{k}." + ("png" if k % 2 else "jpg"))
PY

for c in minmax percentile entropy; do
  if "$nnperf" quantize "$work/tiny.onnx" --calib "$work/calib" --calibrator $c -o "$work/q_$c.onnx" \
       --table-out "$work/t_$c.txt" --compare "$work/val" > "$work/out_$c" 2> "$work/err"; then
    ok "quantize --calibrator $c"
  else
    bad "quantize --calibrator $c: $(cat "$work/err")"
  fi
  grep -q "quantized (QDQ)" "$work/out_$c" && grep -q "top-1 agreement .*/4" "$work/out_$c" \
    && ok "$c: report lines" || bad "$c: report lines: $(cat "$work/out_$c")"
done
head -1 "$work/t_entropy.txt" | grep -q "^nnperf-calibration-table 1$" && ok "table has its version line" || bad "table version line"
grep -q "^calibrator entropy$" "$work/t_entropy.txt" && ok "table names its calibrator" || bad "table calibrator"
# the three calibrators give different ranges (min-max covers everything)
cmp -s "$work/t_minmax.txt" "$work/t_entropy.txt" && bad "minmax and entropy tables identical" || ok "calibrators differ"
# a reloaded table reproduces the model exactly
"$nnperf" quantize "$work/tiny.onnx" --table "$work/t_entropy.txt" -o "$work/q_reload.onnx" > /dev/null 2>&1 \
  && cmp -s "$work/q_reload.onnx" "$work/q_entropy.onnx" && ok "table reload reproduces the model" || bad "table reload reproduces the model"
# a seeded subset is deterministic
"$nnperf" quantize "$work/tiny.onnx" --calib "$work/calib" --calib-size 3 --seed 5 -o "$work/s1.onnx" > /dev/null 2>&1
"$nnperf" quantize "$work/tiny.onnx" --calib "$work/calib" --calib-size 3 --seed 5 -o "$work/s2.onnx" > /dev/null 2>&1
cmp -s "$work/s1.onnx" "$work/s2.onnx" && ok "seeded subset is deterministic" || bad "seeded subset is deterministic"

# the QDQ model holds QuantizeLinear/DequantizeLinear and int8 per-channel weights
$py - "$work/q_entropy.onnx" <<'PY' && ok "QDQ structure" || bad "QDQ structure"
import sys, onnx
m = onnx.load(sys.argv[1])
ops = [n.op_type for n in m.graph.node]
assert ops.count("QuantizeLinear") >= 3 and ops.count("DequantizeLinear") >= 6, ops
assert "BatchNormalization" not in ops, "BatchNormalization after Conv should be folded"
inits = {t.name: t for t in m.graph.initializer}
w = [t for t in m.graph.initializer if t.data_type == onnx.TensorProto.INT8 and len(t.dims) == 4]
assert w, "no int8 conv weights"
for n in m.graph.node:
    if n.op_type == "Conv":
        assert n.input[0].endswith("_dequantized") and n.input[1].endswith("_dequantized"), n
PY

# ONNX Runtime runs the QDQ model and agrees with the native engine on the same input
venv_py="$root/.venv/bin/python"
if [ -x "$venv_py" ] && "$venv_py" -c 'import onnxruntime' 2>/dev/null; then
  $py -c 'import numpy as np; np.save("'"$work"'/x.npy", np.random.RandomState(1).randn(1,3,32,32).astype(np.float32))'
  "$nnperf" run "$work/q_entropy.onnx" --input input="$work/x.npy" --output-dir "$work/nat" --quiet
  "$venv_py" - "$work" <<'PY' && ok "ORT runs the QDQ model and agrees with native" || bad "ORT runs the QDQ model and agrees with native"
import sys, numpy as np, onnxruntime as ort
w = sys.argv[1]
so = ort.SessionOptions(); so.intra_op_num_threads = 1
s = ort.InferenceSession(f"{w}/q_entropy.onnx", so, providers=["CPUExecutionProvider"])
y = s.run(None, {"input": np.load(f"{w}/x.npy")})[0].ravel()
n = np.load(f"{w}/nat/logits.npy").ravel()
cos = float(y @ n / np.linalg.norm(y) / np.linalg.norm(n))
print("ORT vs native QDQ: cosine", cos, "top-1", int(y.argmax()), int(n.argmax()))
assert cos > 0.99 and y.argmax() == n.argmax()
PY
else
  echo "skip ORT check: $venv_py has no onnxruntime (scripts/install-python.sh)"
fi

# bad command lines: exit 2
"$nnperf" quantize "$work/tiny.onnx" -o "$work/x.onnx" > /dev/null 2>&1; [ $? -eq 2 ] && ok "no --calib: exit 2" || bad "no --calib: exit 2"
"$nnperf" quantize "$work/tiny.onnx" --calib "$work/calib" > /dev/null 2>&1; [ $? -eq 2 ] && ok "no -o: exit 2" || bad "no -o: exit 2"
"$nnperf" quantize "$work/tiny.onnx" --calib "$work/calib" --calibrator kmeans -o "$work/x.onnx" > /dev/null 2>&1; [ $? -eq 2 ] && ok "bad calibrator: exit 2" || bad "bad calibrator: exit 2"
"$nnperf" quantize "$work/tiny.onnx" --calib "$work/calib" --percentile 101 -o "$work/x.onnx" > /dev/null 2>&1; [ $? -eq 2 ] && ok "bad percentile: exit 2" || bad "bad percentile: exit 2"
# bad data: exit 1 with one line naming the file
mkdir -p "$work/broken"
printf '\xff\xd8\xff\xe0 not a jpeg' > "$work/broken/a.jpg"
"$nnperf" quantize "$work/tiny.onnx" --calib "$work/broken" -o "$work/x.onnx" > /dev/null 2> "$work/err"; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l < "$work/err")" -eq 1 ] && grep -q "a.jpg" "$work/err" && ok "corrupt photo: exit 1, one line" \
  || bad "corrupt photo: exit 1, one line (rc $rc): $(cat "$work/err")"
"$nnperf" quantize "$work/tiny.onnx" --calib "$work/nope" -o "$work/x.onnx" > /dev/null 2>&1; [ $? -eq 1 ] && ok "missing folder: exit 1" || bad "missing folder: exit 1"
printf 'nnperf-calibration-table 7\n' > "$work/t_bad.txt"
"$nnperf" quantize "$work/tiny.onnx" --table "$work/t_bad.txt" -o "$work/x.onnx" > /dev/null 2>&1; [ $? -eq 1 ] && ok "bad table version: exit 1" || bad "bad table version: exit 1"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
