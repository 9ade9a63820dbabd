#!/usr/bin/env bash
# End-to-end CLI checks: good runs produce what they promise; bad input gets a one-line
# error naming the problem and exit status 1; a bad command line gets exit status 2.
set -uo pipefail
source "$(dirname "$0")/common.sh"

# expect NAME STATUS PATTERN -- command...: exit status, and (for status 1) a single
# stderr line matching PATTERN
expect() {
  local name=$1 want=$2 pattern=$3
  shift 4
  "$@" > "$work/out" 2> "$work/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then bad "$name: exit $got, expected $want: $(head -c 300 "$work/err")"; return; fi
  if [ "$want" -eq 1 ]; then
    local lines
    lines=$(wc -l < "$work/err")
    if [ "$lines" -ne 1 ]; then bad "$name: $lines stderr lines, expected 1: $(cat "$work/err")"; return; fi
  fi
  if [ -n "$pattern" ] && ! grep -qiE -- "$pattern" "$work/err" "$work/out"; then
    bad "$name: output does not match /$pattern/: $(head -c 300 "$work/err")"; return
  fi
  ok "$name"
}

expect "no arguments" 2 "usage" -- "$nnperf"
expect "unknown command" 2 "unknown command" -- "$nnperf" frobnicate
expect "help" 0 "commands" -- "$nnperf" --help
expect "run help" 0 "--input" -- "$nnperf" run --help
expect "run without model" 2 "no model" -- "$nnperf" run
expect "run unknown option" 2 "unknown option" -- "$nnperf" run zoo:tiny --frob
expect "bad batch" 2 "--batch" -- "$nnperf" run zoo:tiny --batch -3
expect "missing file" 1 "cannot open" -- "$nnperf" run "$work/nope.onnx"
: > "$work/empty.onnx"
expect "empty file" 1 "empty" -- "$nnperf" run "$work/empty.onnx"
head -c 4096 /dev/urandom > "$work/garbage.onnx"
expect "garbage file" 1 "onnx|protobuf|malformed|not a valid" -- "$nnperf" run "$work/garbage.onnx"
expect "unknown zoo model" 1 "tiny" -- "$nnperf" run zoo:nosuchnet

expect "zoo writes a model" 0 "wrote" -- "$nnperf" zoo tiny -o "$work/tiny.onnx"
expect "zoo list" 0 "resnet18" -- "$nnperf" zoo --list
size=$(stat -c %s "$work/tiny.onnx")
for cut in 1 7 100 $((size / 2)) $((size - 1)); do
  head -c "$cut" "$work/tiny.onnx" > "$work/cut.onnx"
  expect "truncated model ($cut of $size bytes)" 1 "" -- "$nnperf" run "$work/cut.onnx"
done

expect "run tiny" 0 "logits" -- "$nnperf" run "$work/tiny.onnx" --output-dir "$work/out1"
/usr/bin/python3 -c "import numpy as np, sys; a = np.load(sys.argv[1]); assert a.shape == (1, 10) and np.isfinite(a).all(), a.shape" \
  "$work/out1/logits.npy" && ok "output .npy readable by numpy" || bad "output .npy readable by numpy"
expect "run tiny batch 3" 0 "3x10" -- "$nnperf" run "$work/tiny.onnx" --batch 3
expect "seeded runs agree" 0 "" -- "$nnperf" run "$work/tiny.onnx" --output-dir "$work/out2" --quiet
cmp -s "$work/out1/logits.npy" "$work/out2/logits.npy" && ok "same seed, same output" || bad "same seed, same output"

/usr/bin/python3 -c "import numpy as np; np.save('$work/x.npy', np.random.RandomState(0).rand(2, 3, 32, 32).astype(np.float32))"
expect "input from npy" 0 "2x10" -- "$nnperf" run "$work/tiny.onnx" --input "input=$work/x.npy"
expect "input with unknown name" 1 "no input named 'nosuch'" -- "$nnperf" run "$work/tiny.onnx" --input "nosuch=$work/x.npy"
/usr/bin/python3 -c "import numpy as np; np.save('$work/x4.npy', np.zeros((1, 4, 32, 32), np.float32))"
expect "input with wrong channel count" 1 "input" -- "$nnperf" run "$work/tiny.onnx" --input "input=$work/x4.npy"
/usr/bin/python3 -c "import numpy as np; np.save('$work/xi.npy', np.zeros((1, 3, 32, 32), np.int64))"
expect "input with wrong dtype" 1 "float32" -- "$nnperf" run "$work/tiny.onnx" --input "input=$work/xi.npy"
printf 'not numpy' > "$work/bad.npy"
expect "malformed npy" 1 "npy" -- "$nnperf" run "$work/tiny.onnx" --input "input=$work/bad.npy"

/usr/bin/python3 - "$work/unsup.onnx" <<'PY'
import sys
import onnx
from onnx import helper, TensorProto
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
n1 = helper.make_node("Relu", ["x"], ["t"], name="first")
n2 = helper.make_node("NonMaxSuppressionLike", ["t"], ["y"], name="weird_node", domain="com.example")
m = helper.make_model(helper.make_graph([n1, n2], "g", [x], [y]),
                      opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
onnx.save(m, sys.argv[1])
PY
expect "unsupported op named with its node" 1 "unsupported op.*NonMaxSuppressionLike.*weird_node" -- "$nnperf" run "$work/unsup.onnx"

expect "inspect" 0 "MACs" -- "$nnperf" inspect "$work/tiny.onnx"
# inspect says which graph it shows, and its node table is aligned, names never cut (issue 25)
"$nnperf" inspect zoo:tiny > "$work/inspect.txt" 2>&1
/usr/bin/python3 - "$work/inspect.txt" <<'PY' && ok "inspect: which graph, aligned columns" || bad "inspect layout: $(cat "$work/inspect.txt")"
import sys
t = open(sys.argv[1]).read().splitlines()
assert any(l.startswith("graph shown: as the native engine runs it") for l in t)
h = next(i for i, l in enumerate(t) if l.lstrip().startswith("#  node"))
col = t[h].index(" op ") + 1
rows = [l for l in t[h + 1:] if l[:4].strip().isdigit()]
assert rows and all(l[col - 1] == " " and l[col] != " " for l in rows), rows
PY
# ... and with --no-passes, that it shows the model as written (not "after its passes")
"$nnperf" inspect zoo:tiny --no-passes > "$work/inspect-np.txt" 2>&1
grep -q "^graph shown: the model's own nodes, as written" "$work/inspect-np.txt" &&
  ok "inspect --no-passes: the model as written" || bad "inspect --no-passes does not say it shows the model as written"
"$nnperf" inspect zoo:tiny --json > "$work/inspect.json" &&
  /usr/bin/python3 -c "import json, sys; d = json.load(open(sys.argv[1])); assert d['totals']['macs'] > 0" "$work/inspect.json" &&
  ok "inspect --json is valid JSON with totals" || bad "inspect --json is valid JSON with totals"
# the MACs are the model's, whatever the passes make of its nodes (the blocked layout's
# BlockedConv went uncounted: resnet18 read 0.5 M MACs, its classifier alone); resnet18 at
# 224x224 has 1,814,073,344 (the published 1.8 G)
"$nnperf" inspect zoo:resnet18 --json > "$work/r18.json" && "$nnperf" inspect zoo:resnet18 --passes none --json > "$work/r18n.json" &&
  /usr/bin/python3 -c "import json, sys; a, b = (json.load(open(f))['totals']['macs'] for f in sys.argv[1:]); assert a == b == 1814073344, (a, b)" \
    "$work/r18.json" "$work/r18n.json" && ok "inspect: resnet18's MACs with and without passes" || bad "inspect MACs under passes"

test_summary
