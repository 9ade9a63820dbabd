#!/usr/bin/env bash
# One exit-status rule for every command (README, "Exit status"; issue 25 found bench,
# load and coldstart disagreeing): 0 ok; 1 bad input (a missing or unknown model, an
# unreadable result), a failed row, or nothing asked for could run (an unavailable backend
# named explicitly); 2 a bad command line (unknown command, option, backend name, or a
# malformed value, which the message echoes). Errors are one line; nothing else is printed.
set -uo pipefail
nnperf=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export NNPERF_HISTORY="$work/history.db"
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
# expect NAME RC PATTERN -- command...: exit RC, one stderr line matching PATTERN, no stdout
expect() {
  local name=$1 want=$2 pattern=$3
  shift 4
  "$@" > "$work/out" 2> "$work/err"
  local rc=$?
  if [ $rc -eq "$want" ] && grep -qE -- "$pattern" "$work/err" && [ "$(wc -l < "$work/err")" -eq 1 ] &&
     [ ! -s "$work/out" ]; then
    ok "$name: exit $want"
  else
    bad "$name: exit $rc (want $want), stdout $(wc -l < "$work/out") lines, stderr: $(cat "$work/err")"
  fi
}
q=(--iterations 3 --min-time 0 --warmup 1 --no-history --quiet)
for cmd in bench run inspect; do
  expect "$cmd missing .onnx" 1 "nope.onnx" -- "$nnperf" $cmd "$work/nope.onnx"
  expect "$cmd zoo:nope" 1 "unknown zoo model" -- "$nnperf" $cmd zoo:nope
done
for cmd in load coldstart; do
  expect "$cmd missing .onnx" 1 "nope.onnx: cannot read the model" -- "$nnperf" $cmd "$work/nope.onnx" --backend native
  expect "$cmd zoo:nope" 1 "unknown zoo model" -- "$nnperf" $cmd zoo:nope --backend native
  expect "$cmd unknown backend" 2 "unknown backend 'nope'" -- "$nnperf" $cmd zoo:tiny --backend nope
done
# the path is named once, not twice
"$nnperf" coldstart "$work/nope.onnx" --backend native 2> "$work/err" > /dev/null
[ "$(grep -o "nope.onnx" "$work/err" | wc -l)" -eq 1 ] && ok "coldstart names the path once" || bad "coldstart: $(cat "$work/err")"
expect "bench unknown backend" 2 "unknown backend 'nope'" -- "$nnperf" bench zoo:tiny --backends nope
# one parenthesis per message: "(nnperf backends lists them) (see nnperf load --help)" read
# as two afterthoughts
for cmd in "bench zoo:tiny --backends nope" "load zoo:tiny --backend nope"; do
  "$nnperf" $cmd 2> "$work/err" > /dev/null
  grep -q ") (" "$work/err" && bad "$cmd: two parentheses in a row: $(cat "$work/err")" || ok "$cmd: one clear line"
done
expect "quantize missing .onnx" 1 "nope.onnx" -- "$nnperf" quantize "$work/nope.onnx" --calib "$work" -o "$work/q.onnx"
expect "compare missing result" 1 "nope.json" -- "$nnperf" compare "$work/nope.json" "$work/nope.json"
expect "unknown command: one line" 2 "unknown command 'frob'" -- "$nnperf" frob
expect "--iterations abc echoes the value" 2 "not 'abc'" -- "$nnperf" bench zoo:tiny --iterations abc
# a bad shape: the error alone, not an empty "0 of 0 rows" table and the environment first
expect "bench rank-3 shape" 1 "rank 3" -- "$nnperf" bench zoo:tiny --shape static:1x3x224 --no-history
# an unavailable backend asked for by name: said plainly; nothing asked for ran: exit 1
"$nnperf" bench zoo:tiny --backends ort-cuda "${q[@]}" > "$work/out" 2> "$work/err"; rc=$?
[ $rc -eq 1 ] && grep -q "asked for but is unavailable" "$work/err" && grep -q "none of the 1 row asked for could run" "$work/err" &&
  ok "only an unavailable backend: exit 1, said plainly" || bad "unavailable backend (exit $rc): $(cat "$work/err")"
# ... beside one that ran: exit 0, still said
"$nnperf" bench zoo:tiny --backends native,ort-cuda "${q[@]}" > "$work/out" 2> "$work/err"; rc=$?
[ $rc -eq 0 ] && grep -q "'ort-cuda.*asked for but is unavailable" "$work/err" &&
  ok "native + unavailable: exit 0, the unavailable one said" || bad "native + unavailable (exit $rc): $(cat "$work/err")"
# a failed row is exit 1
"$nnperf" bench zoo:tiny --backends fault --backend-options fault:mode=error,after=1 "${q[@]}" > /dev/null 2>&1; rc=$?
[ $rc -eq 1 ] && ok "a failed row: exit 1" || bad "a failed row: exit $rc"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
