# The preamble the nnperf advise tests share (sourced, never run): the binary ($1), a
# work folder removed on exit, pass/fail counters with ok/bad, Debian's python and the
# short loop settings that keep each advise run to seconds. The sourcing script ends with
# advise_summary.
nnperf=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
py=/usr/bin/python3
quick=(--iterations 20 --warmup 2 --max-time 1 --quiet)

advise_summary() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
