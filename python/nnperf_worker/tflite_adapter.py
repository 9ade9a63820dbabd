"""The tflite row: LiteRT's Interpreter (PyPI ai-edge-litert) with its default XNNPACK
delegate and num_threads = --threads, the way TFLite users run a .tflite. The .tflite is
converted from the row's ONNX file by nnperf's converter (onnx_to_tflite.py) at load time
(the parse phase), or taken as given with the option model=FILE.tflite. The conversion
runs in a child process, so that this worker maps only what a deployment ships (LiteRT,
numpy, Python), not the onnx package: the footprint record counts the worker's own files. A QDQ model
(--int8-model) converts to a full-int8 .tflite with the QDQ's calibrated scales."""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from .adapters import Unsupported, import_or_unavailable, require_fp32


class TfLite:
    name = "tflite"

    def probe(self):
        from importlib.metadata import version
        import_or_unavailable("ai_edge_litert.interpreter", "ai-edge-litert")
        return f"ai-edge-litert {version('ai-edge-litert')} (Interpreter + XNNPACK delegate)"

    def _model(self, spec, shapes):
        """(path of the .tflite, how it was made, int8?)"""
        given = spec.options.get("model")
        if given:
            return given, f"model {given} as given", False
        fd, path = tempfile.mkstemp(suffix=".tflite", prefix="nnperf-tflite-")
        os.close(fd)
        self.tmp = path
        cmd = [sys.executable, "-m", "nnperf_worker.onnx_to_tflite", spec.model, path]
        cmd += [f"--input-shape={n}={'x'.join(str(d) for d in dims)}" for n, dims in shapes.items()]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            why = (r.stderr.strip().splitlines() or ["the converter failed"])[-1]
            raise Unsupported(f"ONNX->TFLite conversion: {why.split(': ', 1)[-1] if r.returncode == 1 else why}")
        return path, "converted from ONNX by nnperf (onnx_to_tflite)", "int8" in r.stdout

    def load(self, spec, shapes):
        from ai_edge_litert.interpreter import Interpreter
        if spec.precision != "fp32":
            raise Unsupported(f"the tflite row runs the model as given; {spec.precision} comes from a QDQ "
                              f"model (--int8-model)" if spec.precision == "int8" else
                              f"the tflite row runs the model as given (fp32); nnperf's converter writes no {spec.precision}")
        t0 = time.monotonic()
        path, how, int8 = self._model(spec, shapes)
        t1 = time.monotonic()
        self.model_path = path  # the file this backend loads: the footprint's model bytes
        self.model_bytes = os.path.getsize(path)
        self.interp = Interpreter(model_path=path, num_threads=spec.threads)
        self.interp.allocate_tensors()
        t2 = time.monotonic()
        ins, outs = self.interp.get_input_details(), self.interp.get_output_details()
        self.inputs = [(d["index"], d["name"], len(d["shape"]) == 4) for d in ins]
        self.outputs = [(d["index"], len(d["shape"]) == 4) for d in outs]
        self.input_names = [d["name"] for d in ins]
        self.output_names = [d["name"] for d in outs]
        kind = "int8 (QDQ calibration)" if int8 else "float32"
        return {"parse_s": t1 - t0, "compile_s": t2 - t1, "load_s": t2 - t0, "threads": spec.threads,
                "note": f"{how}, {kind}, {self.model_bytes} bytes; parse = ONNX->TFLite convert, compile = "
                        f"Interpreter + allocate_tensors (XNNPACK delegate); inputs fed NHWC"}

    def __del__(self):
        if getattr(self, "tmp", None):
            try:
                os.unlink(self.tmp)
            except OSError:
                pass

    def set_inputs(self, feed):
        # NCHW -> NHWC outside the timed region: TFLite users feed NHWC
        self.feed = [(idx, np.ascontiguousarray(feed[name].transpose(0, 2, 3, 1) if four else feed[name]))
                     for idx, name, four in self.inputs]

    def run(self):
        it = self.interp
        for idx, arr in self.feed:
            it.set_tensor(idx, arr)
        it.invoke()
        # a 4-D output is NHWC: the view in ONNX's NCHW order costs no copy
        return [it.get_tensor(idx).transpose(0, 3, 1, 2) if four else it.get_tensor(idx)
                for idx, four in self.outputs]


TFLITE_ADAPTERS = (TfLite,)
