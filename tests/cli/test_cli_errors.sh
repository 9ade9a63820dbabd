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
# inspect shows the user's model as written by default (issue 25: BlockedConv and
# 1x4x112x112x16 read as the user's model), says so, and aligns its columns whatever the
# length of node and op names (a long node name and BatchNormalization, never cut)
/usr/bin/python3 - "$work/long.onnx" <<'PY'
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])
w = [numpy_helper.from_array(np.ones(4, np.float32), n) for n in ("s", "b", "m")] + \
    [numpy_helper.from_array(np.full(4, 2, np.float32), "v")]
long_name = "encoder.stage_three.block_eleven.depthwise_separable.batch_norm_after_pointwise"
n1 = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["t"], name=long_name)
n2 = helper.make_node("Relu", ["t"], ["y"], name="r")
onnx.save(helper.make_model(helper.make_graph([n1, n2], "g", [x], [y], w), opset_imports=[helper.make_opsetid("", 13)]),
          sys.argv[1])
PY
cat > "$work/inspect_layout.py" <<'PY'
import sys
t = open(sys.argv[1]).read().splitlines()
want, ops = sys.argv[2], sys.argv[3:]
assert any(l.startswith("graph shown: " + want) for l in t), "no line 'graph shown: %s'" % want
h = next(i for i, l in enumerate(t) if l.lstrip().startswith("#  node"))
cols = [t[h].index(" %s " % c) + 1 for c in ("op", "output")]
rows = [l for l in t[h + 1:] if l[:4].strip().isdigit()]
assert rows and all(l[c - 1] == " " and l[c] != " " for l in rows for c in cols), rows
got = {l[cols[0]:].split()[0] for l in rows}
for op in ops:  # "-Op": must not be there; "A|B": one of them must
    assert (op[1:] not in got) if op[0] == "-" else any(o in got for o in op.split("|")), (op, got)
PY
"$nnperf" inspect "$work/long.onnx" > "$work/inspect.txt" 2>&1
/usr/bin/python3 "$work/inspect_layout.py" "$work/inspect.txt" "the model as written" BatchNormalization Relu \
  && grep -q "batch_norm_after_pointwise BatchNormalization" "$work/inspect.txt" \
  && ok "inspect: the model as written by default, long names whole, columns aligned" || bad "inspect layout: $(cat "$work/inspect.txt")"
"$nnperf" inspect zoo:tiny > "$work/inspect.txt" 2>&1
/usr/bin/python3 "$work/inspect_layout.py" "$work/inspect.txt" "the model as written" Conv BatchNormalization -FusedConv \
  && ok "inspect zoo:tiny: its own Conv and BatchNormalization nodes by default" || bad "inspect default graph: $(cat "$work/inspect.txt")"
# --engine-graph (and a pass option) show the graph after passes and say so; --no-passes
# stays accepted and shows the model
"$nnperf" inspect zoo:tiny --engine-graph > "$work/inspect-eg.txt" 2>&1
# (on AVX-512 every conv of zoo:tiny, its grouped one too, is a BlockedConv)
/usr/bin/python3 "$work/inspect_layout.py" "$work/inspect-eg.txt" "the native engine's, after its passes" "FusedConv|BlockedConv" -BatchNormalization \
  && ok "inspect --engine-graph: the engine's fused graph, said so" || bad "inspect --engine-graph: $(cat "$work/inspect-eg.txt")"
"$nnperf" inspect zoo:tiny --no-fuse-activation > "$work/inspect-eg.txt" 2>&1
grep -q "^graph shown: the native engine's" "$work/inspect-eg.txt" && ok "inspect --no-PASS shows the engine's graph" \
  || bad "inspect --no-fuse-activation does not show the engine's graph"
"$nnperf" inspect zoo:tiny --no-passes > "$work/inspect-np.txt" 2>&1
grep -q "^graph shown: the model as written" "$work/inspect-np.txt" &&
  ok "inspect --no-passes: the model as written" || bad "inspect --no-passes does not say it shows the model as written"
"$nnperf" inspect zoo:tiny --json > "$work/inspect.json" && "$nnperf" inspect zoo:tiny --engine-graph --json > "$work/inspect-eg.json" &&
  /usr/bin/python3 -c "import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); assert (a['graph'], b['graph']) == ('model', 'engine') and len(a['nodes']) == 18 > len(b['nodes'])" \
    "$work/inspect.json" "$work/inspect-eg.json" && ok "inspect --json names its graph" || bad "inspect --json graph field"
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
