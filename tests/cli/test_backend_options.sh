#!/usr/bin/env bash
# Backend options reach the frameworks: ort-cpu's graph optimisation level (a bad level is
# refused naming the choices, the other rows still run) and openvino's model cache dir.
set -uo pipefail
nnperf=$1
py=python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
skip() { echo "SKIP: $1"; exit 77; }
quick=(--warmup 1 --iterations 3 --min-time 0 --threads 1)
"$nnperf" backends > "$work/b" 2>&1
grep -Eq "^ort-cpu +available" "$work/b" || skip "ort-cpu is not available here (scripts/install-python.sh)"
"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || { echo "FAIL cannot write zoo model"; exit 1; }

for level in disable basic extended all; do
  "$nnperf" bench "$work/tiny.onnx" --backends native,ort-cpu --backend-options "ort-cpu:opt=$level" "${quick[@]}" \
    --json "$work/$level.json" > /dev/null 2>&1
  $py - "$work/$level.json" "$level" <<'PY' && ok "ort-cpu opt=$level" || bad "ort-cpu opt=$level"
import json, sys
r = {r["backend"]: r for r in json.load(open(sys.argv[1]))["rows"]}["ort-cpu"]
assert r["status"] == "ok" and f"level {sys.argv[2]}" in r["note"], (r["status"], r["reason"], r["note"])
assert r["accuracy"]["within_tol"], r["accuracy"]
PY
done
"$nnperf" bench "$work/tiny.onnx" --backends native,ort-cpu --backend-options "ort-cpu:opt=turbo" "${quick[@]}" \
  --json "$work/bad.json" > /dev/null 2>&1
$py - "$work/bad.json" <<'PY' && ok "ort-cpu opt=turbo refused, native still ran" || bad "ort-cpu opt=turbo refused"
import json, sys
rows = {r["backend"]: r for r in json.load(open(sys.argv[1]))["rows"]}
assert rows["native"]["status"] == "ok"
r = rows["ort-cpu"]
assert r["status"] != "ok" and "opt=turbo" in r["reason"] and "extended" in r["reason"], r["reason"]
PY

if grep -Eq "^openvino +available" "$work/b"; then
  "$nnperf" bench "$work/tiny.onnx" --backends openvino --backend-options "openvino:cache_dir=$work/ovcache" \
    "${quick[@]}" > /dev/null 2>&1
  [ -n "$(ls -A "$work/ovcache" 2>/dev/null)" ] && ok "openvino cache_dir filled" || bad "openvino cache_dir filled"
else
  echo "openvino not available here: cache_dir not checked"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
