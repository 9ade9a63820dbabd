#!/usr/bin/env python3
"""Do a sweep's local rows and its Slurm rows agree? (tests/cli/test_sweep_slurm.sh)

  sweep_rows_agree.py LOCAL.json SLURM.json CLASS[,CLASS...] [--ignore FIELD[,FIELD]] [--stat-info]
                      [--drift FRACTION]

LOCAL.json and SLURM.json are `nnperf sweep collect` documents (bench or llm) of the same
plan, run here and through Slurm. For each hardware class, the Slurm rows must be the
local rows (same model, backend and options: precision, threads, batch, scenario; LLM:
threads, prompt, generation length, concurrency), each ok with a numeric job id, a node
and its host environment, and each row's statistic must agree with its local twin:

  the 95% confidence intervals of the P50 overlap (bench rows: latency; LLM rows: TTFT),
  each interval first widened by the machine's run-to-run drift, --drift (0.10: 10% of
  its ends).

Why that check: the two runs are a minute apart on a machine shared with other work. An
interval from one process covers only its sampling noise, so the plans give each bench row
2 worker processes: the interval of a row measured by several processes is the union of the
sample bootstrap's and a cluster bootstrap's over its processes (nnp_stats_compute_grouped),
which spans the process-to-process spread too. Even so, what the other work on the machine
does changes between the two runs: measured here, zoo:tiny xnnpack gave 0.2355 ms [0.2348,
0.2362] locally and 0.2452 ms [0.2434, 0.2464] through Slurm, 4% apart with intervals 0.6%
wide. The drift allowance covers that, and stays far below the differences the check must
catch (the mutation: zoo:tiny at batch 16 against batch 1, about 20x the P50).

When other work took CPU time from a row's threads (the harness marks it oversubscribed:
threads + CPUs kept busy by others > CPUs + 0.5), its wall-clock P50 is stretched by the
share of CPU time its workers got (cpu.worker_cpu_s / (worker_wall_s x threads)); a pair
apart in wall-clock time is then compared on P50 x share, the CPU time per inference,
which is what the configuration costs. Measured here: squeezenet1_1 native 125.8 ms
locally (share 0.13) and 46.6 ms through Slurm (share 0.33) while five developers built
with sanitizers: 16.4 against 15.4 ms of CPU time. The mutation stays apart either way.

--ignore FIELDS leaves those fields (threads, batch, scenario, ...: a bench row's scenario
holds its shape, so its batch) out of the matching, and LOCAL.json may then hold a subset
of the rows: the mutation check pairs rows measured with different values of them, which
must fail the statistic. --stat-info prints the statistic's verdict
without counting it (LLM rows: one worker process each, so their interval covers the
requests' spread only, not a second process's). Exit 0 when every row agrees, 1 otherwise
(each disagreement on its own line).
"""
import json
import sys

CONFIG = {"bench": ("backend", "precision", "threads", "batch", "scenario"),
          "llm": ("backend", "threads", "prompt_len", "gen_len", "concurrency")}


def stat(doc_kind, row):
    if doc_kind == "llm":
        return row["metrics"]["ttft_s"] if row.get("metrics") else None
    return row.get("stats")


def cpu_share(row):
    """The share of its threads' CPU time the row's workers got (1: none taken by other work)."""
    c = row.get("cpu") or {}
    wall, cpu = c.get("worker_wall_s"), c.get("worker_cpu_s")
    if not wall or cpu is None or cpu <= 0:
        return 1.0
    return min(1.0, cpu / (wall * row["threads"]))


def oversubscribed(row):
    """As the harness marks a row: threads + CPUs other work kept busy > CPUs + 0.5."""
    c, cpus = row.get("cpu") or {}, row["host"]["env"].get("cpus_allowed") or 1
    return c.get("other_cpus") is not None and row["threads"] + c["other_cpus"] > cpus + 0.5


def overlap(x, y, drift):
    (a, b), (c, d) = x, y
    return a * (1 - drift) <= d * (1 + drift) and c * (1 - drift) <= b * (1 + drift)


def verdict(kind, local, slurm, drift):
    """'agree', 'agree (contention-corrected)' or 'DIFFER', and the line's numbers."""
    s, l = stat(kind, slurm), stat(kind, local)
    if overlap(l["p50_ci"], s["p50_ci"], drift):
        return "agree", ""
    if kind == "llm" or not (oversubscribed(local) or oversubscribed(slurm)):
        return "DIFFER", ""
    # other work took CPU time from a row's threads: its wall-clock latency is stretched by
    # 1 / share; the CPU time per inference (P50 x share) is what the configuration costs
    sl, ss = cpu_share(local), cpu_share(slurm)
    scaled = overlap([v * sl for v in l["p50_ci"]], [v * ss for v in s["p50_ci"]], drift)
    note = f" (oversubscribed: CPU shares local {sl:.2f} slurm {ss:.2f})"
    return ("agree (contention-corrected)" if scaled else "DIFFER"), note


def key(doc_kind, row, ignore):
    model = row["label"].split(" ")[0]  # collect names each row "MODEL config..."
    return (model,) + tuple(row[f] for f in CONFIG[doc_kind] if f not in ignore)


def main():
    args = sys.argv[1:]
    ignore, stat_info, drift = (), "--stat-info" in args, 0.10
    args = [a for a in args if a != "--stat-info"]
    if "--drift" in args:
        i = args.index("--drift")
        drift = float(args[i + 1])
        del args[i:i + 2]
    if "--ignore" in args:
        i = args.index("--ignore")
        ignore = tuple(args[i + 1].split(","))
        del args[i:i + 2]
    local_doc, slurm_doc = (json.load(open(p)) for p in args[:2])
    classes = args[2].split(",")
    kind = local_doc["kind"]
    local = {key(kind, r, ignore): r for r in local_doc["rows"]}
    bad = []
    for cls in classes:
        rows = [r for r in slurm_doc["rows"] if r["host"]["class"] == cls]
        got = {key(kind, r, ignore): r for r in rows}
        if ignore:  # the mutation: the (mutated) local rows, each with its Slurm twin
            got = {k: r for k, r in got.items() if k in local}
        if sorted(got) != sorted(local) or not got:
            bad.append(f"{cls}: rows {sorted(got)} but locally {sorted(local)}")
            continue
        for k, r in sorted(got.items()):
            h = r["host"]
            if r["status"] != "ok" or not h["job_id"].isdigit() or not h["node"] or not h["env"]["cpu_model"]:
                bad.append(f"{cls} {r['label']}: status {r['status']}, host {h['job_id']!r} {h['node']!r}")
                continue
            s, l = stat(kind, r), stat(kind, local[k])
            (a, b), (c, d) = l["p50_ci"], s["p50_ci"]
            said, note = verdict(kind, local[k], r, drift)
            agree = said.startswith("agree")
            print(f"{said.split(' ')[0]:6s} {cls:6s} {r['label']:44s} job {h['job_id']:>4s} "
                  f"P50 local {l['p50'] * 1e3:.4f} ms [{a * 1e3:.4f}, {b * 1e3:.4f}] "
                  f"slurm {s['p50'] * 1e3:.4f} ms [{c * 1e3:.4f}, {d * 1e3:.4f}] ratio {s['p50'] / l['p50']:.2f}"
                  f"{'' if a <= d and c <= b else ' (apart before the drift allowance)'}"
                  f"{' ' + said[6:] if said.startswith('agree (') else ''}{note}")
            if not agree and not stat_info:
                bad.append(f"{cls} {r['label']}: P50 intervals apart")
    for line in bad:
        print("DISAGREE:", line)
    print(f"{len(local)} {kind} rows locally, compared with {len(classes)} Slurm class(es): "
          f"{'all agree' if not bad else f'{len(bad)} disagreement(s)'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
