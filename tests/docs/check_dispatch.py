#!/usr/bin/env python3
"""One CPU-dispatch table (issue 27, docs/kernels.md "How a step gets its kernel"): only
src/kernels/cpu.c, cpu.h, dispatch.c and dispatch.h may test CPU features
(nnp_cpu_has_*, nnp_cpu_get, __builtin_cpu_supports, cpuid) or read the dispatch
overrides (getenv of NNP_CPU_FEATURES or NNP_NOWINO); every other file of src/ and
include/ asks the table (nnp_dispatch_isa, nnp_dispatch_portable, nnp_cpu_dispatch_get).
Comments are ignored.

Usage: check_dispatch.py ROOT, or check_dispatch.py --self-test (adds each kind of
violation to a copy of a clean file and checks it is caught)."""
import os
import re
import sys

ALLOWED = {'src/kernels/cpu.c', 'src/kernels/cpu.h', 'src/kernels/dispatch.c', 'src/kernels/dispatch.h'}
FEATURE_USE = re.compile(r'\b(nnp_cpu_has_\w+|nnp_cpu_get|__builtin_cpu_supports|__get_cpuid\w*|__cpuid\w*)\s*\('
                         r'|\bgetenv\s*\(\s*"(NNP_CPU_FEATURES|NNP_NOWINO)"')
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


def check(files):
    errors = []
    for path, text in sorted(files.items()):
        if path in ALLOWED:
            continue
        code = COMMENT.sub('', text)
        for m in FEATURE_USE.finditer(code):
            line = code.count('\n', 0, m.start()) + 1
            errors.append(f'{path}:{line}: {m.group(0).strip()} outside the dispatch table: '
                          'ask nnp_dispatch_isa / nnp_dispatch_portable (src/kernels/dispatch.h)')
    return errors


def self_test():
    clean = {'src/ops/x.c': '/* nnp_cpu_has_avx2_fma() in a comment is fine */\nint f(void) { return 0; }\n',
             'src/kernels/cpu.c': 'bool a = nnp_cpu_has_avx2_fma(); const char *e = getenv("NNP_CPU_FEATURES");\n'}
    ok = not check(clean)
    for bad in ('nnp_cpu_has_avx512f()', 'nnp_cpu_get ()', 'getenv("NNP_NOWINO")', 'getenv( "NNP_CPU_FEATURES")',
                '__builtin_cpu_supports("avx2")'):
        files = dict(clean)
        files['src/ops/x.c'] += f'int g(void) {{ return {bad} != 0; }}\n'
        caught = check(files)
        print(('caught' if caught else 'MISSED') + f': {bad}')
        ok = ok and len(caught) == 1 and caught[0].startswith('src/ops/x.c:3:')
    print('self-test ' + ('passed' if ok else 'FAILED'))
    return 0 if ok else 1


def main():
    if len(sys.argv) == 2 and sys.argv[1] == '--self-test':
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    errors = check(read_sources(sys.argv[1]))
    for e in errors:
        print(e)
    print(f'{len(errors)} CPU-feature tests outside the dispatch table')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
