#!/usr/bin/env python3
"""Cross-checks docs/hostile-inputs.md against the tests that exist.

Every row of the table names a test case ("test_hostile_models:case_cycle",
"test_external_data:case_fifo", "test_hostile_inputs:model_fifo") and the exact error
line it gets. This runs those tests, collects what each case really prints, and fails
when a row's test case does not exist, when its message (or, for command-line cases,
its exit status) differs from what the test gives, when a command-line hostile case is
missing from the table, or when the table has fewer than 40 rows.

    check_hostile_table.py TABLE.md TESTS_DIR UNIT_BIN_DIR NNPERF
    check_hostile_table.py --self-test TABLE.md TESTS_DIR UNIT_BIN_DIR NNPERF

TESTS_DIR is the source tests/ folder (the unit tests run there, as under ctest);
UNIT_BIN_DIR holds the test_hostile_models and test_external_data executables. Temporary
folders in messages are written TMP (unit tests) and WORK (command-line cases).
--self-test also proves that a changed message, a missing case and a wrong exit status
in the table each make the check fail.
"""
import os
import re
import subprocess
import sys

UNIT_TESTS = ("test_hostile_models", "test_external_data")
CLI_TEST = "test_hostile_inputs"
MIN_ROWS = 40
SKIPPED = "skipped"


def run_unit(bin_dir, tests_dir, name):
    """case name -> list of messages, from a unit test run with NNP_TEST_VERBOSE=1."""
    env = dict(os.environ, NNP_TEST_VERBOSE="1")
    p = subprocess.run([os.path.abspath(os.path.join(bin_dir, name))], cwd=tests_dir, env=env, capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        sys.exit(f"check_hostile_table: {name} failed (exit {p.returncode}); fix it first:\n{p.stderr[-2000:]}")
    # "  line N: <status name>: <message>"; the status name is part of the documented line
    cases, current = {}, None
    for line in p.stdout.splitlines():
        m = re.match(r"^case (\w+)$", line)
        if m:
            current = m.group(1)
            cases.setdefault(current, [])
            continue
        m = re.match(r"^  line \d+: (.*)$", line)
        if m and current:
            cases[current].append((None, re.sub(r"/tmp/nnp-test-[A-Za-z0-9]+", "TMP", m.group(1))))
    return cases


def run_cli(tests_dir, nnperf):
    """case id -> [(exit status, message)] from tests/cli/test_hostile_inputs.sh."""
    p = subprocess.run(["bash", os.path.join(tests_dir, "cli", CLI_TEST + ".sh"), os.path.abspath(nnperf)], capture_output=True,
                       text=True, timeout=900)
    if p.returncode != 0:
        sys.exit(f"check_hostile_table: {CLI_TEST}.sh failed; fix it first:\n{p.stdout[-3000:]}{p.stderr[-1000:]}")
    cases = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^case (\w+): exit (\d+): (.*)$", line)
        if m:
            cases.setdefault(m.group(1), []).append((int(m.group(2)), m.group(3)))
        m = re.match(r"^skip (\w+): (.*)$", line)
        if m:  # the case exists but cannot run in this build: its row is not compared
            print(f"note: {CLI_TEST}:{m.group(1)} skipped, its row unchecked: {m.group(2)}")
            cases[m.group(1)] = SKIPPED
    return cases


def parse_table(path):
    """[(line number, test, case, exit status or None, message)] from the markdown table."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.startswith("| ") or line.startswith("| #") or line.startswith("| ---"):
                continue
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if len(cells) != 5:
                rows.append((n, None, None, None, f"has {len(cells)} cells, expected 5"))
                continue
            _, _, test, status, message = cells
            m = re.fullmatch(r"`(\w+):(\w+)`", test)
            msg = re.fullmatch(r"`(.*)`", message)
            if not m or not msg:
                rows.append((n, None, None, None, f"test cell {test!r} or message cell is not `...`"))
                continue
            st = int(status) if status.isdigit() else None
            rows.append((n, m.group(1), m.group(2), st, msg.group(1).replace("\\|", "|")))
    return rows


def check(rows, results):
    errors = []
    if len(rows) < MIN_ROWS:
        errors.append(f"the table has {len(rows)} rows, at least {MIN_ROWS} expected")
    documented = set()
    for n, test, case, status, message in rows:
        if test is None:
            errors.append(f"line {n}: {message}")
            continue
        documented.add((test, case))
        if test not in results:
            errors.append(f"line {n}: test '{test}' is not one of {sorted(results)}")
            continue
        got = results[test].get(case)
        if got is None:
            errors.append(f"line {n}: {test}:{case} does not exist (no such case ran)")
            continue
        if got == SKIPPED:
            continue
        messages = [m for _, m in got]
        if message not in messages:
            errors.append(f"line {n}: {test}:{case}: the table says\n    {message}\n  the test gives\n    "
                          + "\n    ".join(dict.fromkeys(messages)))
        if test == CLI_TEST and status is not None and status not in [s for s, _ in got]:
            errors.append(f"line {n}: {test}:{case}: the table says exit {status}, the test gives {got[0][0]}")
    for case in sorted(results.get(CLI_TEST, {})):
        if (CLI_TEST, case) not in documented:
            errors.append(f"{CLI_TEST}:{case} is a hostile case missing from the table")
    return errors


def main():
    args = sys.argv[1:]
    self_test = args[:1] == ["--self-test"]
    if self_test:
        args = args[1:]
    if len(args) != 4:
        sys.exit(__doc__)
    table, tests_dir, bin_dir, nnperf = args
    rows = parse_table(table)
    results = {name: run_unit(bin_dir, tests_dir, name) for name in UNIT_TESTS}
    results[CLI_TEST] = run_cli(tests_dir, nnperf)
    errors = check(rows, results)
    if self_test:
        if errors:
            print("\n".join(errors))
            sys.exit("self-test: the table must pass before it can be mutated")
        first_cli = next(i for i, r in enumerate(rows) if r[1] == CLI_TEST)
        mutations = {
            "changed message": [r if i else r[:4] + (r[4] + " (changed)",) for i, r in enumerate(rows)],
            "missing case": [r if i else r[:2] + ("case_that_does_not_exist",) + r[3:] for i, r in enumerate(rows)],
            "wrong exit status": [r if i != first_cli else r[:3] + (99,) + r[4:] for i, r in enumerate(rows)],
            "undocumented cli case": [r for i, r in enumerate(rows) if i != first_cli],
            "too few rows": rows[:10],
        }
        bad = [name for name, mutated in mutations.items() if not check(mutated, results)]
        for name in bad:
            print(f"self-test: a table with a {name} passed")
        print(f"self-test: {len(mutations) - len(bad)} of {len(mutations)} mutations caught")
        sys.exit(1 if bad else 0)
    for e in errors:
        print(e)
    n_cases = sum(len(v) for v in results.values())
    print(f"check_hostile_table: {len(rows)} rows, {n_cases} test cases ran, {len(errors)} problems")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
