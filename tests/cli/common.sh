# The preamble the CLI tests share (sourced, never run; it is not a test_*.sh, so ctest
# does not list it): the binary ($1), a work folder removed on exit, pass/fail counters
# with ok/bad, Debian's python. The sourcing script ends with test_summary, which prints
# the counts and fails on any failure. (Older scripts still carry a copy of it.)
nnperf=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
py=/usr/bin/python3

test_summary() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
