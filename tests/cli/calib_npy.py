"""Writes four seeded 1x3x32x32 float32 .npy tensors (uniform in [-1, 1)) to DIR: the
calibration set of zoo:tiny for the CLI tests of quantize, bench --int8-model and advise.
Plain struct, no numpy, so it runs under any python3.

usage: calib_npy.py DIR SEED
"""
import random
import struct
import sys

out_dir, seed = sys.argv[1], int(sys.argv[2])
random.seed(seed)
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 32, 32), }"
hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
for k in range(4):
    vals = [random.uniform(-1, 1) for _ in range(3 * 32 * 32)]
    with open(f"{out_dir}/c{k}.npy", "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + struct.pack(f"<{len(vals)}f", *vals))
