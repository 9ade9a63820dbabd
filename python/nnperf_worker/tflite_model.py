"""Writes a .tflite flatbuffer with the schema LiteRT itself ships
(ai_edge_litert.schema_py_generated, object API) and PyPI flatbuffers: tensors, constant
buffers, builtin operators, one subgraph and a 'serving_default' signature (LiteRT's
CompiledModel, which benchmark_litert_model uses, runs a model by signature)."""
import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as S

TYPES = {np.dtype(np.float32): S.TensorType.FLOAT32, np.dtype(np.int32): S.TensorType.INT32,
         np.dtype(np.int8): S.TensorType.INT8, np.dtype(np.int64): S.TensorType.INT64,
         np.dtype(np.uint8): S.TensorType.UINT8}


class TfliteModel:
    def __init__(self):
        self.tensors = []
        self.buffers = [S.BufferT()]  # buffer 0: the empty buffer every activation points at
        self.codes = {}               # builtin operator code -> index into operatorCodes
        self.ops = []
        self.inputs = []
        self.outputs = []

    def tensor(self, name, shape, dtype=np.float32, quant=None, data=None):
        """Adds a tensor (constant when data is given); quant = (scales, zero_points, axis)."""
        t = S.TensorT()
        t.name = name
        t.shape = [int(d) for d in shape]
        t.type = TYPES[np.dtype(dtype)]
        t.buffer = 0
        if data is not None:
            b = S.BufferT()
            b.data = np.frombuffer(np.ascontiguousarray(data, dtype=dtype).tobytes(), np.uint8)
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        if quant is not None:
            q = S.QuantizationParametersT()
            scales, zps, axis = quant
            q.scale = [float(s) for s in np.atleast_1d(scales)]
            q.zeroPoint = [int(z) for z in np.atleast_1d(zps)]
            q.quantizedDimension = int(axis)
            t.quantization = q
        self.tensors.append(t)
        return len(self.tensors) - 1

    def const(self, name, array, quant=None):
        a = np.asarray(array)
        return self.tensor(name, a.shape, a.dtype, quant, a)

    def op(self, code, inputs, outputs, options_type=0, options=None):
        if code not in self.codes:
            self.codes[code] = len(self.codes)
        o = S.OperatorT()
        o.opcodeIndex = self.codes[code]
        o.inputs = list(inputs)
        o.outputs = list(outputs)
        o.builtinOptionsType = options_type
        o.builtinOptions = options
        self.ops.append(o)

    def to_bytes(self):
        m = S.ModelT()
        m.version = 3
        m.description = "nnperf onnx_to_tflite"
        m.buffers = self.buffers
        m.operatorCodes = []
        for code in sorted(self.codes, key=self.codes.get):
            c = S.OperatorCodeT()
            c.builtinCode = code
            c.deprecatedBuiltinCode = min(code, 127)  # the old int8 field: codes above 127 store 127
            c.version = 1
            m.operatorCodes.append(c)
        g = S.SubGraphT()
        g.tensors, g.inputs, g.outputs, g.operators, g.name = self.tensors, self.inputs, self.outputs, self.ops, "main"
        m.subgraphs = [g]
        sig = S.SignatureDefT()
        sig.signatureKey = "serving_default"
        sig.subgraphIndex = 0
        sig.inputs = [self._map(i) for i in self.inputs]
        sig.outputs = [self._map(i) for i in self.outputs]
        m.signatureDefs = [sig]
        b = flatbuffers.Builder(1 << 20)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    def _map(self, index):
        t = S.TensorMapT()
        t.name = self.tensors[index].name
        t.tensorIndex = index
        return t
