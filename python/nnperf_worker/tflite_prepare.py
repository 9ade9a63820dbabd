"""Reads an ONNX model into the plain form onnx_to_tflite emits from: fixed input shapes,
every value's inferred shape, constants as numpy arrays, QDQ pairs folded into
per-tensor quantization parameters, Conv+BatchNormalization folded, Relu/Clip after a
Conv/Gemm/MatMul/Add fused (TFLite's fused_activation_function), dead nodes dropped."""
import numpy as np
import onnx
from onnx import numpy_helper, shape_inference


class Unconvertible(Exception):
    """The model has something the converter does not turn into TFLite (names the node)."""


class Node:
    def __init__(self, n):
        self.op, self.name = n.op_type, n.name or n.output[0]
        self.inputs, self.outputs = list(n.input), list(n.output)
        self.attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        self.act = None  # fused activation: "RELU", "RELU6", "RELU_N1_TO_1"

    def __repr__(self):
        return f"{self.op} node '{self.name}'"


# ops whose output range lies inside their input's: a quantized input makes a quantized output
RANGE_KEEPING = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Flatten", "Reshape",
                 "Squeeze", "Unsqueeze", "Transpose"}
RESHAPES = {"Flatten", "Reshape", "Squeeze", "Unsqueeze"}
FUSES_ACTIVATION = {"Conv", "Gemm", "MatMul", "Add"}


class Graph:
    def __init__(self, model, input_shapes=None, batch=1):
        self._fix_inputs(model, input_shapes or {}, batch)
        model = shape_inference.infer_shapes(model)
        g = model.graph
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
        self.consts = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        self.shapes, self.dtypes = {}, {}
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            tt = vi.type.tensor_type
            if tt.HasField("shape"):
                self.shapes[vi.name] = [d.dim_value for d in tt.shape.dim]
            self.dtypes[vi.name] = tt.elem_type
        self.inputs = [i.name for i in g.input if i.name not in self.consts]
        self.outputs = [o.name for o in g.output]
        self.output_names = list(self.outputs)  # as the model names them (QDQ aliases resolved below)
        self.qparams = {}  # tensor -> (scale, zero point) of int8, from the QDQ pairs
        self.nodes = self._fold_qdq([Node(n) for n in g.node])
        self._fold_batchnorm()
        self._fuse_activations()
        self.nodes = self._live()
        self._propagate_qparams()

    @staticmethod
    def _fix_inputs(model, input_shapes, batch):
        inits = {t.name for t in model.graph.initializer}
        for i in model.graph.input:
            if i.name in inits:
                continue
            dims = i.type.tensor_type.shape.dim
            want = input_shapes.get(i.name)
            for k, d in enumerate(dims):
                if want is not None:
                    d.dim_value = int(want[k])
                elif not d.dim_value:
                    d.dim_value = batch if k == 0 else 1

    def _fold_qdq(self, nodes):
        """DequantizeLinear of a constant becomes a float constant; QuantizeLinear ->
        DequantizeLinear on an activation becomes that activation with int8 parameters."""
        alias, quant_of, kept = {}, {}, []
        for n in nodes:
            n.inputs = [alias.get(x, x) for x in n.inputs]
            if n.op == "Constant":
                self.consts[n.outputs[0]] = numpy_helper.to_array(n.attrs["value"])
            elif n.op in ("Identity", "Dropout"):
                alias[n.outputs[0]] = n.inputs[0]
            elif n.op == "DequantizeLinear" and n.inputs[0] in self.consts:
                self.consts[n.outputs[0]] = self._dequantize(n)
            elif n.op == "QuantizeLinear":
                quant_of[n.outputs[0]] = n
            elif n.op == "DequantizeLinear" and n.inputs[0] in quant_of:
                q = quant_of[n.inputs[0]]
                src = q.inputs[0]
                scale = float(np.asarray(self.consts[q.inputs[1]]).reshape(-1)[0])
                zp_arr = self.consts.get(q.inputs[2]) if len(q.inputs) > 2 and q.inputs[2] else None
                zp = int(np.asarray(zp_arr).reshape(-1)[0]) if zp_arr is not None else 0
                if zp_arr is not None and np.asarray(zp_arr).dtype == np.uint8:
                    zp -= 128  # TFLite int8: the same scale, the zero point moved by 128
                self.qparams.setdefault(src, (scale, zp))
                alias[n.outputs[0]] = src
            else:
                kept.append(n)
        self.outputs = [alias.get(o, o) for o in self.outputs]
        self.alias = alias
        return kept

    def _dequantize(self, n):
        x = self.consts[n.inputs[0]].astype(np.float64)
        scale = np.asarray(self.consts[n.inputs[1]], np.float64)
        zp = np.asarray(self.consts[n.inputs[2]], np.float64) if len(n.inputs) > 2 and n.inputs[2] else 0.0
        if scale.ndim == 1 and scale.size > 1:
            shape = [1] * x.ndim
            shape[n.attrs.get("axis", 1) % x.ndim] = -1
            scale = scale.reshape(shape)
            zp = np.reshape(zp, shape) if np.ndim(zp) else zp
        return ((x - zp) * scale).astype(np.float32)

    def consumers(self, name):
        return [n for n in self.nodes if name in n.inputs]

    def _single_use(self, name):
        return name not in self.outputs and len(self.consumers(name)) == 1

    def _fold_batchnorm(self):
        for n in list(self.nodes):
            if n.op != "Conv" or n.inputs[1] not in self.consts or not self._single_use(n.outputs[0]):
                continue
            bn = self.consumers(n.outputs[0])[0]
            if bn.op != "BatchNormalization" or not all(x in self.consts for x in bn.inputs[1:5]):
                continue
            gamma, beta, mean, var = (self.consts[x].astype(np.float64) for x in bn.inputs[1:5])
            k = gamma / np.sqrt(var + bn.attrs.get("epsilon", 1e-5))
            w = self.consts[n.inputs[1]].astype(np.float64)
            b = self.consts[n.inputs[2]].astype(np.float64) if len(n.inputs) > 2 and n.inputs[2] else 0.0
            wname, bname = n.name + "/bn_folded_w", n.name + "/bn_folded_b"
            self.consts[wname] = (w * k.reshape(-1, 1, 1, 1)).astype(np.float32)
            self.consts[bname] = ((b - mean) * k + beta).astype(np.float32)
            n.inputs = [n.inputs[0], wname, bname]
            self._bypass(n, bn)

    def _bypass(self, n, follower):
        """n takes over follower's output (follower is folded into n)."""
        old = n.outputs[0]
        n.outputs = [follower.outputs[0]]
        if old in self.qparams and follower.outputs[0] not in self.qparams:
            self.qparams[follower.outputs[0]] = self.qparams[old]
        self.nodes.remove(follower)

    def clip_bounds(self, n):
        if n.op == "Relu":
            return 0.0, float("inf")
        lo, hi = n.attrs.get("min", -np.inf), n.attrs.get("max", np.inf)
        if len(n.inputs) > 1 and n.inputs[1]:
            lo = float(self.consts[n.inputs[1]]) if n.inputs[1] in self.consts else None
        if len(n.inputs) > 2 and n.inputs[2]:
            hi = float(self.consts[n.inputs[2]]) if n.inputs[2] in self.consts else None
        return lo, hi

    def activation_name(self, n):
        bounds = self.clip_bounds(n)
        return {(0.0, float("inf")): "RELU", (0.0, 6.0): "RELU6", (-1.0, 1.0): "RELU_N1_TO_1"}.get(bounds)

    def _fuse_activations(self):
        for n in list(self.nodes):
            if n.op not in FUSES_ACTIVATION or not self._single_use(n.outputs[0]):
                continue
            f = self.consumers(n.outputs[0])[0]
            if f.op in ("Relu", "Clip") and self.activation_name(f):
                n.act = self.activation_name(f)
                self._bypass(n, f)

    def data_inputs(self, n):
        """The inputs whose values flow into the result (a Reshape's shape does not)."""
        if n.op in ("Reshape", "Squeeze", "Unsqueeze"):
            return n.inputs[:1]
        return [x for x in n.inputs if x]

    def _live(self):
        producer = {o: n for n in self.nodes for o in n.outputs}
        live, todo = set(), list(self.outputs)
        while todo:
            p = producer.get(todo.pop())
            if p is not None and id(p) not in live:
                live.add(id(p))
                todo.extend(self.data_inputs(p))
        return [n for n in self.nodes if id(n) in live]

    def _propagate_qparams(self):
        """A reshape/pool between two quantized layers takes their parameters, so that the
        whole chain stays int8 (backwards from a reshape's output, then forwards)."""
        q = self.qparams
        for n in reversed(self.nodes):
            if n.op in RESHAPES and n.outputs[0] in q and n.inputs[0] not in q:
                q[n.inputs[0]] = q[n.outputs[0]]
        for n in self.nodes:
            if n.op in RANGE_KEEPING and n.inputs[0] in q and n.outputs[0] not in q:
                q[n.outputs[0]] = q[n.inputs[0]]
