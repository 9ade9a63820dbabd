"""nnperf's external worker for frameworks with Python APIs (docs/worker-protocol.md).

The parent (`nnperf bench`) starts `python -m nnperf_worker`, writes the spec on stdin
and reads records on stdout. Timing follows the same rules as the C worker
(src/bench/timing_loop.c): warm-up until stable within bounds, then the steady state,
each sample time.monotonic_ns() around exactly one synchronous inference."""
