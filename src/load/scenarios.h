/* The load scenarios (docs/load.md), after MLPerf LoadGen: single-stream (one query at
 * a time, the next when the previous completes), multi-stream (N queries at every
 * interval), server (Poisson arrivals at a target QPS) and offline (every query at once,
 * dynamically batched), plus the server searches: the highest QPS meeting a P99 bound,
 * and the latency-vs-QPS curve. */
#ifndef NNP_LOAD_SCENARIOS_H
#define NNP_LOAD_SCENARIOS_H

#include "load/worker_pool.h"
#include "nnperf/result_sections.h"

typedef enum nnp_load_scenario {
  NNP_LOAD_SINGLE_STREAM = 0,
  NNP_LOAD_MULTI_STREAM,
  NNP_LOAD_SERVER,
  NNP_LOAD_OFFLINE
} nnp_load_scenario;

const char *nnp_load_scenario_name(nnp_load_scenario s);
int nnp_load_scenario_parse(const char *s, nnp_load_scenario *out);

typedef struct nnp_load_config {
  nnp_load_scenario scenario;
  double qps;            /* server */
  uint64_t seed;
  double duration_s;     /* each run's schedule spans this long */
  int64_t max_queries;   /* 0 = as many as the duration gives */
  int max_batch;         /* offline */
  int streams;           /* multi-stream: queries per interval */
  double interval_s;     /* multi-stream */
  double bound_s;        /* latency bound: late count; P99 target of --find-max-qps */
  int confirm;           /* --find-max-qps: confirmation runs at the found QPS */
} nnp_load_config;

#define NNP_LOAD_MAX_POINTS 64
/* queries in a --find-max-qps step at least (a P99 from fewer is the maximum) */
#define NNP_LOAD_MIN_SEARCH_QUERIES 100

typedef struct nnp_load_point {
  const char *purpose;   /* "measure", "probe", "capacity", "search", "retry", "confirm", "sweep" */
  double target_qps;     /* server runs; 0 otherwise */
  uint64_t seed;
  int passed;            /* search and confirm runs: P99 within the bound and nothing dropped */
  nnp_load_summary s;
  double *samples;       /* owned: the completed queries' latencies, or a seeded reservoir of
                          * NNP_LOAD_RESERVOIR of them (a result file stays small) */
  int n_samples;
} nnp_load_point;

typedef struct nnp_load_result {
  nnp_load_config cfg;
  int n_points;
  nnp_load_point points[NNP_LOAD_MAX_POINTS];
  double capacity_qps;   /* offline items/s with one query per request; -1 if not measured */
  double max_qps;        /* --find-max-qps; -1 if not searched */
} nnp_load_result;

/* Frees the points' samples. */
void nnp_load_result_free(nnp_load_result *res);

/* One run of cfg's scenario (server at qps with seed), appended to res as purpose. */
nnp_status nnp_load_measure(nnp_load_pool *p, const nnp_load_config *cfg, double qps, uint64_t seed,
                            const char *purpose, nnp_load_result *res);

/* Offline capacity of the pool with one query per request: what a server can sustain. */
nnp_status nnp_load_capacity(nnp_load_pool *p, const nnp_load_config *cfg, nnp_load_result *res);

/* Binary search for the highest server QPS whose P99 stays within cfg->bound_s with
 * nothing dropped, between 0 and 1.2x capacity (a failed step is run once more with
 * another seed and passes if either run passes), then cfg->confirm confirmation runs with
 * other seeds; a failed confirmation lowers the answer 5% and confirms again. */
nnp_status nnp_load_find_max_qps(nnp_load_pool *p, const nnp_load_config *cfg, nnp_load_result *res);

/* Server runs at 10%..120% of the capacity: the latency-vs-QPS curve. */
nnp_status nnp_load_sweep(nnp_load_pool *p, const nnp_load_config *cfg, nnp_load_result *res);

#endif
