"""Framework adapters: thin. Each loads the model the way the framework's users do,
runs one synchronous inference per call and returns the outputs. Timing, warm-up,
statistics and memory stay in the harness."""
import importlib
import time


class Unavailable(Exception):
    """The framework is not installed or cannot run here (the row says why)."""


class Unsupported(Exception):
    """The framework cannot run this model / precision / configuration."""


def import_or_unavailable(module, package):
    """The imported module, or Unavailable naming the package that is missing: every
    adapter's probe starts so."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise Unavailable(f"{package} is not installed ({e})")


def require_fp32(spec, why):
    """Unsupported unless the row is fp32; why ({precision} filled in) says what the
    backend runs instead."""
    if spec.precision != "fp32":
        raise Unsupported(why.format(precision=spec.precision))


class OrtCpu:
    """ONNX Runtime, CPU execution provider. Options: opt=disable|basic|extended|all
    (graph optimisation level, default all)."""

    name = "ort-cpu"

    def probe(self):
        return f"onnxruntime {import_or_unavailable('onnxruntime', 'onnxruntime').__version__}"

    def load(self, spec, shapes):
        import onnxruntime as ort
        if spec.precision == "bf16":
            raise Unsupported("ort-cpu has no bf16 path: its CPU provider has no inference-precision option and "
                              "runs an fp32 model's Conv/Gemm in fp32 (bf16 needs a model converted to bf16 types)")
        if spec.precision != "fp32":
            raise Unsupported(f"ort-cpu runs the model as given (fp32); {spec.precision} needs a converted model")
        levels = {"disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
                  "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                  "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
                  "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}
        level = spec.options.get("opt", "all")
        if level not in levels:
            raise Unsupported(f"opt={level}: expected one of {', '.join(levels)}")
        so = ort.SessionOptions()
        so.intra_op_num_threads = spec.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = levels[level]
        t0 = time.monotonic()
        self.sess = ort.InferenceSession(spec.model, sess_options=so, providers=["CPUExecutionProvider"])
        load_s = time.monotonic() - t0
        self.input_names = [i.name for i in self.sess.get_inputs()]
        self.output_names = [o.name for o in self.sess.get_outputs()]
        self.feed = {}
        # session creation parses and optimises in one call: not separable
        return {"parse_s": -1, "compile_s": -1, "load_s": load_s, "threads": spec.threads,
                "note": f"graph optimisation level {level}"}

    def set_inputs(self, feed):
        self.feed = feed

    def run(self):
        return self.sess.run(None, self.feed)

    def stream_runners(self, n):
        """Serve mode with n streams: one shared session. InferenceSession.run may be called
        from several threads at once (ONNX Runtime documents it thread-safe) and releases
        the GIL, so n threads run n inferences concurrently on one loaded model."""
        sess, feed = self.sess, self.feed
        return [lambda: sess.run(None, feed) for _ in range(n)]


class OpenVinoCpu:
    """OpenVINO, CPU plugin, latency hint, INFERENCE_NUM_THREADS = --threads. Options:
    cache_dir=PATH (OpenVINO's model cache: a second load reuses the compiled blob)."""

    name = "openvino"

    def probe(self):
        return f"openvino {import_or_unavailable('openvino', 'openvino').__version__}"

    def load(self, spec, shapes):
        import openvino as ov
        if spec.precision not in ("fp32", "bf16"):
            raise Unsupported(f"the openvino row runs fp32 and bf16 (INFERENCE_PRECISION_HINT); {spec.precision} "
                              "comes from a QDQ model (--int8-model)")
        core = ov.Core()
        hint = "bf16" if spec.precision == "bf16" else "f32"
        config = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": spec.threads,
                  "INFERENCE_PRECISION_HINT": hint}
        if spec.options.get("cache_dir"):
            config["CACHE_DIR"] = spec.options["cache_dir"]
        t0 = time.monotonic()
        model = core.read_model(spec.model)
        # static rows: the model is fixed to the row's shapes, as benchmark_app -shape does;
        # a dynamic scenario keeps the drawn dimension dynamic
        fixed = {}
        for port in model.inputs:
            name = port.get_any_name()
            if name in shapes and not (spec.dynamic and spec.dynamic[2] == name):
                fixed[name] = list(shapes[name])
        if fixed:
            model.reshape(fixed)
        t1 = time.monotonic()
        if spec.mode == "serve" and spec.streams > 1:
            # serve mode with N streams: N execution streams of `threads` threads each in the
            # one compiled model, one infer request per stream (stream_runners)
            config["NUM_STREAMS"] = spec.streams
            config["INFERENCE_NUM_THREADS"] = spec.threads * spec.streams
        self.compiled = core.compile_model(model, "CPU", config)
        t2 = time.monotonic()
        self.request = self.compiled.create_infer_request()
        self.input_names = [p.get_any_name() for p in self.compiled.inputs]
        self.output_names = [p.get_any_name() for p in self.compiled.outputs]
        used = self.compiled.get_property("INFERENCE_NUM_THREADS")
        note = "CPU plugin, PERFORMANCE_HINT=LATENCY, f32"
        if hint == "bf16":
            try:
                note = "CPU plugin, PERFORMANCE_HINT=LATENCY, " + self.executed_precision()
            except (RuntimeError, KeyError, AttributeError) as e:  # runtime-model info is not a stable API
                note = f"CPU plugin, PERFORMANCE_HINT=LATENCY, asked bf16; what ran could not be read ({e})"
        return {"parse_s": t1 - t0, "compile_s": t2 - t1, "load_s": t2 - t0, "threads": int(used), "note": note}

    def executed_precision(self):
        """What the plugin made of INFERENCE_PRECISION_HINT=bf16: the hint as the compiled
        model reads it back, and the runtime precision and primitive of its matrix layers
        (a CPU without AVX512-BF16 / AMX-BF16 runs them in f32 whatever was asked)."""
        got = str(self.compiled.get_property("INFERENCE_PRECISION_HINT")).replace("<Type: '", "").rstrip("'>")
        layers = {}
        for op in self.compiled.get_runtime_model().get_ordered_ops():
            info = op.get_rt_info()
            kind = info["layerType"].astype(str)
            if kind in ("Convolution", "FullyConnected", "MatMul", "GroupConvolution"):
                key = f"{info['runtimePrecision'].astype(str)} {info['primitiveType'].astype(str)}"
                layers[key] = layers.get(key, 0) + 1
        ran = ", ".join(f"{k} x{n}" for k, n in sorted(layers.items(), key=lambda kv: -kv[1])[:3])
        return f"asked bf16, compiled {got}; matrix layers ran {ran or 'none found'}"

    def set_inputs(self, feed):
        self.feed = feed

    def run(self):
        self.request.infer(self.feed)
        return [self.request.get_output_tensor(i).data.copy() for i in range(len(self.output_names))]

    def stream_runners(self, n):
        """Serve mode with n streams: one compiled model, n infer requests (OpenVINO's
        multi-request API; infer() releases the GIL), one per serving thread."""
        feed = self.feed
        runners = []
        for k in range(n):
            req = self.request if k == 0 else self.compiled.create_infer_request()
            runners.append(lambda req=req: req.infer(feed))
        return runners


ADAPTERS = {a.name: a for a in (OrtCpu, OpenVinoCpu)}


def _more():  # rows in their own files (import after Unavailable/Unsupported exist)
    from .gpu_adapters import GPU_ADAPTERS
    from .tflite_adapter import TFLITE_ADAPTERS
    from .torch_adapters import TORCH_ADAPTERS
    for a in TORCH_ADAPTERS + GPU_ADAPTERS + TFLITE_ADAPTERS:
        ADAPTERS[a.name] = a


_more()
