#include "load/scenarios.h"

#include <math.h>
#include <string.h>

#include "load/schedule.h"
#include "nnperf/alloc.h"
#include "nnperf/bench.h"

static const char *const NAMES[] = {"single-stream", "multi-stream", "server", "offline"};

const char *nnp_load_scenario_name(nnp_load_scenario s) { return NAMES[s]; }

int nnp_load_scenario_parse(const char *s, nnp_load_scenario *out) {
  for (int i = 0; i < 4; i++)
    if (!strcmp(s, NAMES[i])) {
      *out = (nnp_load_scenario)i;
      return 1;
    }
  return 0;
}

/* Queries in one run: what the duration gives, at most max_queries. */
static int64_t run_queries(const nnp_load_config *c, double rate) {
  double n = rate * c->duration_s;
  if (n < 1) n = 1;
  if (n > 1e7) n = 1e7;
  int64_t q = (int64_t)ceil(n);
  if (c->max_queries > 0 && q > c->max_queries) q = c->max_queries;
  return q;
}

/* The completed queries' latencies, or when there are more than NNP_LOAD_RESERVOIR of
 * them a uniform reservoir (Algorithm R, indices from mix64 of the run's seed: the same
 * run keeps the same queries), in arrival order either way. */
static nnp_status keep_samples(const double *lat, int64_t n, uint64_t seed, nnp_load_point *pt) {
  int64_t cap = NNP_LOAD_RESERVOIR, seen = 0;
  int64_t *pick = nnp_malloc(sizeof(int64_t) * (size_t)cap);
  pt->samples = nnp_malloc(sizeof(double) * (size_t)cap);
  if (!pick || !pt->samples) {
    nnp_free(pick);
    nnp_free(pt->samples);
    pt->samples = NULL;
    return nnp_error(NNP_ERR_NOMEM, "out of memory for the latency samples");
  }
  for (int64_t i = 0; i < n; i++) {
    if (lat[i] < 0) continue;
    if (seen < cap) pick[seen] = i;
    else {
      uint64_t j = nnp_mix64(seed * 0x9E3779B97F4A7C15ull + (uint64_t)seen) % (uint64_t)(seen + 1);
      if (j < (uint64_t)cap) pick[j] = i;
    }
    seen++;
  }
  int m = (int)(seen < cap ? seen : cap);
  /* the reservoir's slots are in no order; arrival order reads better and is stable */
  for (int a = 1; a < m; a++)
    for (int b = a; b > 0 && pick[b - 1] > pick[b]; b--) {
      int64_t t = pick[b];
      pick[b] = pick[b - 1];
      pick[b - 1] = t;
    }
  for (int k = 0; k < m; k++) pt->samples[k] = lat[pick[k]];
  pt->n_samples = m;
  nnp_free(pick);
  return NNP_OK;
}

void nnp_load_result_free(nnp_load_result *res) {
  for (int i = 0; i < res->n_points; i++) {
    nnp_free(res->points[i].samples);
    res->points[i].samples = NULL;
    res->points[i].n_samples = 0;
  }
}

static nnp_status run_one(nnp_load_pool *p, const nnp_load_config *c, nnp_load_scenario sc, double qps, int max_batch,
                          uint64_t seed, const char *purpose, nnp_load_result *res) {
  if (res->n_points == NNP_LOAD_MAX_POINTS) return nnp_error(NNP_ERR_LIMIT, "more than %d load runs", NNP_LOAD_MAX_POINTS);
  nnp_load_run run = {.max_batch = 1, .drain_s = c->duration_s > 1 ? c->duration_s : 1, .bound_s = c->bound_s};
  switch (sc) {
  case NNP_LOAD_SERVER:
    run.n = run_queries(c, qps);
    /* a search step judges a P99: from fewer than 100 queries that is the maximum, and one
     * stall of a shared machine fails the step; such steps run longer (unless --queries),
     * but at most 4 durations: a search sinking to very low rates must still end */
    if (strcmp(purpose, "measure") && strcmp(purpose, "sweep") && c->max_queries <= 0 && run.n < NNP_LOAD_MIN_SEARCH_QUERIES) {
      double most = ceil(4 * qps * c->duration_s);
      run.n = most < NNP_LOAD_MIN_SEARCH_QUERIES ? (int64_t)(most > run.n ? most : run.n) : NNP_LOAD_MIN_SEARCH_QUERIES;
    }
    break;
  case NNP_LOAD_MULTI_STREAM:
    run.n = run_queries(c, c->streams / c->interval_s);
    break;
  case NNP_LOAD_SINGLE_STREAM: /* closed loop: bounded by the duration, the count a ceiling */
    run.n = c->max_queries > 0 ? c->max_queries : 1000000;
    run.closed = 1;
    run.duration_s = c->duration_s;
    break;
  case NNP_LOAD_OFFLINE: /* the count comes from the capacity or --queries */
    run.n = c->max_queries > 0 ? c->max_queries : run_queries(c, qps);
    run.max_batch = max_batch;
    run.drain_s = 10 * c->duration_s + 10; /* every query must complete: nothing is late offline */
    break;
  }
  run.arrival = nnp_malloc(sizeof(double) * (size_t)run.n);
  double *lat = nnp_malloc(sizeof(double) * (size_t)run.n);
  if (!run.arrival || !lat) {
    nnp_free(run.arrival);
    nnp_free(lat);
    return nnp_error(NNP_ERR_NOMEM, "out of memory for %lld queries", (long long)run.n);
  }
  if (sc == NNP_LOAD_SERVER) nnp_schedule_poisson_exact(qps, run.n, seed, run.arrival);
  else if (sc == NNP_LOAD_MULTI_STREAM) nnp_schedule_periodic(c->interval_s, c->streams, run.n, run.arrival);
  else nnp_schedule_offline(run.n, run.arrival);
  nnp_load_point *pt = &res->points[res->n_points];
  memset(pt, 0, sizeof *pt);
  nnp_status st = nnp_load_pool_run(p, &run, lat, &pt->s);
  nnp_free(run.arrival);
  if (st == NNP_OK) st = keep_samples(lat, pt->s.queries, seed, pt);
  nnp_free(lat);
  if (st != NNP_OK) return st;
  pt->purpose = purpose;
  pt->target_qps = sc == NNP_LOAD_SERVER ? qps : 0;
  pt->seed = seed;
  pt->passed = pt->s.dropped == 0 && (c->bound_s <= 0 || (pt->s.p99 >= 0 && pt->s.p99 <= c->bound_s));
  res->n_points++;
  return NNP_OK;
}

nnp_status nnp_load_measure(nnp_load_pool *p, const nnp_load_config *cfg, double qps, uint64_t seed,
                            const char *purpose, nnp_load_result *res) {
  if (cfg->scenario == NNP_LOAD_OFFLINE && cfg->max_queries <= 0 && res->capacity_qps <= 0)
    NNP_TRY(nnp_load_capacity(p, cfg, res)); /* sizes the offline run to about the duration */
  double rate = cfg->scenario == NNP_LOAD_OFFLINE ? res->capacity_qps : qps;
  return run_one(p, cfg, cfg->scenario, rate, cfg->max_batch, seed, purpose, res);
}

nnp_status nnp_load_capacity(nnp_load_pool *p, const nnp_load_config *cfg, nnp_load_result *res) {
  /* a short closed-loop probe sizes the offline run, which then measures the capacity */
  nnp_load_config probe = *cfg;
  probe.duration_s = 0.5;
  probe.max_queries = 0;
  probe.bound_s = 0;
  NNP_TRY(run_one(p, &probe, NNP_LOAD_SINGLE_STREAM, 0, 1, cfg->seed, "probe", res));
  double per_query = res->points[res->n_points - 1].s.mean;
  double rate = per_query > 0 ? nnp_load_pool_slots(p) / per_query : 100;
  probe.duration_s = cfg->duration_s;
  NNP_TRY(run_one(p, &probe, NNP_LOAD_OFFLINE, rate, 1, cfg->seed, "capacity", res));
  res->capacity_qps = res->points[res->n_points - 1].s.achieved_qps;
  if (res->capacity_qps <= 0) return nnp_error(NNP_ERR_INTERNAL, "the offline capacity run completed nothing");
  return NNP_OK;
}

nnp_status nnp_load_find_max_qps(nnp_load_pool *p, const nnp_load_config *cfg, nnp_load_result *res) {
  if (res->capacity_qps <= 0) NNP_TRY(nnp_load_capacity(p, cfg, res));
  double lo = 0, hi = 1.2 * res->capacity_qps;
  for (int step = 0; step < 10 && (hi - lo) > 0.02 * hi; step++) {
    double mid = 0.5 * (lo + hi);
    NNP_TRY(run_one(p, cfg, NNP_LOAD_SERVER, mid, 1, cfg->seed, "search", res));
    int passed = res->points[res->n_points - 1].passed;
    if (!passed) { /* one transient stall on a shared machine must not end the search low:
                    * a failed step gets a second run (another seed); the strict
                    * confirmation below corrects an optimistic answer */
      NNP_TRY(run_one(p, cfg, NNP_LOAD_SERVER, mid, 1, cfg->seed + 100, "retry", res));
      passed = res->points[res->n_points - 1].passed;
    }
    if (passed) lo = mid;
    else hi = mid;
  }
  if (lo <= 0) {
    res->max_qps = 0;
    return NNP_OK; /* even the lowest QPS tried missed the bound: reported as 0 */
  }
  for (int attempt = 0; attempt < 10; attempt++) {
    int ok = 1;
    for (int k = 0; k < cfg->confirm && ok; k++) {
      NNP_TRY(run_one(p, cfg, NNP_LOAD_SERVER, lo, 1, cfg->seed + 1 + (uint64_t)k, "confirm", res));
      ok = res->points[res->n_points - 1].passed;
    }
    if (ok) {
      res->max_qps = lo;
      return NNP_OK;
    }
    lo *= 0.95;
  }
  res->max_qps = 0;
  return NNP_OK;
}

nnp_status nnp_load_sweep(nnp_load_pool *p, const nnp_load_config *cfg, nnp_load_result *res) {
  if (res->capacity_qps <= 0) NNP_TRY(nnp_load_capacity(p, cfg, res));
  static const double levels[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2};
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
    NNP_TRY(run_one(p, cfg, NNP_LOAD_SERVER, levels[i] * res->capacity_qps, 1, cfg->seed, "sweep", res));
  return NNP_OK;
}
