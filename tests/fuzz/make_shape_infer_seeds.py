#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_shape_infer (tests/fuzz/corpus/shape_infer/).

Each seed is one valid single-op graph in the byte layout that fuzz_shape_infer.c
decodes, so the fuzzer starts from inputs that pass shape inference and run, and mutates
from there. Op ids come from src/ops/op_list.h, so the seeds follow the op table.
Run again after changing the op list or the byte layout:
    python3 tests/fuzz/make_shape_infer_seeds.py
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OPS = [m[1] for m in re.findall(r'X\((\w+), \w+, "(\w+)"\)', open(os.path.join(ROOT, "src/ops/op_list.h")).read())]
OPS = [o for o in OPS if o != "OnnxName"]  # the example in the header comment

# Indices into the tables of fuzz_shape_infer.c.
DT = {"f32": 0, "i64": 1, "i32": 3, "bool": 4, "u8": 5}
ATTR_NAMES = ["axis", "axes", "keepdims", "perm", "kernel_shape", "pads", "strides", "dilations", "group",
              "auto_pad", "ceil_mode", "count_include_pad", "alpha", "beta", "gamma", "transA", "transB",
              "epsilon", "to", "split", "num_outputs", "starts", "ends", "mode", "value", "value_float",
              "value_floats", "value_int", "value_ints", "noop_with_empty_axes", "select_last_index",
              "allowzero", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
              "exclude_outside", "extrapolation_value", "output_padding", "output_shape", "scales",
              "size", "bias", "min", "max", "approximate", "storage_order", "spatial", "training_mode",
              "broadcast", "start", "end", "keep_aspect_ratio_policy", "antialias", "unknown_attr"]
STRINGS = ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "constant", "reflect", "edge", "wrap",
           "nearest", "linear", "cubic", "bilinear", "half_pixel", "asymmetric", "align_corners",
           "pytorch_half_pixel", "tf_crop_and_resize", "round_prefer_floor", "floor", "ceil",
           "tanh", "none", "stretch", "not_larger", "", "garbage"]
FLOATS = [0.0, 1.0, -1.0, 0.5, 2.0, 3.0]


def small(v):
    assert -3 <= v <= 12
    return v + 3


def inp(dt, dims, values=None):
    """A graph input (values None) or an initializer with small values."""
    b = [2 if values is not None else 0, DT[dt], len(dims)] + list(dims)
    if values is not None:
        if dt == "f32":
            b += [FLOATS.index(v) for v in values]
        else:
            b += [small(v) for v in values]
    return b


def attr(name, kind, value):
    b = [ATTR_NAMES.index(name)]
    if kind == "int":
        return b + [0, 0, small(value)]
    if kind == "ints":
        return b + [1, len(value)] + [small(v) for v in value]
    if kind == "float":
        return b + [2, 0, FLOATS.index(value)]
    if kind == "string":
        return b + [4, 0, STRINGS.index(value)]
    raise ValueError(kind)


def seed(op, inputs, attrs=(), opset=13, extra_inputs=0, extra_outputs=0):
    """extra_inputs: len(inputs) minus the op's min_inputs (see its nnp_op_info)."""
    # n_in bytes: the first is overridden because the flag byte (1) is odd; then
    # n_in = min_inputs + extra_inputs (extra_inputs < max - min + 2).
    b = [OPS.index(op), opset - 7, 1, 1, extra_inputs]
    for i in inputs:
        b += i
    b += [extra_outputs]
    b += [len(attrs)]
    for a in attrs:
        b += a
    return bytes(b)


def ones(n):
    return [1.0] * n


SEEDS = {
    "relu": seed("Relu", [inp("f32", [2, 3])]),
    "add_broadcast": seed("Add", [inp("f32", [2, 3]), inp("f32", [3])]),
    "where": seed("Where", [inp("bool", [2, 3]), inp("f32", [2, 3]), inp("f32", [1])]),
    "conv": seed("Conv", [inp("f32", [1, 2, 5, 5]), inp("f32", [3, 2, 3, 3], ones(54))],
                 [attr("pads", "ints", [1, 1, 1, 1]), attr("strides", "ints", [2, 2])]),
    "conv_group": seed("Conv", [inp("f32", [1, 4, 4, 4]), inp("f32", [4, 1, 2, 2], ones(16))],
                       [attr("group", "int", 4), attr("dilations", "ints", [2, 2])]),
    "conv_transpose": seed("ConvTranspose", [inp("f32", [1, 2, 3, 3]), inp("f32", [2, 1, 2, 2], ones(8))],
                           [attr("strides", "ints", [2, 2])]),
    "maxpool": seed("MaxPool", [inp("f32", [1, 1, 4, 4])],
                    [attr("kernel_shape", "ints", [2, 2]), attr("ceil_mode", "int", 1)]),
    "avgpool": seed("AveragePool", [inp("f32", [1, 1, 5, 5])],
                    [attr("kernel_shape", "ints", [3, 3]), attr("auto_pad", "string", "SAME_UPPER")]),
    "gemm": seed("Gemm", [inp("f32", [2, 3]), inp("f32", [4, 3])], [attr("transB", "int", 1)]),
    "matmul": seed("MatMul", [inp("f32", [2, 2, 3]), inp("f32", [3, 4])]),
    "batchnorm": seed("BatchNormalization", [inp("f32", [1, 2, 3, 3]), inp("f32", [2], ones(2)),
                                             inp("f32", [2], ones(2)), inp("f32", [2], ones(2)),
                                             inp("f32", [2], ones(2))]),
    "softmax": seed("Softmax", [inp("f32", [2, 5])], [attr("axis", "int", -1)]),
    "reduce_mean": seed("ReduceMean", [inp("f32", [2, 3, 4])], [attr("axes", "ints", [1]), attr("keepdims", "int", 0)]),
    "reduce_sum13": seed("ReduceSum", [inp("f32", [2, 3]), inp("i64", [1], [1])], opset=13, extra_inputs=1),
    "argmax": seed("ArgMax", [inp("f32", [3, 4])], [attr("axis", "int", 1), attr("select_last_index", "int", 1)]),
    "reshape": seed("Reshape", [inp("f32", [2, 3]), inp("i64", [2], [3, -1])], extra_inputs=1),
    "reshape_zero": seed("Reshape", [inp("f32", [2, 3, 4]), inp("i64", [3], [0, 4, 3])], extra_inputs=1),
    "flatten": seed("Flatten", [inp("f32", [2, 3, 4])], [attr("axis", "int", 2)]),
    "squeeze": seed("Squeeze", [inp("f32", [1, 3, 1]), inp("i64", [1], [2])], extra_inputs=1),
    "unsqueeze": seed("Unsqueeze", [inp("f32", [3]), inp("i64", [2], [0, 2])], extra_inputs=1),
    "transpose": seed("Transpose", [inp("f32", [2, 3, 4])], [attr("perm", "ints", [2, 0, 1])]),
    "concat": seed("Concat", [inp("f32", [2, 3]), inp("f32", [2, 1])], [attr("axis", "int", 1)], extra_inputs=1),
    "split": seed("Split", [inp("f32", [4, 3]), inp("i64", [2], [1, 3])], [attr("axis", "int", 0)],
                  extra_inputs=1, extra_outputs=1),
    "slice": seed("Slice", [inp("f32", [5, 4]), inp("i64", [1], [1]), inp("i64", [1], [4]),
                            inp("i64", [1], [0]), inp("i64", [1], [2])], extra_inputs=2),
    "gather": seed("Gather", [inp("f32", [4, 3]), inp("i64", [2], [3, -1])], [attr("axis", "int", 0)]),
    "expand": seed("Expand", [inp("f32", [3, 1]), inp("i64", [2], [3, 4])]),
    "tile": seed("Tile", [inp("f32", [2, 3]), inp("i64", [2], [2, 1])]),
    "pad": seed("Pad", [inp("f32", [2, 3]), inp("i64", [4], [1, 0, 2, 1])], [attr("mode", "string", "reflect")], extra_inputs=1),
    "resize": seed("Resize", [inp("f32", [1, 1, 2, 2]), inp("f32", [0], []), inp("f32", [4], [1.0, 1.0, 2.0, 2.0])],
                   [attr("mode", "string", "linear")], extra_inputs=2),
    "constant_of_shape": seed("ConstantOfShape", [inp("i64", [2], [2, 3])]),
    "range": seed("Range", [inp("i64", [], [0]), inp("i64", [], [7]), inp("i64", [], [2])]),
    "cast": seed("Cast", [inp("f32", [2, 3])], [attr("to", "int", 7)]),
    "clip": seed("Clip", [inp("f32", [4]), inp("f32", [], [0.0]), inp("f32", [], [1.0])], extra_inputs=2),
    "shape": seed("Shape", [inp("f32", [2, 3, 4])]),
    "instance_norm": seed("InstanceNormalization", [inp("f32", [1, 2, 3]), inp("f32", [2], ones(2)),
                                                   inp("f32", [2], ones(2))]),
    "lrn": seed("LRN", [inp("f32", [1, 3, 2, 2])], [attr("size", "int", 3)]),
    # Regression: a Pad value of -1.0 stored into a uint8 tensor was a float-to-integer
    # conversion out of range (undefined behaviour; nnp_tensor_set_f64 now saturates).
    "pad_u8_negative_value": seed("Pad", [inp("u8", [2, 3])], [attr("pads", "ints", [1, 0, 0, 1]),
                                                              attr("value", "float", -1.0)], opset=10),
    "prelu": seed("PRelu", [inp("f32", [2, 3]), inp("f32", [3], ones(3))]),
}

if __name__ == "__main__":
    out = os.path.join(HERE, "corpus", "shape_infer")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(SEEDS)} seeds to {out}")
