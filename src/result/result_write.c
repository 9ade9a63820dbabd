/* The result document's one writer (nnperf/result.h): every configuration field,
 * outcome, phase, statistic and raw sample of a run, and its load / coldstart section
 * (schema: docs/result-schema.md). Also the atomic file writer that the CSV and HTML
 * outputs share. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "llm/llm_load_result.h"
#include "llm/llm_report.h"
#include "nnperf/report.h"
#include "nnperf/result.h"
#include "result/result_json.h"
#include "util/atomic_file.h"
#include "util/json_write.h"

/* --- values --------------------------------------------------------------------------- */

static void json_bool(FILE *f, bool b) { fputs(b ? "true" : "false", f); }

/* Phase times and other "-1 when not measured" quantities: null when negative. */
static void json_opt_seconds(FILE *f, double v) {
  if (v < 0.0) fputs("null", f);
  else nnp_json_number(f, v);
}

/* Positive quantities where 0 means "not measured". */
static void json_opt_positive(FILE *f, double v) {
  if (!(v > 0.0)) fputs("null", f);
  else nnp_json_number(f, v);
}

static void json_opt_bytes(FILE *f, int64_t v) {
  if (v <= 0) fputs("null", f);
  else fprintf(f, "%lld", (long long)v); /* exact: %.9g would round large byte counts */
}

typedef struct key_number {
  const char *key;
  double v;
} key_number;

/* The pairs as "key": value, the first after first_sep and each other after sep, every
 * value written by emit (nnp_json_number, or one of the json_opt_ writers above). */
static void write_numbers(FILE *f, const char *first_sep, const char *sep, const key_number *kv, size_t n,
                          void (*emit)(FILE *, double)) {
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "%s\"%s\": ", i ? sep : first_sep, kv[i].key);
    emit(f, kv[i].v);
  }
}
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

void nnp_result_write_stats(FILE *f, const nnp_stats *s) {
  if (s->n <= 0) {
    fputs("null", f);
    return;
  }
  fprintf(f, "{\"n\": %d", s->n);
  const key_number nums[] = {{"min", s->min}, {"max", s->max}, {"mean", s->mean}, {"stdev", s->stdev},
                             {"cv", s->cv},   {"p50", s->p50}, {"p90", s->p90},   {"p95", s->p95},
                             {"p99", s->p99}, {"p999", s->p999}};
  write_numbers(f, ", ", ", ", nums, N_OF(nums), nnp_json_number);
  fputs(", \"p50_ci\": [", f);
  nnp_json_number(f, s->p50_lo);
  fputs(", ", f);
  nnp_json_number(f, s->p50_hi);
  fputs("], \"p99_ci\": [", f);
  nnp_json_number(f, s->p99_lo);
  fputs(", ", f);
  nnp_json_number(f, s->p99_hi);
  fputs("], \"p99_underpowered\": ", f);
  json_bool(f, s->p99_underpowered);
  fputs(", \"p999_underpowered\": ", f);
  json_bool(f, s->p999_underpowered);
  fputc('}', f);
}

static void write_accuracy(FILE *f, const nnp_accuracy *a) {
  fputs("{\"compared\": ", f);
  json_bool(f, a->compared);
  fputs(", \"reference\": ", f);
  NNP_JSON_FIELD(f, a->reference);
  /* Without a comparison the numbers are meaningless (typically zero): null, not 0,
   * so that nobody reads "max_rel 0" as "exact". */
  const struct {
    const char *key;
    double v;
    bool frac; /* top-k: negative means "not a classifier" */
  } nums[] = {{"max_abs", a->max_abs, false}, {"max_rel", a->max_rel, false},
              {"cosine", a->cosine, false},   {"top1", a->top1, true},
              {"top5", a->top5, true}};
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
    fprintf(f, ", \"%s\": ", nums[i].key);
    if (!a->compared || (nums[i].frac && nums[i].v < 0.0)) fputs("null", f);
    else nnp_json_number(f, nums[i].v);
  }
  fputs(", \"within_tol\": ", f);
  if (a->compared) json_bool(f, a->within_tol);
  else fputs("null", f);
  fputs(", \"criterion\": ", f); /* what within_tol judged: precisions differ */
  if (a->compared) NNP_JSON_FIELD(f, a->criterion);
  else fputs("null", f);
  fputc('}', f);
}

void nnp_result_write_host(FILE *f, const char *indent, const char *hw_class, size_t hw_class_cap, const char *node,
                           size_t node_cap, const char *job_id, size_t job_id_cap, const nnp_env *env) {
  fprintf(f, ",\n%s\"host\": {\"class\": ", indent);
  nnp_json_clean_string(f, hw_class, hw_class_cap);
  fputs(", \"node\": ", f);
  nnp_json_clean_string(f, node, node_cap);
  fputs(", \"job_id\": ", f);
  nnp_json_clean_string(f, job_id, job_id_cap);
  fputs(", \"env\": ", f);
  nnp_env_write_json(f, env);
  fputc('}', f);
}

void nnp_result_write_footprint_energy(FILE *f, const nnp_row_extras *x, const char *energy_key) {
  fputs("\"footprint\": {\"runtime_bytes\": ", f);
  json_opt_bytes(f, x->runtime_bytes);
  fputs(", \"runtime_files\": ", f);
  if (x->runtime_files >= 0) fprintf(f, "%d", x->runtime_files);
  else fputs("null", f);
  fputs(", \"model_bytes\": ", f);
  json_opt_bytes(f, x->model_bytes);
  fprintf(f, "}, \"energy\": {\"%s\": ", energy_key);
  if (x->energy_j >= 0) fprintf(f, "%.9g", x->energy_j);
  else fputs("null", f);
  fputs(", \"source\": ", f);
  NNP_JSON_FIELD(f, x->energy_source);
  fputs("}", f);
}

/* Footprint, energy, device and extra phases (schema minor 4; docs/result-schema.md). */
static void write_extras(FILE *f, const nnp_row_extras *x) {
  fputs(",\n      \"device\": ", f);
  NNP_JSON_FIELD(f, x->device);
  fputs(", \"device_info\": ", f);
  NNP_JSON_FIELD(f, x->device_info);
  fputs(", \"realistic\": ", f);
  json_bool(f, x->realistic);
  fputs(",\n      ", f);
  nnp_result_write_footprint_energy(f, x, "j_per_inference");
  fputs(",\n      \"device_memory\": {\"allocated_peak_bytes\": ", f);
  json_opt_bytes(f, x->dev_alloc_peak);
  fputs(", \"reserved_peak_bytes\": ", f);
  json_opt_bytes(f, x->dev_reserved_peak);
  fputs(", \"process_bytes\": ", f);
  json_opt_bytes(f, x->dev_process_bytes);
  fputs("},\n      \"extra_phases\": {", f);
  for (int i = 0; i < x->n_phases; i++) {
    fprintf(f, "%s", i ? ", " : "");
    nnp_json_string(f, x->phase_name[i]);
    fputs(": ", f);
    json_opt_seconds(f, x->phase_s[i]);
  }
  fputc('}', f);
}

static void write_row(FILE *f, const nnp_bench_row *w) {
  fputs("    {\n      \"label\": ", f);
  NNP_JSON_FIELD(f, w->label);
  fputs(",\n      \"backend\": ", f);
  NNP_JSON_FIELD(f, w->backend);
  fputs(",\n      \"backend_version\": ", f);
  NNP_JSON_FIELD(f, w->backend_version);
  fputs(",\n      \"precision\": ", f);
  nnp_json_string(f, nnp_precision_name(w->precision));
  fprintf(f, ",\n      \"threads\": %d,\n      \"batch\": %lld,\n      \"scenario\": ", w->threads,
          (long long)w->batch);
  NNP_JSON_FIELD(f, w->scenario);
  fputs(",\n      \"status\": ", f);
  nnp_json_string(f, nnp_row_status_name(w->status));
  fputs(",\n      \"reason\": ", f);
  NNP_JSON_FIELD(f, w->reason);
  fputs(",\n      \"note\": ", f);
  NNP_JSON_FIELD(f, w->note);
  fprintf(f, ",\n      \"exit_status\": %d,\n      \"term_signal\": %d", w->exit_status,
          w->term_signal);

  const key_number phases[] = {{"spawn_to_ready_s", w->spawn_to_ready_s}, {"parse_s", w->parse_s},
                               {"compile_s", w->compile_s},               {"load_s", w->load_s},
                               {"first_s", w->first_s},                   {"cold_start_s", w->cold_start_s}};
  fputs(",\n      \"phases\": {", f);
  write_numbers(f, "", ", ", phases, N_OF(phases), json_opt_seconds);
  fprintf(f, "},\n      \"warmup\": {\"iterations\": %d, \"stable\": ", w->warmup_iterations);
  json_bool(f, w->warmup_stable);
  fputs("},\n      \"stats\": ", f);
  nnp_result_write_stats(f, &w->stats);
  fputs(",\n      \"items_per_s\": ", f);
  json_opt_positive(f, w->items_per_s);
  fputs(",\n      \"measured_items_per_s\": ", f);
  json_opt_positive(f, w->measured_items_per_s);
  fputs(",\n      \"time_capped\": ", f);
  json_bool(f, w->time_capped);
  fputs(",\n      \"memory\": {\"peak_rss_bytes\": ", f);
  json_opt_bytes(f, w->peak_rss_bytes);
  fputs(", \"vmhwm_bytes\": ", f);
  json_opt_bytes(f, w->vmhwm_bytes);
  fputs("},\n      \"cpu\": {\"worker_cpu_s\": ", f); /* oversubscription evidence */
  json_opt_seconds(f, w->worker_cpu_s);
  fputs(", \"worker_wall_s\": ", f);
  json_opt_seconds(f, w->worker_wall_s);
  fputs(", \"other_cpus\": ", f);
  json_opt_seconds(f, w->other_cpus);
  fputc('}', f);
  write_extras(f, &w->ext);
  fputs(",\n      \"accuracy\": ", f);
  write_accuracy(f, &w->acc);
  fputs(",\n      \"int8_agreement\": ", f); /* vs the native int8 row (--int8-model) */
  write_accuracy(f, &w->int8_agree);
  if (w->hw_class[0]) NNP_RESULT_WRITE_HOST(f, "      ", w);
  /* Raw samples on one line: a 100k-sample row stays one (long) line, not 100k. */
  fprintf(f, ",\n      \"processes\": %d,\n      \"process_samples\": [", w->n_processes);
  for (int p = 0; p < w->n_processes && p < NNP_MAX_PROCESSES; p++) fprintf(f, "%s%d", p ? ", " : "", w->process_samples[p]);
  fputs("]", f);
  fputs(",\n      \"samples_s\": [", f);
  if (w->samples)
    for (int i = 0; i < w->n_samples; i++) {
      if (i) fputs(", ", f);
      nnp_json_number(f, w->samples[i]);
    }
  fputs("]\n    }", f);
}

/* --- load and coldstart sections ------------------------------------------------------ */

static void write_load_run(FILE *f, const nnp_load_run_record *u) {
  fputs("      {\"purpose\": ", f);
  NNP_JSON_FIELD(f, u->purpose);
  fputs(", \"target_qps\": ", f);
  json_opt_seconds(f, u->target_qps);
  fprintf(f, ", \"seed\": %llu, \"passed\": %s, \"queries\": %lld, \"completed\": %lld, \"dropped\": %lld, "
             "\"late\": %lld",
          (unsigned long long)u->seed, u->passed ? "true" : "false", (long long)u->queries, (long long)u->completed,
          (long long)u->dropped, (long long)u->late);
  const key_number nums[] = {{"offered_qps", u->offered_qps}, {"achieved_qps", u->achieved_qps},
                             {"span_s", u->span_s},           {"p50_s", u->p50_s},
                             {"p90_s", u->p90_s},             {"p99_s", u->p99_s},
                             {"p999_s", u->p999_s},           {"mean_s", u->mean_s},
                             {"max_s", u->max_s}};
  write_numbers(f, ", ", ", ", nums, N_OF(nums), json_opt_seconds);
  fprintf(f, ", \"samples_total\": %lld, \"samples_s\": [", (long long)u->samples_total);
  for (int i = 0; u->samples_s && i < u->n_samples; i++) {
    if (i) fputs(", ", f);
    nnp_json_number(f, u->samples_s[i]);
  }
  fputs("]}", f);
}

static void write_load(FILE *f, const nnp_load_section *l) {
  fputs(",\n  \"load\": {\n    \"scenario\": ", f);
  NNP_JSON_FIELD(f, l->scenario);
  fprintf(f, ",\n    \"seed\": %llu,\n    \"duration_s\": ", (unsigned long long)l->seed);
  json_opt_seconds(f, l->duration_s);
  fprintf(f, ",\n    \"max_queries\": %lld,\n    \"max_batch\": %d,\n    \"streams\": %d,\n    \"interval_s\": ",
          (long long)l->max_queries, l->max_batch, l->streams);
  json_opt_seconds(f, l->interval_s);
  fprintf(f, ",\n    \"instances\": %d,\n    \"backend_options\": ", l->instances);
  NNP_JSON_FIELD(f, l->backend_options);
  const key_number nums[] = {{"qps", l->qps}, {"latency_bound_s", l->latency_bound_s},
                             {"capacity_qps", l->capacity_qps}, {"max_qps", l->max_qps}};
  write_numbers(f, ",\n    ", ",\n    ", nums, N_OF(nums), json_opt_seconds);
  fputs(",\n    \"runs\": [", f);
  for (int i = 0; l->runs && i < l->n_runs; i++) {
    fputs(i ? ",\n" : "\n", f);
    write_load_run(f, &l->runs[i]);
  }
  fputs(l->n_runs > 0 ? "\n    ],\n    \"startup\": [" : "],\n    \"startup\": [", f);
  for (int k = 0; k < l->n_startup && k < NNP_LOAD_MAX_WORKERS; k++) {
    const nnp_load_startup *w = &l->startup[k];
    const key_number phases[] = {{"spawn_to_ready_s", w->spawn_to_ready_s}, {"load_s", w->load_s},
                                 {"first_s", w->first_s}, {"cold_start_s", w->cold_start_s}};
    fprintf(f, "%s\n      {", k ? "," : "");
    write_numbers(f, "", ", ", phases, N_OF(phases), json_opt_seconds);
    fputc('}', f);
  }
  fputs(l->n_startup > 0 ? "\n    ]\n  }" : "]\n  }", f);
}

/* "runs": N and per phase {"p50_s", "p99_s", "samples_s"}: P50/P99 are recomputed from
 * the samples on every write, so a document read back writes out identically. */
static void write_coldstart_series(FILE *f, const nnp_coldstart_series *s, const char *indent) {
  fprintf(f, "\"runs\": %d,\n%s\"note\": ", s->n, indent);
  NNP_JSON_FIELD(f, s->note);
  for (int ph = 0; ph < NNP_COLDSTART_PHASES; ph++) {
    fprintf(f, ",\n%s\"%s\": {\"p50_s\": ", indent, nnp_coldstart_phase_names[ph]);
    json_opt_seconds(f, nnp_coldstart_quantile(s, ph, 0.5));
    fputs(", \"p99_s\": ", f);
    json_opt_seconds(f, nnp_coldstart_quantile(s, ph, 0.99));
    fputs(", \"samples_s\": [", f);
    for (int k = 0; k < s->n; k++) {
      if (k) fputs(", ", f);
      json_opt_seconds(f, nnp_coldstart_phase(&s->s[k], ph));
    }
    fputs("]}", f);
  }
}

static void write_coldstart(FILE *f, const nnp_coldstart_section *c) {
  fputs(",\n  \"coldstart\": {\n    ", f);
  write_coldstart_series(f, &c->plain, "    ");
  fputs(",\n    \"cache_dir\": ", f);
  NNP_JSON_FIELD(f, c->cache_dir);
  const struct {
    const char *key;
    const nnp_coldstart_series *s;
  } more[] = {{"cold_cache", &c->cold}, {"warm_cache", &c->warm}};
  for (int i = 0; i < 2; i++) {
    fprintf(f, ",\n    \"%s\": ", more[i].key);
    if (more[i].s->n <= 0) {
      fputs("null", f);
      continue;
    }
    fputs("{\n      ", f);
    write_coldstart_series(f, more[i].s, "      ");
    fputs("\n    }", f);
  }
  fputs("\n  }", f);
}

void nnp_result_write(FILE *f, const nnp_bench_result *r) {
  if (r->llm) { /* its own layout (docs/result-schema.md, kind llm): llm_json.c */
    nnp_llm_report_json(f, r->llm);
    return;
  }
  if (r->llm_load) { /* kind llm-load: llm_load_json.c */
    nnp_llm_load_report_json(f, r->llm_load);
    return;
  }
  fprintf(f, "{\n  \"schema_version\": %d,\n  \"schema_minor\": %d,\n  \"tool\": \"nnperf\",\n  \"kind\": \"%s\",\n"
             "  \"nnperf_version\": ",
          NNP_RESULT_SCHEMA_VERSION, NNP_RESULT_SCHEMA_MINOR, nnp_result_kind(r));
  NNP_JSON_FIELD(f, r->nnperf_version);
  fputs(",\n  \"command_line\": ", f);
  NNP_JSON_FIELD(f, r->command_line);
  fputs(",\n  \"model\": ", f);
  NNP_JSON_FIELD(f, r->model);
  fprintf(f, ",\n  \"seed\": %llu", (unsigned long long)r->seed);

  const nnp_loop_spec *l = &r->loop;
  fprintf(f,
          ",\n  \"loop\": {\"warmup_min\": %d, \"warmup_max\": %d, \"warmup_window\": %d, "
          "\"warmup_tol\": ",
          l->warmup_min, l->warmup_max, l->warmup_window);
  nnp_json_number(f, l->warmup_tol);
  fprintf(f, ", \"iterations\": %d, \"min_time_s\": ", l->iterations);
  nnp_json_number(f, l->min_time_s);
  fputs(", \"max_time_s\": ", f);
  nnp_json_number(f, l->max_time_s);
  fputs(", \"warmup_max_time_s\": ", f);
  nnp_json_number(f, l->warmup_max_time_s);
  fputs("},\n  \"env\": ", f);
  nnp_env_write_json(f, &r->env);
  fputs(",\n  \"accuracy_rtol\": ", f);
  nnp_json_number(f, r->accuracy_rtol);
  fputs(",\n  \"baseline\": ", f);
  NNP_JSON_FIELD(f, r->baseline);
  fputs(",\n  \"allow_mixed\": ", f);
  json_bool(f, r->allow_mixed);
  fputs(",\n  \"noisy\": ", f);
  json_bool(f, r->noisy);
  fputs(",\n  \"rows\": [", f);
  for (int i = 0; r->rows && i < r->n_rows; i++) {
    fputs(i ? ",\n" : "\n", f);
    write_row(f, &r->rows[i]);
  }
  fputs(r->n_rows > 0 ? "\n  ]" : "]", f);
  if (r->load) write_load(f, r->load);
  if (r->coldstart) write_coldstart(f, r->coldstart);
  fputs("\n}\n", f);
}

/* --- atomic file output ----------------------------------------------------------------- */

typedef void (*nnp_report_writer)(FILE *f, const nnp_bench_result *r);

/* Shared with report_csv.c (declared there): emit into an nnp_atomic_file, so a reader
 * or a crash sees the previous complete file or the new one. */
nnp_status nnp_report_write_atomic(const char *path, nnp_report_writer emit,
                                   const nnp_bench_result *r);

nnp_status nnp_report_write_atomic(const char *path, nnp_report_writer emit,
                                   const nnp_bench_result *r) {
  if (!path || !*path) return nnp_error(NNP_ERR_INVALID, "report: empty output path");
  if (!r) return nnp_error(NNP_ERR_INVALID, "report: no result to write to '%s'", path);
  nnp_atomic_file af;
  nnp_status s = nnp_atomic_open(&af, path);
  if (s != NNP_OK) return nnp_error_context(s, "report");
  emit(af.f, r);
  return nnp_atomic_commit(&af);
}

nnp_status nnp_result_write_file(const nnp_bench_result *r, const char *path) {
  return nnp_report_write_atomic(path, nnp_result_write, r);
}
