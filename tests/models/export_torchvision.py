#!/usr/bin/python3
"""Exports torchvision CNNs to ONNX with PyTorch's own exporter and saves PyTorch's
outputs for a seeded input, so nnperf's results can be checked against PyTorch.

Weights are seeded random (torchvision cannot download pretrained weights here), and
every BatchNorm gets non-trivial running statistics and affine parameters, so that a
wrong BatchNorm, padding or layout shows in the outputs.

usage: export_torchvision.py OUT_DIR [MODEL ...]
writes OUT_DIR/MODEL.onnx, OUT_DIR/MODEL.input.npy, OUT_DIR/MODEL.expected.npy
"""
import os
import sys

import numpy as np
import torch
import torchvision

MODELS = {
    "mobilenet_v2": lambda: torchvision.models.mobilenet_v2(weights=None),
    "resnet18": lambda: torchvision.models.resnet18(weights=None),
    "squeezenet1_1": lambda: torchvision.models.squeezenet1_1(weights=None),
    "shufflenet_v2_x1_0": lambda: torchvision.models.shufflenet_v2_x1_0(weights=None),
    # HardSwish / HardSigmoid squeeze-excite and SiLU: the ONNX->torch converter's tests
    "mobilenet_v3_small": lambda: torchvision.models.mobilenet_v3_small(weights=None),
    "efficientnet_b0": lambda: torchvision.models.efficientnet_b0(weights=None),
}


def randomize_batchnorm(model, gen):
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(c, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(c, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(c, generator=gen) * 0.1)


def export(name, out_dir):
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    model = MODELS[name]()
    with torch.no_grad():
        randomize_batchnorm(model, gen)
    model.eval()
    x = torch.randn(2, 3, 224, 224, generator=gen)
    with torch.no_grad():
        y = model(x)
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "N"}, "output": {0: "N"}}, do_constant_folding=True)
    np.save(os.path.join(out_dir, name + ".input.npy"), x.numpy())
    np.save(os.path.join(out_dir, name + ".expected.npy"), y.numpy())
    print(f"exported {name}: {path}")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in sys.argv[2:] or list(MODELS):
        export(name, out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
