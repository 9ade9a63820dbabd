#!/usr/bin/python3
"""Exports torchvision CNNs to ONNX with PyTorch's own exporter and saves PyTorch's
outputs for a seeded input, so nnperf's results can be checked against PyTorch.

Weights are seeded random (torchvision cannot download pretrained weights here), and
every BatchNorm gets non-trivial running statistics and affine parameters, so that a
wrong BatchNorm, padding or layout shows in the outputs.

usage: export_torchvision.py [--batch N] [--weights] OUT_DIR [MODEL ...]
MODEL is any torchvision classification or segmentation model name (torchvision's
list_models; the segmentation models' "out" map is the output); without MODEL, the
test's set below. writes OUT_DIR/MODEL.onnx, OUT_DIR/MODEL.input.npy,
OUT_DIR/MODEL.expected.npy (input batch N, default 2; the batch dimension is symbolic);
--weights also OUT_DIR/MODEL.weights.npz, the state_dict (for a module rebuilt without
torchvision, e.g. tests/models/torch_factory_squeezenet.py under PyTorch 2)
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


# models whose stem expects another input size than 224x224
IMAGE_SIZE = {"inception_v3": 299}


class SegmentationOut(torch.nn.Module):
    """The segmentation models return a dict; the exported graph's one output is "out"."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def build(name):
    if name in MODELS:
        return MODELS[name]()
    if name in torchvision.models.list_models(module=torchvision.models.segmentation):
        # weights_backbone=None: the default would download ImageNet backbone weights
        return SegmentationOut(torchvision.models.get_model(name, weights=None, weights_backbone=None))
    kwargs = {"aux_logits": False, "init_weights": True} if name in ("inception_v3", "googlenet") else {}
    return torchvision.models.get_model(name, weights=None, **kwargs)


def randomize_zero_weights(model, gen):
    """torchvision zero-initialises some layers (ViT's classifier head): their output
    would be 0 whatever the engine computes, so they get seeded random weights."""
    for p in model.parameters():
        if p.dim() >= 2 and not p.any():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.02)


def randomize_batchnorm(model, gen):
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(c, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(c, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(c, generator=gen) * 0.1)


def export(name, out_dir, batch, weights=False):
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    model = build(name)
    with torch.no_grad():
        randomize_batchnorm(model, gen)
        randomize_zero_weights(model, gen)
    model.eval()
    size = IMAGE_SIZE.get(name, 224)
    x = torch.randn(batch, 3, size, size, generator=gen)
    with torch.no_grad():
        y = model(x)
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "N"}, "output": {0: "N"}}, do_constant_folding=True)
    if weights:
        np.savez(os.path.join(out_dir, name + ".weights.npz"),
                 **{k: v.numpy() for k, v in model.state_dict().items()})
    np.save(os.path.join(out_dir, name + ".input.npy"), x.numpy())
    np.save(os.path.join(out_dir, name + ".expected.npy"), y.numpy())
    print(f"exported {name}: {path}")


def main():
    args = sys.argv[1:]
    batch, weights = 2, False
    while args and args[0] in ("--batch", "--weights"):
        if args[0] == "--weights":
            weights, args = True, args[1:]
        elif len(args) >= 2:
            batch, args = int(args[1]), args[2:]
        else:
            break
    if not args:
        print(__doc__)
        return 2
    out_dir = args[0]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in args[1:] or list(MODELS):
        export(name, out_dir, batch, weights)
    return 0


if __name__ == "__main__":
    sys.exit(main())
