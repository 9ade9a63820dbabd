#!/usr/bin/python3
"""compare_npy.py GOT.npy WANT.npy REL_TOL
Passes when max|got - want| <= REL_TOL * max|want| (error relative to the output's scale;
per-element relative error is meaningless for logits near zero). Prints both figures."""
import sys

import numpy as np

# allow_pickle=False: an object array in a .npy would run code when loaded
got = np.load(sys.argv[1], allow_pickle=False)
want = np.load(sys.argv[2], allow_pickle=False)
tol = float(sys.argv[3])
if got.shape != want.shape:
    print(f"shape {got.shape} != expected {want.shape}")
    sys.exit(1)
err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
scale = float(np.max(np.abs(want)))
rel = err / scale if scale > 0 else err
agree = float(np.mean(np.argmax(got, axis=-1) == np.argmax(want, axis=-1))) if got.ndim == 2 else 1.0
print(f"max abs error {err:.3g}, output scale {scale:.3g}, relative {rel:.3g} (tolerance {tol:g}), "
      f"top-1 agreement {agree:.0%}")
sys.exit(0 if rel <= tol and np.all(np.isfinite(got)) else 1)
