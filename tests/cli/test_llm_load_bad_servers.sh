#!/usr/bin/env bash
# nnperf llm load against misbehaving servers this test starts on 127.0.0.1: each ends in
# failed requests with their cause (or ok for the well-formed one), exit 1 where nothing
# succeeded, never a crash or a hang (every run is bounded by --timeout and `timeout`).
set -u
NNPERF="$1"; SRC="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"; pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0

start() { # MODE -> sets url
  rm -f "$tmp/port"
  python3 "$SRC/tests/llm/bad_server.py" "$1" "$tmp/port" & pids+=($!)
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
  url="http://127.0.0.1:$(cat "$tmp/port")"
}

check() { # MODE EXPECTED_RC GREP_PATTERN
  start "$1"
  timeout 60 "$NNPERF" llm load --endpoint "$url" --concurrency 2 --num-requests 4 --warmup-requests 0 \
    --timeout 2 --metrics-interval 0 --json "$tmp/$1.json" > "$tmp/$1.out" 2>&1
  rc=$?
  if [ "$rc" != "$2" ] || ! grep -q -- "$3" "$tmp/$1.out"; then
    echo "FAIL $1: rc=$rc (want $2), want '$3' in:"; cat "$tmp/$1.out"; fail=1
  else
    echo "ok   $1: rc=$rc, $(grep -m1 -- "$3" "$tmp/$1.out")"
  fi
  python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/$1.json" || { echo "FAIL $1: JSON unreadable"; fail=1; }
}

check ok 0 "concurrency 2 *4 *0"
check http500 1 "failed (http), e.g. http: HTTP 500"
check garbage 1 "failed (malformed event)"
check cut 1 "failed (cut-short)"
check silent 1 "failed (timeout)"
check notokens 1 "failed (no-tokens)"
check huge 1 "failed (malformed stream)"
# nothing listening: connection refused
timeout 30 "$NNPERF" llm load --endpoint http://127.0.0.1:9 --num-requests 2 --timeout 2 > "$tmp/refused.out" 2>&1
rc=$?; grep -q "failed (connect)" "$tmp/refused.out" && [ $rc = 1 ] && echo "ok   refused: rc=1" || { echo "FAIL refused rc=$rc"; cat "$tmp/refused.out"; fail=1; }
# the API key is read from the environment and never written to results
start ok
NNP_TEST_KEY=sekrit-123 timeout 30 "$NNPERF" llm load --endpoint "$url" --api-key-env NNP_TEST_KEY --num-requests 2 \
  --json "$tmp/key.json" > "$tmp/key.out" 2>&1
if grep -q sekrit "$tmp/key.json" "$tmp/key.out"; then echo "FAIL the key leaked into the result"; fail=1; else echo "ok   key not stored"; fi
exit $fail
