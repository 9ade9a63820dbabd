#!/usr/bin/env bash
# Static check: no Python code of the project unpickles (python/ workers, bench/ scripts,
# tests/models helpers), and the checker itself catches each forbidden form.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
py=python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rc=0
$py "$here/tests/models/check_no_pickle.py" "$here/python" "$here/bench" "$here/tests/models" || rc=1
# the checker must fail on each of these
i=0
for bad in "import pickle" "import numpy as n
n.load('x.npy')" "import torch
torch.load('w.pt')" "import torch
torch.load('w.pt', weights_only=False)" "from pickle import loads" "import numpy as np
np.load('a', allow_pickle=True)"; do
  i=$((i + 1)); mkdir -p "$work/$i"; printf '%s\n' "$bad" > "$work/$i/bad.py"
  if $py "$here/tests/models/check_no_pickle.py" "$work/$i" > /dev/null; then
    echo "FAIL: checker accepted: $bad"; rc=1
  fi
done
printf '%s\n' "import numpy as np" "np.load('a', allow_pickle=False)" "import torch" "torch.load('w', weights_only=True)" > "$work/good.py"
$py "$here/tests/models/check_no_pickle.py" "$work/good.py" > /dev/null 2>&1 || true
mkdir -p "$work/g"; mv "$work/good.py" "$work/g/"
$py "$here/tests/models/check_no_pickle.py" "$work/g" > /dev/null || { echo "FAIL: checker rejected safe loads"; rc=1; }
[ $rc -eq 0 ] && echo "pass: no unpickling, checker catches $i forbidden forms"
exit $rc
