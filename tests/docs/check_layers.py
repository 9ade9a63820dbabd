#!/usr/bin/env python3
"""The layering rules of docs/architecture of the engine (issue 27), checked over the
sources' #include lines and calls:

- no circle between src/engine and src/ir/passes: the engine runs the passes, so no file
  of src/ir/passes may include an engine header (directly or through other headers) or
  call an engine function (nnp_plan_*, nnp_batch_lanes_*, nnp_memory_plan*);
- nothing in src/util includes a src/onnx header (or nnperf/onnx.h) or calls nnp_onnx_*.

Usage: check_layers.py ROOT, or check_layers.py --self-test (shows each rule fires on a
copy of the rules' inputs with a violation added)."""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ENGINE_HEADERS = re.compile(r'^(engine/|nnperf/engine\.h$|nnperf/plan_cache\.h$)')
ENGINE_CALLS = re.compile(r'\b(nnp_plan_\w+|nnp_batch_lanes_\w+|nnp_memory_plan\w*)\s*\(')
ONNX_HEADERS = re.compile(r'^(onnx/|nnperf/onnx\.h$)')
ONNX_CALLS = re.compile(r'\bnnp_onnx_\w+\s*\(')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)


def read_sources(root):
    files = {}
    for top in ('src', 'include'):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith(('.c', '.h')):
                    p = os.path.join(d, n)
                    with open(p, encoding='utf-8', errors='replace') as f:
                        files[os.path.relpath(p, root)] = f.read()
    return files


def header_path(files, inc):
    for cand in ('src/' + inc, 'include/' + inc):
        if cand in files:
            return cand
    return None


def reached_headers(files, path):
    """Every quoted include reachable from path (as written, e.g. "engine/plan.h")."""
    seen, todo = set(), [path]
    while todo:
        text = files.get(todo.pop(), '')
        for inc in INCLUDE.findall(text):
            if inc in seen:
                continue
            seen.add(inc)
            hp = header_path(files, inc)
            if hp:
                todo.append(hp)
    return seen


def check(files):
    errors = []
    for path, text in sorted(files.items()):
        code = COMMENT.sub('', text)
        if path.startswith('src/ir/passes/'):
            for inc in sorted(reached_headers(files, path)):
                if ENGINE_HEADERS.match(inc):
                    errors.append(f'{path}: reaches engine header "{inc}" (the engine runs the passes: a circle)')
            for call in sorted(set(ENGINE_CALLS.findall(code))):
                errors.append(f'{path}: calls engine function {call} (the engine runs the passes: a circle)')
        if path.startswith('src/util/'):
            for inc in INCLUDE.findall(text):
                if ONNX_HEADERS.match(inc):
                    errors.append(f'{path}: includes "{inc}" (util must not depend on src/onnx)')
            for call in sorted(set(ONNX_CALLS.findall(code))):
                errors.append(f'{path}: calls {call} (util must not depend on src/onnx)')
    return errors


def self_test(root):
    files = read_sources(root)
    assert not check(files), 'the tree itself must pass before the self-test'
    cases = [
        ('src/ir/passes/pass_util.h', '#include "nnperf/engine.h"\n'),
        ('src/ir/shape_infer.h', '#include "engine/batch_lanes.h"\n'),  # reached through a header
        ('src/ir/passes/dead_nodes.c', 'void f(void) { nnp_plan_compile(0, 0, 0); }\n'),
        ('src/util/npy.c', '#include "onnx/onnx_internal.h"\n'),
        ('src/util/npy.c', 'void f(void) { nnp_onnx_load(0, 0, 0); }\n'),
    ]
    for path, extra in cases:
        mutated = dict(files)
        mutated[path] = files[path] + extra
        if not check(mutated):
            print(f'self-test: adding {extra.strip()!r} to {path} was not caught')
            return 1
    print(f'self-test: all {len(cases)} violations caught')
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--self-test':
        return self_test(sys.argv[2])
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    errors = check(read_sources(sys.argv[1]))
    for e in errors:
        print(e)
    print('layering: %s' % ('%d violation(s)' % len(errors) if errors else 'ok'))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
