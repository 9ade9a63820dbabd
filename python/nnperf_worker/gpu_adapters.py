"""GPU rows: ort-cuda, ort-trt (onnxruntime-gpu's CUDA and TensorRT execution providers)
and tensorrt (TensorRT's own builder + runtime). Each probes for its library and a GPU;
where either is missing the row is "unavailable"; the orchestrator adds the install
command from the registry (src/backends/registry.c). Never faked.

Timing: run() returns only after the device has finished (ORT's run() is synchronous;
the tensorrt row synchronises its stream), as the methodology requires."""
import os
import time

from .adapters import Unavailable, Unsupported, import_or_unavailable


def _gpu_present():
    return any(os.path.exists(p) for p in ("/dev/nvidia0", "/dev/nvidiactl"))


class _OrtGpu:
    provider = ""

    def probe(self):
        ort = import_or_unavailable("onnxruntime", "onnxruntime")
        have = ort.get_available_providers()
        if self.provider not in have:
            raise Unavailable(f"onnxruntime {ort.__version__} here has no {self.provider} "
                              f"(providers: {', '.join(have)})")
        if not _gpu_present():
            raise Unavailable(f"no NVIDIA GPU here (/dev/nvidia0 missing) for {self.provider}")
        return f"onnxruntime {ort.__version__} {self.provider}"

    def load(self, spec, shapes):
        import onnxruntime as ort
        if spec.precision not in ("fp32", "fp16") or (spec.precision == "fp16" and self.provider != "TensorrtExecutionProvider"):
            raise Unsupported(f"{self.name} runs the model as given (fp32); {spec.precision} is not wired")
        so = ort.SessionOptions()
        so.intra_op_num_threads = spec.threads
        provs = [(self.provider, self._provider_options(spec)), "CPUExecutionProvider"]
        t0 = time.monotonic()
        self.sess = ort.InferenceSession(spec.model, sess_options=so, providers=provs)
        load_s = time.monotonic() - t0
        if self.sess.get_providers()[0] != self.provider:
            raise Unavailable(f"{self.provider} did not initialise (session fell back to {self.sess.get_providers()})")
        self.input_names = [i.name for i in self.sess.get_inputs()]
        self.output_names = [o.name for o in self.sess.get_outputs()]
        return {"parse_s": -1, "compile_s": -1, "load_s": load_s, "threads": spec.threads,
                "note": f"{self.provider}; session creation parses and builds in one call"}

    def _provider_options(self, spec):
        return {}

    def set_inputs(self, feed):
        self.feed = feed

    def run(self):
        return self.sess.run(None, self.feed)


class OrtCuda(_OrtGpu):
    name = "ort-cuda"
    provider = "CUDAExecutionProvider"


class OrtTrt(_OrtGpu):
    """Options: cache_dir=PATH (TensorRT engine cache; the first load builds the engine)."""
    name = "ort-trt"
    provider = "TensorrtExecutionProvider"

    def _provider_options(self, spec):
        o = {"trt_fp16_enable": spec.precision == "fp16"}
        if spec.options.get("cache_dir"):
            o.update(trt_engine_cache_enable=True, trt_engine_cache_path=spec.options["cache_dir"])
        return o


class TensorRT:
    """TensorRT's ONNX parser + builder + runtime, device buffers through cuda-python (or
    torch.cuda). Options: cache_dir=DIR (serialized engines), calib=DIR / calib_cache=FILE
    (int8), workspace_mb=N, io=host|device (what run() times; docs/backends.md)."""
    name = "tensorrt"

    def probe(self):
        trt = import_or_unavailable("tensorrt", "TensorRT's Python bindings")
        if not _gpu_present():
            raise Unavailable("no NVIDIA GPU here (/dev/nvidia0 missing)")
        return f"tensorrt {trt.__version__}"

    def load(self, spec, shapes):
        # The engine build/run lives in trt_runtime.py (never run on a GPU by its author:
        # the project's machines have none); option mistakes are the row's reason.
        from .trt_runtime import TrtRunner
        from .trt_support import TrtOptionError
        self.runner = TrtRunner()
        try:
            rep = self.runner.load(spec, shapes)
        except TrtOptionError as e:
            raise Unsupported(str(e))
        self.input_names = self.runner.input_names
        self.output_names = self.runner.output_names
        return rep

    def set_inputs(self, feed):
        self.runner.set_inputs(feed)

    def run(self):
        return self.runner.run()


GPU_ADAPTERS = (OrtCuda, OrtTrt, TensorRT)
