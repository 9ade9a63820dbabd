"""A module torch.compile cannot capture in one graph: its branch depends on the data
(tests/cli/test_torch_device.sh checks that the break becomes the row's reason)."""
import torch


class DataDependent(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # a Python branch on a tensor value: a graph break under Dynamo
            return x * 2
        return x - 1


def graph_break():
    return DataDependent().eval()
