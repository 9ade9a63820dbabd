"""The timing loop, the same rules as src/bench/timing_loop.c."""
import statistics
import time


def now():
    return time.monotonic_ns() * 1e-9


def timing_loop(loop, infer, sink, prepare=None):
    """loop: [warmup_min, warmup_max, window, tol, iterations, min_time, max_time, warmup_max_time].
    Returns (warmup_iterations, warmup_stable, n_samples, time_capped)."""
    wmin, wmax, window, tol, iterations, min_time, max_time, wmax_time = loop
    window = max(2, min(window, 128))
    times = []
    stable = False
    warm = 0
    it = 0
    t_warm0 = now()
    for i in range(wmax):
        if prepare:
            prepare(it)
        it += 1
        t0 = time.monotonic_ns()
        infer()
        t1 = time.monotonic_ns()
        times.append((t1 - t0) * 1e-9)
        warm = i + 1
        if warm >= wmin and warm >= 2 * window:
            older = statistics.median(times[-2 * window:-window])
            newer = statistics.median(times[-window:])
            if newer > 0 and abs(older - newer) / newer < tol:
                stable = True
                break
        if warm >= 2 and t1 * 1e-9 - t_warm0 > wmax_time:
            break
    start = now()
    n = 0
    capped = False
    while True:
        elapsed = now() - start
        if n >= iterations and elapsed >= min_time:
            break
        if elapsed >= max_time and n > 0:
            capped = True
            break
        if prepare:
            prepare(it)
        it += 1
        t0 = time.monotonic_ns()
        infer()
        t1 = time.monotonic_ns()
        n += 1
        sink((t1 - t0) * 1e-9)
    return warm, stable, n, capped
