#!/usr/bin/env python3
"""Lists every C function in SRC longer than the limit (150 lines, house rule) and fails
when one lies in an enforced folder: those named by --enforce, or every folder but those
named by --except (so a new folder is enforced from its first file).

usage: check_function_length.py SRC --enforce cli,bench,...   (folders under SRC)
       check_function_length.py SRC --except kernels,engine,...
       check_function_length.py --self-test

A brace counter, not a parser: comments, strings and character literals are blanked
first; a function is a top-level '{' whose header (the text since the previous top-level
';', '}' or preprocessor line) ends with ')'. That skips struct, enum and array bodies.
The length is from the header's first line to the closing '}', both included."""
import os
import re
import sys

LIMIT = 150


def blank(text):
    """Comments, strings and char literals replaced by spaces (newlines kept)."""
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pattern.sub(lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text)


def functions(text):
    """(name, first line, last line) of each function definition in C source text."""
    src = blank(text)
    lines = src.split('\n')
    # preprocessor lines end a header and never hold braces of their own here
    src = '\n'.join(' ' * len(l) if l.lstrip().startswith('#') else l for l in lines)
    out, depth, header_start, start = [], 0, 0, None
    for i, ch in enumerate(src):
        if ch == '{':
            if depth == 0:
                header = src[header_start:i].strip()
                if header.endswith(')'):
                    m = re.search(r'([A-Za-z_]\w*)\s*\(', header)
                    first = src.count('\n', 0, header_start + src[header_start:i].index(header[0])) + 1
                    start = (m.group(1) if m else '?', first)
                else:
                    start = None
            depth += 1
        elif ch == '}':
            depth -= 1
            if depth == 0:
                if start:
                    out.append((start[0], start[1], src.count('\n', 0, i) + 1))
                start, header_start = None, i + 1
        elif ch == ';' and depth == 0:
            header_start = i + 1
        elif ch == '\n' and depth == 0 and src[header_start:i].strip() == '':
            header_start = i + 1
    return out


def scan(src_root):
    """(folder under src_root, path, name, lines) of every function over LIMIT."""
    long_ones = []
    for dirpath, _, files in os.walk(src_root):
        for f in sorted(files):
            if not f.endswith('.c'):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, src_root)
            with open(path, encoding='utf-8', errors='replace') as fh:
                for name, a, b in functions(fh.read()):
                    if b - a + 1 > LIMIT:
                        long_ones.append((os.path.dirname(rel), rel, name, b - a + 1))
    return long_ones


def under(folder, roots):
    return any(folder == r or folder.startswith(r + '/') for r in roots)


def enforced(folder, roots, mode='--enforce'):
    return under(folder, roots) if mode == '--enforce' else not under(folder, roots)


def self_test():
    body = '\n'.join('  x++;' for _ in range(LIMIT))
    text = ('struct s {\n int a;\n};\nstatic const int t[] = {1, 2};\n'
            '/* f() { */\nstatic int ok(void) {\n  return "}{";\n}\n'
            'int too_long(int x)\n{\n' + body + '\n  return x;\n}\n')
    got = functions(text)
    names = [g[0] for g in got]
    assert names == ['ok', 'too_long'], got
    assert got[0][2] - got[0][1] + 1 == 3, got
    assert got[1][2] - got[1][1] + 1 == LIMIT + 4, got
    assert enforced('bench', ['bench']) and enforced('ir/passes', ['ir']) and not enforced('benchx', ['bench'])
    assert not enforced('kernels', ['kernels'], '--except') and enforced('newfolder', ['kernels'], '--except')
    assert not enforced('llm/llama', ['llm'], '--except') and enforced('', ['llm'], '--except')
    print('self-test passed')
    return 0


def main(argv):
    if argv[1:] == ['--self-test']:
        return self_test()
    if len(argv) != 4 or argv[2] not in ('--enforce', '--except'):
        print(__doc__)
        return 2
    mode, roots = argv[2], [r for r in argv[3].split(',') if r]
    fail = 0
    for folder, rel, name, n in scan(argv[1]):
        must = enforced(folder, roots, mode)
        fail |= must
        print('%s src/%s: %s() is %d lines (limit %d)' % ('FAIL' if must else 'note', rel, name, n, LIMIT))
    print('%s: %s' % ('enforced folders' if mode == '--enforce' else 'enforced in every folder but', ', '.join(roots)))
    return 1 if fail else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
