"""PyTorch rows: torch-eager, torchscript, torch-compile. The model is nnperf's ONNX->torch
conversion of the row's ONNX file (onnx_to_torch.py), or, with the option
model=MODULE:FACTORY (`nnperf bench --torch-model MODULE:FACTORY`), the nn.Module that the
user's FACTORY() returns; it must take the ONNX model's inputs in order.

PyTorch 2 runs from the machine-wide venv of scripts/install-torch2.sh (the registry
starts these workers with its python; NNPERF_TORCH_PYTHON overrides). OpenBLAS gets one
thread: its own threads fight torch's intra-op (OpenMP) threads; torch.set_num_threads
(--threads) sets the row's threads.

--device cuda[:N] (spec key `device`): the module and the inputs live on the GPU; inputs
are copied there in set_inputs (untimed, or timed with --realistic); every timed run ends
with torch.cuda.synchronize() and the outputs' copy back, so a sample is the inference, not
a kernel launch. fp16 = module.half() and half inputs (outputs sent back as float32)."""
import importlib
import importlib.util
import os
import shutil
import sys
import tempfile
import time
import warnings

from . import footprint
from .adapters import Unavailable, Unsupported


def _torch():
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        import torch
    except ImportError as e:
        raise Unavailable(f"PyTorch is not importable by this interpreter ({e})")
    return torch


class _TorchBase:
    def probe(self):
        torch = _torch()
        return f"torch {torch.__version__}"

    def _module(self, spec):
        """(module, parse_s, convert_s, how)"""
        factory = spec.options.get("model")
        if factory:
            mod, _, fn = factory.rpartition(":")
            if not mod or not fn:
                raise Unsupported(f"model={factory}: expected MODULE:FACTORY")
            t0 = time.monotonic()
            if mod.endswith(".py"):
                if not os.path.isfile(mod):
                    raise Unsupported(f"model={factory}: no file {mod}")
                loader = importlib.util.spec_from_file_location("nnperf_user_model", mod)
                module = importlib.util.module_from_spec(loader)
                loader.loader.exec_module(module)
            else:
                sys.path.insert(0, os.getcwd())  # the user's package, from where nnperf was run
                module = importlib.import_module(mod)
            if not hasattr(module, fn):
                raise Unsupported(f"model={factory}: {mod} has no {fn}")
            m = module.__dict__[fn]()
            if not isinstance(m, self.torch.nn.Module):
                raise Unsupported(f"model={factory}: {fn}() returned {type(m).__name__}, not a torch.nn.Module")
            return m.eval(), -1.0, time.monotonic() - t0, f"model from {factory}()"
        import onnx
        from . import onnx_to_torch
        t0 = time.monotonic()
        proto = onnx.load(spec.model)
        t1 = time.monotonic()
        try:
            m = onnx_to_torch.OnnxModule(proto).eval()
        except NotImplementedError as e:
            raise Unsupported(f"ONNX->torch conversion: {e}")
        return m, t1 - t0, time.monotonic() - t1, "model converted from ONNX by nnperf (onnx_to_torch)"

    def _common(self, spec):
        torch = _torch()
        if spec.precision not in ("fp32", "fp16"):
            raise Unsupported(f"the PyTorch rows run fp32 and fp16; {spec.precision} is not wired")
        torch.set_num_threads(spec.threads)
        self.torch = torch
        self.dtype = torch.float16 if spec.precision == "fp16" else torch.float32
        self.phases = []
        self.device_info = ""
        self.nvml = None
        self.device = torch.device("cpu")
        if spec.device != "cpu":
            self._cuda(spec)
        return torch

    def _cuda(self, spec):
        """The CUDA context as a phase of its own; no GPU here: the row is unavailable."""
        torch = self.torch
        if not spec.device.startswith("cuda"):
            raise Unsupported(f"device {spec.device}: the PyTorch rows run on cpu or cuda[:N]")
        if not torch.cuda.is_available():
            raise Unavailable(f"no CUDA device here for --device {spec.device}: torch.cuda.is_available() is "
                              f"False (torch {torch.__version__}, CUDA {torch.version.cuda}); needs an NVIDIA "
                              f"GPU and its driver")
        idx = int(spec.device.split(":", 1)[1]) if ":" in spec.device else 0
        if idx >= torch.cuda.device_count():
            raise Unavailable(f"device {spec.device}: this machine has {torch.cuda.device_count()} CUDA device(s)")
        self.device = torch.device("cuda", idx)
        t0 = time.monotonic()
        torch.cuda.set_device(idx)
        torch.zeros(1, device=self.device)
        torch.cuda.synchronize(self.device)
        self.phases.append(("cuda_context", time.monotonic() - t0))
        self.nvml = footprint.Nvml(idx)
        self.device_info = self.nvml.info() or f"{torch.cuda.get_device_name(idx)} (CUDA {torch.version.cuda})"
        self.cuda_index = idx

    def _place(self, m):
        """The module on the row's device and precision (timed as load)."""
        t0 = time.monotonic()
        m = m.to(self.device)
        if self.dtype != self.torch.float32:
            m = m.half()
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)
        self.phases.append(("to_device", time.monotonic() - t0))
        return m

    def _report(self, rep):
        rep["phases"] = self.phases
        rep["device"] = self.device_info
        return rep

    def _example(self, shapes):
        return tuple(self.torch.zeros(tuple(shapes[n]), dtype=self.dtype, device=self.device)
                     for n in self.input_names)

    def set_inputs(self, feed):
        # a copy (untimed unless --realistic): the protocol's arrays are read-only views
        self.args = tuple(self.torch.tensor(feed[n]).to(self.device, self.dtype) for n in self.input_names)

    def run(self):
        with self.torch.inference_mode():
            out = self.fn(*self.args)
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)
        if isinstance(out, self.torch.Tensor):
            out = (out,)
        return [o.float().cpu().numpy() for o in out]

    def energy_meter(self):
        if self.nvml is not None:
            return footprint.NvmlEnergy(self.nvml, self.cuda_index)
        return footprint.Rapl()

    def device_memory(self):
        if self.device.type != "cuda":
            return (-1, -1, -1)
        t = self.torch.cuda
        return (t.max_memory_allocated(self.device), t.max_memory_reserved(self.device),
                self.nvml.process_bytes() if self.nvml else -1)

    def _names(self, spec, m):
        import onnx
        if hasattr(m, "input_names"):
            self.input_names, self.output_names = list(m.input_names), list(m.output_names)
            return
        g = onnx.load(spec.model, load_external_data=False).graph
        inits = {i.name for i in g.initializer}
        self.input_names = [v.name for v in g.input if v.name not in inits]
        self.output_names = [v.name for v in g.output]


class TorchEager(_TorchBase):
    name = "torch-eager"

    def load(self, spec, shapes):
        torch = self._common(spec)
        t0 = time.monotonic()
        m, parse_s, convert_s, how = self._module(spec)
        self._names(spec, m)
        self.fn = self._place(m)
        return self._report({"parse_s": parse_s, "compile_s": convert_s, "load_s": time.monotonic() - t0,
                             "threads": torch.get_num_threads(),
                             "note": f"{how}; eager nn.Module under inference_mode on {self.device}; parse = "
                                     f"onnx.load, compile = ONNX->torch convert {convert_s:.3f} s"})


class TorchScript(_TorchBase):
    """torch.jit.trace + torch.jit.freeze + torch.jit.optimize_for_inference (folds
    Conv+BatchNorm, prepacks weights for oneDNN/MKLDNN where the build has it)."""
    name = "torchscript"

    def load(self, spec, shapes):
        torch = self._common(spec)
        t0 = time.monotonic()
        m, parse_s, convert_s, how = self._module(spec)
        self._names(spec, m)
        m = self._place(m)
        example = self._example(shapes)
        t1 = time.monotonic()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TracerWarning: shapes become constants, as intended (static row)
            with torch.no_grad():
                traced = torch.jit.trace(m, example, check_trace=False)
                frozen = torch.jit.freeze(traced.eval())
                self.fn = torch.jit.optimize_for_inference(frozen)
        t2 = time.monotonic()
        return self._report({"parse_s": -1.0 if parse_s < 0 else parse_s + convert_s, "compile_s": t2 - t1,
                             "load_s": t2 - t0, "threads": torch.get_num_threads(),
                             "note": f"{how}; on {self.device}; parse = onnx.load + convert {convert_s:.3f} s, "
                                     f"compile = trace+freeze+optimize_for_inference; the first run also "
                                     f"profiles (JIT executor)"})


class TorchCompile(_TorchBase):
    """torch.compile with Inductor, the way its users run it. Options: mode=default |
    max-autotune-no-cudagraphs (any mode torch.compile takes), cache_dir=DIR (Inductor's
    and Triton's caches: a warm folder makes the compile a cache hit; nnperf bench gives
    each row an empty one of its own, so its first process compiles cold; without it each
    worker compiles into a fresh empty folder, removed at exit),
    fullgraph=1|0 (default 1: a graph break is an error, so it becomes the row's reason).
    The compile (Dynamo + Inductor, the first call, on zeros of the row's shapes) is the
    load's compile phase; `first` is then the first inference of the compiled code."""
    name = "torch-compile"

    def probe(self):
        torch = _torch()
        if not hasattr(torch, "compile"):
            raise Unavailable(f"torch {torch.__version__} has no torch.compile (PyTorch >= 2.0 needed)")
        return f"torch {torch.__version__} (inductor)"

    def prepare_env(self, spec):
        d = spec.options.get("cache_dir")
        warm = bool(d) and os.path.isdir(d) and bool(os.listdir(d))
        self.cache_state = (f"warm cache {d}" if warm else f"cold cache (empty folder {d})") if d \
            else "cold cache (fresh folder)"
        if not d:
            d = tempfile.mkdtemp(prefix="nnperf-inductor-")
            import atexit
            atexit.register(shutil.rmtree, d, True)
        os.makedirs(d, exist_ok=True)
        self.cache_dir = d  # the compiled code lives here: the footprint counts it as model, not runtime
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = d
        os.environ["TRITON_CACHE_DIR"] = os.path.join(d, "triton")

    def load(self, spec, shapes):
        torch = self._common(spec)
        self.probe()
        mode = spec.options.get("mode", "default")
        fullgraph = spec.options.get("fullgraph", "1") != "0"
        t0 = time.monotonic()
        m, parse_s, convert_s, how = self._module(spec)
        self._names(spec, m)
        m = self._place(m)
        example = self._example(shapes)
        t1 = time.monotonic()
        try:
            self.fn = torch.compile(m, backend="inductor", mode=None if mode == "default" else mode,
                                    fullgraph=fullgraph, dynamic=bool(spec.dynamic))
            with torch.inference_mode():
                self.fn(*example)
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
        except Exception as e:  # noqa: BLE001 - Dynamo/Inductor's own error is the row's reason
            what = "graph break" if "graph break" in str(e).lower() or type(e).__name__ == "Unsupported" \
                else "compile failed"
            raise Unsupported(f"torch.compile ({what}, mode={mode}): {type(e).__name__}: "
                              f"{' '.join(str(e).split())[:300]}")
        t2 = time.monotonic()
        return self._report({"parse_s": parse_s, "compile_s": t2 - t1, "load_s": t2 - t0,
                             "threads": torch.get_num_threads(),
                             "note": f"{how}; on {self.device}; Inductor mode={mode}, fullgraph={int(fullgraph)}, "
                                     f"{getattr(self, 'cache_state', '')}; compile = Dynamo+Inductor "
                                     f"(the first call) {t2 - t1:.3f} s"})


TORCH_ADAPTERS = (TorchEager, TorchScript, TorchCompile)
