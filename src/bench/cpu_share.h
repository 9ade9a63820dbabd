/* How much of the machine a row had: CPU time of the worker against the CPU time every
 * other process used while it ran (issue 25: a 2-thread row on a busy 2-core machine ran
 * 26x slower than its 1-thread twin, and nothing said why). */
#ifndef NNP_BENCH_CPU_SHARE_H
#define NNP_BENCH_CPU_SHARE_H

#include <sys/resource.h>

#include "nnperf/bench.h"

typedef struct nnp_cpu_mark {
  double t;       /* CLOCK_MONOTONIC seconds */
  double busy_s;  /* non-idle CPU seconds of the whole machine (/proc/stat), -1 unreadable */
  double self_s;  /* this (orchestrator) process's own CPU seconds */
} nnp_cpu_mark;

/* Marks the machine's CPU counters now (before a worker starts / after it was reaped). */
void nnp_cpu_mark_now(nnp_cpu_mark *m);

/* Fills row->worker_cpu_s, worker_wall_s and other_cpus from two marks around the worker
 * and the worker's rusage (wait4): other_cpus is the average number of CPUs busy with
 * anything but the worker and the orchestrator, -1 when /proc/stat is unreadable. */
void nnp_cpu_share_fill(nnp_bench_row *row, const nnp_cpu_mark *before, const nnp_cpu_mark *after,
                        const struct rusage *worker);

/* Pools a further worker process of the same row into row (CPU and wall add up; the
 * other work is the wall-weighted mean). */
void nnp_cpu_share_pool(nnp_bench_row *row, const nnp_bench_row *next);

/* CPUs this process may run on (sched_getaffinity), at least 1. */
int nnp_cpus_allowed(void);

/* Appends the oversubscription note to an ok row that was oversubscribed on cpus CPUs. */
void nnp_cpu_share_note(nnp_bench_row *row, int cpus);

#endif
