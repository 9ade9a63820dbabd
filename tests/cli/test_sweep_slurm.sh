#!/usr/bin/env bash
# nnperf sweep through a one-node Slurm cluster this test starts itself (slurm_cluster.sh):
# plan errors before anything is submitted, the same plan locally and on Slurm giving the
# same rows (each Slurm row with its job id and node), a job cancelled mid-run leaving its
# unfinished rows failed with the reason and every other row kept, and --resume running
# only those. Bounded: every wait has a limit; the cluster is torn down on exit.
# Exit 77 (skip, with the reason) without root or Slurm's packages.
set -uo pipefail
NNPERF=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/slurm_cluster.sh"
work=$(mktemp -d /tmp/nnp-sweep-test.XXXXXX)
trap 'slurm_cluster_stop; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; [ -f "$work/cluster/log/slurmctld.log" ] && tail -n 5 "$work/cluster/log/slurmctld.log"; exit 1; }
cd "$work"

plan() { # plan NAME MIN_TIME HARDWARE BACKENDS
  cat >"$1.json" <<EOF
{"name": "$1", "models": ["zoo:tiny", "zoo:squeezenet1_1"], "backends": $4, "batches": [1], "threads": [1],
 "loop": {"warmup": 3, "iterations": 20, "min_time_s": $2, "max_time_s": 8, "processes": 1, "timeout_s": 60},
 "hardware": $3, "slurm": {"mem_mib": 512, "time_margin_s": 60}}
EOF
}
classes='[{"name": "cpu", "partition": "cpu"}, {"name": "small", "partition": "cpu-small", "constraint": "nnptest"}]'
plan two 0.3 "$classes" '["native", "xnnpack"]'
grep -q xnnpack <("$NNPERF" backends | grep available | grep -v unavailable) || plan two 0.3 "$classes" '["native", "ort-cpu"]'

# --- errors: one line each, before anything is submitted ---------------------------------
one_line_error() { # one_line_error WHAT EXPECTED-SUBSTRING -- command...
  local what=$1 want=$2
  shift 3
  "$@" >out.txt 2>err.txt && fail "$what: exit 0"
  [ "$(wc -l <err.txt)" -eq 1 ] || { cat err.txt; fail "$what: not one line"; }
  grep -q -- "$want" err.txt || { cat err.txt; fail "$what: no '$want'"; }
  [ ! -e "$work/two.results" ] && [ ! -e "$work/nopart.results" ] || fail "$what: something was submitted or written"
  echo "ok: $what: $(cat err.txt)"
}
echo '{"models": ["zoo:tiny"], "backends": ["native"],' >bad.json
one_line_error "malformed plan" "bad.json: line" -- "$NNPERF" sweep bad.json --slurm
sed 's/"native", /"nativ", /' two.json >typo.json
one_line_error "unknown backend" "unknown backend 'nativ'" -- "$NNPERF" sweep typo.json --slurm
one_line_error "Slurm absent" "Slurm is not available: sbatch not found" -- env PATH=/nonexistent "$NNPERF" sweep two.json --slurm

slurm_cluster_start "$work/cluster"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail "the test cluster did not come up"
sed 's/"cpu-small"/"gpu-h100"/' two.json >nopart.json
one_line_error "unknown partition" "hardware class small: sbatch refused it: .*invalid partition" -- "$NNPERF" sweep nopart.json --slurm

# --- local and Slurm: the same rows --------------------------------------------------------
timeout 120 "$NNPERF" sweep two.json --results local.results --no-history -q || fail "local sweep"
timeout 30 "$NNPERF" sweep two.json --slurm || fail "sweep --slurm"
# one node, exclusive jobs: the last job waits behind three others, so status shows it queued
"$NNPERF" sweep status two.json >queued.txt || fail "sweep status"
grep -q "queued: 2 rows" queued.txt || { cat queued.txt; fail "status shows no queued rows"; }
wait_jobs() { # until no job of the plan is queued or running (bounded)
  for _ in $(seq 240); do
    "$NNPERF" sweep status "$1" >status.txt || fail "sweep status"
    grep -q "PENDING\|RUNNING\|COMPLETING" status.txt || return 0
    sleep 0.5
  done
  cat status.txt
  fail "jobs of $1 still running after 120 s"
}
wait_jobs two.json
cat status.txt
grep -q "total: 8 rows ok, 0 failed, 0 not done" status.txt || fail "not every Slurm row done"
"$NNPERF" sweep collect two.json --no-history -q || fail "collect"
python3 - "$work" <<'EOF' || fail "local and Slurm rows differ"
import json, sys
w = sys.argv[1]
local = json.load(open(f"{w}/local.results/collected.json"))["rows"]
slurm = json.load(open(f"{w}/two.results/collected.json"))["rows"]
key = lambda r: (r["label"], r["backend"], r["precision"], r["threads"], r["batch"], r["scenario"])
want = sorted(key(r) for r in local)
for cls in ("cpu", "small"):
    rows = [r for r in slurm if r["host"]["class"] == cls]
    assert sorted(key(r) for r in rows) == want, (cls, rows)
    for r in rows:
        assert r["status"] == "ok" and r["host"]["job_id"].isdigit() and r["host"]["node"] == "nnpnode1", r["host"]
        assert r["host"]["env"]["cpu_model"], "row without its host environment"
        l = next(x for x in local if key(x) == key(r))
        ratio = r["stats"]["p50"] / l["stats"]["p50"]
        (a, b), (c, d) = l["stats"]["p50_ci"], r["stats"]["p50_ci"]
        overlap = "overlap" if a <= d and c <= b else "apart"
        print(f"{cls:6s} {r['label']:40s} job {r['host']['job_id']:3s} P50 slurm/local {ratio:.2f}, 95% CIs {overlap}")
        assert 1 / 5 < ratio < 5, "P50 far from the local run's"  # a shared 2-core VM: loose
assert all("host" in r and r["host"]["class"] == "local" for r in local)
print(f"ok: {len(want)} rows locally, the same {len(want)} on each of 2 Slurm classes")
EOF

# into the history: the stored run keeps each row's host (class, node, job id, environment)
"$NNPERF" sweep collect two.json --history "$work/h.db" -q || fail "collect into the history"
"$NNPERF" history export 1 --history "$work/h.db" | python3 -c '
import json, sys
rows = json.load(sys.stdin)["rows"]
assert len(rows) == 8 and all(r["host"]["job_id"] and r["host"]["env"]["hostname"] for r in rows), rows
' || fail "the history lost the rows' hosts"

# the report: a chart per model across the classes, rows named with their class
"$NNPERF" report two.results/collected.json -o two.html || fail "report of the collected sweep"
[ "$(grep -c "P50 per hardware class" two.html)" -eq 2 ] && grep -q "native fp32 t1 b1 @small" two.html ||
  fail "the report has no chart per model across classes"
# to a file, not `| grep -q`: under pipefail grep's early exit kills nnperf with SIGPIPE once
# the table is longer than one stdio buffer
"$NNPERF" sweep collect two.json --no-history > collect.txt || fail "sweep collect"
grep -q "n/a (differs: host" collect.txt || fail "the table ranks rows of another class"

# --- a job cancelled mid-run, then --resume -------------------------------------------------
plan cut 2 '[{"name": "cpu", "partition": "cpu"}]' '["native", "xnnpack"]'
grep -q '"ort-cpu"' two.json && plan cut 2 '[{"name": "cpu", "partition": "cpu"}]' '["native", "ort-cpu"]'
timeout 30 "$NNPERF" sweep cut.json --slurm >submit.txt || fail "sweep --slurm (cut)"
first=$(awk '/submitted job/ {print $3; exit}' submit.txt | tr -d :)
for _ in $(seq 120); do # the first job's first row written: cancel it mid-run
  [ "$(ls cut.results/rows/cpu 2>/dev/null | wc -l)" -ge 1 ] && break
  sleep 0.25
done
[ "$(ls cut.results/rows/cpu | wc -l)" -eq 1 ] || fail "no first row to cancel after"
scancel "$first"
wait_jobs cut.json
cat status.txt
grep -q "job $first .*CANCELLED.*1 ok, 0 failed, 1 not done" status.txt || fail "the cancelled job's rows"
grep -q "failed: 1 rows: job $first ended CANCELLED" status.txt || fail "no reason for the cancelled rows"
grep -q "total: 3 rows ok, 1 failed, 0 not done" status.txt || fail "the other job's rows were not kept"
md5sum cut.results/rows/cpu/*.json | sort >kept.md5
"$NNPERF" sweep cut.json --slurm >again.txt 2>&1 && fail "a second submission without --resume over existing rows"
timeout 30 "$NNPERF" sweep cut.json --slurm --resume >resume.txt || fail "--resume"
cat resume.txt
[ "$(grep -c 'submitted job' resume.txt)" -eq 1 ] && grep -q "zoo:tiny, 1 rows" resume.txt || fail "--resume did not submit only the failed row"
wait_jobs cut.json
grep -q "total: 4 rows ok, 0 failed, 0 not done" status.txt || { cat status.txt; fail "resume did not finish the rows"; }
md5sum -c --quiet kept.md5 || fail "a kept row was rewritten by the resume"
echo "ok: cancelled job $first: its unfinished row failed with the reason, the rest kept; --resume reran only it"
