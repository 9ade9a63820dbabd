/* What a deployment ships and what a row spends: the runtime's bytes (the files the
 * worker process loaded) and energy from a hardware counter. The same definitions as the
 * Python worker's (python/nnperf_worker/footprint.py); docs/worker-protocol.md. */
#ifndef NNP_BENCH_FOOTPRINT_H
#define NNP_BENCH_FOOTPRINT_H

#include <stddef.h>
#include <stdint.h>

#include "nnperf/status.h"

/* Sums the sizes of the distinct regular files mapped into this process
 * (/proc/self/maps: the executable, every shared library, anything mmap'ed), leaving
 * out `exclude` (the model file, counted apart; may be NULL) and the files under
 * `exclude_dir` (a backend's cache folder: the mmapped plan cache is the model's, not the
 * runtime's; may be NULL). */
nnp_status nnp_footprint_runtime(const char *exclude, const char *exclude_dir, int64_t *bytes, int *files);
/* The same for another process (pid > 0; 0: this one), from /proc/PID/maps: a server that
 * nnperf started (llama-server) whose libraries are the deployment's runtime. */
nnp_status nnp_footprint_runtime_pid(int pid, const char *exclude, const char *exclude_dir, int64_t *bytes,
                                     int *files);

/* Size of a file in bytes, -1 when it cannot be stat'ed. */
int64_t nnp_file_bytes(const char *path);

/* Linux powercap (RAPL): the package domains' energy counters, read before and after a
 * window. No estimate ever: where no counter is readable, why says so. */
#define NNP_ENERGY_MAX_DOMAINS 8
typedef struct nnp_energy {
  int n;                                  /* domains found; 0: none readable */
  char path[NNP_ENERGY_MAX_DOMAINS][128]; /* .../energy_uj */
  double range_uj[NNP_ENERGY_MAX_DOMAINS]; /* max_energy_range_uj: where the counter wraps */
  double start_uj[NNP_ENERGY_MAX_DOMAINS];
  char source[128];                       /* "rapl: package-0,package-1" or why none */
} nnp_energy;

/* Finds the counters under root (normally "/sys/class/powercap") and reads their start. */
void nnp_energy_start(nnp_energy *e, const char *root);
/* Joules since nnp_energy_start, summed over domains; -1 when no counter. */
double nnp_energy_joules(const nnp_energy *e);

#endif
