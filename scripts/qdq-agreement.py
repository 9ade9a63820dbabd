#!/usr/bin/env python3
"""Top-1 agreement and output cosine between an FP32 ONNX model and its QDQ form under
ONNX Runtime (CPU, one thread), on a folder of photographs.

    .venv/bin/python scripts/qdq-agreement.py FP32.onnx QDQ.onnx PHOTO_DIR [--mean R,G,B --std R,G,B]

Preprocessing is nnperf's (src/quant/calib_data.c) re-implemented in numpy: RGB,
bilinear resize with half-pixel centres so the shorter side is 256, centre crop to the
model's input size, /255, ImageNet mean/std (or --mean/--std, as nnperf quantize takes them). It also prints the per-image speed of both
models, so the INT8 speed-up ORT gets from the same QDQ file is on record."""
import os
import sys
import time

import numpy as np
import onnxruntime as ort

try:
    from PIL import Image
except ImportError:
    # Debian's python3-pil (scripts/install-deps.sh) for the same interpreter version;
    # appended last, so the venv's numpy still wins.
    sys.path.append("/usr/lib/python3/dist-packages")
    from PIL import Image

MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)


def taps(n_out, off, scale, n_src):
    x = (np.arange(n_out) + off + 0.5) * scale - 0.5
    x = np.clip(x, 0, n_src - 1)
    i0 = np.floor(x).astype(np.int64)
    i1 = np.minimum(i0 + 1, n_src - 1)
    return i0, i1, (x - i0).astype(np.float32)


def preprocess(path, h, w, short=256):
    img = np.asarray(Image.open(path).convert("RGB"), np.float32)
    ih, iw = img.shape[:2]
    short = max(short, h, w)
    if iw <= ih:
        rw, rh = short, int(short * ih / iw)
    else:
        rh, rw = short, int(short * iw / ih)
    rh, rw = max(rh, h), max(rw, w)
    oy, ox = int(np.floor((rh - h) / 2 + 0.5)), int(np.floor((rw - w) / 2 + 0.5))
    y0, y1, wy = taps(h, oy, ih / rh, ih)
    x0, x1, wx = taps(w, ox, iw / rw, iw)
    a, b = img[y0][:, x0], img[y0][:, x1]
    c, d = img[y1][:, x0], img[y1][:, x1]
    top = a + (b - a) * wx[None, :, None]
    bot = c + (d - c) * wx[None, :, None]
    v = (top + (bot - top) * wy[:, None, None]) / 255.0
    v = (v - MEAN) / STD
    return v.transpose(2, 0, 1)[None].astype(np.float32)


def session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def main():
    global MEAN, STD
    args = sys.argv[1:]
    for opt in ("--mean", "--std"):
        if opt in args:
            k = args.index(opt)
            v = np.array([float(t) for t in args[k + 1].split(",")], np.float32)
            if opt == "--mean":
                MEAN = v
            else:
                STD = v
            del args[k:k + 2]
    if len(args) != 3:
        sys.exit("usage: qdq-agreement.py FP32.onnx QDQ.onnx PHOTO_DIR [--mean R,G,B --std R,G,B]")
    sys.argv[1:] = args
    fp, q = session(sys.argv[1]), session(sys.argv[2])
    inp = fp.get_inputs()[0]
    h, w = inp.shape[2], inp.shape[3]
    h = h if isinstance(h, int) else 224
    w = w if isinstance(w, int) else 224
    files = sorted(f for f in os.listdir(sys.argv[3]) if f.lower().endswith((".jpg", ".jpeg", ".png")))
    agree, cos, t_fp, t_q = 0, [], [], []
    for f in files:
        x = preprocess(os.path.join(sys.argv[3], f), h, w)
        t0 = time.perf_counter()
        a = fp.run(None, {inp.name: x})[0].ravel()
        t1 = time.perf_counter()
        b = q.run(None, {inp.name: x})[0].ravel()
        t2 = time.perf_counter()
        t_fp.append(t1 - t0)
        t_q.append(t2 - t1)
        agree += int(a.argmax() == b.argmax())
        cos.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
    n = len(files)
    print(f"ort-cpu FP32 vs QDQ on {n} images: top-1 agreement {agree}/{n} ({100.0 * agree / n:.1f}%), "
          f"cosine mean {np.mean(cos):.5f} min {np.min(cos):.5f}")
    print(f"ort-cpu median per image: FP32 {1e3 * np.median(t_fp):.1f} ms, QDQ {1e3 * np.median(t_q):.1f} ms "
          f"(INT8 speed-up {np.median(t_fp) / np.median(t_q):.2f}x, 1 thread, first image included)")


if __name__ == "__main__":
    main()
