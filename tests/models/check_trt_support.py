"""Checks of the tensorrt row's host-side code (python/nnperf_worker/trt_support.py and
trt_runtime.py's imports) that run without TensorRT or a GPU: option parsing, the
engine-cache key, the cache file's corruption check, the calibration directory layout.
Nothing here pretends to build or run an engine. Usage: check_trt_support.py REPO_ROOT"""
import atexit
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(sys.argv[1], "python"))
from nnperf_worker import trt_support as ts  # noqa: E402
from nnperf_worker.trt_support import TrtOptionError  # noqa: E402

failed = 0


def check(name, cond, detail=""):
    global failed
    print(("pass " if cond else "FAIL ") + name + ("" if cond else f": {detail}"))
    failed += 0 if cond else 1


def refused(options, precision, words):
    try:
        ts.parse_options(options, precision)
    except TrtOptionError as e:
        msg = str(e)
        return all(w in msg for w in words) and "\n" not in msg, msg
    return False, "accepted"


work = tempfile.mkdtemp()
atexit.register(shutil.rmtree, work, True)

# --- options
o = ts.parse_options({}, "fp32")
check("defaults: io=host, no cache, TensorRT's workspace", o["io"] == "host" and o["cache_dir"] == "" and o["workspace_mb"] == 0, o)
o = ts.parse_options({"cache_dir": work, "workspace_mb": "512", "io": "device"}, "fp16")
check("cache_dir, workspace_mb, io=device accepted", o["cache_dir"] == work and o["workspace_mb"] == 512 and o["io"] == "device", o)
for opts, prec, words, what in (
        ({"turbo": "1"}, "fp32", ["unknown option 'turbo'", "cache_dir"], "unknown option named, known listed"),
        ({"io": "pinned"}, "fp32", ["io=pinned", "host or device"], "bad io"),
        ({"workspace_mb": "-3"}, "fp32", ["workspace_mb=-3"], "negative workspace"),
        ({"workspace_mb": "lots"}, "fp32", ["workspace_mb=lots"], "non-numeric workspace"),
        ({}, "int8", ["int8 needs calibration data", "calib=DIR"], "int8 without calib"),
        ({"calib": os.path.join(work, "nope")}, "int8", ["not a directory"], "int8 calib dir missing"),
        ({"calib_cache": os.path.join(work, "nope.cache")}, "int8", ["no such file"], "int8 calib_cache missing"),
        ({"calib": work}, "fp16", ["int8 only"], "calib on an fp16 row"),
        ({}, "bf16", ["bf16"], "unknown precision")):
    ok, msg = refused(opts, prec, words)
    check(f"refused: {what}", ok, msg)
o = ts.parse_options({"calib": work}, "int8")
check("int8 calib=DIR: calibration cache defaults into DIR", o["calib_cache"] == os.path.join(work, "calibration.cache"), o)

# --- cache key
model = b"\x08\x07fake-onnx-bytes"
base = ts.cache_key(model, {"x": (1, 3, 8, 8)}, "fp16", "10.3.0", "NVIDIA H200")
check("key is sha256 hex", len(base) == 64 and all(c in "0123456789abcdef" for c in base), base)
check("key is deterministic", base == ts.cache_key(model, {"x": [1, 3, 8, 8]}, "fp16", "10.3.0", "NVIDIA H200"))
check("key ignores input order", ts.cache_key(model, {"a": (1,), "b": (2,)}, "fp32", "v", "g")
      == ts.cache_key(model, {"b": (2,), "a": (1,)}, "fp32", "v", "g"))
variants = {
    "model bytes": ts.cache_key(model + b"!", {"x": (1, 3, 8, 8)}, "fp16", "10.3.0", "NVIDIA H200"),
    "shape": ts.cache_key(model, {"x": (2, 3, 8, 8)}, "fp16", "10.3.0", "NVIDIA H200"),
    "input name": ts.cache_key(model, {"y": (1, 3, 8, 8)}, "fp16", "10.3.0", "NVIDIA H200"),
    "precision": ts.cache_key(model, {"x": (1, 3, 8, 8)}, "fp32", "10.3.0", "NVIDIA H200"),
    "TensorRT version": ts.cache_key(model, {"x": (1, 3, 8, 8)}, "fp16", "10.3.1", "NVIDIA H200"),
    "GPU": ts.cache_key(model, {"x": (1, 3, 8, 8)}, "fp16", "10.3.0", "NVIDIA A100"),
    "extra (dynamic ranges / calibration)": ts.cache_key(model, {"x": (1, 3, 8, 8)}, "fp16", "10.3.0", "NVIDIA H200", b"r"),
}
for what, k in variants.items():
    check(f"key changes with {what}", k != base)
check("length-prefixed fields: moving bytes between fields changes the key",
      ts.cache_key(b"ab", {}, "fp32", "1", "g") != ts.cache_key(b"a", {}, "bfp32", "1", "g")
      and ts.cache_key(b"", {}, "fp16", "10", "x") != ts.cache_key(b"", {}, "fp1", "610", "x"))
check("cache path is KEY.engine in the dir", ts.cache_path(work, base) == os.path.join(work, base + ".engine"))

# --- cache file: round trip and corruption
path = ts.cache_path(work, base)
check("no cache file: (None, None)", ts.read_cache(path) == (None, None))
payload = bytes(range(256)) * 40
ts.write_cache(path, payload)
check("round trip gives the payload back", ts.read_cache(path) == (payload, None))
check("no temporary file left", sorted(os.listdir(work)) == [base + ".engine"], os.listdir(work))
raw = open(path, "rb").read()


def damaged(data, words, what):
    with open(path, "wb") as f:
        f.write(data)
    got, why = ts.read_cache(path)
    check(f"corrupt cache detected: {what}", got is None and why and all(w in why for w in words), (got is None, why))


damaged(raw[:-100], ["checksum mismatch"], "truncated payload")
flipped = bytearray(raw)
flipped[-5] ^= 0x40
damaged(bytes(flipped), ["checksum mismatch"], "one bit flipped")
damaged(raw[:30], ["bad header"], "truncated header")
damaged(b"", ["bad header"], "empty file")
damaged(payload, ["bad header"], "a raw TensorRT plan without our header")
damaged(raw[:len(ts.CACHE_MAGIC) + 65], ["empty payload"], "header only")
ts.write_cache(path, payload)
check("rewrite after corruption is read back intact", ts.read_cache(path) == (payload, None))

# --- calibration directory
cal = os.path.join(work, "calib")
os.mkdir(cal)
try:
    ts.calib_batches(cal, {"x": (1, 3, 4, 4)})
    check("empty calib dir refused", False, "accepted")
except TrtOptionError as e:
    check("empty calib dir refused", "no .npy files" in str(e), e)
for i in range(3):
    np.save(os.path.join(cal, f"b{i}.npy"), np.full((1, 3, 4, 4), i, np.float32))
b = ts.calib_batches(cal, {"x": (1, 3, 4, 4)})
check("one input: every .npy is a batch, in name order",
      [os.path.basename(x["x"]) for x in b] == ["b0.npy", "b1.npy", "b2.npy"], b)
np.save(os.path.join(cal, "b3.npy"), np.zeros((2, 3, 4, 4), np.float32))
try:
    ts.calib_batches(cal, {"x": (1, 3, 4, 4)})
    check("wrong-shape calib file refused", False, "accepted")
except TrtOptionError as e:
    check("wrong-shape calib file refused, naming file and shapes", "b3.npy" in str(e) and "[2, 3, 4, 4]" in str(e), e)
cal2 = os.path.join(work, "calib2")
os.mkdir(cal2)
np.save(os.path.join(cal2, "000.ids.npy"), np.zeros((1, 8), np.int64))
np.save(os.path.join(cal2, "000.mask.npy"), np.ones((1, 8), np.int64))
np.save(os.path.join(cal2, "001.ids.npy"), np.zeros((1, 8), np.int64))
try:
    ts.calib_batches(cal2, {"ids": (1, 8), "mask": (1, 8)})
    check("multi-input batch lacking an input refused", False, "accepted")
except TrtOptionError as e:
    check("multi-input batch lacking an input refused", "'001' lacks input mask" in str(e), e)
np.save(os.path.join(cal2, "001.mask.npy"), np.ones((1, 8), np.int64))
b = ts.calib_batches(cal2, {"ids": (1, 8), "mask": (1, 8)})
check("multi-input: PREFIX.INPUT.npy grouped per prefix", len(b) == 2 and set(b[1]) == {"ids", "mask"}, b)
d1 = ts.calib_digest(cal2, "")
np.save(os.path.join(cal2, "001.mask.npy"), np.zeros((1, 8), np.int64))
check("calibration digest follows the data", d1 != ts.calib_digest(cal2, ""))

# --- the GPU module imports without TensorRT and names what is missing
from nnperf_worker import trt_runtime  # noqa: E402
try:
    trt_runtime.open_cuda()
    print("note: a CUDA runtime opened here (GPU machine); skipping the no-GPU message check")
except RuntimeError as e:
    check("no CUDA runtime: one error naming pip install cuda-python", "pip install cuda-python" in str(e), e)

print("failed:", failed)
sys.exit(1 if failed else 0)
