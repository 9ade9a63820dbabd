#!/usr/bin/env python3
"""Static check: nnperf's Python code never unpickles data it did not make.

Unpickling runs code chosen by whoever wrote the file, and nnperf reads models, tensors
and results that come from anywhere. This walks every .py file of the repository (not
build folders or the virtual environment) with the ast module and reports, by file and
line:
  - any import of pickle, cPickle, _pickle, dill, cloudpickle, joblib, shelve or marshal;
  - torch.load(...) without weights_only=True (torch.hub.load and torch.load_state_dict_from_url
    likewise: they unpickle);
  - numpy.load(...) without allow_pickle=False spelled out (numpy's default has changed
    before; the call must say it);
  - pandas.read_pickle / *.read_pickle(...).

    tests/docs/check_no_unpickle.py ROOT        check the repository at ROOT
    tests/docs/check_no_unpickle.py --self-test show that each rule catches its case
Exit status 0 when clean, 1 with one line per finding.
"""
import ast
import os
import sys

BANNED_MODULES = {"pickle", "cPickle", "_pickle", "dill", "cloudpickle", "joblib", "shelve", "marshal"}
NUMPY_NAMES = {"np", "numpy"}
SKIP_DIRS = {".git", ".venv", ".venv-torch", "__pycache__", "node_modules"}


def dotted(node):
    """'torch.load' for the Attribute/Name chain of a call's func, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def kw_is(call, name, value):
    return any(k.arg == name and isinstance(k.value, ast.Constant) and k.value.value is value for k in call.keywords)


def check_source(src, path):
    findings = []
    try:
        tree = ast.parse(src, filename=path)
    except SyntaxError as e:
        return [f"{path}:{e.lineno}: cannot parse: {e.msg}"]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in BANNED_MODULES:
                    findings.append(f"{path}:{node.lineno}: imports {a.name}, which unpickles")
        elif isinstance(node, ast.ImportFrom):
            if node.module and node.module.split(".")[0] in BANNED_MODULES:
                findings.append(f"{path}:{node.lineno}: imports from {node.module}, which unpickles")
            if node.module == "torch" and any(a.name == "load" for a in node.names):
                findings.append(f"{path}:{node.lineno}: 'from torch import load' hides torch.load from this check")
            if node.module in NUMPY_NAMES and any(a.name == "load" for a in node.names):
                findings.append(f"{path}:{node.lineno}: 'from numpy import load' hides numpy.load from this check")
        elif isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            if name in ("torch.load", "torch.hub.load", "torch.hub.load_state_dict_from_url"):
                if not kw_is(node, "weights_only", True):
                    findings.append(f"{path}:{node.lineno}: {name}() without weights_only=True unpickles")
            elif name.split(".")[0] in NUMPY_NAMES and name.endswith(".load") and name.count(".") == 1:
                if not kw_is(node, "allow_pickle", False):
                    findings.append(f"{path}:{node.lineno}: {name}() without allow_pickle=False")
            elif name.endswith("read_pickle"):
                findings.append(f"{path}:{node.lineno}: {name}() unpickles")
    return findings


def check_tree(root):
    findings, files = [], 0
    for d, dirs, names in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not (rel == "." and x.startswith("build")))
        for n in sorted(names):
            if n.endswith(".py"):
                p = os.path.join(d, n)
                files += 1
                with open(p, encoding="utf-8") as f:
                    findings += check_source(f.read(), os.path.relpath(p, root))
    return findings, files


SELF_TEST = {  # source -> how many findings it must give
    "import pickle\n": 1,
    "from joblib import load\n": 1,
    "import marshal as m\n": 1,
    "import torch\nm = torch.load('m.pt')\n": 1,
    "import torch\nm = torch.load('m.pt', weights_only=False)\n": 1,
    "import torch\nm = torch.load('m.pt', weights_only=True)\n": 0,
    "import numpy as np\nx = np.load('x.npy')\n": 1,
    "import numpy as np\nx = np.load('x.npy', allow_pickle=True)\n": 1,
    "import numpy as np\nx = np.load('x.npy', allow_pickle=False)\n": 0,
    "import numpy\nx = numpy.load(f, allow_pickle=False)\n": 0,
    "import pandas as pd\nd = pd.read_pickle('d.pkl')\n": 1,
    "from torch import load\n": 1,
    "import json\nd = json.load(open('r.json'))\n": 0,
}


def self_test():
    bad = 0
    for src, want in SELF_TEST.items():
        got = check_source(src, "<self-test>")
        if len(got) != want:
            print(f"self-test: {src!r}: {len(got)} findings, want {want}: {got}")
            bad += 1
    print(f"self-test: {len(SELF_TEST) - bad} of {len(SELF_TEST)} cases right")
    return 1 if bad else 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: check_no_unpickle.py ROOT | --self-test", file=sys.stderr)
        return 2
    findings, files = check_tree(sys.argv[1])
    for f in findings:
        print(f)
    print(f"check_no_unpickle: {files} Python files, {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
