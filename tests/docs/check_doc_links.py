#!/usr/bin/env python3
"""Docs that match the code: every docs/NAME.md a project file names exists, and the
README's layout map lists every folder of src/.

usage: check_doc_links.py ROOT
       check_doc_links.py --self-test

Project files are the sources, scripts, docs and build files under ROOT, not build
folders, virtual environments or generated code."""
import os
import re
import sys

SKIP_DIRS = {'.git', 'node_modules', '__pycache__'}
EXTS = ('.c', '.h', '.md', '.sh', '.py', '.txt', '.cmake', '.toml', '.cfg')
DOC_REF = re.compile(r'\bdocs/([A-Za-z0-9_.-]+\.md)\b')


def project_files(root):
    for dirpath, dirs, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        top = rel.split(os.sep)[0]
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not (rel == '.' and (d.startswith('build') or
                                                                                   d.startswith('.venv')))]
        if top.startswith('build') or top.startswith('.venv'):
            continue
        for f in files:
            if f.endswith(EXTS) or f in ('Makefile', 'CMakeLists.txt'):
                yield os.path.join(dirpath, f)


def missing_docs(root):
    """(file, docs/NAME.md) for each reference to a doc that does not exist."""
    out = []
    for path in project_files(root):
        if os.path.abspath(path) == os.path.abspath(__file__):
            continue  # its own examples
        with open(path, encoding='utf-8', errors='replace') as fh:
            for name in sorted(set(DOC_REF.findall(fh.read()))):
                if not os.path.exists(os.path.join(root, 'docs', name)):
                    out.append((os.path.relpath(path, root), 'docs/' + name))
    return out


def layout_block(readme_text):
    m = re.search(r'^## Layout\s*\n```\n(.*?)\n```', readme_text, re.S | re.M)
    return m.group(1) if m else ''


def unlisted_src_folders(root):
    """Folders of src/ (any depth) the README's layout map does not name as src/PATH/."""
    with open(os.path.join(root, 'README.md'), encoding='utf-8') as fh:
        block = layout_block(fh.read())
    listed = set(re.findall(r'^(src/\S+?)/?\s', block + '\n', re.M))
    listed = {l.rstrip('/') for l in listed}
    out = []
    for dirpath, dirs, _ in os.walk(os.path.join(root, 'src')):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for d in dirs:
            rel = os.path.relpath(os.path.join(dirpath, d), root).replace(os.sep, '/')
            if rel not in listed:
                out.append(rel)
    return out


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, 'docs'))
        os.makedirs(os.path.join(root, 'src', 'a', 'b'))
        os.makedirs(os.path.join(root, 'build', 'x'))
        open(os.path.join(root, 'docs', 'here.md'), 'w').write('x')
        open(os.path.join(root, 'src', 'a', 'f.c'), 'w').write('/* docs/here.md docs/gone.md */')
        open(os.path.join(root, 'build', 'x', 'g.h'), 'w').write('/* docs/generated.md */')
        open(os.path.join(root, 'README.md'), 'w').write('## Layout\n\n```\nsrc/a/   things\n```\n')
        assert missing_docs(root) == [(os.path.join('src', 'a', 'f.c'), 'docs/gone.md')], missing_docs(root)
        assert unlisted_src_folders(root) == ['src/a/b'], unlisted_src_folders(root)
    print('self-test passed')
    return 0


def main(argv):
    if argv[1:] == ['--self-test']:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    fail = 0
    for path, doc in missing_docs(argv[1]):
        print('FAIL %s names %s, which does not exist' % (path, doc))
        fail = 1
    for folder in unlisted_src_folders(argv[1]):
        print("FAIL README.md's layout map does not list %s/" % folder)
        fail = 1
    if not fail:
        print('every docs/*.md named exists; the layout map lists every folder of src/')
    return fail


if __name__ == '__main__':
    sys.exit(main(sys.argv))
