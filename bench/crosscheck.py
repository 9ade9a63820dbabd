#!/usr/bin/env python3
"""Cross-check nnperf's harness against each framework's own way of timing itself, in one
run, on the same model file, threads and batch:

  openvino: nnperf's openvino row P50  vs  OpenVINO's benchmark_app median
            (-hint none -nstreams 1 -nireq 1 -nthreads T -api sync -infer_precision f32
            -shape [..]: what the latency hint sets, spelled out, because benchmark_app
            refuses -nthreads together with a hint)
  ort-cpu:  nnperf's ort-cpu row P50   vs  a minimal Python loop over InferenceSession.run
            (same session options as the ort-cpu adapter; time.perf_counter per call)
  tflite:   nnperf's tflite row P50    vs  LiteRT's own ai_edge_litert.tools.benchmark_litert_model
            median, on the same .tflite file (written once by `nnperf convert --to tflite`,
            given to the row as tflite:model=FILE) and --num_threads T
  torch-compile: nnperf's torch-compile row P50 vs a bare torch.compile loop in the PyTorch 2
            venv (the same ONNX->torch module, torch.set_num_threads, Inductor default mode,
            inference_mode, perf_counter per call); both share one Inductor cache folder, so
            only the first compile is cold

Prints each pair, the median of the paired ratios (nnperf / framework) over --repeats
interleaved pairs, and whether it is within 10%. A ratio
far from 1 means the harness adds or hides time: that would be a bug in nnperf (or a
noisy machine: the load average is printed). Exit 1 when a pair cannot be measured;
being outside 10% is reported, not an error (the machine may be busy).

usage: .venv/bin/python bench/crosscheck.py [--nnperf build/nnperf] [--model zoo:mobilenet_v2|FILE.onnx]
                                            [--threads 2] [--iterations 200] [--repeats 3]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def load_avg():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def nnperf_p50(nnperf, model, backend, threads, iterations, work, options=None):
    out = os.path.join(work, f"{backend}.json")
    cmd = [nnperf, "bench", model, "--backends", backend, "--threads", str(threads), "--batch", "1",
           "--iterations", str(iterations), "--min-time", "0", "--json", out, "--no-history"]
    if options:
        cmd += ["--backend-options", f"{backend}:{options}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr.strip()[-300:]}")
    row = json.load(open(out))["rows"][0]
    if row["status"] != "ok":
        raise RuntimeError(f"nnperf {backend} row {row['status']}: {row['reason']}")
    return row["stats"]["p50"] * 1e3, len(row["samples_s"])



def benchmark_app_median(model, threads, shape, iterations):
    exe = os.path.join(os.path.dirname(sys.executable), "benchmark_app")
    if not os.path.exists(exe):
        raise RuntimeError(f"no benchmark_app next to {sys.executable} (it ships with PyPI openvino)")
    cmd = [exe, "-m", model, "-d", "CPU", "-hint", "none", "-nstreams", "1", "-nireq", "1",
           "-nthreads", str(threads), "-api", "sync",
           "-infer_precision", "f32", "-shape", "[" + ",".join(map(str, shape)) + "]", "-niter", str(iterations)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"Median:\s+([0-9.]+)\s*ms", r.stdout)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"benchmark_app failed: {(r.stdout + r.stderr).strip()[-300:]}")
    return float(m.group(1)), iterations


def litert_benchmark_median(tflite, threads, iterations, work):
    out = os.path.join(work, "litert.json")
    cmd = [sys.executable, "-m", "ai_edge_litert.tools.benchmark_litert_model", "--model", tflite,
           "--num_threads", str(threads), "--num_runs", str(iterations), "--warmup_runs", "20",
           "--result_json", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"benchmark_litert_model failed: {(r.stdout + r.stderr).strip()[-300:]}")
    lat = json.load(open(out))["latency"]
    return lat["median_ms"], lat["num_runs"]


def tflite_file(nnperf, model, work):
    path = os.path.join(work, "model.tflite")
    r = subprocess.run([nnperf, "convert", model, "--to", "tflite", "-o", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"nnperf convert failed: {r.stderr.strip()[-300:]}")
    return path


def ort_loop_median(model, threads, iterations):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model, sess_options=so, providers=["CPUExecutionProvider"])
    feed = {}
    rng = np.random.default_rng(1)
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feed[i.name] = rng.uniform(-1, 1, shape).astype(np.float32)
    for _ in range(20):
        sess.run(None, feed)
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        sess.run(None, feed)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3, iterations


TORCH_LOOP = r"""
import os, statistics, sys, time
import numpy as np, onnx, torch
from nnperf_worker.onnx_to_torch import OnnxModule
model, threads, iterations = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
m = OnnxModule(onnx.load(model)).eval()
shape = [d.dim_value or 1 for d in onnx.load(model, load_external_data=False).graph.input[0].type.tensor_type.shape.dim]
x = torch.from_numpy(np.random.default_rng(1).uniform(-1, 1, shape).astype(np.float32))
f = torch.compile(m, backend="inductor", fullgraph=True)
with torch.inference_mode():
    for _ in range(20):
        f(x)
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        f(x)
        times.append(time.perf_counter() - t0)
print(statistics.median(times) * 1e3)
"""


def torch_compile_loop_median(model, threads, iterations, cache, here):
    cachedir = os.environ.get("NNP_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "nnperf"))
    py = os.environ.get("NNPERF_TORCH_PYTHON", os.path.join(cachedir, "venv-torch2", "bin", "python"))
    env = dict(os.environ, PYTHONPATH=os.path.join(here, "python"), TORCHINDUCTOR_CACHE_DIR=cache,
               TRITON_CACHE_DIR=os.path.join(cache, "triton"), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    r = subprocess.run([py, "-c", TORCH_LOOP, model, str(threads), str(iterations)], capture_output=True,
                       text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"bare torch.compile loop failed: {r.stderr.strip()[-300:]}")
    return float(r.stdout.split()[-1]), iterations


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--nnperf", default=os.path.join(here, "build", "nnperf"))
    ap.add_argument("--model", default="zoo:mobilenet_v2")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3,
                    help="alternate nnperf and the framework's own timing this many times; the "
                         "verdict uses the median of the paired ratios (each pair ran back to back, "
                         "so a burst of background load hits both sides of a pair alike)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        model = a.model
        if model.startswith("zoo:"):
            model = os.path.join(work, model[4:] + ".onnx")
            subprocess.run([a.nnperf, "zoo", a.model[4:], "-o", model, "--batch", "1"], check=True,
                           capture_output=True)
        import openvino as ov
        shape = [d.get_length() if d.is_static else 1 for d in ov.Core().read_model(model).inputs[0].get_partial_shape()]
        print(f"crosscheck: {a.model}, input {shape}, {a.threads} threads, {a.iterations} iterations, "
              f"load average {load_avg():.2f} at start")
        pairs = [("openvino", "benchmark_app (1 stream, sync)",
                  lambda: benchmark_app_median(model, a.threads, shape, a.iterations)),
                 ("ort-cpu", "Python loop over InferenceSession.run",
                  lambda: ort_loop_median(model, a.threads, a.iterations)),
                 ("tflite", "benchmark_litert_model (LiteRT's own)",
                  lambda: litert_benchmark_median(tfl, a.threads, a.iterations, work)),
                 ("torch-compile", "bare torch.compile loop",
                  lambda: torch_compile_loop_median(model, a.threads, a.iterations, inductor, here))]
        try:
            tfl = tflite_file(a.nnperf, model, work)
        except RuntimeError as e:
            tfl = None
            print(f"  tflite    cannot convert: {e}")
        inductor = os.path.join(work, "inductor")  # shared: only the first compile is cold
        options = {"torch-compile": f"cache_dir={inductor}", "tflite": f"model={tfl}"}
        failed = 0
        for backend, what, own in pairs:
            try:
                runs = []
                if backend == "tflite" and tfl is None:
                    raise RuntimeError("no .tflite file")
                for _ in range(a.repeats):  # interleaved, so a burst of load hits both sides alike
                    runs.append((nnperf_p50(a.nnperf, model, backend, a.threads, a.iterations, work,
                                            options.get(backend)), own()))
                ratios = sorted(r[0][0] / r[1][0] for r in runs)
                k = len(ratios) // 2
                ratio = ratios[k] if len(ratios) % 2 else (ratios[k - 1] + ratios[k]) / 2
                ours = statistics.median(r[0][0] for r in runs)
                theirs = statistics.median(r[1][0] for r in runs)
                n1, n2 = runs[0][0][1], runs[0][1][1]
            except Exception as e:  # one pair failing does not hide the other
                print(f"  {backend:9s} FAILED: {e}")
                failed += 1
                continue
            verdict = "within 10%" if abs(ratio - 1) <= 0.10 else "OUTSIDE 10%"
            print(f"  {backend:13s} nnperf P50 {ours:8.3f} ms ({n1} samples)  vs  {what} median {theirs:8.3f} ms "
                  f"({n2})  median paired ratio {ratio:.3f}  {verdict}")
            print(f"            pairs (nnperf/framework ms): "
                  f"{', '.join(f'{r[0][0]:.2f}/{r[1][0]:.2f}' for r in runs)}")
        print(f"load average {load_avg():.2f} at end (2 cores: above ~1 the figures are noisy)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
