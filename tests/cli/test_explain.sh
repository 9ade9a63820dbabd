#!/usr/bin/env bash
# nnperf explain: the ablation table has every rung (all implemented, +blocked layout included),
# the JSON parses and holds the measured numbers; --passes/--no-PASS reach the engine.
set -uo pipefail
source "$(dirname "$0")/common.sh"

if "$nnperf" explain zoo:tiny --iterations 2 --time 2 --profile > "$work/table" 2> "$work/err"; then
  for rung in naive +folding +fusion "+memory plan" "+blocked layout" "+threads"; do
    if grep -q -- "^$rung " "$work/table"; then ok "table has rung $rung"; else bad "table lacks rung $rung: $(cat "$work/table")"; fi
  done
  # every rung is implemented now: blocked layout has numbers like the others
  if grep -q "^+blocked layout  *[0-9]" "$work/table" && ! grep -q "not implemented" "$work/table"; then
    ok "blocked layout rung measured"
  else
    bad "blocked layout rung: $(grep -- '^+blocked' "$work/table")"
  fi
  # fused convs: FusedConv, or on AVX-512 BlockedConv (every conv of zoo:tiny is blocked there)
  if grep -qE "^(FusedConv|BlockedConv) " "$work/table"; then ok "profile lists the fused convs"; else bad "profile: $(cat "$work/table")"; fi
  # per kernel: zoo:tiny's Flatten has no fast kernel, its convs do
  if grep -qE "^Flatten +reference +1 " "$work/table" && grep -qE "^(FusedConv|BlockedConv) +conv2d\." "$work/table"; then
    ok "profile per kernel"
  else
    bad "profile per kernel: $(cat "$work/table")"
  fi
  if grep -qE "^layout conversions +[0-9]+ ToBlocked \+ [0-9]+ FromBlocked" "$work/table" &&
     grep -qE "^reference kernels +[1-9][0-9]* steps" "$work/table"; then
    ok "profile counts conversions and reference steps"
  else
    bad "profile summary: $(tail -3 "$work/table")"
  fi
else
  bad "explain table: exit $?: $(cat "$work/err")"
fi

if "$nnperf" explain zoo:tiny --iterations 2 --time 2 --threads 3 --json > "$work/json" 2> "$work/err"; then
  # no python needed: count rungs and check field names with grep
  n=$(grep -c '"name":' "$work/json")
  if [ "$n" -eq 7 ]; then ok "json has 7 rungs"; else bad "json has $n rungs"; fi
  if grep -q '"p50_s": [0-9]' "$work/json" && grep -q '"kernels": [0-9]' "$work/json" &&
     grep -q '"bytes_moved": [0-9]' "$work/json" && ! grep -q '"implemented": false' "$work/json"; then
    ok "json fields"
  else
    bad "json fields: $(head -c 600 "$work/json")"
  fi
  py=$(command -v python3)
  if [ -n "$py" ] && "$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["rungs"]; assert r[0]["kernels"] > r[2]["kernels"], r' "$work/json" 2> "$work/pyerr"; then
    ok "json parses; fusion cuts kernels"
  else
    bad "json parse: $(cat "$work/pyerr" 2>/dev/null)"
  fi
  # each rung ran in worker processes (2 rounds) with its own options: the worker says
  # which kernels it ran (reference up to +memory plan, fast from +fast kernels on) and
  # +threads had the 3 threads asked for
  if "$py" -c '
import json, sys
r = {x["name"]: x for x in json.load(open(sys.argv[1]))["rungs"]}
# the note may start with an oversubscription warning on a busy machine: look for the
# kernels part anywhere in it
assert "kernels: reference" in r["naive"]["worker_note"] and r["naive"]["threads"] == 1, r["naive"]
assert "kernels: reference" in r["+memory plan"]["worker_note"], r["+memory plan"]
assert "kernels: reference" not in r["+fast kernels"]["worker_note"], r["+fast kernels"]
assert r["+threads"]["threads"] == 3 and r["+fast kernels"]["threads"] == 1, r["+threads"]
' "$work/json" 2> "$work/pyerr"; then
    ok "each rung ran in a worker with its options"
  else
    bad "rung workers: $(cat "$work/pyerr" 2>/dev/null)"
  fi
else
  bad "explain json: exit $?: $(cat "$work/err")"
fi

# without the blocked layout: its reorders around each lone Conv would hide what the
# other switches do to the step count
steps() { "$nnperf" inspect zoo:tiny --no-blocked-layout "$@" 2>&1 | grep -oE '\(([0-9]+) executed' | grep -oE '[0-9]+'; }
all=$(steps) none=$(steps --no-passes) nofuse=$(steps --no-fuse-activation) only=$(steps --passes fold-batchnorm)
if [ -n "$all" ] && [ "$all" -lt "$nofuse" ] && [ "$nofuse" -lt "$none" ] && [ "$only" -lt "$none" ]; then
  ok "pass switches ($all < $nofuse < $none; fold-batchnorm only $only)"
else
  bad "pass switches: all=$all no-fuse=$nofuse none=$none only=$only"
fi
"$nnperf" inspect zoo:tiny --passes bogus > /dev/null 2>&1
if [ $? -eq 2 ]; then ok "unknown pass is a usage error"; else bad "unknown pass accepted"; fi
if "$nnperf" inspect zoo:tiny --json | grep -q '"memory_plan": {"enabled": true, "planned_bytes": [1-9]'; then
  ok "inspect json memory plan"
else
  bad "inspect json lacks memory_plan"
fi

# inspect --profile: the same tables for the engine's plan; the summary's reference
# steps are the per-kernel rows' "reference" counts, and the per-kernel counts add up to
# the engine steps the profile names, which are those of --engine-graph (the profile is
# per engine step even though the table shows the model as written)
if "$nnperf" inspect zoo:tiny --summary --profile --runs 1 --threads 2 > "$work/prof" 2> "$work/err"; then
  ref=$(grep -oE "^reference kernels +[0-9]+" "$work/prof" | grep -oE "[0-9]+$")
  ref_rows=$(awk '$2 == "reference" {n += $3} END {print n + 0}' "$work/prof")
  kernel_rows=$(awk '/^per kernel/ {on = 1; next} on && NF == 5 && $3 ~ /^[0-9]+$/ {n += $3} /^layout/ {on = 0} END {print n + 0}' "$work/prof")
  steps=$(grep -oE '^profile: per engine step, the graph after the engine.s passes \(([0-9]+) steps' "$work/prof" | grep -oE '[0-9]+')
  engine_steps=$("$nnperf" inspect zoo:tiny --engine-graph --summary | grep -oE '\(([0-9]+) executed' | grep -oE '[0-9]+')
  if [ -n "$ref" ] && [ "$ref" -ge 1 ] && [ "$ref" = "$ref_rows" ] && [ "$kernel_rows" = "$steps" ] && [ "$steps" = "$engine_steps" ]; then
    ok "inspect --profile ($ref reference steps, $kernel_rows of $steps steps in the kernel table)"
  else
    bad "inspect --profile: ref=$ref rows=$ref_rows kernel rows=$kernel_rows steps=$steps engine=$engine_steps: $(cat "$work/prof" "$work/err")"
  fi
  # the table the kernel names came from (kernels/dispatch.h), under the generic override
  # every family portable or off
  if NNP_CPU_FEATURES=generic "$nnperf" inspect zoo:tiny --profile --runs 1 > "$work/prof_generic" 2>&1 &&
     grep -qE "^kernel dispatch +gemm (avx512|avx2|generic), .*winograd (avx512|avx2|off), " "$work/prof" &&
     grep -E "^kernel dispatch " "$work/prof_generic" | grep -qvE "avx" ; then
    ok "inspect --profile prints the dispatch table"
  else
    bad "inspect --profile dispatch table: $(grep "^kernel dispatch" "$work/prof" "$work/prof_generic")"
  fi
else
  bad "inspect --profile: exit $?: $(cat "$work/err")"
fi

test_summary
