"""Reading the spec and writing records of the worker protocol (version 1)."""
import sys

import numpy as np

PROTO_VERSION = 1

# ONNX TensorProto data types <-> numpy
DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
          9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}
CODES = {np.dtype(v): k for k, v in DTYPES.items()}


class Spec:
    def __init__(self):
        self.backend = ""
        self.model = ""
        self.precision = "fp32"
        self.threads = 1
        self.seed = 1
        self.options = {}
        self.memlimit = 0
        # warmup_min, warmup_max, window, tol, iterations, min_time, max_time, warmup_max_time
        self.loop = [20, 200, 10, 0.02, 200, 2.0, 60.0, 10.0]
        self.inputs = []          # (name, array)
        self.dynamic = None       # (index, [(lo, hi)...], name)
        self.mode = "bench"       # "serve": answer inference requests (docs/worker-protocol.md)
        self.streams = 1          # serve mode: requests run at once
        self.device = "cpu"       # "cuda:N": the torch rows run there
        self.realistic = False    # fresh input per timed iteration (docs/worker-protocol.md)


def _read_exact(stream, n):
    data = stream.read(n)
    if data is None or len(data) != n:
        raise ValueError("spec ended inside a tensor record")
    return data


def parse_dynamic(rest):
    idx, dims, name = rest.split(" ", 2)
    ranges = []
    for d in dims.split("x"):
        if d.startswith("["):
            lo, hi = d[1:-1].split("..")
            ranges.append((int(lo), int(hi)))
        else:
            ranges.append((int(d), int(d)))
    return int(idx), ranges, name


def read_spec(stream):
    spec = Spec()
    first = True
    while True:
        line = stream.readline()
        if not line:
            raise ValueError("worker spec ended before 'run'")
        line = line.decode("utf-8", "replace").rstrip("\n")
        if len(line) > 65536:
            raise ValueError("worker spec line too long")
        key, _, rest = line.partition(" ")
        if first:
            if key != "nnperf-spec":
                raise ValueError("worker spec does not start with 'nnperf-spec'")
            first = False
            continue
        if key == "tensor":
            parts = rest.split(" ")
            tag, index, dtype, rank = parts[0], int(parts[1]), int(parts[2]), int(parts[3])
            dims = [int(x) for x in parts[4:4 + rank]]
            nbytes = int(parts[4 + rank])
            name = " ".join(parts[5 + rank:])
            if tag != "input" or dtype not in DTYPES or rank > 8 or min(dims, default=0) < 0:
                raise ValueError("worker spec: unexpected tensor record")
            dt = np.dtype(DTYPES[dtype])
            if int(np.prod(dims, dtype=np.int64)) * dt.itemsize != nbytes:
                raise ValueError("worker spec: tensor size does not match its shape")
            data = _read_exact(stream, nbytes)
            spec.inputs.append((name, np.frombuffer(data, dtype=dt).reshape(dims).copy()))
        elif key == "backend":
            spec.backend = rest
        elif key == "model":
            spec.model = rest
        elif key == "precision":
            spec.precision = rest
        elif key == "threads":
            spec.threads = int(rest)
        elif key == "seed":
            spec.seed = int(rest)
        elif key == "memlimit":
            spec.memlimit = int(rest)
        elif key == "options":
            for kv in filter(None, rest.split(",")):
                k, _, v = kv.partition("=")
                spec.options[k] = v
        elif key == "loop":
            vals = rest.split()
            spec.loop = [int(vals[0]), int(vals[1]), int(vals[2]), float(vals[3]), int(vals[4]), float(vals[5]),
                         float(vals[6]), float(vals[7]) if len(vals) > 7 else 10.0]
        elif key == "mode":
            spec.mode = rest
        elif key == "device":
            spec.device = rest
        elif key == "realistic":
            spec.realistic = rest.strip() == "1"
        elif key == "streams":
            spec.streams = max(1, int(rest))
        elif key == "dynamic":
            spec.dynamic = parse_dynamic(rest)
        elif key == "run":
            return spec
        # unknown keys are ignored, as in the C worker


class Writer:
    def __init__(self, stream):
        self.out = stream
        self.pending = []

    def line(self, text):
        self.out.write(text.encode("utf-8", "replace") + b"\n")

    def flush(self):
        self.out.flush()

    def tensor(self, tag, index, name, array):
        a = np.ascontiguousarray(array)
        code = CODES.get(a.dtype)
        if code is None:
            raise ValueError(f"output '{name}' has dtype {a.dtype}, which the protocol cannot carry")
        dims = " ".join(str(d) for d in a.shape)
        head = f"tensor {tag} {index} {code} {a.ndim}" + (f" {dims}" if a.ndim else "") + f" {a.nbytes} {name}"
        self.line(head)
        self.out.write(a.tobytes())

    def sample(self, seconds):
        self.pending.append(seconds)
        if len(self.pending) == 64:
            self.flush_samples()

    def flush_samples(self):
        if self.pending:
            self.line("samples " + " ".join(f"{s:.9g}" for s in self.pending))
            self.flush()
            self.pending = []

    def error(self, kind, message):
        self.line(f"error {kind} " + " ".join(str(message).split()))
        self.flush()


def stdio():
    return sys.stdin.buffer, sys.stdout.buffer
