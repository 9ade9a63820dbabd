#!/usr/bin/env python3
"""Runs ONNX node test cases through `nnperf run`, each input given as its .pb file, and
compares the written outputs with the case's expected ones (the conformance runner's
tolerance: |got - want| <= 1e-5 + 1e-3 |want|, NaN matches NaN).

Usage: run_node_tests.py NNPERF NODE_DIR [--list FILE]
With --list, only the cases named in FILE (one a line, '#' comments) run, and every one
must pass; the cases whose shape parameters (a Reshape's shape, Slice's bounds, Resize's
scales, ...) are graph inputs are the point: `nnperf run` must take their files' values as
the constants they are. Needs python3-onnx and numpy (Debian's /usr/bin/python3)."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from onnx import load, numpy_helper, TensorProto
except ImportError as e:  # ctest reads 77 as skipped
    print(f'skipped: this python cannot import onnx and numpy ({e}); Debian: apt-get install python3-onnx')
    sys.exit(77)


def read_pb(path):
    t = TensorProto()
    with open(path, 'rb') as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def run_case(nnperf, case, work):
    model = load(os.path.join(case, 'model.onnx'))
    inits = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    outs = [o.name for o in model.graph.output]
    data = os.path.join(case, 'test_data_set_0')
    cmd = [nnperf, 'run', os.path.join(case, 'model.onnx'), '--quiet', '--output-dir', work]
    for k, name in enumerate(names):
        cmd += ['--input', f'{name}={os.path.join(data, f"input_{k}.pb")}']
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return 'error: ' + (r.stderr.strip().splitlines() or ['(no message)'])[-1]
    for k, name in enumerate(outs):
        want = read_pb(os.path.join(data, f'output_{k}.pb'))
        path = os.path.join(work, ''.join(c if c.isalnum() or c in '._-' else '_' for c in name) + '.npy')
        if not os.path.exists(path):
            return f'output {name} not written'
        got = np.load(path, allow_pickle=False)
        if got.shape != want.shape:
            return f'output {name} has shape {got.shape}, expected {want.shape}'
        if want.dtype.kind in 'fc':
            g, w = got.astype(np.float64), want.astype(np.float64)
            ok = (np.abs(g - w) <= 1e-5 + 1e-3 * np.abs(w)) | (np.isnan(g) & np.isnan(w))
            if not ok.all():
                return f'output {name} differs'
        elif not np.array_equal(got, want):
            return f'output {name} differs'
    return 'pass'


def main():
    if len(sys.argv) not in (3, 5) or (len(sys.argv) == 5 and sys.argv[3] != '--list'):
        print(__doc__)
        return 2
    nnperf, node_dir = sys.argv[1], sys.argv[2]
    if len(sys.argv) == 5:
        with open(sys.argv[4]) as f:
            cases = [l.split('#')[0].strip() for l in f]
        cases = [c for c in cases if c]
    else:
        cases = sorted(os.listdir(node_dir))
    failed = 0
    for name in cases:
        with tempfile.TemporaryDirectory() as work:
            verdict = run_case(nnperf, os.path.join(node_dir, name), work)
        print(f'{verdict.split(":")[0] if verdict == "pass" else "FAIL"} {name}{"" if verdict == "pass" else ": " + verdict}')
        failed += verdict != 'pass'
    print(f'{len(cases) - failed} of {len(cases)} cases pass through nnperf run')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
