#!/usr/bin/env python3
"""Top-1 agreement and output cosine of the int8 .tflite (nnperf's converter on a QDQ model
from `nnperf quantize`) against the float32 .tflite of the same ONNX model, and of each
against ONNX Runtime's FP32, on a folder of photographs (scripts/photo-sets.sh).

    .venv/bin/python scripts/tflite-agreement.py FP32.onnx QDQ.onnx PHOTO_DIR [--threads 2]

Same preprocessing as nnperf quantize (scripts/qdq-agreement.py's numpy copy of it);
LiteRT's Interpreter with its default XNNPACK delegate, as the tflite row runs it."""
import argparse
import importlib.util
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
spec = importlib.util.spec_from_file_location("qdq_agreement", os.path.join(HERE, "qdq-agreement.py"))
qdq = importlib.util.module_from_spec(spec)
spec.loader.exec_module(qdq)

from ai_edge_litert.interpreter import Interpreter  # noqa: E402
from nnperf_worker.onnx_to_tflite import convert  # noqa: E402


def tflite_runner(onnx_path, threads):
    data, _ = convert(onnx_path, batch=1)
    it = Interpreter(model_content=data, num_threads=threads)
    it.allocate_tensors()
    i, o = it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]

    def run(x):
        it.set_tensor(i, np.ascontiguousarray(x.transpose(0, 2, 3, 1)))
        it.invoke()
        return it.get_tensor(o).ravel()
    return run, len(data)


def compare(name, a_list, b_list):
    top1 = sum(int(a.argmax() == b.argmax()) for a, b in zip(a_list, b_list))
    cos = [float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))) for a, b in zip(a_list, b_list)]
    n = len(a_list)
    print(f"  {name:32s} top-1 agreement {top1}/{n} ({100.0 * top1 / n:.1f}%), cosine mean {np.mean(cos):.5f} "
          f"min {np.min(cos):.5f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fp32")
    ap.add_argument("qdq")
    ap.add_argument("photos")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    f32, n32 = tflite_runner(a.fp32, a.threads)
    i8, n8 = tflite_runner(a.qdq, a.threads)
    ort = qdq.session(a.fp32)
    inp = ort.get_inputs()[0]
    files = sorted(f for f in os.listdir(a.photos) if f.lower().endswith((".jpg", ".jpeg", ".png")))
    outs = {"ort": [], "f32": [], "i8": []}
    for f in files:
        x = qdq.preprocess(os.path.join(a.photos, f), 224, 224)
        outs["ort"].append(ort.run(None, {inp.name: x})[0].ravel())
        outs["f32"].append(f32(x))
        outs["i8"].append(i8(x))
    print(f"tflite on {len(files)} photos of {a.photos} (.tflite fp32 {n32} bytes, int8 {n8} bytes):")
    compare("int8 tflite vs fp32 tflite", outs["i8"], outs["f32"])
    compare("int8 tflite vs ort-cpu FP32", outs["i8"], outs["ort"])
    compare("fp32 tflite vs ort-cpu FP32", outs["f32"], outs["ort"])


if __name__ == "__main__":
    main()
