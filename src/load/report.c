#include "load/report.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "load/tracker.h"
#include "nnperf/alloc.h"
#include "util/atomic_file.h"

static void jstr(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
    else if (*p >= 0x80) fputc('?', f); /* keep the document valid UTF-8 whatever a worker said */
    else fputc(*p, f);
  }
  fputc('"', f);
}

/* -1 (not measured) and non-finite numbers are null */
static void jnum(FILE *f, double v) {
  if (!isfinite(v) || v < 0) fputs("null", f);
  else fprintf(f, "%.9g", v);
}

static double ms(double s) { return s >= 0 ? s * 1e3 : NAN; }

void nnp_load_print_table(FILE *f, const nnp_load_meta *m, const nnp_load_result *r) {
  if (r->n_points == 0) return;
  fprintf(f, "nnperf load: %s on %s (%s), %s, %d instance%s x %d thread%s\n", m->model, m->backend,
          m->backend_version ? m->backend_version : "", nnp_load_scenario_name(r->cfg.scenario), m->instances,
          m->instances == 1 ? "" : "s", m->threads, m->threads == 1 ? "" : "s");
  fprintf(f, "%-8s %9s %9s %9s %8s %8s %8s %8s %7s %7s %7s %4s\n", "run", "target/s", "offered/s", "achieved/s",
          "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "queries", "late", "dropped", "ok");
  for (int i = 0; i < r->n_points; i++) {
    const nnp_load_point *p = &r->points[i];
    const nnp_load_summary *s = &p->s;
    fprintf(f, "%-8s %9.1f %9.1f %10.1f %8.2f %8.2f %8.2f %8.2f %7lld %7lld %7lld %4s\n", p->purpose, p->target_qps,
            s->offered_qps, s->achieved_qps, ms(s->p50), ms(s->p90), ms(s->p99), ms(s->p999), (long long)s->queries,
            (long long)s->late, (long long)s->dropped, p->passed ? "yes" : "no");
  }
  if (r->capacity_qps > 0) fprintf(f, "offline capacity (1 query per request): %.1f queries/s\n", r->capacity_qps);
  if (r->max_qps >= 0)
    fprintf(f, "max QPS with P99 <= %.3g ms and nothing dropped: %.1f\n", r->cfg.bound_s * 1e3, r->max_qps);
}

static void summary_json(FILE *f, const nnp_load_summary *s) {
  fprintf(f, "\"queries\": %lld, \"completed\": %lld, \"dropped\": %lld, \"late\": %lld, \"offered_qps\": ",
          (long long)s->queries, (long long)s->completed, (long long)s->dropped, (long long)s->late);
  jnum(f, s->offered_qps);
  fputs(", \"achieved_qps\": ", f);
  jnum(f, s->achieved_qps);
  fputs(", \"span_s\": ", f);
  jnum(f, s->span_s);
  const char *names[] = {"p50_s", "p90_s", "p99_s", "p999_s", "mean_s", "max_s"};
  double v[] = {s->p50, s->p90, s->p99, s->p999, s->mean, s->max};
  for (int i = 0; i < 6; i++) {
    fprintf(f, ", \"%s\": ", names[i]);
    jnum(f, v[i]);
  }
}

static void header(FILE *f, const nnp_load_meta *m) {
  fputs("{\n  \"schema_version\": 1,\n  \"schema_minor\": 1,\n  \"tool\": \"nnperf\",\n  \"nnperf_version\": \"0.1.0\",\n"
        "  \"command_line\": ",
        f);
  jstr(f, m->command_line);
  fputs(",\n  \"model\": ", f);
  jstr(f, m->model);
  fputs(",\n  \"backend\": ", f);
  jstr(f, m->backend);
  fputs(",\n  \"backend_version\": ", f);
  jstr(f, m->backend_version);
  fputs(",\n  \"backend_options\": ", f);
  jstr(f, m->options);
  fprintf(f, ",\n  \"instances\": %d,\n  \"threads\": %d,\n  \"note\": ", m->instances, m->threads);
  jstr(f, m->note);
}

nnp_status nnp_load_write_json(const char *path, const nnp_load_meta *m, const nnp_load_result *r,
                               const nnp_load_pool *startup) {
  nnp_atomic_file af;
  NNP_TRY(nnp_atomic_open(&af, path));
  FILE *f = af.f;
  header(f, m);
  const nnp_load_config *c = &r->cfg;
  fprintf(f, ",\n  \"load\": {\n    \"scenario\": \"%s\",\n    \"seed\": %llu,\n    \"duration_s\": ",
          nnp_load_scenario_name(c->scenario), (unsigned long long)c->seed);
  jnum(f, c->duration_s);
  fprintf(f, ",\n    \"max_queries\": %lld,\n    \"max_batch\": %d,\n    \"streams\": %d,\n    \"interval_s\": ",
          (long long)c->max_queries, c->max_batch, c->streams);
  jnum(f, c->interval_s);
  fputs(",\n    \"qps\": ", f);
  jnum(f, c->scenario == NNP_LOAD_SERVER ? c->qps : -1);
  fputs(",\n    \"latency_bound_s\": ", f);
  jnum(f, c->bound_s > 0 ? c->bound_s : -1);
  fputs(",\n    \"capacity_qps\": ", f);
  jnum(f, r->capacity_qps);
  fputs(",\n    \"max_qps\": ", f);
  jnum(f, r->max_qps);
  fputs(",\n    \"runs\": [", f);
  for (int i = 0; i < r->n_points; i++) {
    const nnp_load_point *p = &r->points[i];
    fprintf(f, "%s\n      {\"purpose\": \"%s\", \"target_qps\": ", i ? "," : "", p->purpose);
    jnum(f, p->target_qps > 0 ? p->target_qps : -1);
    fprintf(f, ", \"seed\": %llu, \"passed\": %s, ", (unsigned long long)p->seed, p->passed ? "true" : "false");
    summary_json(f, &p->s);
    fputc('}', f);
  }
  fputs("\n    ],\n    \"startup\": [", f);
  for (int k = 0; startup && k < startup->n; k++) {
    const nnp_load_worker *w = &startup->w[k];
    fprintf(f, "%s\n      {\"spawn_to_ready_s\": ", k ? "," : "");
    jnum(f, w->spawn_to_ready_s);
    fputs(", \"load_s\": ", f);
    jnum(f, w->load_s);
    fputs(", \"first_s\": ", f);
    jnum(f, w->first_s);
    fputs(", \"cold_start_s\": ", f);
    jnum(f, w->cold_start_s);
    fputc('}', f);
  }
  fputs("\n    ]\n  }\n}\n", f);
  return nnp_atomic_commit(&af);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* P50 and P99 of one phase over the runs (nearest rank; -1 entries left out). */
static void phase_quantiles(const nnp_coldstart_sample *s, int n, size_t off, double *p50, double *p99) {
  double v[1024];
  int m = 0;
  for (int i = 0; i < n && m < 1024; i++) {
    double x = *(const double *)((const char *)&s[i] + off);
    if (x >= 0) v[m++] = x;
  }
  qsort(v, (size_t)m, sizeof v[0], cmp_double);
  *p50 = nnp_quantile_sorted(v, m, 0.5);
  *p99 = nnp_quantile_sorted(v, m, 0.99);
}

static const struct {
  const char *name;
  size_t off;
} PHASES[] = {{"spawn_to_ready", offsetof(nnp_coldstart_sample, spawn_to_ready_s)},
              {"load", offsetof(nnp_coldstart_sample, load_s)},
              {"first_inference", offsetof(nnp_coldstart_sample, first_s)},
              {"cold_start", offsetof(nnp_coldstart_sample, cold_start_s)}};

void nnp_coldstart_print_table(FILE *f, const nnp_load_meta *m, const nnp_coldstart_sample *s, int n) {
  fprintf(f, "nnperf coldstart: %s on %s (%s), %d fresh processes, %d thread%s\n", m->model, m->backend,
          m->backend_version ? m->backend_version : "", n, m->threads, m->threads == 1 ? "" : "s");
  fprintf(f, "%-16s %10s %10s\n", "phase", "p50 ms", "p99 ms");
  for (size_t i = 0; i < sizeof PHASES / sizeof PHASES[0]; i++) {
    double p50, p99;
    phase_quantiles(s, n, PHASES[i].off, &p50, &p99);
    fprintf(f, "%-16s %10.2f %10.2f\n", PHASES[i].name, ms(p50), ms(p99));
  }
  if (m->note && m->note[0]) fprintf(f, "note: %s\n", m->note);
}

nnp_status nnp_coldstart_write_json(const char *path, const nnp_load_meta *m, const nnp_coldstart_sample *s, int n) {
  nnp_atomic_file af;
  NNP_TRY(nnp_atomic_open(&af, path));
  FILE *f = af.f;
  header(f, m);
  fprintf(f, ",\n  \"coldstart\": {\n    \"runs\": %d", n);
  for (size_t i = 0; i < sizeof PHASES / sizeof PHASES[0]; i++) {
    double p50, p99;
    phase_quantiles(s, n, PHASES[i].off, &p50, &p99);
    fprintf(f, ",\n    \"%s\": {\"p50_s\": ", PHASES[i].name);
    jnum(f, p50);
    fputs(", \"p99_s\": ", f);
    jnum(f, p99);
    fputs(", \"samples_s\": [", f);
    for (int k = 0; k < n; k++) {
      if (k) fputs(", ", f);
      jnum(f, *(const double *)((const char *)&s[k] + PHASES[i].off));
    }
    fputs("]}", f);
  }
  fputs("\n  }\n}\n", f);
  return nnp_atomic_commit(&af);
}
