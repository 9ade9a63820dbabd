"""ONNX -> torch.nn.Module, written by nnperf so that the PyTorch rows run the very model
the other rows run (no exporter round trip, no second copy of the architecture).

The module walks the ONNX graph in its (topological) node order; each node is one torch
call. Initializers become buffers, read with onnx.numpy_helper (never pickle), so
torch.jit.trace + freeze sees them as constants and can fold them (Conv+BatchNorm).
Integer initializers and Constant nodes that only feed shape arguments (Reshape's shape,
Pad's pads, Resize's scales) stay Python values: they are attributes, not data.

usage: convert(path_or_ModelProto) -> OnnxModule; module(*inputs) -> tuple of outputs
in graph output order. Unsupported ops raise NotImplementedError naming the node.
"""
import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

_FLOAT_TYPES = (np.float32, np.float16, np.float64)


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _ints(v):
    return [int(x) for x in (v.tolist() if isinstance(v, (np.ndarray, torch.Tensor)) else v)]


def _norm_axis(axis, rank):
    return axis + rank if axis < 0 else axis


class OnnxModule(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        g = model.graph
        self.consts = {}        # name -> numpy value known at conversion time
        self.buffer_of = {}     # value name -> registered buffer name
        for i, init in enumerate(g.initializer):
            arr = numpy_helper.to_array(init)
            self.consts[init.name] = arr
            if arr.dtype in _FLOAT_TYPES:
                bname = f"w{i}"
                self.register_buffer(bname, torch.from_numpy(np.array(arr, dtype=np.float32)))
                self.buffer_of[init.name] = bname
        init_names = set(self.consts)
        self.input_names = [v.name for v in g.input if v.name not in init_names]
        self.output_names = [v.name for v in g.output]
        self.steps = []
        for n in g.node:
            self.steps.append(self._compile(n))
        # Python values of the small constants, taken now: forward() must not run numpy on
        # them, or torch.compile's Dynamo traces into numpy (and fails on float(ndarray))
        self.py_consts = {k: np.asarray(v).reshape(-1).tolist() for k, v in self.consts.items()
                          if np.asarray(v).size <= 1024 and np.asarray(v).dtype.kind in "fiub"}

    # values: Python-side constants first (shapes), then buffers, then computed tensors
    def _get(self, env, name):
        if name == "":
            return None
        if name in env:
            return env[name]
        b = self.buffer_of.get(name)
        if b is not None:
            return getattr(self, b)
        if name in self.consts:
            return torch.from_numpy(np.array(self.consts[name]))
        raise KeyError(f"value '{name}' is used before it is defined")

    def _const(self, name):
        """An input that must be known at conversion time (shape, pads, axes...)."""
        if name not in self.consts:
            return None
        return self.consts[name]

    def _ints_of(self, env, name):
        """Integer list input (shape, starts, axes): a conversion-time constant when it is
        one, else read from the computed tensor (a trace then records it as a constant)."""
        c = self._const_list(name)
        return _ints(c) if c is not None else _ints(self._get(env, name))

    def _const_list(self, name):
        """A small conversion-time constant as a flat Python list (None when not one)."""
        return self.py_consts.get(name) if hasattr(self, "py_consts") else \
            (None if self._const(name) is None else np.asarray(self._const(name)).reshape(-1).tolist())

    def _compile(self, n):
        op, a, ins, outs = n.op_type, _attrs(n), list(n.input), list(n.output)
        where = f"node '{n.name or outs[0]}' ({op})"
        fn = getattr(self, "_op_" + op, None)
        if fn is None:
            raise NotImplementedError(f"{where}: op {op} is not supported by nnperf's ONNX->torch converter")
        # Constant-like nodes whose inputs are all known are evaluated now (shape arithmetic)
        if op == "Constant":
            self.consts[outs[0]] = self._constant_value(a)
            return None
        if op in _FOLDABLE and all(i == "" or i in self.consts for i in ins) and ins:
            env = {}
            fn(env, a, ins, outs)
            for o in outs:
                v = env[o]
                self.consts[o] = v.numpy() if isinstance(v, torch.Tensor) else np.asarray(v)
            return None
        return (fn, a, ins, outs, where)

    def _constant_value(self, a):
        if "value" in a:
            return numpy_helper.to_array(a["value"])
        for k in ("value_float", "value_int"):
            if k in a:
                return np.array(a[k], dtype=np.float32 if k == "value_float" else np.int64)
        for k in ("value_floats", "value_ints"):
            if k in a:
                return np.array(a[k], dtype=np.float32 if k == "value_floats" else np.int64)
        raise NotImplementedError("Constant without a tensor/float/int value")

    def forward(self, *inputs):
        env = dict(zip(self.input_names, inputs))
        for step in self.steps:
            if step is None:
                continue
            fn, a, ins, outs, where = step
            fn(env, a, ins, outs)
        return tuple(self._get(env, o) for o in self.output_names)

    # ---- ops: each reads env (through _get) and writes its outputs into env ----------
    def _x(self, env, ins, k=0):
        return self._get(env, ins[k]) if k < len(ins) else None

    def _op_Identity(self, env, a, ins, outs):
        env[outs[0]] = self._x(env, ins)

    def _op_Dropout(self, env, a, ins, outs):
        env[outs[0]] = self._x(env, ins)

    def _op_Conv(self, env, a, ins, outs):
        x, w, b = self._x(env, ins), self._x(env, ins, 1), self._x(env, ins, 2)
        nd = w.dim() - 2
        pads = list(a.get("pads", [0] * 2 * nd))
        auto = a.get("auto_pad", b"NOTSET")
        auto = auto.decode() if isinstance(auto, bytes) else auto
        if auto not in ("NOTSET", "VALID"):
            raise NotImplementedError(f"Conv auto_pad={auto}")
        if auto == "VALID":
            pads = [0] * 2 * nd
        stride = a.get("strides", [1] * nd)
        dil = a.get("dilations", [1] * nd)
        groups = a.get("group", 1)
        if pads[:nd] != pads[nd:]:  # asymmetric: pad explicitly (F.pad takes last dim first)
            fp = []
            for d in reversed(range(nd)):
                fp += [pads[d], pads[d + nd]]
            x = F.pad(x, fp)
            pads = [0] * 2 * nd
        conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
        env[outs[0]] = conv(x, w, b, stride, pads[:nd], dil, groups)

    def _op_Gemm(self, env, a, ins, outs):
        A, B, C = self._x(env, ins), self._x(env, ins, 1), self._x(env, ins, 2)
        if a.get("transA", 0):
            A = A.t()
        alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
        if a.get("transB", 0) and alpha == 1.0 and (C is None or beta == 1.0):
            env[outs[0]] = F.linear(A, B, C)  # the call torch users make
            return
        if a.get("transB", 0):
            B = B.t()
        y = torch.matmul(A, B)
        if alpha != 1.0:
            y = y * alpha
        if C is not None:
            y = y + (C * beta if beta != 1.0 else C)
        env[outs[0]] = y

    def _op_MatMul(self, env, a, ins, outs):
        env[outs[0]] = torch.matmul(self._x(env, ins), self._x(env, ins, 1))

    def _op_BatchNormalization(self, env, a, ins, outs):
        x, s, b, m, v = (self._x(env, ins, k) for k in range(5))
        env[outs[0]] = F.batch_norm(x, m, v, s, b, False, 0.0, a.get("epsilon", 1e-5))

    def _op_Relu(self, env, a, ins, outs):
        env[outs[0]] = F.relu(self._x(env, ins))

    def _op_LeakyRelu(self, env, a, ins, outs):
        env[outs[0]] = F.leaky_relu(self._x(env, ins), a.get("alpha", 0.01))

    def _op_Sigmoid(self, env, a, ins, outs):
        env[outs[0]] = torch.sigmoid(self._x(env, ins))

    def _op_Tanh(self, env, a, ins, outs):
        env[outs[0]] = torch.tanh(self._x(env, ins))

    def _op_HardSigmoid(self, env, a, ins, outs):
        alpha, beta = a.get("alpha", 0.2), a.get("beta", 0.5)
        x = self._x(env, ins)
        if abs(alpha - 1 / 6) < 1e-6 and beta == 0.5:
            env[outs[0]] = F.hardsigmoid(x)
        else:
            env[outs[0]] = torch.clamp(x * alpha + beta, 0.0, 1.0)

    def _op_HardSwish(self, env, a, ins, outs):
        env[outs[0]] = F.hardswish(self._x(env, ins))

    def _op_Clip(self, env, a, ins, outs):
        lo, hi = a.get("min"), a.get("max")
        if len(ins) > 1 and ins[1]:
            lo = float(self._const_list(ins[1])[0])
        if len(ins) > 2 and ins[2]:
            hi = float(self._const_list(ins[2])[0])
        x = self._x(env, ins)
        if lo == 0.0 and hi == 6.0:
            env[outs[0]] = F.relu6(x)  # what torchvision's ReLU6 is
        else:
            env[outs[0]] = torch.clamp(x, lo, hi)

    def _binary(self, env, ins, outs, f):
        env[outs[0]] = f(self._x(env, ins), self._x(env, ins, 1))

    def _op_Add(self, env, a, ins, outs):
        self._binary(env, ins, outs, torch.add)

    def _op_Sub(self, env, a, ins, outs):
        self._binary(env, ins, outs, torch.sub)

    def _op_Mul(self, env, a, ins, outs):
        self._binary(env, ins, outs, torch.mul)

    def _op_Div(self, env, a, ins, outs):
        x, y = self._x(env, ins), self._x(env, ins, 1)
        if not x.is_floating_point() and not y.is_floating_point():
            env[outs[0]] = torch.div(x, y, rounding_mode="trunc")
        else:
            env[outs[0]] = torch.div(x, y)

    def _op_Pow(self, env, a, ins, outs):
        self._binary(env, ins, outs, torch.pow)

    def _op_Sqrt(self, env, a, ins, outs):
        env[outs[0]] = torch.sqrt(self._x(env, ins))

    def _op_Exp(self, env, a, ins, outs):
        env[outs[0]] = torch.exp(self._x(env, ins))

    def _pool_args(self, a, nd):
        k = a["kernel_shape"]
        stride = a.get("strides", [1] * nd)
        pads = list(a.get("pads", [0] * 2 * nd))
        auto = a.get("auto_pad", b"NOTSET")
        auto = auto.decode() if isinstance(auto, bytes) else auto
        if auto not in ("NOTSET", "VALID"):
            raise NotImplementedError(f"pool auto_pad={auto}")
        if auto == "VALID":
            pads = [0] * 2 * nd
        return k, stride, pads, bool(a.get("ceil_mode", 0))

    def _op_MaxPool(self, env, a, ins, outs):
        x = self._x(env, ins)
        nd = x.dim() - 2
        k, stride, pads, ceil = self._pool_args(a, nd)
        dil = a.get("dilations", [1] * nd)
        if pads[:nd] != pads[nd:] or any(p * 2 > kk for p, kk in zip(pads[:nd], k)):
            fp = []
            for d in reversed(range(nd)):
                fp += [pads[d], pads[d + nd]]
            x = F.pad(x, fp, value=float("-inf"))
            pads = [0] * 2 * nd
        pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[nd]
        env[outs[0]] = pool(x, k, stride, pads[:nd], dil, ceil)

    def _op_AveragePool(self, env, a, ins, outs):
        x = self._x(env, ins)
        nd = x.dim() - 2
        k, stride, pads, ceil = self._pool_args(a, nd)
        include = bool(a.get("count_include_pad", 0))
        if pads[:nd] != pads[nd:]:
            raise NotImplementedError("AveragePool with asymmetric pads")
        pool = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[nd]
        env[outs[0]] = pool(x, k, stride, pads[:nd], ceil, include)

    def _op_GlobalAveragePool(self, env, a, ins, outs):
        x = self._x(env, ins)
        env[outs[0]] = torch.mean(x, dim=list(range(2, x.dim())), keepdim=True)

    def _op_GlobalMaxPool(self, env, a, ins, outs):
        x = self._x(env, ins)
        env[outs[0]] = torch.amax(x, dim=list(range(2, x.dim())), keepdim=True)

    def _op_Flatten(self, env, a, ins, outs):
        x = self._x(env, ins)
        axis = _norm_axis(a.get("axis", 1), x.dim())
        if axis == 0:
            env[outs[0]] = x.reshape(1, -1)
        else:
            env[outs[0]] = torch.flatten(x, axis) if axis == 1 else x.reshape(int(np.prod(x.shape[:axis])), -1)

    def _op_Reshape(self, env, a, ins, outs):
        x = self._x(env, ins)
        shape = self._ints_of(env, ins[1])
        if not a.get("allowzero", 0):
            shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
        env[outs[0]] = x.reshape(shape)

    def _op_Concat(self, env, a, ins, outs):
        xs = [self._x(env, ins, k) for k in range(len(ins))]
        env[outs[0]] = torch.cat(xs, a["axis"])

    def _op_Transpose(self, env, a, ins, outs):
        x = self._x(env, ins)
        perm = a.get("perm", list(reversed(range(x.dim()))))
        env[outs[0]] = x.permute(*perm)

    def _op_Softmax(self, env, a, ins, outs):
        x = self._x(env, ins)
        env[outs[0]] = torch.softmax(x, a.get("axis", -1))

    def _op_Pad(self, env, a, ins, outs):
        x = self._x(env, ins)
        mode = a.get("mode", b"constant")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        pads = self._ints_of(env, ins[1]) if len(ins) > 1 else list(a["pads"])
        value = 0.0
        if len(ins) > 2 and ins[2]:
            value = float(self._const_list(ins[2])[0])
        elif "value" in a:
            value = float(a["value"])
        r = x.dim()
        fp = []
        for d in reversed(range(r)):
            fp += [pads[d], pads[d + r]]
        while len(fp) > 2 and fp[-1] == 0 and fp[-2] == 0:  # torch pads trailing dims only
            fp = fp[:-2]
        if mode == "constant":
            env[outs[0]] = F.pad(x, fp, value=value)
        else:
            env[outs[0]] = F.pad(x, fp, mode={"reflect": "reflect", "edge": "replicate"}[mode])

    def _resize(self, env, a, x, scales, sizes, outs):
        mode = a.get("mode", b"nearest")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        ctm = a.get("coordinate_transformation_mode", b"half_pixel")
        ctm = ctm.decode() if isinstance(ctm, bytes) else ctm
        kw = {}
        if sizes is not None:
            kw["size"] = [int(s) for s in sizes[2:]]
        else:
            kw["scale_factor"] = [float(s) for s in scales[2:]]
        if mode == "nearest":
            nm = a.get("nearest_mode", b"round_prefer_floor")
            nm = nm.decode() if isinstance(nm, bytes) else nm
            if ctm == "asymmetric" and nm == "floor":
                env[outs[0]] = F.interpolate(x, mode="nearest", **kw)
                return
            raise NotImplementedError(f"Resize nearest with {ctm}/{nm}")
        if mode == "linear":
            if ctm not in ("half_pixel", "pytorch_half_pixel", "align_corners"):
                raise NotImplementedError(f"Resize linear with {ctm}")
            env[outs[0]] = F.interpolate(x, mode="bilinear" if x.dim() == 4 else "linear",
                                         align_corners=ctm == "align_corners", **kw)
            return
        raise NotImplementedError(f"Resize mode {mode}")

    def _op_Resize(self, env, a, ins, outs):
        x = self._x(env, ins)
        scales = self._const(ins[2]) if len(ins) > 2 and ins[2] else None
        sizes = self._const(ins[3]) if len(ins) > 3 and ins[3] else None
        if scales is not None and scales.size == 0:
            scales = None
        self._resize(env, a, x, scales, sizes, outs)

    def _op_Upsample(self, env, a, ins, outs):
        x = self._x(env, ins)
        scales = self._const(ins[1]) if len(ins) > 1 else np.array(a["scales"])
        if a.get("mode", b"nearest") in (b"linear", "linear"):
            raise NotImplementedError("Upsample linear (opset 7-9 semantics differ from Resize)")
        a = dict(a, coordinate_transformation_mode=b"asymmetric", nearest_mode=b"floor")  # Upsample's nearest
        self._resize(env, a, x, scales, None, outs)

    # ---- shape arithmetic (torch exports with a symbolic batch emit these) ---------------
    def _op_Shape(self, env, a, ins, outs):
        env[outs[0]] = torch.tensor(self._x(env, ins).shape, dtype=torch.int64)

    def _op_Gather(self, env, a, ins, outs):
        x, idx = self._x(env, ins), self._x(env, ins, 1)
        axis = _norm_axis(a.get("axis", 0), x.dim())
        if idx.dim() == 0:
            env[outs[0]] = x.select(axis, int(idx))
        else:
            env[outs[0]] = torch.index_select(x, axis, idx.reshape(-1).long()).reshape(
                list(x.shape[:axis]) + list(idx.shape) + list(x.shape[axis + 1:]))

    def _axes(self, a, ins):
        if "axes" in a:
            return list(a["axes"])
        if len(ins) > 1 and ins[1]:
            return _ints(self._const_list(ins[1]))  # axes must be static for a traceable module
        return None

    def _op_Unsqueeze(self, env, a, ins, outs):
        x = self._x(env, ins)
        axes = sorted(_norm_axis(ax, x.dim() + len(self._axes(a, ins))) for ax in self._axes(a, ins))
        for ax in axes:
            x = x.unsqueeze(ax)
        env[outs[0]] = x

    def _op_Squeeze(self, env, a, ins, outs):
        x = self._x(env, ins)
        axes = self._axes(a, ins)
        if axes is None:
            env[outs[0]] = x.squeeze()
            return
        for ax in sorted((_norm_axis(ax, x.dim()) for ax in axes), reverse=True):
            x = x.squeeze(ax)
        env[outs[0]] = x

    def _op_Cast(self, env, a, ins, outs):
        to = {1: torch.float32, 6: torch.int32, 7: torch.int64, 9: torch.bool, 10: torch.float16, 11: torch.float64}
        env[outs[0]] = self._x(env, ins).to(to[a["to"]])

    def _op_Slice(self, env, a, ins, outs):
        x = self._x(env, ins)
        starts, ends = self._ints_of(env, ins[1]), self._ints_of(env, ins[2])
        axes = self._ints_of(env, ins[3]) if len(ins) > 3 and ins[3] else list(range(len(starts)))
        steps = self._ints_of(env, ins[4]) if len(ins) > 4 and ins[4] else [1] * len(starts)
        sl = [slice(None)] * x.dim()
        for s, e, ax, st in zip(starts, ends, axes, steps):
            if st != 1:
                raise NotImplementedError("Slice with step != 1")
            ax = _norm_axis(ax, x.dim())
            n = x.shape[ax]
            s = max(0, min(n, s + n if s < 0 else s))
            e = max(0, min(n, e + n if e < 0 else e))
            sl[ax] = slice(s, e)
        env[outs[0]] = x[tuple(sl)]

    def _op_Split(self, env, a, ins, outs):
        x = self._x(env, ins)
        axis = _norm_axis(a.get("axis", 0), x.dim())
        split = a.get("split")
        if split is None and len(ins) > 1 and ins[1]:
            split = _ints(self._const_list(ins[1]))
        if split is None:
            split = [x.shape[axis] // len(outs)] * len(outs)
        for o, t in zip(outs, torch.split(x, list(split), axis)):
            env[o] = t

    def _op_ReduceMean(self, env, a, ins, outs):
        x = self._x(env, ins)
        axes = self._axes(a, ins) or list(range(x.dim()))
        env[outs[0]] = torch.mean(x, dim=axes, keepdim=bool(a.get("keepdims", 1)))

    def _op_Constant(self, env, a, ins, outs):  # handled in _compile; kept for getattr
        env[outs[0]] = torch.from_numpy(self._constant_value(a))


# ops evaluated at conversion time when all their inputs are constants
_FOLDABLE = {"Gather", "Unsqueeze", "Squeeze", "Concat", "Cast", "Slice", "Mul", "Add", "Sub", "Div",
             "Reshape", "Identity"}


def convert(model):
    """ONNX model (path or ModelProto) -> OnnxModule in eval mode."""
    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(model)
    m = OnnxModule(model)
    m.eval()
    return m
