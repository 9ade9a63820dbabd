/* The environment a measurement was taken in: part of every result. */
#ifndef NNPERF_ENV_H
#define NNPERF_ENV_H

#include <stdint.h>
#include <stdio.h>

#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnp_env {
  char cpu_model[128];     /* /proc/cpuinfo "model name" */
  char cpu_flags[256];     /* the SIMD-relevant subset: sse4_2 avx avx2 fma avx512f avx512_vnni avx_vnni f16c ... */
  int cpus_online;         /* sysconf(_SC_NPROCESSORS_ONLN) */
  int cpus_allowed;        /* sched_getaffinity count */
  int64_t mem_total_bytes; /* /proc/meminfo MemTotal */
  int64_t mem_available_bytes;
  char os[128];            /* /etc/os-release PRETTY_NAME */
  char kernel[128];        /* uname -sr */
  char hostname[64];
  char compiler[96];       /* compiler that built nnperf (__VERSION__) */
  char build_flags[128];   /* build type / sanitizers */
  char governor[32];       /* cpu0 scaling_governor, "" when unreadable */
  double cpu_mhz;          /* cpu0 scaling_cur_freq or cpuinfo "cpu MHz", 0 when unreadable */
  double loadavg1;         /* 1-minute load average at capture time */
  char gpu[128];           /* first GPU name and driver, "" when none found */
  char timestamp[32];      /* UTC ISO-8601 */
} nnp_env;

/* Fills e; fields that cannot be read are left empty/zero (never an error). */
void nnp_env_capture(nnp_env *e);
/* True when the machine looks busy: loadavg1 above half the allowed CPUs. */
int nnp_env_is_busy(const nnp_env *e);
/* Writes e as a JSON object (no trailing newline). */
void nnp_env_write_json(FILE *f, const nnp_env *e);

#ifdef __cplusplus
}
#endif
#endif
