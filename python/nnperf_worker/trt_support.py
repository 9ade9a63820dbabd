"""The tensorrt row's host-side pieces that need neither TensorRT nor a GPU: option
parsing, the engine-cache key, the engine-cache file format (with its corruption check)
and the calibration directory's layout. Kept apart from trt_runtime.py so they are
tested on CPU-only machines (tests/models/check_trt_support.py)."""
import hashlib
import os

OPTION_KEYS = ("cache_dir", "calib", "calib_cache", "workspace_mb", "io")

# Engine cache file: MAGIC, sha256 of the payload (64 hex), '\n', payload (the serialized
# engine). TensorRT's deserializer does not promise to reject every damaged plan, so a
# truncated or overwritten file must be caught here, before it is handed over.
CACHE_MAGIC = b"nnperf-trt-engine 1\n"


class TrtOptionError(ValueError):
    """An option of the tensorrt row is wrong (the row is unsupported with this reason)."""


def parse_options(options, precision):
    """Validate --backend-options tensorrt:... (already split into a dict) and fill in
    defaults. Returns a new dict; raises TrtOptionError naming what is wrong."""
    unknown = sorted(k for k in options if k not in OPTION_KEYS)
    if unknown:
        raise TrtOptionError(f"tensorrt: unknown option '{unknown[0]}' (known: {', '.join(OPTION_KEYS)})")
    if precision not in ("fp32", "fp16", "int8"):
        raise TrtOptionError(f"tensorrt: precision {precision} is not one of fp32, fp16, int8")
    o = {"cache_dir": options.get("cache_dir", ""), "calib": options.get("calib", ""),
         "calib_cache": options.get("calib_cache", ""), "io": options.get("io", "host")}
    if o["io"] not in ("host", "device"):
        raise TrtOptionError(f"tensorrt: io={o['io']}: expected host or device")
    ws = options.get("workspace_mb", "")
    if ws:
        if not ws.isdigit() or int(ws) < 1:
            raise TrtOptionError(f"tensorrt: workspace_mb={ws}: expected a positive integer (MiB)")
        o["workspace_mb"] = int(ws)
    else:
        o["workspace_mb"] = 0  # 0: TensorRT's default (the device's memory)
    if precision == "int8":
        if not o["calib"] and not o["calib_cache"]:
            raise TrtOptionError("tensorrt: int8 needs calibration data: calib=DIR of .npy input "
                                 "batches (and/or calib_cache=FILE from an earlier calibration)")
        if o["calib"] and not os.path.isdir(o["calib"]):
            raise TrtOptionError(f"tensorrt: calib={o['calib']}: not a directory")
        if o["calib"] and not o["calib_cache"]:
            o["calib_cache"] = os.path.join(o["calib"], "calibration.cache")
        if not o["calib"] and not os.path.isfile(o["calib_cache"]):
            raise TrtOptionError(f"tensorrt: calib_cache={o['calib_cache']}: no such file and no calib=DIR to make it")
    elif o["calib"] or o["calib_cache"]:
        raise TrtOptionError(f"tensorrt: calib/calib_cache apply to precision int8 only (this row is {precision})")
    return o


def _canon_shapes(shapes):
    return ";".join(f"{n}:{'x'.join(str(int(d)) for d in dims)}" for n, dims in sorted(shapes.items()))


def cache_key(model_bytes, shapes, precision, trt_version, gpu_name, extra=b""):
    """sha256 hex over everything that makes one engine differ from another: the model's
    bytes, the row's input shapes (and dynamic ranges, passed in extra), precision, the
    TensorRT version (plans do not move between versions) and the GPU's name (nor between
    GPU models). Fields are length-prefixed so no two field lists hash alike."""
    h = hashlib.sha256()
    for field in (model_bytes, _canon_shapes(shapes).encode(), precision.encode(),
                  str(trt_version).encode(), str(gpu_name).encode(), extra):
        h.update(len(field).to_bytes(8, "little"))
        h.update(field)
    return h.hexdigest()


def cache_path(cache_dir, key):
    return os.path.join(cache_dir, f"{key}.engine")


def write_cache(path, payload):
    """Atomic write (temporary file + rename): a killed build never leaves half a file
    under the final name."""
    payload = bytes(payload)
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(CACHE_MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_cache(path):
    """Returns (payload, None) for an intact cache file, (None, None) when there is none,
    (None, reason) when it is there but damaged (the caller rebuilds and warns)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, f"cannot read {path}: {e.strerror}"
    head = len(CACHE_MAGIC) + 65
    if not data.startswith(CACHE_MAGIC) or len(data) < head or data[head - 1:head] != b"\n":
        return None, f"{path} is not an nnperf engine cache file (bad header)"
    want = data[len(CACHE_MAGIC):head - 1].decode("ascii", "replace")
    payload = data[head:]
    if not payload:
        return None, f"{path} holds no engine (empty payload)"
    if hashlib.sha256(payload).hexdigest() != want:
        return None, f"{path} is damaged (checksum mismatch: truncated or overwritten)"
    return payload, None


def calib_batches(calib_dir, input_shapes):
    """The calibration batches in calib_dir, as a list of {input name: .npy path}.
    Layout: a model with one input takes every *.npy file as one batch of that input; a
    model with several inputs takes PREFIX.INPUTNAME.npy, one PREFIX per batch, every input
    present. Each array must have the row's shape exactly (dtype is converted at feed
    time). Only .npy headers are read here (mmap), so a large directory is cheap to check."""
    import numpy as np
    files = sorted(f for f in os.listdir(calib_dir) if f.endswith(".npy"))
    if not files:
        raise TrtOptionError(f"tensorrt: calib={calib_dir}: no .npy files")
    names = list(input_shapes)
    batches = []
    if len(names) == 1:
        batches = [{names[0]: os.path.join(calib_dir, f)} for f in files]
    else:
        groups = {}
        for f in files:
            stem = f[:-4]
            for n in names:
                if stem.endswith("." + n):
                    groups.setdefault(stem[:-len(n) - 1], {})[n] = os.path.join(calib_dir, f)
                    break
            else:
                raise TrtOptionError(f"tensorrt: calib file {f}: expected PREFIX.INPUT.npy with INPUT one of {', '.join(names)}")
        for prefix in sorted(groups):
            missing = [n for n in names if n not in groups[prefix]]
            if missing:
                raise TrtOptionError(f"tensorrt: calib batch '{prefix}' lacks input {missing[0]} ({prefix}.{missing[0]}.npy)")
            batches.append(groups[prefix])
    for b in batches:
        for n, p in b.items():
            try:
                shape = tuple(np.load(p, mmap_mode="r", allow_pickle=False).shape)
            except (ValueError, OSError) as e:
                raise TrtOptionError(f"tensorrt: calib file {p}: not a readable .npy array ({e})")
            if shape != tuple(int(d) for d in input_shapes[n]):
                raise TrtOptionError(f"tensorrt: calib file {p}: shape {list(shape)}, the row's input {n} is {list(input_shapes[n])}")
    return batches


def write_plain(path, data):
    """Atomic write of a file that has its own format (TensorRT's calibration cache)."""
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def calib_digest(calib_dir, calib_cache):
    """sha256 hex of the calibration inputs (the .npy files' names and bytes, else the
    calibration cache's bytes): an INT8 engine depends on them, so they join the cache key."""
    h = hashlib.sha256()
    if calib_dir:
        for f in sorted(x for x in os.listdir(calib_dir) if x.endswith(".npy")):
            h.update(f.encode() + b"\0")
            with open(os.path.join(calib_dir, f), "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
    elif calib_cache:
        with open(calib_cache, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()
