#!/usr/bin/env python3
"""Every op nnperf's ONNX->TFLite converter converts, one small model at a time, run by
LiteRT (Interpreter + XNNPACK) against the native engine (`nnperf run`) on seeded inputs:
float cases within 1e-4 of the output's scale, the QDQ case (int8 .tflite) within two
quantization steps (2% of the output scale, cosine > 0.999). Ops it must refuse raise Unconvertible naming the node.

    .venv/bin/python tests/models/check_tflite_ops.py build/nnperf WORKDIR"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from ai_edge_litert.interpreter import Interpreter  # noqa: E402
from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

from nnperf_worker.onnx_to_tflite import convert  # noqa: E402
from nnperf_worker.tflite_prepare import Unconvertible  # noqa: E402

rng = np.random.default_rng(3)


def w(name, *shape, scale=0.3):
    return nh.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def c(name, value, dtype=np.float32):
    return nh.from_array(np.array(value, dtype), name)


N = h.make_node
X = [1, 4, 9, 9]  # odd sizes: stride-2 pads differ between ONNX and TensorFlow's SAME
CASES = {
    "Conv 3x3 pads 1 (SAME)": ([N("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])], [w("w", 6, 4, 3, 3), w("b", 6)]),
    "Conv 3x3 stride 2 pads 1 (PAD + VALID)": ([N("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2])],
                                              [w("w", 6, 4, 3, 3)]),
    "Conv dilation 2 VALID + Relu": ([N("Conv", ["x", "w", "b"], ["t"], dilations=[2, 2]), N("Relu", ["t"], ["y"])],
                                     [w("w", 5, 4, 3, 3), w("b", 5)]),
    "Conv depthwise + Clip 0..6": ([N("Conv", ["x", "w", "b"], ["t"], group=4, pads=[1, 1, 1, 1]),
                                    N("Clip", ["t", "lo", "hi"], ["y"])],
                                   [w("w", 4, 1, 3, 3, scale=3), w("b", 4), c("lo", 0), c("hi", 6)]),
    "Conv grouped (group 2)": ([N("Conv", ["x", "w", "b"], ["y"], group=2, pads=[1, 1, 1, 1])],
                               [w("w", 6, 2, 3, 3), w("b", 6)]),
    "Conv depthwise multiplier 2": ([N("Conv", ["x", "w"], ["y"], group=4)], [w("w", 8, 1, 3, 3)]),
    "Conv + BatchNormalization": ([N("Conv", ["x", "w"], ["t"]), N("BatchNormalization", ["t", "g", "be", "m", "v"], ["y"])],
                                  [w("w", 3, 4, 1, 1), w("g", 3), w("be", 3), w("m", 3),
                                   c("v", [0.5, 1.0, 2.0])]),
    "MaxPool 3x3 stride 2 pads 1 (PADV2)": ([N("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                                               pads=[1, 1, 1, 1])], []),
    "MaxPool 2x2 stride 2 ceil_mode (5x5 out of 9x9)": ([N("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)], []),
    "MaxPool 2x2 stride 2": ([N("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])], []),
    "AveragePool 3x3 pads 1 (SAME, pads excluded)": ([N("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                                                        pads=[1, 1, 1, 1])], []),
    "GlobalAveragePool": ([N("GlobalAveragePool", ["x"], ["y"])], []),
    "GlobalMaxPool": ([N("GlobalMaxPool", ["x"], ["y"])], []),
    "Flatten (H*W > 1) + Gemm transB": ([N("Flatten", ["x"], ["f"]), N("Gemm", ["f", "w", "b"], ["y"], transB=1)],
                                       [w("w", 7, 324), w("b", 7)]),
    "Reshape 4-D + Gemm + Relu": ([N("GlobalAveragePool", ["x"], ["g"]), N("Reshape", ["g", "s"], ["f"]),
                                   N("Gemm", ["f", "w"], ["t"]), N("Relu", ["t"], ["y"])],
                                  [c("s", [1, 4], np.int64), w("w", 4, 6)]),
    "MatMul + Softmax": ([N("Flatten", ["x"], ["f"]), N("MatMul", ["f", "w"], ["m"]), N("Softmax", ["m"], ["y"], axis=-1)],
                         [w("w", 324, 5)]),
    "Reshape to 4-D (NCHW order kept)": ([N("Reshape", ["x", "s"], ["y"])], [c("s", [1, 12, 3, 9], np.int64)]),
    "Squeeze + Unsqueeze": ([N("GlobalAveragePool", ["x"], ["g"]), N("Squeeze", ["g", "a"], ["s"]),
                             N("Unsqueeze", ["s", "a"], ["y"])], [c("a", [2, 3], np.int64)]),
    "Relu, Clip -1..1": ([N("MaxPool", ["x"], ["p"], kernel_shape=[1, 1]), N("Relu", ["p"], ["r"]),
                          N("Clip", ["x", "lo", "hi"], ["k"]), N("Add", ["r", "k"], ["y"])], [c("lo", -1), c("hi", 1)]),
    "Sigmoid, Tanh, HardSwish": ([N("Sigmoid", ["x"], ["s"]), N("Tanh", ["x"], ["t"]), N("HardSwish", ["x"], ["hs"]),
                                  N("Add", ["s", "t"], ["a"]), N("Mul", ["a", "hs"], ["y"])], []),
    "Add/Sub/Mul/Div with [C,1,1] constants": ([N("Add", ["x", "k1"], ["a"]), N("Sub", ["a", "k2"], ["s"]),
                                                N("Mul", ["s", "k3"], ["m"]), N("Div", ["m", "k4"], ["y"])],
                                               [w("k1", 4, 1, 1), w("k2", 1, 4, 1, 1), w("k3", 4, 1, 1),
                                                c("k4", np.full((4, 1, 1), 2.5))]),
    "Concat channels": ([N("Relu", ["x"], ["r"]), N("Concat", ["x", "r"], ["y"], axis=1)], []),
}
REFUSED = {
    "Erf": ([N("Erf", ["x"], ["y"], name="erf_1")], [], "Erf"),
    "Conv with group not dividing the channels": ([N("Conv", ["x", "w"], ["y"], group=3, name="gconv")],
                                                  [w("w", 3, 1, 3, 3)], "group=3"),
}


def model(nodes, inits):
    g = h.make_graph(nodes, "case", [h.make_tensor_value_info("x", T.FLOAT, X)],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 14)])
    m.ir_version = 8
    return m


def native(nnperf, path, xpath, work):
    out = os.path.join(work, "out")
    subprocess.run([nnperf, "run", path, "--input", f"x={xpath}", "--output-dir", out, "--quiet"], check=True)
    return np.load(os.path.join(out, "y.npy"), allow_pickle=False)


def litert(data, x):
    it = Interpreter(model_content=data, num_threads=2)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.ascontiguousarray(x.transpose(0, 2, 3, 1)))
    it.invoke()
    y = it.get_tensor(it.get_output_details()[0]["index"])
    return y.transpose(0, 3, 1, 2) if y.ndim == 4 else y


def qdq_case():
    """Conv -> Relu -> GlobalAveragePool -> Flatten -> Gemm in QDQ form, as nnperf quantize
    writes it: uint8 activations, int8 symmetric per-channel weights."""
    wc = (rng.standard_normal((6, 4, 3, 3)) * 0.3).astype(np.float32)
    wcs = np.abs(wc).reshape(6, -1).max(1) / 127
    wg = (rng.standard_normal((5, 6)) * 0.3).astype(np.float32)
    wgs = np.abs(wg).max(1) / 127
    inits = [nh.from_array(np.rint(wc / wcs[:, None, None, None]).astype(np.int8), "wq"),
             nh.from_array(wcs.astype(np.float32), "ws"), nh.from_array(np.zeros(6, np.int8), "wz"),
             nh.from_array(np.rint(wg / wgs[:, None]).astype(np.int8), "gq"),
             nh.from_array(wgs.astype(np.float32), "gs"), nh.from_array(np.zeros(5, np.int8), "gz"),
             c("xs", 8 / 255), c("xz", 128, np.uint8), c("rs", 6 / 255), c("rz", 0, np.uint8),
             c("fs", 3 / 255), c("fz", 0, np.uint8)]
    nodes = [N("QuantizeLinear", ["x", "xs", "xz"], ["xq"]), N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             N("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=0),
             N("Conv", ["xd", "wd"], ["cv"], pads=[1, 1, 1, 1]), N("Relu", ["cv"], ["r"]),
             N("QuantizeLinear", ["r", "rs", "rz"], ["rq"]), N("DequantizeLinear", ["rq", "rs", "rz"], ["rd"]),
             N("GlobalAveragePool", ["rd"], ["g"]), N("Flatten", ["g"], ["f"]),
             N("QuantizeLinear", ["f", "fs", "fz"], ["fq"]), N("DequantizeLinear", ["fq", "fs", "fz"], ["fd"]),
             N("DequantizeLinear", ["gq", "gs", "gz"], ["gd"], axis=0), N("Gemm", ["fd", "gd"], ["y"], transB=1)]
    return model(nodes, inits)


def bias_fits_int32():
    """A channel of near-zero weights: its int32 bias must still dequantize to the bias."""
    from types import SimpleNamespace
    from nnperf_worker.onnx_to_tflite import weights
    from nnperf_worker.tflite_model import TfliteModel
    c = SimpleNamespace(g=SimpleNamespace(qparams={"x": (0.01, 0)}), m=TfliteModel())
    kern = np.zeros((2, 1, 1, 3), np.float32)
    kern[0], kern[1] = 0.5, 1e-12
    bias = np.array([0.1, 0.3], np.float32)
    _, bi = weights(c, SimpleNamespace(name="n"), kern, bias, 0, "x", "q")
    t = c.m.tensors[bi]
    bq = np.frombuffer(np.asarray(c.m.buffers[t.buffer].data, np.uint8).tobytes(), np.int32)
    back = bq * np.array(t.quantization.scale)
    return bool(np.allclose(back, bias, rtol=1e-6)), back


def main():
    nnperf, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    x = rng.uniform(-3, 3, X).astype(np.float32)
    xpath = os.path.join(work, "x.npy")
    np.save(xpath, x)
    passed = failed = 0
    cases = {k: (model(*v), 1e-4) for k, v in CASES.items()}
    cases["QDQ Conv+Relu+GAP+Gemm (int8 .tflite)"] = (qdq_case(), None)
    for name, (m, tol) in cases.items():
        path = os.path.join(work, "case.onnx")
        onnx.save(m, path)
        try:
            want = native(nnperf, path, xpath, work)
            data, g = convert(path)
            got = litert(data, x)
            err = float(np.max(np.abs(got - want)))
            scale = float(np.max(np.abs(want))) or 1.0
            if tol is None:  # int8 inside: the same integer arithmetic, up to a rounding step or two
                cos = float(np.dot(got.ravel(), want.ravel()) / (np.linalg.norm(got) * np.linalg.norm(want)))
                ok = bool(g.qparams) and err <= 0.02 * scale and cos > 0.999
            else:
                ok = got.shape == want.shape and err <= tol * scale
        except Exception as e:  # noqa: BLE001 - reported as this case's failure
            ok, err = False, f"{type(e).__name__}: {e}"
        print(f"{'pass' if ok else 'FAIL'} {name}: max abs error {err}")
        passed, failed = passed + ok, failed + (not ok)
    ok, back = bias_fits_int32()
    print(f"{'pass' if ok else 'FAIL'} int8 bias of a near-zero-weight channel fits int32: {back}")
    passed, failed = passed + ok, failed + (not ok)
    for name, (nodes, inits, must_name) in REFUSED.items():
        try:
            convert(model(nodes, inits))
            ok, why = False, "converted"
        except Unconvertible as e:
            ok, why = must_name in str(e), str(e)
        print(f"{'pass' if ok else 'FAIL'} refuses {name}: {why[:160]}")
        passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
