"""PyTorch rows: torch-eager, torchscript, torch-compile. The model is nnperf's ONNX->torch
conversion of the row's ONNX file (onnx_to_torch.py), or, with the option
model=MODULE:FACTORY (`nnperf bench --torch-model MODULE:FACTORY`), the nn.Module that the
user's FACTORY() returns; it must take the ONNX model's inputs in order.

Debian's python3-torch runs under /usr/bin/python3 (the registry starts these workers
there). OpenBLAS gets one thread: its own threads fight torch's intra-op (OpenMP) threads;
torch.set_num_threads(--threads) sets the row's threads."""
import importlib
import importlib.util
import os
import sys
import time
import warnings

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
        if spec.precision != "fp32":
            raise Unsupported(f"the PyTorch rows run fp32; {spec.precision} is not wired")
        torch.set_num_threads(spec.threads)
        self.torch = torch
        return torch

    def set_inputs(self, feed):
        # a copy (untimed): the protocol's arrays are read-only views torch warns about
        self.args = tuple(self.torch.tensor(feed[n]) for n in self.input_names)

    def run(self):
        with self.torch.inference_mode():
            out = self.fn(*self.args)
        if isinstance(out, self.torch.Tensor):
            out = (out,)
        return [o.numpy() for o in out]

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
        self.fn = m
        return {"parse_s": parse_s, "compile_s": convert_s, "load_s": time.monotonic() - t0,
                "threads": torch.get_num_threads(),
                "note": f"{how}; eager nn.Module under inference_mode; parse = onnx.load, "
                        f"compile = ONNX->torch convert {convert_s:.3f} s"}


class TorchScript(_TorchBase):
    """torch.jit.trace + torch.jit.freeze + torch.jit.optimize_for_inference (folds
    Conv+BatchNorm, prepacks weights for oneDNN/MKLDNN where the build has it)."""
    name = "torchscript"

    def load(self, spec, shapes):
        torch = self._common(spec)
        t0 = time.monotonic()
        m, parse_s, convert_s, how = self._module(spec)
        self._names(spec, m)
        example = tuple(torch.zeros(tuple(shapes[n]), dtype=torch.float32) for n in self.input_names)
        t1 = time.monotonic()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TracerWarning: shapes become constants, as intended (static row)
            with torch.no_grad():
                traced = torch.jit.trace(m, example, check_trace=False)
                frozen = torch.jit.freeze(traced.eval())
                self.fn = torch.jit.optimize_for_inference(frozen)
        t2 = time.monotonic()
        return {"parse_s": -1.0 if parse_s < 0 else parse_s + convert_s, "compile_s": t2 - t1,
                "load_s": t2 - t0, "threads": torch.get_num_threads(),
                "note": f"{how}; parse = onnx.load + convert {convert_s:.3f} s, compile = "
                        f"trace+freeze+optimize_for_inference; the first run also profiles (JIT executor)"}


class TorchCompile(_TorchBase):
    """torch.compile (Inductor), PyTorch 2.0 and later."""
    name = "torch-compile"

    def probe(self):
        torch = _torch()
        if not hasattr(torch, "compile"):
            raise Unavailable(f"torch {torch.__version__} has no torch.compile (PyTorch >= 2.0 needed)")
        return f"torch {torch.__version__} (inductor)"

    def load(self, spec, shapes):
        torch = self._common(spec)
        self.probe()
        t0 = time.monotonic()
        m, parse_s, convert_s, how = self._module(spec)
        self._names(spec, m)
        t1 = time.monotonic()
        self.fn = torch.compile(m, backend="inductor", dynamic=bool(spec.dynamic))
        t2 = time.monotonic()
        return {"parse_s": parse_s, "compile_s": t2 - t1, "load_s": t2 - t0, "threads": torch.get_num_threads(),
                "note": f"{how}; torch.compile is lazy: Inductor compiles during the first run (see first)"}


TORCH_ADAPTERS = (TorchEager, TorchScript, TorchCompile)
