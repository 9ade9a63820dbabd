"""ONNX Runtime's own per-node profile of a model, each node's best (minimum) over the
runs, summed per op kind (Conv split into depthwise, 1x1 and KxK by its weights): the
number to set beside `bench_plan_steps`' "sum of the steps' best" for the native engine,
both far steadier than a whole-model P50 on a shared machine. Not a test.

usage: .venv/bin/python bench/ort_node_best.py MODEL.onnx [THREADS (1)] [RUNS (30)] [BATCH (1)]
(BATCH: the size of the model's symbolic dimensions, as bench_plan_steps' BATCH)
"""
import collections, json, os, sys, tempfile

import numpy as np
import onnxruntime as ort

m = sys.argv[1]
th = int(sys.argv[2]) if len(sys.argv) > 2 else 1
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 30
batch = int(sys.argv[4]) if len(sys.argv) > 4 else 1
so = ort.SessionOptions(); so.intra_op_num_threads = th; so.enable_profiling = True
so.profile_file_prefix = os.path.join(tempfile.gettempdir(), "nnperf-ort-node-best")
s = ort.InferenceSession(m, so, providers=["CPUExecutionProvider"])
i = s.get_inputs()[0]
x = np.random.rand(*[batch if not isinstance(d, int) else d for d in i.shape]).astype(np.float32)
for _ in range(runs): s.run(None, {i.name: x})
f = s.end_profiling(); ev = json.load(open(f)); os.remove(f)
best = {}; kind = {}
for e in ev:
    if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
        a = e["args"]; op = a["op_name"]; n = e["name"]
        if op == "Conv":
            shp = a.get("input_type_shape", [])
            w = list(shp[1].values())[0]
            # one input channel per output channel: depthwise
            op = "Conv dw" if w[1] == 1 else ("Conv 1x1" if w[-1] == 1 else f"Conv {w[-1]}x{w[-1]}")
        kind[n] = op; best[n] = min(best.get(n, 1e18), e["dur"])
agg = collections.defaultdict(float); cnt = collections.Counter()
for n, d in best.items(): agg[kind[n]] += d; cnt[kind[n]] += 1
print(f"ONNX Runtime {ort.__version__}, {th} threads, batch {batch}, best of {runs} runs per node")
for op, d in sorted(agg.items(), key=lambda t: -t[1]): print(f"  {op:20s} {cnt[op]:4d} {d/1000:8.3f} ms")
print(f"ORT sum of the nodes' best {sum(agg.values())/1000:.3f} ms")
