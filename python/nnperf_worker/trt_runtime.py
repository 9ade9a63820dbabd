"""The tensorrt row's GPU side: engine build (ONNX parser + builder) or deserialisation
from the engine cache, device buffers and one synchronous inference per run().

NEVER RUN ON A GPU by its author (the project's machines have none); written from
TensorRT's documented Python API (10.x tensor-name API: num_io_tensors, get_tensor_name,
set_input_shape, set_tensor_address, execute_async_v3; 8.5/8.6 have the same calls, only
network creation differs). Device memory and the stream come from cuda-python when it is
installed, else from torch.cuda (whichever the machine has; probed in that order).

What run() times (docs/backends.md): io=host (default) copies the inputs host->device,
executes and copies the outputs back, then synchronises the stream, so the figure is
comparable with the ort-cuda/ort-trt rows, whose run() takes and returns host arrays.
io=device keeps the inputs on the device (copied once, at set_inputs, untimed) and times
execute + stream synchronise only; outputs are copied back lazily, when the harness reads
them after the timing loop (trtexec's "GPU Compute Time" counterpart)."""
import os
import sys
import time

import numpy as np

from . import trt_support


class _CudaPython:
    """Device memory and a stream through cuda-python's runtime bindings."""

    def __init__(self):
        try:
            from cuda.bindings import runtime as cudart  # cuda-python >= 12.6
        except ImportError:
            from cuda import cudart  # older cuda-python
        self.rt = cudart
        self.stream = self._ok(cudart.cudaStreamCreate())
        self.name = "cuda-python"

    def _ok(self, res):
        err = res[0]
        if int(err) != 0:
            _, s = self.rt.cudaGetErrorString(err)
            raise RuntimeError(f"CUDA error {int(err)}: {s.decode() if isinstance(s, bytes) else s}")
        return res[1] if len(res) == 2 else res[1:] if len(res) > 2 else None

    def device_name(self):
        prop = self._ok(self.rt.cudaGetDeviceProperties(0))
        n = prop.name
        return (n.decode() if isinstance(n, bytes) else str(n)).rstrip("\x00")

    def alloc(self, nbytes):
        return int(self._ok(self.rt.cudaMalloc(max(int(nbytes), 1))))

    def free(self, ptr):
        self.rt.cudaFree(ptr)

    def h2d(self, ptr, arr):
        self._ok(self.rt.cudaMemcpyAsync(ptr, arr.ctypes.data, arr.nbytes,
                                         self.rt.cudaMemcpyKind.cudaMemcpyHostToDevice, self.stream))

    def d2h(self, arr, ptr):
        self._ok(self.rt.cudaMemcpyAsync(arr.ctypes.data, ptr, arr.nbytes,
                                         self.rt.cudaMemcpyKind.cudaMemcpyDeviceToHost, self.stream))

    def sync(self):
        self._ok(self.rt.cudaStreamSynchronize(self.stream))

    def handle(self):
        return int(self.stream)

    def used_bytes(self):
        free, total = self._ok(self.rt.cudaMemGetInfo())
        return int(total) - int(free)


class _TorchCuda:
    """The same through torch.cuda, for machines that have torch but not cuda-python."""

    def __init__(self):
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
        self.torch = torch
        self.stream = torch.cuda.Stream()
        self.bufs = {}
        self.name = f"torch.cuda {torch.__version__}"

    def device_name(self):
        return self.torch.cuda.get_device_name(0)

    def alloc(self, nbytes):
        t = self.torch.empty(max(int(nbytes), 1), dtype=self.torch.uint8, device="cuda")
        self.bufs[t.data_ptr()] = t
        return t.data_ptr()

    def free(self, ptr):
        self.bufs.pop(ptr, None)

    def _view(self, ptr, nbytes):
        return self.bufs[ptr][:nbytes]

    def h2d(self, ptr, arr):
        src = self.torch.from_numpy(np.ascontiguousarray(arr).reshape(-1).view(np.uint8))
        with self.torch.cuda.stream(self.stream):
            self._view(ptr, arr.nbytes).copy_(src, non_blocking=True)

    def d2h(self, arr, ptr):
        dst = self.torch.from_numpy(arr.reshape(-1).view(np.uint8))
        with self.torch.cuda.stream(self.stream):
            dst.copy_(self._view(ptr, arr.nbytes), non_blocking=False)

    def sync(self):
        self.stream.synchronize()

    def handle(self):
        return self.stream.cuda_stream

    def used_bytes(self):
        free, total = self.torch.cuda.mem_get_info()
        return int(total) - int(free)


def open_cuda():
    """cuda-python first, torch.cuda second; the error names both when neither works."""
    errs = []
    for cls in (_CudaPython, _TorchCuda):
        try:
            return cls()
        except Exception as e:  # ImportError, or a CUDA error from a broken driver
            errs.append(f"{cls.__name__.strip('_')}: {type(e).__name__}: {e}")
    raise RuntimeError("no CUDA runtime for device buffers (pip install cuda-python): " + "; ".join(errs))


def _make_calibrator(trt, cuda, batches, dtypes, cache_file):
    """IInt8EntropyCalibrator2 fed from .npy batches (trt_support.calib_batches). TensorRT
    calls get_batch until it returns None; the cache file lets a later build skip the
    calibration (TensorRT reads it through read_calibration_cache)."""

    class Calibrator(trt.IInt8EntropyCalibrator2):
        def __init__(self):
            trt.IInt8EntropyCalibrator2.__init__(self)
            self.i = 0
            self.ptrs = {}

        def get_batch_size(self):
            # explicit-batch networks take the batch from each .npy's shape; TensorRT's
            # documentation says the value is then ignored, 1 is the conventional answer
            return 1

        def get_batch(self, names):
            if self.i >= len(batches):
                return None
            b = batches[self.i]
            self.i += 1
            out = []
            for n in names:
                arr = np.ascontiguousarray(np.load(b[n], allow_pickle=False), dtype=dtypes[n])
                if n not in self.ptrs:
                    self.ptrs[n] = cuda.alloc(arr.nbytes)
                cuda.h2d(self.ptrs[n], arr)
                out.append(self.ptrs[n])
            cuda.sync()
            return out

        def read_calibration_cache(self):
            if cache_file and os.path.isfile(cache_file):
                with open(cache_file, "rb") as f:
                    return f.read()
            return None

        def write_calibration_cache(self, cache):
            if cache_file:
                trt_support.write_plain(cache_file, cache)  # a buffer, as TensorRT's samples write it

        def release(self):
            for p in self.ptrs.values():
                cuda.free(p)
            self.ptrs = {}

    return Calibrator()


def _parse(trt, logger, model_path):
    builder = trt.Builder(logger)
    major = int(trt.__version__.split(".")[0])
    # 10.x: networks are always explicit-batch and the flag is deprecated; 8.x needs it
    flags = 0 if major >= 10 else 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
    network = builder.create_network(flags)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(model_path):  # from file: external-data tensors resolve
        errs = []
        for i in range(parser.num_errors):
            e = parser.get_error(i)
            where = e.node_name() if hasattr(e, "node_name") else f"node {e.node()}"
            op = e.node_operator() if hasattr(e, "node_operator") else ""
            errs.append(f"{where}{' (' + op + ')' if op else ''}: {e.desc()}")
        raise RuntimeError("TensorRT's ONNX parser rejected the model: " + ("; ".join(errs) or "no error recorded"))
    return builder, network, parser


def _build(trt, builder, network, spec, opts, shapes, cuda):
    config = builder.create_builder_config()
    if opts["workspace_mb"]:
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, opts["workspace_mb"] << 20)
    profile = builder.create_optimization_profile()
    dyn = spec.dynamic
    inputs = {}
    n_dynamic = 0
    for i in range(network.num_inputs):
        t = network.get_input(i)
        if t.name not in shapes:
            raise RuntimeError(f"the row has no shape for the model's input {t.name}")
        row = tuple(int(d) for d in shapes[t.name])
        inputs[t.name] = row
        if all(int(d) >= 0 for d in t.shape):  # static: no profile entry, the model's shape
            if dyn and dyn[2] == t.name:
                raise RuntimeError(f"input {t.name} is static {list(t.shape)} in the model; a dynamic-shape row needs dynamic dimensions")
            if tuple(int(d) for d in t.shape) != row:
                raise RuntimeError(f"input {t.name} is fixed at {list(t.shape)} in the model; the row asks for {list(row)}")
            continue
        n_dynamic += 1
        if dyn and dyn[2] == t.name:
            lo = tuple(int(a) for a, _ in dyn[1])
            hi = tuple(int(b) for _, b in dyn[1])
            profile.set_shape(t.name, lo, row, hi)
        else:
            profile.set_shape(t.name, row, row, row)  # static rows: min = opt = max
    if n_dynamic:
        config.add_optimization_profile(profile)
    calib = None
    if spec.precision == "fp16":
        config.set_flag(trt.BuilderFlag.FP16)
    elif spec.precision == "int8":
        config.set_flag(trt.BuilderFlag.INT8)
        batches = trt_support.calib_batches(opts["calib"], inputs) if opts["calib"] else []
        dtypes = {n: trt.nptype(network.get_input(i).dtype) for i, n in enumerate(inputs)}
        calib = _make_calibrator(trt, cuda, batches, dtypes, opts["calib_cache"])
        config.int8_calibrator = calib
        if n_dynamic:  # a static network calibrates at its one shape
            config.set_calibration_profile(profile)
    try:
        plan = builder.build_serialized_network(network, config)
    finally:
        if calib:
            calib.release()
    if plan is None:
        raise RuntimeError("TensorRT's builder failed (build_serialized_network returned None; see the log above)")
    return bytes(plan)


class _LazyOutputs:
    """io=device: the outputs stay on the device until the harness reads them (untimed)."""

    def __init__(self, runner):
        self.r = runner

    def _host(self):
        return self.r.fetch_outputs()

    def __iter__(self):
        return iter(self._host())

    def __len__(self):
        return len(self.r.output_names)

    def __getitem__(self, k):
        return self._host()[k]


class TrtRunner:
    def __init__(self):
        self.cuda = None
        self.ptrs = {}
        self.cap = {}

    def load(self, spec, shapes):
        import tensorrt as trt
        opts = trt_support.parse_options(spec.options, spec.precision)
        self.opts = opts
        logger = trt.Logger(trt.Logger.WARNING)
        t0 = time.monotonic()
        self.cuda = open_cuda()
        gpu = self.cuda.device_name()
        note = [f"TensorRT {trt.__version__}, {gpu}, buffers via {self.cuda.name}, io={opts['io']}, {spec.precision}"]
        plan = None
        key = path = ""
        if opts["cache_dir"]:
            os.makedirs(opts["cache_dir"], exist_ok=True)
            with open(spec.model, "rb") as f:
                model_bytes = f.read()
            extra = repr(spec.dynamic).encode()
            if spec.precision == "int8":  # the calibration data shapes the engine too
                extra += trt_support.calib_digest(opts["calib"], opts["calib_cache"]).encode()
            key = trt_support.cache_key(model_bytes, shapes, spec.precision, trt.__version__, gpu, extra)
            path = trt_support.cache_path(opts["cache_dir"], key)
            plan, bad = trt_support.read_cache(path)
            if bad:
                self._warn(note, f"engine cache: {bad}; rebuilding")
        runtime = trt.Runtime(logger)
        parse_s = build_s = -1.0
        engine = None
        if plan is not None:
            t1 = time.monotonic()
            engine = runtime.deserialize_cuda_engine(plan)
            if engine is None:
                self._warn(note, f"engine cache: TensorRT could not deserialize {path}; rebuilding")
            else:
                note.append(f"engine from cache {key[:12]}")
                build_s = time.monotonic() - t1
        if engine is None:
            t1 = time.monotonic()
            # the parser owns the weights the network points at: keep it alive through the build
            builder, network, _parser = _parse(trt, logger, spec.model)
            t2 = time.monotonic()
            plan = _build(trt, builder, network, spec, opts, shapes, self.cuda)
            t3 = time.monotonic()
            engine = runtime.deserialize_cuda_engine(plan)
            if engine is None:
                raise RuntimeError("TensorRT could not deserialize the engine it just built")
            parse_s, build_s = t2 - t1, time.monotonic() - t2
            note.append(f"engine built in {t3 - t2:.1f} s")
            if path:
                trt_support.write_cache(path, plan)
        self.engine = engine
        self.context = engine.create_execution_context()
        if self.context is None:
            raise RuntimeError("TensorRT could not create an execution context (device memory?)")
        names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
        self.input_names = [n for n in names if engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT]
        self.output_names = [n for n in names if engine.get_tensor_mode(n) == trt.TensorIOMode.OUTPUT]
        self.dtypes = {n: np.dtype(trt.nptype(engine.get_tensor_dtype(n))) for n in names}
        self.host_out = {}
        note.append(f"device memory in use after load {self.cuda.used_bytes() / 2**20:.0f} MiB (whole device)")
        return {"parse_s": parse_s, "compile_s": build_s, "load_s": time.monotonic() - t0,
                "threads": spec.threads, "note": "; ".join(note)}

    def _warn(self, note, msg):
        print(f"nnperf: warning: tensorrt: {msg}", file=sys.stderr)
        note.append("warning: " + msg)

    def _buffer(self, name, nbytes):
        if self.cap.get(name, -1) < nbytes:  # grow only: dynamic rows reuse the largest
            if name in self.ptrs:
                self.cuda.free(self.ptrs[name])
            self.ptrs[name] = self.cuda.alloc(nbytes)
            self.cap[name] = nbytes
            self.context.set_tensor_address(name, self.ptrs[name])
        return self.ptrs[name]

    def set_inputs(self, feed):
        """Untimed: shapes, buffers and (io=device) the input copies."""
        self.feed = {}
        for n in self.input_names:
            if n not in feed:
                raise RuntimeError(f"no input named {n} in the row's inputs")
            arr = np.ascontiguousarray(feed[n], dtype=self.dtypes[n])
            self.feed[n] = arr
            if not self.context.set_input_shape(n, arr.shape):
                raise RuntimeError(f"TensorRT refused shape {list(arr.shape)} for input {n} (outside the profile?)")
            self._buffer(n, arr.nbytes)
        for n in self.output_names:
            shape = tuple(self.context.get_tensor_shape(n))
            if any(d < 0 for d in shape):
                raise RuntimeError(f"output {n} has unresolved shape {list(shape)} (data-dependent shapes are not supported)")
            self.host_out[n] = np.empty(shape, dtype=self.dtypes[n])
            self._buffer(n, self.host_out[n].nbytes)
        if self.opts["io"] == "device":
            for n, arr in self.feed.items():
                self.cuda.h2d(self.ptrs[n], arr)
            self.cuda.sync()

    def run(self):
        if self.opts["io"] == "host":
            for n, arr in self.feed.items():
                self.cuda.h2d(self.ptrs[n], arr)
        if not self.context.execute_async_v3(self.cuda.handle()):
            raise RuntimeError("TensorRT execute_async_v3 failed (see the log above)")
        if self.opts["io"] == "device":
            self.cuda.sync()  # the device has finished before the timer stops
            return _LazyOutputs(self)
        return self.fetch_outputs()

    def fetch_outputs(self):
        for n in self.output_names:
            self.cuda.d2h(self.host_out[n], self.ptrs[n])
        self.cuda.sync()  # also the end of the timed inference for io=host
        return [self.host_out[n].copy() for n in self.output_names]
