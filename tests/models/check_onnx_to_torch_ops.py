#!/usr/bin/python3
"""The ONNX->torch converter's ops that the zoo models do not use, each against a numpy
reference: Resize/Upsample (nearest), Pad, Transpose, Softmax, Concat, Gemm with
transA/alpha/beta, MatMul, AveragePool, HardSwish, Sigmoid, Slice, Split, ReduceMean,
and an unknown op (must raise, naming the node)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import numpy as np  # noqa: E402
import torch  # noqa: E402
from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

from nnperf_worker import onnx_to_torch  # noqa: E402

rng = np.random.default_rng(0)
x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
A = rng.standard_normal((3, 5)).astype(np.float32)
B = rng.standard_normal((3, 4)).astype(np.float32)
C = rng.standard_normal((4,)).astype(np.float32)
nodes = [
    h.make_node("Resize", ["x", "", "sc"], ["r"], mode="nearest", coordinate_transformation_mode="asymmetric",
                nearest_mode="floor"),
    h.make_node("Pad", ["r", "pads"], ["p"], mode="constant"),
    h.make_node("Transpose", ["p"], ["t"], perm=[0, 2, 3, 1]),
    h.make_node("Softmax", ["t"], ["softmax"], axis=-1),
    h.make_node("Upsample", ["x", "sc"], ["upsample"], mode="nearest"),
    h.make_node("Concat", ["x", "x"], ["concat"], axis=1),
    h.make_node("Gemm", ["A", "B", "C"], ["gemm"], transA=1, alpha=0.5, beta=2.0),
    h.make_node("MatMul", ["x", "x"], ["matmul"]),
    h.make_node("AveragePool", ["x"], ["avgpool"], kernel_shape=[2, 2], strides=[2, 2]),
    h.make_node("HardSwish", ["x"], ["hardswish"]),
    h.make_node("Sigmoid", ["x"], ["sigmoid"]),
    h.make_node("Slice", ["x", "st", "en", "ax"], ["slice"]),
    h.make_node("Split", ["x"], ["split0", "split1"], axis=2),
    h.make_node("ReduceMean", ["x"], ["reducemean"], axes=[2, 3], keepdims=0),
]
outs = ["softmax", "upsample", "concat", "gemm", "matmul", "avgpool", "hardswish", "sigmoid", "slice", "split1",
        "reducemean"]
inits = [nh.from_array(np.array([1, 1, 2, 2], np.float32), "sc"),
         nh.from_array(np.array([0, 0, 1, 0, 0, 0, 0, 2], np.int64), "pads"),
         nh.from_array(A, "A"), nh.from_array(B, "B"), nh.from_array(C, "C"),
         nh.from_array(np.array([1], np.int64), "st"), nh.from_array(np.array([-1], np.int64), "en"),
         nh.from_array(np.array([3], np.int64), "ax")]
g = h.make_graph(nodes, "ops", [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 4, 4])],
                 [h.make_tensor_value_info(n, T.FLOAT, None) for n in outs], inits)
got = dict(zip(outs, (t.numpy() for t in onnx_to_torch.convert(h.make_model(g))(torch.from_numpy(x)))))

r = x.repeat(2, 2).repeat(2, 3)
t = np.pad(r, ((0, 0), (0, 0), (1, 0), (0, 2))).transpose(0, 2, 3, 1)
e = np.exp(t - t.max(-1, keepdims=True))
want = {
    "softmax": e / e.sum(-1, keepdims=True),
    "upsample": r,
    "concat": np.concatenate([x, x], 1),
    "gemm": 0.5 * A.T @ B + 2.0 * C,
    "matmul": x @ x,
    "avgpool": x.reshape(1, 2, 2, 2, 2, 2).mean(axis=(3, 5)),
    "hardswish": x * np.clip(x + 3, 0, 6) / 6,
    "sigmoid": 1 / (1 + np.exp(-x)),
    "slice": x[..., 1:3],
    "split1": x[:, :, 2:],
    "reducemean": x.mean(axis=(2, 3)),
}
bad = 0
for n in outs:
    ok = got[n].shape == want[n].shape and np.allclose(got[n], want[n], rtol=1e-5, atol=1e-5)
    print(f"{n}: {'ok' if ok else 'FAIL'}")
    bad += not ok
try:
    g2 = h.make_graph([h.make_node("Einsum", ["x"], ["y"], name="mystery", equation="ii")], "u",
                      [h.make_tensor_value_info("x", T.FLOAT, [2, 2])], [h.make_tensor_value_info("y", T.FLOAT, None)])
    onnx_to_torch.convert(h.make_model(g2))
    print("unknown op: FAIL (no error)")
    bad += 1
except NotImplementedError as err:
    named = "mystery" in str(err) and "Einsum" in str(err)
    print(f"unknown op: {'ok' if named else 'FAIL'} ({err})")
    bad += not named
sys.exit(1 if bad else 0)
