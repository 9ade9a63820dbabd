"""A user's model entry point for `nnperf bench --torch-model FILE:squeezenet` (test):
torchvision's SqueezeNet 1.1 with the same seeded weights export_torchvision.py exports,
so the PyTorch row running this module must agree with the native row running the ONNX."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import export_torchvision  # noqa: E402


def squeezenet():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    model = export_torchvision.MODELS["squeezenet1_1"]()
    with torch.no_grad():
        export_torchvision.randomize_batchnorm(model, gen)
    return model.eval()
