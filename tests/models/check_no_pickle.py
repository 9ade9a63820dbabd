#!/usr/bin/python3
"""check_no_pickle.py DIR...: fails when Python code under DIR could unpickle (run code
from a data file): any pickle/cPickle/dill/joblib load, torch.load without
weights_only=True, np.load / numpy.load without allow_pickle=False. Parses the code (ast),
so a call spread over lines or aliased imports of pickle still count."""
import ast
import os
import sys

UNPICKLERS = {"pickle", "cPickle", "_pickle", "dill", "joblib", "shelve", "marshal"}


def kw(call, name):
    for k in call.keywords:
        if k.arg == name and isinstance(k.value, ast.Constant):
            return k.value.value
    return None


def dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def check(path):
    problems = []
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    aliases = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                aliases[a.asname or a.name] = a.name
                if a.name.split(".")[0] in UNPICKLERS:
                    problems.append((n.lineno, f"imports {a.name}"))
        elif isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] in UNPICKLERS:
            problems.append((n.lineno, f"imports from {n.module}"))
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        name = dotted(n.func)
        head, _, rest = name.partition(".")
        full = aliases.get(head, head) + ("." + rest if rest else "")
        if full in ("torch.load", "torch.serialization.load") and kw(n, "weights_only") is not True:
            problems.append((n.lineno, f"{name}() without weights_only=True"))
        if full in ("numpy.load", "np.load") and kw(n, "allow_pickle") is not False:
            problems.append((n.lineno, f"{name}() without allow_pickle=False"))
        if full.endswith(("Unpickler", ".loads")) and full.split(".")[0] in UNPICKLERS:
            problems.append((n.lineno, f"{name}()"))
    return [f"{path}:{line}: {what}" for line, what in problems]


def main():
    problems, files = [], 0
    for root in sys.argv[1:]:
        for d, _, names in os.walk(root):
            for f in names:
                if f.endswith(".py"):
                    files += 1
                    problems += check(os.path.join(d, f))
    for p in problems:
        print(p)
    print(f"{files} Python files checked, {len(problems)} could unpickle")
    return 1 if problems or files == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
