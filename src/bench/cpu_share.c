/* Oversubscription of a row: see cpu_share.h. Why the other processes' CPU time and not
 * the load average: the load average is a 1-minute decaying mean that lags a row of a few
 * seconds, and counts runnable threads, not the CPU they got; /proc/stat's counters over
 * exactly the row's lifetime, less the worker's own rusage, are what competed with it. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/cpu_share.h"

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6; }

/* Non-idle seconds summed over every CPU: user nice system idle iowait irq softirq steal
 * of the "cpu" line, less idle and iowait. */
static double machine_busy_s(void) {
  FILE *f = fopen("/proc/stat", "r");
  if (!f) return -1;
  unsigned long long v[8] = {0};
  int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                 &v[7]);
  fclose(f);
  long hz = sysconf(_SC_CLK_TCK);
  if (n < 4 || hz <= 0) return -1;
  unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return (double)busy / (double)hz;
}

void nnp_cpu_mark_now(nnp_cpu_mark *m) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  m->t = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
  m->busy_s = machine_busy_s();
  struct rusage self;
  m->self_s = getrusage(RUSAGE_SELF, &self) ? 0 : tv_s(self.ru_utime) + tv_s(self.ru_stime);
}

void nnp_cpu_share_fill(nnp_bench_row *row, const nnp_cpu_mark *before, const nnp_cpu_mark *after,
                        const struct rusage *worker) {
  row->worker_cpu_s = tv_s(worker->ru_utime) + tv_s(worker->ru_stime);
  row->worker_wall_s = after->t - before->t;
  row->other_cpus = -1;
  if (before->busy_s < 0 || after->busy_s < 0 || !(row->worker_wall_s > 0)) return;
  double others = (after->busy_s - before->busy_s) - row->worker_cpu_s - (after->self_s - before->self_s);
  /* the counters tick at 100 Hz: a short row can come out a little below zero */
  row->other_cpus = others > 0 ? others / row->worker_wall_s : 0;
}

void nnp_cpu_share_pool(nnp_bench_row *row, const nnp_bench_row *next) {
  double wall = row->worker_wall_s + next->worker_wall_s;
  if (row->other_cpus >= 0 && next->other_cpus >= 0 && wall > 0)
    row->other_cpus = (row->other_cpus * row->worker_wall_s + next->other_cpus * next->worker_wall_s) / wall;
  else
    row->other_cpus = -1;
  row->worker_cpu_s += next->worker_cpu_s;
  row->worker_wall_s = wall;
}

void nnp_cpu_share_note(nnp_bench_row *row, int cpus) {
  if (row->status != NNP_ROW_OK || !nnp_row_oversubscribed(row, cpus)) return;
  /* first in the note, so that a table that shortens long notes still shows it */
  char old[sizeof row->note];
  memcpy(old, row->note, sizeof old);
  double free_cpus = cpus - row->other_cpus;
  int w;
  if (row->threads > cpus)
    w = snprintf(row->note, sizeof row->note, "oversubscribed: %d threads on %d CPUs", row->threads, cpus);
  else
    w = snprintf(row->note, sizeof row->note,
                 "oversubscribed: other work kept %.1f of %d CPUs busy, its %d thread%s had %.1f (used %.1f CPU-s in "
                 "%.1f s)",
                 row->other_cpus, cpus, row->threads, row->threads == 1 ? "" : "s", free_cpus > 0 ? free_cpus : 0,
                 row->worker_cpu_s, row->worker_wall_s);
  if (old[0] && w > 0 && (size_t)w < sizeof row->note)
    snprintf(row->note + w, sizeof row->note - (size_t)w, "; %s", old);
}

int nnp_cpus_allowed(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set)) return 1;
  int n = CPU_COUNT(&set);
  return n > 0 ? n : 1;
}

/* Public (bench.h): the table and the HTML report mark such rows. */
int nnp_row_oversubscribed(const nnp_bench_row *row, int cpus) {
  if (cpus <= 0) return 0;
  if (row->threads > cpus) return 1;
  /* half a CPU of slack: daemons and the orchestrator's own polling are not contention */
  return row->other_cpus >= 0 && row->threads + row->other_cpus > cpus + 0.5;
}
