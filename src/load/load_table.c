#include "load/load_table.h"

#include <math.h>
#include <string.h>

#include "nnperf/alloc.h"

static double ms(double s) { return s >= 0 ? s * 1e3 : NAN; }

void nnp_load_row_fill(nnp_bench_row *w, const nnp_load_meta *m, const nnp_load_target *t,
                       const nnp_load_startup *first_worker, const char *error) {
  memset(w, 0, sizeof *w);
  snprintf(w->backend, sizeof w->backend, "%s", m->backend);
  snprintf(w->backend_version, sizeof w->backend_version, "%s", m->backend_version ? m->backend_version : "");
  w->precision = NNP_FP32;
  w->threads = m->threads;
  w->batch = 1;
  snprintf(w->label, sizeof w->label, "%.31s fp32 t%d b1", m->backend, m->threads);
  /* the input shapes, as a bench row names them */
  int len = snprintf(w->scenario, sizeof w->scenario, "static:");
  for (int i = 0; t && i < t->n_inputs && len < (int)sizeof w->scenario; i++)
    for (int d = 0; d < t->inputs[i].rank && len < (int)sizeof w->scenario; d++)
      len += snprintf(w->scenario + len, sizeof w->scenario - (size_t)len, "%s%lld", d ? "x" : i ? "," : "",
                      (long long)t->inputs[i].dims[d]);
  snprintf(w->note, sizeof w->note, "%s", m->note ? m->note : "");
  w->status = error && error[0] ? NNP_ROW_FAILED : NNP_ROW_OK;
  snprintf(w->reason, sizeof w->reason, "%s", error ? error : "");
  w->parse_s = w->compile_s = -1;
  w->spawn_to_ready_s = first_worker ? first_worker->spawn_to_ready_s : -1;
  w->load_s = first_worker ? first_worker->load_s : -1;
  w->first_s = first_worker ? first_worker->first_s : -1;
  w->cold_start_s = first_worker ? first_worker->cold_start_s : -1;
  w->acc.top1 = w->acc.top5 = -1;
}

nnp_status nnp_load_doc_init(nnp_bench_result *r, const nnp_load_meta *m, const nnp_load_target *t, uint64_t seed,
                             const nnp_load_startup *first_worker, const char *error) {
  memset(r, 0, sizeof *r);
  snprintf(r->model, sizeof r->model, "%s", m->model);
  snprintf(r->nnperf_version, sizeof r->nnperf_version, "0.1.0");
  snprintf(r->command_line, sizeof r->command_line, "%s", m->command_line);
  nnp_env_capture(&r->env);
  nnp_loop_spec_default(&r->loop); /* not used by load runs; written so the document is complete */
  r->seed = seed;
  r->accuracy_rtol = -1; /* nothing compared */
  r->noisy = nnp_env_is_busy(&r->env);
  r->rows = nnp_calloc(1, sizeof *r->rows);
  if (!r->rows) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  r->n_rows = r->cap_rows = 1;
  nnp_load_row_fill(&r->rows[0], m, t, first_worker, error);
  return NNP_OK;
}

nnp_status nnp_load_doc_set_load(nnp_bench_result *r, nnp_load_result *res, const nnp_load_pool *pool,
                                 const char *options, int instances) {
  nnp_load_section *l = nnp_calloc(1, sizeof *l);
  if (!l) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  const nnp_load_config *c = &res->cfg;
  snprintf(l->scenario, sizeof l->scenario, "%s", nnp_load_scenario_name(c->scenario));
  l->seed = c->seed;
  l->duration_s = c->duration_s;
  l->max_queries = c->max_queries;
  l->max_batch = c->max_batch;
  l->streams = c->streams;
  /* what the workers run at once: a worker without concurrent serving says 1 */
  if (c->scenario != NNP_LOAD_MULTI_STREAM && pool && pool->n > 0) l->streams = pool->w[0].streams;
  l->interval_s = c->interval_s;
  l->instances = instances;
  snprintf(l->backend_options, sizeof l->backend_options, "%s", options ? options : "");
  l->qps = -1; /* --qps only sets the rate of a plain server measurement, not of a search or sweep */
  for (int i = 0; i < res->n_points; i++)
    if (c->scenario == NNP_LOAD_SERVER && !strcmp(res->points[i].purpose, "measure")) l->qps = c->qps;
  l->latency_bound_s = c->bound_s > 0 ? c->bound_s : -1;
  l->capacity_qps = res->capacity_qps;
  l->max_qps = res->max_qps;
  if (res->n_points) {
    l->runs = nnp_calloc((size_t)res->n_points, sizeof *l->runs);
    if (!l->runs) {
      nnp_free(l);
      return nnp_error(NNP_ERR_NOMEM, "out of memory");
    }
  }
  for (int i = 0; i < res->n_points; i++) {
    nnp_load_point *p = &res->points[i];
    nnp_load_run_record *u = &l->runs[i];
    const nnp_load_summary *s = &p->s;
    snprintf(u->purpose, sizeof u->purpose, "%s", p->purpose);
    u->target_qps = p->target_qps > 0 ? p->target_qps : -1;
    u->seed = p->seed;
    u->passed = p->passed;
    u->queries = s->queries, u->completed = s->completed, u->dropped = s->dropped, u->late = s->late;
    u->offered_qps = s->offered_qps, u->achieved_qps = s->achieved_qps, u->span_s = s->span_s;
    u->p50_s = s->p50, u->p90_s = s->p90, u->p99_s = s->p99, u->p999_s = s->p999, u->mean_s = s->mean, u->max_s = s->max;
    u->samples_total = s->completed;
    u->samples_s = p->samples; /* moved */
    u->n_samples = p->n_samples;
    p->samples = NULL;
    p->n_samples = 0;
  }
  l->n_runs = res->n_points;
  for (int k = 0; pool && k < pool->n && k < NNP_LOAD_MAX_WORKERS; k++) {
    const nnp_load_worker *w = &pool->w[k];
    l->startup[k] = (nnp_load_startup){w->spawn_to_ready_s, w->load_s, w->first_s, w->cold_start_s};
    l->n_startup = k + 1;
  }
  nnp_load_section_free(r->load);
  nnp_free(r->load);
  r->load = l;
  return NNP_OK;
}

void nnp_load_print_table(FILE *f, const nnp_bench_result *r) {
  const nnp_load_section *l = r->load;
  if (!l || l->n_runs == 0 || r->n_rows < 1) return;
  const nnp_bench_row *w = &r->rows[0];
  fprintf(f, "nnperf load: %s on %s (%s), %s, %d instance%s x %d thread%s", r->model, w->backend, w->backend_version,
          l->scenario, l->instances, l->instances == 1 ? "" : "s", w->threads, w->threads == 1 ? "" : "s");
  if (strcmp(l->scenario, "multi-stream") && l->streams > 1) fprintf(f, ", %d streams per instance", l->streams);
  fprintf(f, "\n%-8s %9s %9s %9s %8s %8s %8s %8s %7s %7s %7s %4s\n", "run", "target/s", "offered/s", "achieved/s",
          "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "queries", "late", "dropped", "ok");
  for (int i = 0; i < l->n_runs; i++) {
    const nnp_load_run_record *u = &l->runs[i];
    char target[16] = "-", offered[16] = "-"; /* runs without a rate (offline, single-stream) */
    if (u->target_qps > 0) snprintf(target, sizeof target, "%.1f", u->target_qps);
    if (u->offered_qps > 0) snprintf(offered, sizeof offered, "%.1f", u->offered_qps);
    fprintf(f, "%-8s %9s %9s %10.1f %8.2f %8.2f %8.2f %8.2f %7lld %7lld %7lld %4s\n", u->purpose, target, offered, u->achieved_qps, ms(u->p50_s), ms(u->p90_s),
            ms(u->p99_s), ms(u->p999_s), (long long)u->queries, (long long)u->late, (long long)u->dropped,
            u->passed ? "yes" : "no");
  }
  if (l->capacity_qps > 0) fprintf(f, "offline capacity (1 query per request): %.1f queries/s\n", l->capacity_qps);
  if (l->max_qps >= 0)
    fprintf(f, "max QPS with P99 <= %.3g ms and nothing dropped: %.1f\n", l->latency_bound_s * 1e3, l->max_qps);
}

static void series_table(FILE *f, const nnp_coldstart_series *s, const char *title) {
  fprintf(f, "%s (%d fresh process%s)\n%-16s %10s %10s\n", title, s->n, s->n == 1 ? "" : "es", "phase", "p50 ms",
          "p99 ms");
  for (int ph = 0; ph < NNP_COLDSTART_PHASES; ph++)
    fprintf(f, "%-16s %10.2f %10.2f\n", nnp_coldstart_phase_names[ph], ms(nnp_coldstart_quantile(s, ph, 0.5)),
            ms(nnp_coldstart_quantile(s, ph, 0.99)));
  if (s->note[0]) fprintf(f, "note: %s\n", s->note);
}

void nnp_coldstart_print_table(FILE *f, const nnp_bench_result *r) {
  const nnp_coldstart_section *c = r->coldstart;
  if (!c || r->n_rows < 1) return;
  const nnp_bench_row *w = &r->rows[0];
  fprintf(f, "nnperf coldstart: %s on %s (%s), %d thread%s\n", r->model, w->backend, w->backend_version, w->threads,
          w->threads == 1 ? "" : "s");
  series_table(f, &c->plain, "without the plan cache");
  if (c->cold.n > 0)
    fprintf(f, "first start with the cache (fills %s): %.2f ms cold start%s%s\n", c->cache_dir, ms(c->cold.s[0].cold_start_s),
            c->cold.note[0] ? "; " : "", c->cold.note);
  if (c->warm.n > 0) {
    series_table(f, &c->warm, "with the warm plan cache");
    double a = nnp_coldstart_quantile(&c->plain, 3, 0.5), b = nnp_coldstart_quantile(&c->warm, 3, 0.5);
    /* as a speed-up, in ms like the tables above: "0.56x" read like a slowdown (issue 25) */
    fprintf(f, "cold start P50: %.2f ms without the plan cache, %.2f ms with a warm one: %.2fx %s\n", ms(a), ms(b),
            a > 0 && b > 0 ? (a >= b ? a / b : b / a) : 0, a >= b ? "faster" : "slower");
  }
}
