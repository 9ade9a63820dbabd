"""python -m nnperf_worker            run one benchmark row (spec on stdin, records on stdout)
python -m nnperf_worker --probe NAME  print the framework version, or 'unavailable: why' and exit 1"""
import os
import resource
import sys
import time

T_START = time.monotonic_ns() * 1e-9

import numpy as np  # noqa: E402

from . import adapters, footprint, inputs, protocol, timing  # noqa: E402


def vmhwm():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return -1


def probe(name):
    cls = adapters.ADAPTERS.get(name)
    if not cls:
        print(f"unavailable: no Python adapter named '{name}'")
        return 1
    try:
        print(cls().probe())
        return 0
    except adapters.Unavailable as e:
        print(f"unavailable: {e}")
        return 1


def serve_streams(stdin, w, runners):
    """Serve mode with N streams: one thread per stream, each running requests through its
    own runner (a shared session or its own infer request, from the adapter); answers are
    written under a lock as each request finishes, so they may come out of order. A failed
    inference is reported at once and ends the worker: the parent must not wait for it."""
    import queue
    import threading
    q = queue.Queue()
    lock = threading.Lock()

    def loop(run):
        while True:
            item = q.get()
            if item is None:
                return
            qid, k = item
            try:
                t0 = time.monotonic_ns()
                for _ in range(k):
                    run()
                t1 = time.monotonic_ns()
            except BaseException as e:  # noqa: BLE001 - reported, then the process ends
                with lock:
                    w.error("nomem" if isinstance(e, MemoryError) else "failed", f"{type(e).__name__}: {e}")
                    w.flush()
                os._exit(1)
            with lock:
                w.line(f"completed {qid} {t0 * 1e-9:.9f} {t1 * 1e-9:.9f}")
                w.flush()

    threads = [threading.Thread(target=loop, args=(r,), daemon=True) for r in runners]
    for t in threads:
        t.start()
    with lock:
        w.line(f"serving {len(runners)}")
        w.flush()
    while True:
        line = stdin.readline()
        if not line or line.startswith(b"quit"):
            break
        parts = line.split()
        if len(parts) != 3 or parts[0] != b"infer" or int(parts[2]) < 1:
            raise ValueError(f"malformed serve request {line[:64]!r}")
        q.put((int(parts[1]), int(parts[2])))
    for _ in threads:
        q.put(None)
    for t in threads:
        t.join()


def serve(stdin, w, a, prepare):
    """Serve mode: 'infer ID K' runs K inferences back to back and answers
    'completed ID T_START T_END' (monotonic seconds); 'quit' or end of input ends it."""
    w.line("serving")
    w.flush()
    while True:
        line = stdin.readline()
        if not line or line.startswith(b"quit"):
            return
        parts = line.split()
        if len(parts) != 3 or parts[0] != b"infer" or int(parts[2]) < 1:
            raise ValueError(f"malformed serve request {line[:64]!r}")
        qid, k = int(parts[1]), int(parts[2])
        t0 = time.monotonic_ns()
        for _ in range(k):
            if prepare:
                prepare(0)
            a.run()
        t1 = time.monotonic_ns()
        w.line(f"completed {qid} {t0 * 1e-9:.9f} {t1 * 1e-9:.9f}")
        w.flush()


def realistic_infer(spec, a, feed, last):
    """--realistic: per iteration, inside the timed region, a fresh input is written into a
    host buffer (alternately a second seeded input and the spec's) and handed to the
    framework (set_inputs: for a device row the host->device copy), then one inference."""
    host = {n: np.array(v) for n, v in feed.items()}
    other = {n: inputs.fill_seeded(v.shape, v.dtype, spec.seed + 7919 + k) for k, (n, v) in enumerate(spec.inputs)}
    turn = [0]

    def infer():
        src = other if turn[0] & 1 else feed
        turn[0] += 1
        for n, buf in host.items():
            np.copyto(buf, src[n])
        a.set_inputs(host)
        last[0] = a.run()
    return infer


def energy_meter(a):
    meter = getattr(a, "energy_meter", None)
    return meter() if meter else footprint.Rapl()


def report_tail(w, spec, a, taken, meter):
    """footprint, energy and device memory records (docs/worker-protocol.md)."""
    # the model as this backend loads it: an adapter that runs another file (tflite: the
    # converted .tflite) names it; neither file counts as runtime (an mmapped model would)
    model = getattr(a, "model_path", None) or spec.model
    # a cache folder holds what was compiled from the model (plan, kernels), not runtime
    dirs = [d for d in (spec.options.get("cache_dir"), getattr(a, "cache_dir", None)) if d]
    rb, rf = footprint.runtime_bytes(spec.model, model, exclude_dirs=dirs)
    w.line(f"footprint {rb} {rf} {footprint.file_bytes(model)}")
    j = meter[0].joules() if meter[0] is not None and taken[0] > 1 else -1.0
    if j >= 0:
        w.line(f"energy {j:.9g} {taken[0] - 1} {meter[0].source}")
    else:
        w.line("energy -1 0 " + (meter[0].source if meter[0] is not None else "not measured (fewer than 2 samples)"))
    mem = getattr(a, "device_memory", None)
    if mem:
        w.line("device_memory %d %d %d" % mem())


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--probe":
        return probe(sys.argv[2])
    stdin, stdout = protocol.stdio()
    w = protocol.Writer(stdout)
    w.line(f"nnperf-worker {protocol.PROTO_VERSION}")
    try:
        spec = protocol.read_spec(stdin)
    except (ValueError, IndexError) as e:
        w.error("failed", f"bad worker spec: {e}")
        return 2
    if spec.memlimit > 0:
        resource.setrlimit(resource.RLIMIT_AS, (spec.memlimit, spec.memlimit))
    w.line(f"ready {T_START:.9f} {timing.now():.9f}")
    cls = adapters.ADAPTERS.get(spec.backend)
    if not cls:
        w.error("unsupported", f"no Python adapter named '{spec.backend}'")
        return 1
    a = cls()
    try:
        if hasattr(a, "prepare_env"):  # before the framework is imported (e.g. Inductor's cache folder)
            a.prepare_env(spec)
        w.line(f"version {a.probe()}")
        shapes = {name: arr.shape for name, arr in spec.inputs}
        if spec.dynamic:
            idx, ranges, name = spec.dynamic
            shapes[name] = tuple(inputs.draw_shape(spec.seed, 0, ranges))
        rep = a.load(spec, shapes)
        w.line(f"load {rep['parse_s']:.9f} {rep['compile_s']:.9f} {rep['load_s']:.9f} {rep['threads']}")
        if rep.get("note"):
            w.line(f"note {rep['note']}")
        if rep.get("device"):
            w.line(f"device {rep['device']}")
        for pname, psec in rep.get("phases", ()):
            w.line(f"phase {pname} {psec:.9f}")
        feed = dict(spec.inputs)
        prepare = None
        if spec.dynamic:
            idx, ranges, dyn_name = spec.dynamic
            counter = [0]

            def prepare(_it):  # untimed: draw the shape, make its values (float32 image input)
                dims = inputs.draw_shape(spec.seed, counter[0], ranges)
                counter[0] += 1
                feed[dyn_name] = inputs.fill_seeded(dims, "float32", spec.seed + idx)
                a.set_inputs(feed)

            prepare(0)
        a.set_inputs(feed)
        w.flush()
        t0 = time.monotonic_ns()
        out = a.run()
        t1 = time.monotonic_ns()
        w.line(f"first {(t1 - t0) * 1e-9:.9f} {t1 * 1e-9:.9f}")
        for k, (oname, arr) in enumerate(zip(a.output_names, out)):
            w.tensor("first", k, oname, arr)
        w.flush()
        if spec.mode == "serve":
            # streams need an adapter that can run requests concurrently (stream_runners);
            # a dynamic-shape feed is redrawn per inference and cannot be shared
            if spec.streams > 1 and hasattr(a, "stream_runners") and not spec.dynamic:
                serve_streams(stdin, w, a.stream_runners(spec.streams))
            else:
                serve(stdin, w, a, prepare)
            w.line(f"memory {vmhwm()}")
            w.line("done")
            w.flush()
            return 0
        last = [None]

        def infer():
            last[0] = a.run()

        realistic = spec.realistic and not spec.dynamic
        if realistic:
            infer = realistic_infer(spec, a, feed, last)
        taken, meter = [0], [None]

        def sink(seconds):  # the energy window: from the first steady-state sample to the last
            if taken[0] == 0:
                meter[0] = energy_meter(a)
            taken[0] += 1
            w.sample(seconds)

        warm, stable, n, capped = timing.timing_loop(spec.loop, infer, sink, prepare)
        w.flush_samples()
        if realistic:  # the last outputs answer the spec's inputs (accuracy), untimed
            a.set_inputs(feed)
            last[0] = a.run()
        w.line(f"warmup {warm} {1 if stable else 0}")
        for k, (oname, arr) in enumerate(zip(a.output_names, last[0] if last[0] is not None else out)):
            w.tensor("last", k, oname, arr)
        w.line(f"summary {n} {1 if capped else 0}")
        report_tail(w, spec, a, taken, meter)
        w.line(f"memory {vmhwm()}")
        w.line("done")
        w.flush()
        return 0
    except adapters.Unavailable as e:
        w.error("unavailable", e)
    except adapters.Unsupported as e:
        w.error("unsupported", e)
    except MemoryError as e:
        w.error("nomem", f"out of memory: {e}")
    except Exception as e:  # the framework's own error, reported as the row's reason
        w.error("failed", f"{type(e).__name__}: {e}")
    return 1


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
