#!/usr/bin/python3
"""check_onnx_to_torch.py MODEL.onnx INPUT.npy WANT.npy [REL_TOL]
Converts MODEL with nnperf's ONNX->torch converter (python/nnperf_worker/onnx_to_torch.py),
runs it eagerly and traced+frozen on INPUT, and passes when both agree with WANT (the
native engine's or PyTorch's own output) within REL_TOL of the output's scale.
The torchscript row also runs torch.jit.optimize_for_inference; that pass changes the
numerics itself (MKLDNN convolutions: on torchvision's own mobilenet_v3_small it moves
the output by 1.3e-3 of its scale, with no converter involved), so it is checked against
a looser 1e-2 that still catches a wrong graph, and its error is printed."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import numpy as np  # noqa: E402
import torch  # noqa: E402

from nnperf_worker import onnx_to_torch  # noqa: E402


def rel_err(got, want):
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    scale = float(np.max(np.abs(want)))
    return err / scale if scale > 0 else err


def main():
    model, inp, want = sys.argv[1], np.load(sys.argv[2], allow_pickle=False), np.load(sys.argv[3], allow_pickle=False)
    tol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
    torch.set_num_threads(1)
    m = onnx_to_torch.convert(model)
    x = torch.from_numpy(inp)
    with torch.no_grad():
        eager = m(x)[0].numpy()
        frozen = torch.jit.freeze(torch.jit.trace(m, (x,), check_trace=False).eval())
        frozen(x)
        script = frozen(x)[0].numpy()
        ofi = torch.jit.optimize_for_inference(frozen)
        ofi(x)
        optimized = ofi(x)[0].numpy()
    ok = True
    for what, got, tol in (("eager", eager, tol), ("trace+freeze", script, tol),
                           ("trace+freeze+optimize_for_inference", optimized, max(tol, 1e-2))):
        if got.shape != want.shape:
            print(f"{what}: shape {got.shape} != expected {want.shape}")
            ok = False
            continue
        r = rel_err(got, want)
        good = r <= tol and np.all(np.isfinite(got))
        print(f"{what}: relative error {r:.3g} (tolerance {tol:g}) {'ok' if good else 'FAIL'}")
        ok = ok and good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
