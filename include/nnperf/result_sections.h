/* What nnperf load and nnperf coldstart record: the "load" and "coldstart" sections of a
 * result document (docs/result-schema.md, schema 1.2). They hang off nnp_bench_result,
 * so the one JSON writer, reader, history and HTML report handle every kind of run. */
#ifndef NNPERF_RESULT_SECTIONS_H
#define NNPERF_RESULT_SECTIONS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Latency samples kept per load run: every query's up to this many, else a seeded
 * uniform reservoir of this many (the summary numbers are over all queries). */
#define NNP_LOAD_RESERVOIR 1000

/* One run of a load scenario (a measurement, a search step, a sweep point). Times in
 * seconds from each query's scheduled arrival; -1 when not measured (no completions). */
typedef struct nnp_load_run_record {
  char purpose[16];      /* measure, probe, capacity, search, retry, confirm, sweep */
  double target_qps;     /* server runs; -1 otherwise */
  uint64_t seed;
  bool passed;           /* P99 within the bound (if any) and nothing dropped */
  int64_t queries, completed, dropped, late;
  double offered_qps, achieved_qps, span_s;
  double p50_s, p90_s, p99_s, p999_s, mean_s, max_s;
  int64_t samples_total; /* completed queries the reservoir was drawn from */
  int n_samples;         /* <= NNP_LOAD_RESERVOIR */
  double *samples_s;     /* owned; completed queries' latencies, in arrival order */
} nnp_load_run_record;

/* Start-up of one serve worker (seconds, -1 when not measured). */
typedef struct nnp_load_startup {
  double spawn_to_ready_s, load_s, first_s, cold_start_s;
} nnp_load_startup;

#define NNP_LOAD_MAX_WORKERS 64

typedef struct nnp_load_section {
  char scenario[16];     /* single-stream, multi-stream, server, offline */
  uint64_t seed;
  double duration_s;
  int64_t max_queries;   /* 0: as many as the duration gives */
  int max_batch;         /* offline: queries per request */
  int streams;           /* multi-stream: queries per interval; server/offline: requests in flight per instance */
  double interval_s;     /* multi-stream */
  int instances;         /* worker processes */
  char backend_options[1024];
  double qps;            /* server target rate; -1 otherwise */
  double latency_bound_s;/* --p99; -1 when none */
  double capacity_qps;   /* offline capacity, one query per request; -1 when not measured */
  double max_qps;        /* --find-max-qps result (0: nothing met the bound); -1 when not searched */
  int n_runs;
  nnp_load_run_record *runs; /* owned */
  int n_startup;
  nnp_load_startup startup[NNP_LOAD_MAX_WORKERS];
} nnp_load_section;

/* One cold start, by phase (seconds, -1 if unknown). */
typedef struct nnp_coldstart_sample {
  double spawn_to_ready_s, load_s, first_s, cold_start_s;
} nnp_coldstart_sample;

typedef struct nnp_coldstart_series {
  int n;
  nnp_coldstart_sample *s; /* owned */
  char note[512];          /* what the last worker of the series said (e.g. the plan cache's outcome) */
} nnp_coldstart_series;

typedef struct nnp_coldstart_section {
  nnp_coldstart_series plain; /* fresh processes without the plan cache */
  char cache_dir[1024];       /* --cache: "" when not used */
  nnp_coldstart_series cold;  /* the one start that filled the cache (n 0 or 1) */
  nnp_coldstart_series warm;  /* fresh processes with the warm cache */
} nnp_coldstart_section;

/* The four phases of a cold start, for writers and readers of the section. */
#define NNP_COLDSTART_PHASES 4
extern const char *const nnp_coldstart_phase_names[NNP_COLDSTART_PHASES]; /* spawn_to_ready, load, first_inference, cold_start */
double nnp_coldstart_phase(const nnp_coldstart_sample *s, int phase);
/* Nearest-rank quantile q of phase over the series' samples >= 0; -1 when none. */
double nnp_coldstart_quantile(const nnp_coldstart_series *s, int phase, double q);

void nnp_load_section_free(nnp_load_section *l);
void nnp_coldstart_section_free(nnp_coldstart_section *c);

#ifdef __cplusplus
}
#endif
#endif
