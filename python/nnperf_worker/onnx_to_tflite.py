"""nnperf's ONNX -> TFLite converter (docs/backend-tflite.md says why it is nnperf's own).

    python -m nnperf_worker.onnx_to_tflite MODEL.onnx OUT.tflite [--batch N]

4-D activations are NHWC in the .tflite (TFLite's layout; its input too, as TFLite users
feed it); weights are transposed once here. A float ONNX model becomes a float32 .tflite;
a QDQ model (nnperf quantize) becomes a full-int8 one: int8 activations with the QDQ's
calibrated scales, per-channel symmetric int8 weights, int32 biases, QUANTIZE on the float
input and DEQUANTIZE on the outputs. An op the converter lacks raises Unconvertible naming it."""
import sys

import numpy as np
import onnx
from ai_edge_litert import schema_py_generated as S

from .tflite_model import TfliteModel
from .tflite_prepare import RESHAPES, Graph, Unconvertible

OP = S.BuiltinOperator
OPT = S.BuiltinOptions
ACT = {None: S.ActivationFunctionType.NONE, "RELU": S.ActivationFunctionType.RELU,
       "RELU6": S.ActivationFunctionType.RELU6, "RELU_N1_TO_1": S.ActivationFunctionType.RELU_N1_TO_1}
NCHW_TO_NHWC = (0, 2, 3, 1)
NHWC_TO_NCHW = (0, 3, 1, 2)
UNARY = {"Sigmoid": OP.LOGISTIC, "Tanh": OP.TANH, "HardSwish": OP.HARD_SWISH}
BINARY = {"Add": (OP.ADD, OPT.AddOptions, S.AddOptionsT), "Sub": (OP.SUB, OPT.SubOptions, S.SubOptionsT),
          "Mul": (OP.MUL, OPT.MulOptions, S.MulOptionsT), "Div": (OP.DIV, OPT.DivOptions, S.DivOptionsT)}
# fixed int8 output ranges TFLite's kernels require
FIXED_QPARAMS = {"Sigmoid": (1 / 256, -128), "Softmax": (1 / 256, -128), "Tanh": (1 / 128, 0)}


def nhwc(shape):
    return [shape[0], shape[2], shape[3], shape[1]] if len(shape) == 4 else list(shape)


def quantize_per_channel(w, axis):
    """Symmetric int8 per channel (scale max|w|/127, as nnperf quantize's weights)."""
    other = tuple(k for k in range(w.ndim) if k != axis)
    scale = np.max(np.abs(w), axis=other) / 127.0
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.rint(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


def same_pads(in_hw, k_eff, strides):
    """TensorFlow's SAME padding as ONNX pads [top, left, bottom, right]."""
    before, after = [], []
    for i, k, s in zip(in_hw, k_eff, strides):
        out = -(-i // s)
        total = max((out - 1) * s + k - i, 0)
        before.append(total // 2)
        after.append(total - total // 2)
    return before + after


class Converter:
    def __init__(self, graph):
        self.g = graph
        self.m = TfliteModel()
        self.int8 = bool(graph.qparams)
        self.made = {}  # (onnx name, "f" | "q") -> tflite tensor index

    # --- tensors ---------------------------------------------------------------------------
    def shape(self, name):
        if name in self.g.consts:
            return list(self.g.consts[name].shape)
        if name not in self.g.shapes:
            raise Unconvertible(f"no inferred shape for tensor '{name}'")
        return self.g.shapes[name]

    def quant(self, name):
        s, z = self.g.qparams[name]
        return ([s], [z], 0)

    def new(self, name, form, shape=None):
        shape = nhwc(self.shape(name)) if shape is None else shape
        if form == "q":
            idx = self.m.tensor(name, shape, np.int8, self.quant(name))
        else:
            idx = self.m.tensor(name, shape, np.float32)
        self.made[(name, form)] = idx
        return idx

    def get(self, name, form, rank=None):
        """The tensor `name` as float ('f') or int8 ('q'), quantizing or dequantizing once."""
        if (name, form) in self.made:
            return self.made[(name, form)]
        if name in self.g.consts:
            return self._const(name, form, rank)
        other = "q" if form == "f" else "f"
        if (name, other) not in self.made:
            raise Unconvertible(f"tensor '{name}' is used before it is computed")
        src = self.made[(name, other)]
        shape = list(self.m.tensors[src].shape)
        if form == "q":
            if name not in self.g.qparams:
                raise Unconvertible(f"tensor '{name}' has no quantization parameters")
            dst = self.m.tensor(name + "/quantized", shape, np.int8, self.quant(name))
            self.m.op(OP.QUANTIZE, [src], [dst])
        else:
            dst = self.m.tensor(name + "/dequantized", shape, np.float32)
            self.m.op(OP.DEQUANTIZE, [src], [dst])
        self.made[(name, form)] = dst
        return dst

    def _const(self, name, form, rank):
        """A constant operand of an elementwise op, laid out like its 4-D partner."""
        a = np.asarray(self.g.consts[name], np.float32)
        if rank == 4:
            a = a.reshape([1] * (4 - a.ndim) + list(a.shape)).transpose(NCHW_TO_NHWC)
        if form == "f":
            idx = self.m.const(name, a)
        else:
            lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
            s = (hi - lo) / 255.0 or 1.0
            z = int(np.clip(np.rint(-128 - lo / s), -128, 127))
            q = np.clip(np.rint(a / s) + z, -128, 127).astype(np.int8)
            idx = self.m.const(name, q, ([s], [z], 0))
        self.made[(name, form)] = idx
        return idx

    def form_of(self, n, inputs):
        """'q' when the model is int8 and every activation in and out of n is calibrated."""
        names = [x for x in inputs if x not in self.g.consts] + n.outputs[:1]
        return "q" if self.int8 and all(x in self.g.qparams for x in names) else "f"

    # --- driver ----------------------------------------------------------------------------
    def run(self):
        for name in self.g.inputs:
            if self.g.dtypes.get(name) != onnx.TensorProto.FLOAT:
                raise Unconvertible(f"input '{name}' is not float32")
            self.m.inputs.append(self.new(name, "f"))
        for n in self.g.nodes:
            handler = HANDLERS.get(n.op)
            if handler is None:
                raise Unconvertible(f"ONNX op '{n.op}' (node '{n.name}') has no TFLite conversion in nnperf's "
                                    f"converter (it converts {', '.join(sorted(HANDLERS))})")
            handler(self, n)
        for name in self.g.outputs:
            self.m.outputs.append(self.get(name, "f"))
        for idx, oname in zip(self.m.outputs, self.g.output_names):
            self.m.tensors[idx].name = oname
        return self.m.to_bytes()


# --- op handlers (one per ONNX op family) -------------------------------------------------
def conv(c, n):
    x, wname = n.inputs[0], n.inputs[1]
    if wname not in c.g.consts:
        raise Unconvertible(f"{n}: the weights are not a constant")
    w = c.g.consts[wname].astype(np.float32)
    if w.ndim != 4:
        raise Unconvertible(f"{n}: only 2-D convolutions convert (weights of rank {w.ndim})")
    bias = c.g.consts[n.inputs[2]].astype(np.float32) if len(n.inputs) > 2 and n.inputs[2] else np.zeros(w.shape[0], np.float32)
    group, cin = n.attrs.get("group", 1), c.shape(x)[1]
    depthwise = group > 1 and group == cin and w.shape[1] == 1
    if group != 1 and not depthwise and (cin % group or w.shape[0] % group):
        raise Unconvertible(f"{n}: group={group} does not divide the channels")
    strides = n.attrs.get("strides", [1, 1])
    dil = n.attrs.get("dilations", [1, 1])
    k_eff = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], dil)]
    padding, xin = pad_input(c, n, x, k_eff, strides, 0.0)
    form = c.form_of(n, [x])
    if depthwise:
        kern, axis = w.transpose(1, 2, 3, 0), 3  # [1, kh, kw, cout]
        code, ot, opts = OP.DEPTHWISE_CONV_2D, OPT.DepthwiseConv2DOptions, S.DepthwiseConv2DOptionsT()
        opts.depthMultiplier = w.shape[0] // group
    else:
        kern, axis = w.transpose(0, 2, 3, 1), 0  # [cout, kh, kw, cin / group]: TFLite infers the groups
        code, ot, opts = OP.CONV_2D, OPT.Conv2DOptions, S.Conv2DOptionsT()
    opts.padding, opts.strideH, opts.strideW = padding, strides[0], strides[1]
    opts.dilationHFactor, opts.dilationWFactor = dil[0], dil[1]
    opts.fusedActivationFunction = ACT[n.act]
    xi = c.get(xin, form) if isinstance(xin, str) else xin
    wi, bi = weights(c, n, kern, bias, axis, x, form)
    c.m.op(code, [xi, wi, bi], [c.new(n.outputs[0], form)], ot, opts)


def weights(c, n, kern, bias, axis, x, form):
    if form == "f":
        return c.m.const(n.name + "/weights", kern), c.m.const(n.name + "/bias", bias)
    q, ws = quantize_per_channel(kern, axis)
    s_in = c.g.qparams[x][0]
    # a channel of near-zero weights gets a tiny scale, and its bias / (s_in * s_w) would
    # overflow int32: widen that channel's weight scale until the bias fits (as TFLite's
    # own quantizer does); its weights are that small anyway
    floor = np.abs(bias) / (s_in * 2.0 ** 30)
    if np.any(ws < floor):
        ws = np.maximum(ws, floor).astype(np.float32)
        shape = [1] * kern.ndim
        shape[axis] = -1
        q = np.clip(np.rint(kern / ws.reshape(shape)), -127, 127).astype(np.int8)
    bq = np.rint(bias / (s_in * ws)).astype(np.int32)
    zeros = [0] * len(ws)
    return (c.m.const(n.name + "/weights", q, (ws, zeros, axis)),
            c.m.const(n.name + "/bias", bq, (s_in * ws, zeros, 0)))


def pad_input(c, n, x, k_eff, strides, fill, pads=None):
    """(padding, input): SAME or VALID when the ONNX pads are one of them, else an explicit
    PAD/PADV2 first (ONNX pads are symmetric where TensorFlow's SAME puts the odd one after)."""
    shape = c.shape(x)
    auto = n.attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("SAME_UPPER",):
        return S.Padding.SAME, x
    if auto == "VALID":
        return S.Padding.VALID, x
    if auto != "NOTSET":
        raise Unconvertible(f"{n}: auto_pad={auto}")
    pads = list(n.attrs.get("pads", [0, 0, 0, 0])) if pads is None else pads
    if not any(pads):
        return S.Padding.VALID, x
    if pads == same_pads(shape[2:], k_eff, strides):
        return S.Padding.SAME, x
    if n.op == "AveragePool":
        raise Unconvertible(f"{n}: pads {pads} are neither SAME nor VALID")
    form = c.form_of(n, [x])
    paddings = np.array([[0, 0], [pads[0], pads[2]], [pads[1], pads[3]], [0, 0]], np.int32)
    src = c.get(x, form)
    padded_shape = [shape[0], shape[2] + pads[0] + pads[2], shape[3] + pads[1] + pads[3], shape[1]]
    if form == "q":
        dst = c.m.tensor(x + "/padded", padded_shape, np.int8, c.quant(x))
    else:
        dst = c.m.tensor(x + "/padded", padded_shape, np.float32)
    pin = c.m.const(n.name + "/paddings", paddings)
    if fill == 0.0:
        c.m.op(OP.PAD, [src, pin], [dst], OPT.PadOptions, S.PadOptionsT())
    else:  # MaxPool: pad with the lowest value
        low = np.array([-128], np.int8) if form == "q" else np.array([np.finfo(np.float32).min], np.float32)
        lin = c.m.const(n.name + "/pad_value", low, c.quant(x) if form == "q" else None)
        c.m.op(OP.PADV2, [src, pin, lin], [dst], OPT.PadV2Options, S.PadV2OptionsT())
    return S.Padding.VALID, dst


def pool(c, n):
    if any(d != 1 for d in n.attrs.get("dilations", [1, 1])):
        raise Unconvertible(f"{n}: dilations")
    if n.attrs.get("ceil_mode", 0) and n.op != "MaxPool":
        raise Unconvertible(f"{n}: ceil_mode=1 (converted for MaxPool only)")
    if n.op == "AveragePool" and n.attrs.get("count_include_pad", 0):
        raise Unconvertible(f"{n}: count_include_pad=1 (TFLite averages over the window inside the image)")
    x = n.inputs[0]
    k, strides = n.attrs["kernel_shape"], n.attrs.get("strides", [1, 1])
    pads = ceil_pads(c.shape(x), k, strides, n.attrs.get("pads", [0, 0, 0, 0])) if n.attrs.get("ceil_mode", 0) else None
    padding, xin = pad_input(c, n, x, k, strides, 0.0 if n.op == "AveragePool" else None, pads)
    form = c.form_of(n, [x])
    if form == "q":
        c.g.qparams[n.outputs[0]] = c.g.qparams[x]  # TFLite's int8 pools keep the input's scale
    opts = S.Pool2DOptionsT()
    opts.padding, opts.strideH, opts.strideW = padding, strides[0], strides[1]
    opts.filterHeight, opts.filterWidth = k[0], k[1]
    opts.fusedActivationFunction = ACT[None]
    xi = c.get(xin, form) if isinstance(xin, str) else xin
    code = OP.MAX_POOL_2D if n.op == "MaxPool" else OP.AVERAGE_POOL_2D
    c.m.op(code, [xi], [c.new(n.outputs[0], form)], OPT.Pool2DOptions, opts)


def ceil_pads(shape, k, strides, pads):
    """ceil_mode=1: more padding (with the lowest value) after, so that the floor of a
    VALID pool gives ONNX's ceil output size."""
    pads = list(pads)
    for d in range(2):
        span = shape[2 + d] + pads[d] + pads[d + 2] - k[d]
        out = -(-span // strides[d]) + 1
        if (out - 1) * strides[d] >= shape[2 + d] + pads[d]:
            out -= 1  # ONNX: the last window must start inside the input or its begin pad
        pads[d + 2] += max((out - 1) * strides[d] + k[d] - (shape[2 + d] + pads[d] + pads[d + 2]), 0)
    return pads


def global_pool(c, n):
    x = n.inputs[0]
    form = c.form_of(n, [x])
    axes = c.m.const(n.name + "/axes", np.array([1, 2], np.int32))
    opts = S.ReducerOptionsT()
    opts.keepDims = True
    code = OP.MEAN if n.op == "GlobalAveragePool" else OP.REDUCE_MAX
    c.m.op(code, [c.get(x, form), axes], [c.new(n.outputs[0], form)], OPT.ReducerOptions, opts)


def gemm(c, n):
    a, b = n.inputs[0], n.inputs[1]
    if b not in c.g.consts or len(c.shape(a)) != 2:
        raise Unconvertible(f"{n}: only a 2-D input times constant weights converts (FULLY_CONNECTED)")
    if n.attrs.get("alpha", 1.0) != 1.0 or n.attrs.get("beta", 1.0) != 1.0 or n.attrs.get("transA", 0):
        raise Unconvertible(f"{n}: alpha, beta or transA")
    w = c.g.consts[b].astype(np.float32)
    if n.op == "MatMul" or not n.attrs.get("transB", 0):
        w = w.T  # FULLY_CONNECTED takes [out, in]
    w = np.ascontiguousarray(w)
    bias = np.zeros(w.shape[0], np.float32)
    if n.op == "Gemm" and len(n.inputs) > 2 and n.inputs[2]:
        if n.inputs[2] not in c.g.consts:
            raise Unconvertible(f"{n}: the bias is not a constant")
        bias = np.broadcast_to(c.g.consts[n.inputs[2]].astype(np.float32).reshape(-1), w.shape[:1]).copy()
    form = c.form_of(n, [a])
    wi, bi = weights(c, n, w, bias, 0, a, form)
    opts = S.FullyConnectedOptionsT()
    opts.fusedActivationFunction = ACT[n.act]
    c.m.op(OP.FULLY_CONNECTED, [c.get(a, form), wi, bi], [c.new(n.outputs[0], form)],
           OPT.FullyConnectedOptions, opts)


def binary(c, n):
    a, b = n.inputs
    out_rank = len(c.shape(n.outputs[0]))
    for x in (a, b):
        if x not in c.g.consts and len(c.shape(x)) != out_rank:
            raise Unconvertible(f"{n}: operands of different rank")
    code, ot, cls = BINARY[n.op]
    form = c.form_of(n, [a, b])
    opts = cls()
    opts.fusedActivationFunction = ACT[n.act]
    ins = [c.get(x, form, out_rank) for x in (a, b)]
    c.m.op(code, ins, [c.new(n.outputs[0], form)], ot, opts)


def activation(c, n):
    x = n.inputs[0]
    name = c.g.activation_name(n) if n.op in ("Relu", "Clip") else None
    if n.op in ("Relu", "Clip") and name is None:
        raise Unconvertible(f"{n}: Clip bounds {c.g.clip_bounds(n)} (converts 0..inf, 0..6, -1..1)")
    code = {"RELU": OP.RELU, "RELU6": OP.RELU6, "RELU_N1_TO_1": OP.RELU_N1_TO_1}.get(name) or UNARY[n.op]
    if n.op in FIXED_QPARAMS and n.outputs[0] in c.g.qparams:
        c.g.qparams[n.outputs[0]] = FIXED_QPARAMS[n.op]
    form = c.form_of(n, [x])
    c.m.op(code, [c.get(x, form)], [c.new(n.outputs[0], form)])


def softmax(c, n):
    x = n.inputs[0]
    rank = len(c.shape(x))
    axis = n.attrs.get("axis", -1 if c.g.opset >= 13 else 1) % rank
    if axis != rank - 1 or rank == 4:
        raise Unconvertible(f"{n}: softmax over axis {axis} of a rank-{rank} tensor (converts the last axis)")
    if n.outputs[0] in c.g.qparams:
        c.g.qparams[n.outputs[0]] = FIXED_QPARAMS["Softmax"]
    form = c.form_of(n, [x])
    opts = S.SoftmaxOptionsT()
    opts.beta = 1.0
    c.m.op(OP.SOFTMAX, [c.get(x, form)], [c.new(n.outputs[0], form)], OPT.SoftmaxOptions, opts)


def reshape(c, n):
    """ONNX reshapes read NCHW order: a 4-D NHWC input is transposed back first (not when
    H = W = 1: then both orders are one), and a 4-D result transposed to NHWC after."""
    x, y = n.inputs[0], n.outputs[0]
    form = c.form_of(n, [x])
    if form == "q":
        c.g.qparams[y] = c.g.qparams[x]  # RESHAPE keeps the scale
    src = c.get(x, form)
    xs, ys = c.shape(x), c.shape(y)
    if len(xs) == 4 and xs[2] * xs[3] != 1:
        src = transpose(c, src, [xs[0], xs[1], xs[2], xs[3]], NHWC_TO_NCHW, x + "/nchw", x if form == "q" else None)
    if len(ys) == 4 and ys[2] * ys[3] != 1:
        mid = c.m.tensor(y + "/nchw", ys, np.int8 if form == "q" else np.float32, c.quant(y) if form == "q" else None)
        _reshape(c, n, src, mid, ys)
        dst = transpose(c, mid, nhwc(ys), NCHW_TO_NHWC, y, y if form == "q" else None)
        c.made[(y, form)] = dst
        return
    target = nhwc(ys)
    _reshape(c, n, src, c.new(y, form), target)


def _reshape(c, n, src, dst, shape):
    opts = S.ReshapeOptionsT()
    opts.newShape = [int(d) for d in shape]
    sh = c.m.const(n.name + f"/shape{len(c.m.tensors)}", np.array(shape, np.int32))
    c.m.op(OP.RESHAPE, [src, sh], [dst], OPT.ReshapeOptions, opts)


def transpose(c, src, out_shape, perm, name, qname):
    dt, q = (np.int8, c.quant(qname)) if qname else (np.float32, None)
    dst = c.m.tensor(name, out_shape, dt, q)
    p = c.m.const(name + "/perm", np.array(perm, np.int32))
    c.m.op(OP.TRANSPOSE, [src, p], [dst], OPT.TransposeOptions, S.TransposeOptionsT())
    return dst


def concat(c, n):
    rank = len(c.shape(n.outputs[0]))
    axis = n.attrs.get("axis", 1) % rank
    if rank == 4:
        axis = NCHW_TO_NHWC.index(axis)
    form = c.form_of(n, n.inputs)
    opts = S.ConcatenationOptionsT()
    opts.axis = axis
    ins = [c.get(x, form, rank) for x in n.inputs]
    c.m.op(OP.CONCATENATION, ins, [c.new(n.outputs[0], form)], OPT.ConcatenationOptions, opts)


HANDLERS = {"Conv": conv, "MaxPool": pool, "AveragePool": pool, "GlobalAveragePool": global_pool,
            "GlobalMaxPool": global_pool, "Gemm": gemm, "MatMul": gemm, "Relu": activation,
            "Clip": activation, "Sigmoid": activation, "Tanh": activation, "HardSwish": activation,
            "Softmax": softmax, "Concat": concat, **{k: binary for k in BINARY},
            **{k: reshape for k in RESHAPES}}


def convert(model, input_shapes=None, batch=1):
    """ONNX ModelProto (or path) -> (.tflite bytes, Graph). Raises Unconvertible."""
    if isinstance(model, str):
        model = onnx.load(model)
    g = Graph(model, input_shapes, batch)
    return Converter(g).run(), g


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="python -m nnperf_worker.onnx_to_tflite")
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--batch", type=int, default=1, help="the batch size where the model's is symbolic")
    ap.add_argument("--input-shape", action="append", default=[], metavar="NAME=1x3x224x224",
                    help="fix an input's shape (the tflite row passes its own)")
    a = ap.parse_args(argv)
    shapes = {}
    for item in a.input_shape:
        name, _, dims = item.rpartition("=")
        shapes[name] = [int(d) for d in dims.split("x")]
    try:
        data, g = convert(a.model, input_shapes=shapes, batch=a.batch)
    except Unconvertible as e:
        print(f"{a.model}: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - a file onnx cannot read or check: one line, not a traceback
        print(f"{a.model}: not a readable ONNX model ({type(e).__name__}: {' '.join(str(e).split())[:300]})",
              file=sys.stderr)
        return 1
    with open(a.out, "wb") as f:
        f.write(data)
    kind = "int8 (from the QDQ model's calibration)" if g.qparams else "float32"
    print(f"wrote {a.out}: {len(data)} bytes, {len(g.nodes)} ONNX nodes, {kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
