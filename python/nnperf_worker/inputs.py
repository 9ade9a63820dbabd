"""The seeded inputs and dynamic shapes of the methodology, bit-identical to the C code
(nnp_fill_seeded in src/bench/bench_types.c, dyn_draw in src/bench/worker.c)."""
import numpy as np

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def _mix64(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def fill_seeded(shape, dtype, seed):
    """Element i of a float tensor is 2 * ((mix64(seed * GOLDEN + i) >> 11) * 2^-53) - 1;
    integer and bool tensors are zeros."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dtype.kind != "f":
        return np.zeros(shape, dtype)
    base = np.uint64((seed * GOLDEN) & M64)
    with np.errstate(over="ignore"):
        z = _mix64(base + np.arange(n, dtype=np.uint64))
    u = (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return (2.0 * u - 1.0).astype(dtype).reshape(shape)


def draw_shape(seed, iteration, ranges):
    dims = []
    for k, (lo, hi) in enumerate(ranges):
        span = hi - lo + 1
        x = np.uint64((seed * GOLDEN + iteration * 64 + k) & M64)
        with np.errstate(over="ignore"):
            dims.append(lo + int(_mix64(x)) % span)
    return dims
