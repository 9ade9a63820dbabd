/* The result document's one nnp_reader (nnperf/result.h, libjansson). Every field the writer
 * (result_write.c) emits is read
 * back into the same structs; a field of the wrong type is an error that names its path
 * in the document, so a hand-edited or truncated file says exactly what is wrong. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/result.h"
#include "nnperf/result_load.h"
#include "util/regular_file.h"

#include "result/read_fields.h"
#include "result/result_json.h"
#include "result/result_read_llm.h"

/* --- sections ------------------------------------------------------------------------------ */

static nnp_status read_loop(nnp_reader *rd, json_t *o, nnp_loop_spec *l) {
  snprintf(rd->where, sizeof rd->where, "loop");
  INT_FIELD(o, "warmup_min", 0, 1 << 30, l->warmup_min, l->warmup_min);
  INT_FIELD(o, "warmup_max", 0, 1 << 30, l->warmup_max, l->warmup_max);
  INT_FIELD(o, "warmup_window", 0, 1 << 30, l->warmup_window, l->warmup_window);
  NNP_TRY(nnp_rd_get_num(rd, o, "warmup_tol", l->warmup_tol, &l->warmup_tol));
  INT_FIELD(o, "iterations", 0, 1 << 30, l->iterations, l->iterations);
  NNP_TRY(nnp_rd_get_num(rd, o, "min_time_s", l->min_time_s, &l->min_time_s));
  NNP_TRY(nnp_rd_get_num(rd, o, "max_time_s", l->max_time_s, &l->max_time_s));
  return nnp_rd_get_num(rd, o, "warmup_max_time_s", l->warmup_max_time_s, &l->warmup_max_time_s);
}

nnp_status nnp_result_read_host(nnp_reader *rd, json_t *o, int idx, nnp_row_host_ref h) {
  json_t *host, *env;
  NNP_TRY(nnp_rd_get_obj(rd, o, "host", &host));
  if (!host) return NNP_OK; /* rows of one machine have none */
  snprintf(rd->where, sizeof rd->where, "rows[%d].host", idx);
  NNP_TRY(nnp_rd_get_str(rd, host, "class", h.hw_class, h.hw_class_cap));
  NNP_TRY(nnp_rd_get_str(rd, host, "node", h.node, h.node_cap));
  NNP_TRY(nnp_rd_get_str(rd, host, "job_id", h.job_id, h.job_id_cap));
  NNP_TRY(nnp_rd_get_obj(rd, host, "env", &env));
  if (env) NNP_TRY(nnp_rd_read_env(rd, env, h.env));
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  return NNP_OK;
}

static nnp_status read_accuracy(nnp_reader *rd, json_t *o, nnp_accuracy *a) {
  NNP_TRY(nnp_rd_get_bool(rd, o, "compared", &a->compared));
  NNP_TRY(nnp_rd_get_str(rd, o, "reference", a->reference, sizeof a->reference));
  NNP_TRY(nnp_rd_get_num(rd, o, "max_abs", NAN, &a->max_abs));
  NNP_TRY(nnp_rd_get_num(rd, o, "max_rel", NAN, &a->max_rel));
  NNP_TRY(nnp_rd_get_num(rd, o, "cosine", NAN, &a->cosine));
  NNP_TRY(nnp_rd_get_num(rd, o, "top1", -1, &a->top1)); /* negative: not a classifier (bench.h) */
  NNP_TRY(nnp_rd_get_num(rd, o, "top5", -1, &a->top5));
  NNP_TRY(nnp_rd_get_bool(rd, o, "within_tol", &a->within_tol));
  /* absent in results before it: within_tol was max_rel per precision (fp32 1e-4, fp16
   * 1e-2, int8/mixed 5e-2); left empty, the table says so */
  return nnp_rd_get_str(rd, o, "criterion", a->criterion, sizeof a->criterion);
}

nnp_status nnp_result_read_footprint_energy(nnp_reader *rd, json_t *o, int idx, const char *energy_key,
                                            nnp_row_extras *x) {
  json_t *sub;
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  NNP_TRY(nnp_rd_get_obj(rd, o, "footprint", &sub));
  if (sub) {
    snprintf(rd->where, sizeof rd->where, "rows[%d].footprint", idx);
    INT_FIELD(sub, "runtime_bytes", 0, INT64_MAX, -1, x->runtime_bytes);
    INT_FIELD(sub, "runtime_files", 0, INT32_MAX, -1, x->runtime_files);
    INT_FIELD(sub, "model_bytes", 0, INT64_MAX, -1, x->model_bytes);
  }
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  NNP_TRY(nnp_rd_get_obj(rd, o, "energy", &sub));
  if (sub) {
    snprintf(rd->where, sizeof rd->where, "rows[%d].energy", idx);
    NNP_TRY(nnp_rd_get_num(rd, sub, energy_key, -1, &x->energy_j));
    NNP_TRY(nnp_rd_get_str(rd, sub, "source", x->energy_source, sizeof x->energy_source));
  }
  return NNP_OK;
}

/* Footprint, energy, device (schema minor 4); absent in older results: left unset. */
static nnp_status read_extras(nnp_reader *rd, json_t *o, int idx, nnp_row_extras *x) {
  x->runtime_bytes = x->model_bytes = x->dev_alloc_peak = x->dev_reserved_peak = x->dev_process_bytes = -1;
  x->runtime_files = -1;
  x->energy_j = -1;
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  NNP_TRY(nnp_rd_get_str(rd, o, "device", x->device, sizeof x->device));
  NNP_TRY(nnp_rd_get_str(rd, o, "device_info", x->device_info, sizeof x->device_info));
  NNP_TRY(nnp_rd_get_bool(rd, o, "realistic", &x->realistic));
  json_t *sub;
  NNP_TRY(nnp_result_read_footprint_energy(rd, o, idx, "j_per_inference", x));
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  NNP_TRY(nnp_rd_get_obj(rd, o, "device_memory", &sub));
  if (sub) {
    snprintf(rd->where, sizeof rd->where, "rows[%d].device_memory", idx);
    INT_FIELD(sub, "allocated_peak_bytes", 0, INT64_MAX, -1, x->dev_alloc_peak);
    INT_FIELD(sub, "reserved_peak_bytes", 0, INT64_MAX, -1, x->dev_reserved_peak);
    INT_FIELD(sub, "process_bytes", 0, INT64_MAX, -1, x->dev_process_bytes);
  }
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  NNP_TRY(nnp_rd_get_obj(rd, o, "extra_phases", &sub));
  const char *key;
  json_t *v;
  if (sub)
    json_object_foreach(sub, key, v) {
      if (x->n_phases == NNP_MAX_EXTRA_PHASES || !json_is_number(v)) continue;
      snprintf(x->phase_name[x->n_phases], sizeof x->phase_name[0], "%s", key);
      x->phase_s[x->n_phases++] = json_number_value(v);
    }
  return NNP_OK;
}

static nnp_status read_row(nnp_reader *rd, json_t *o, int idx, nnp_bench_row *w) {
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  if (!json_is_object(o)) return nnp_rd_bad(rd, "", "expected an object");
  char word[32] = "";
  NNP_TRY(nnp_rd_get_str(rd, o, "label", w->label, sizeof w->label));
  NNP_TRY(nnp_rd_get_str(rd, o, "backend", w->backend, sizeof w->backend));
  NNP_TRY(nnp_rd_get_str(rd, o, "backend_version", w->backend_version, sizeof w->backend_version));
  NNP_TRY(nnp_rd_get_str(rd, o, "precision", word, sizeof word));
  if (word[0] && !nnp_precision_parse(word, &w->precision)) return nnp_rd_bad(rd, "precision", "unknown precision '%s'", word);
  INT_FIELD(o, "threads", 0, 1 << 20, 0, w->threads);
  INT_FIELD(o, "batch", 0, INT64_MAX, 0, w->batch);
  NNP_TRY(nnp_rd_get_str(rd, o, "scenario", w->scenario, sizeof w->scenario));
  word[0] = 0;
  NNP_TRY(nnp_rd_get_str(rd, o, "status", word, sizeof word));
  if (!word[0]) return nnp_rd_bad(rd, "status", "missing");
  if (!nnp_rd_parse_status(word, &w->status)) return nnp_rd_bad(rd, "status", "unknown status '%s'", word);
  NNP_TRY(nnp_rd_get_str(rd, o, "reason", w->reason, sizeof w->reason));
  NNP_TRY(nnp_rd_get_str(rd, o, "note", w->note, sizeof w->note));
  INT_FIELD(o, "exit_status", INT32_MIN, INT32_MAX, 0, w->exit_status);
  INT_FIELD(o, "term_signal", 0, 1024, 0, w->term_signal);

  json_t *sub;
  NNP_TRY(nnp_rd_get_obj(rd, o, "phases", &sub));
  w->spawn_to_ready_s = w->parse_s = w->compile_s = w->load_s = w->first_s = w->cold_start_s = -1;
  if (sub) {
    snprintf(rd->where, sizeof rd->where, "rows[%d].phases", idx);
    NNP_TRY(nnp_rd_get_num(rd, sub, "spawn_to_ready_s", -1, &w->spawn_to_ready_s));
    NNP_TRY(nnp_rd_get_num(rd, sub, "parse_s", -1, &w->parse_s));
    NNP_TRY(nnp_rd_get_num(rd, sub, "compile_s", -1, &w->compile_s));
    NNP_TRY(nnp_rd_get_num(rd, sub, "load_s", -1, &w->load_s));
    NNP_TRY(nnp_rd_get_num(rd, sub, "first_s", -1, &w->first_s));
    NNP_TRY(nnp_rd_get_num(rd, sub, "cold_start_s", -1, &w->cold_start_s));
  }
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  NNP_TRY(nnp_rd_get_obj(rd, o, "warmup", &sub));
  if (sub) {
    snprintf(rd->where, sizeof rd->where, "rows[%d].warmup", idx);
    INT_FIELD(sub, "iterations", 0, INT32_MAX, 0, w->warmup_iterations);
    NNP_TRY(nnp_rd_get_bool(rd, sub, "stable", &w->warmup_stable));
  }
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  NNP_TRY(nnp_rd_get_obj(rd, o, "stats", &sub));
  if (sub) {
    snprintf(rd->where, sizeof rd->where, "rows[%d].stats", idx);
    NNP_TRY(nnp_rd_read_stats(rd, sub, &w->stats));
  }
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  NNP_TRY(nnp_rd_get_num(rd, o, "items_per_s", 0, &w->items_per_s));
  NNP_TRY(nnp_rd_get_num(rd, o, "measured_items_per_s", 0, &w->measured_items_per_s));
  NNP_TRY(nnp_rd_get_bool(rd, o, "time_capped", &w->time_capped));
  NNP_TRY(nnp_rd_get_obj(rd, o, "memory", &sub));
  if (sub) {
    snprintf(rd->where, sizeof rd->where, "rows[%d].memory", idx);
    INT_FIELD(sub, "peak_rss_bytes", 0, INT64_MAX, 0, w->peak_rss_bytes);
    INT_FIELD(sub, "vmhwm_bytes", 0, INT64_MAX, 0, w->vmhwm_bytes);
  }
  NNP_TRY(read_extras(rd, o, idx, &w->ext));
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  NNP_TRY(nnp_rd_get_obj(rd, o, "cpu", &sub)); /* optional: results before it lack it */
  w->worker_cpu_s = w->worker_wall_s = w->other_cpus = -1;
  if (sub) {
    snprintf(rd->where, sizeof rd->where, "rows[%d].cpu", idx);
    NNP_TRY(nnp_rd_get_num(rd, sub, "worker_cpu_s", -1, &w->worker_cpu_s));
    NNP_TRY(nnp_rd_get_num(rd, sub, "worker_wall_s", -1, &w->worker_wall_s));
    NNP_TRY(nnp_rd_get_num(rd, sub, "other_cpus", -1, &w->other_cpus));
  }
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  NNP_TRY(nnp_rd_get_obj(rd, o, "accuracy", &sub));
  if (sub) {
    snprintf(rd->where, sizeof rd->where, "rows[%d].accuracy", idx);
    NNP_TRY(read_accuracy(rd, sub, &w->acc));
  } else {
    w->acc.top1 = w->acc.top5 = -1;
  }
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  NNP_TRY(nnp_result_read_host(rd, o, idx, NNP_ROW_HOST_REF(w)));
  NNP_TRY(nnp_rd_get_obj(rd, o, "int8_agreement", &sub)); /* optional: results before it lack it */
  if (sub) {
    snprintf(rd->where, sizeof rd->where, "rows[%d].int8_agreement", idx);
    NNP_TRY(read_accuracy(rd, sub, &w->int8_agree));
  } else {
    w->int8_agree.top1 = w->int8_agree.top5 = -1;
  }
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);

  /* raw samples: the reason this file exists; every one a finite, non-negative number */
  json_t *samples = json_object_get(o, "samples_s");
  if (samples && !json_is_null(samples)) {
    if (!json_is_array(samples)) return nnp_rd_bad(rd, "samples_s", "expected an array of numbers");
    size_t n = json_array_size(samples);
    if (n > (size_t)INT32_MAX / 2) return nnp_rd_bad(rd, "samples_s", "too many samples (%zu)", n);
    if (n) {
      w->samples = nnp_malloc(n * sizeof *w->samples);
      if (!w->samples) return nnp_error(NNP_ERR_NOMEM, "%s: out of memory for %zu samples", rd->name, n);
    }
    for (size_t i = 0; i < n; i++) {
      json_t *x = json_array_get(samples, i);
      double v = json_is_number(x) ? json_number_value(x) : NAN;
      if (!(v >= 0) || !isfinite(v)) return nnp_rd_bad(rd, "samples_s", "element %zu is not a finite number >= 0", i);
      w->samples[i] = v;
    }
    w->n_samples = (int)n;
  }
  if (w->stats.n && w->stats.n != w->n_samples)
    return nnp_rd_bad(rd, "stats.n", "%d, but samples_s has %d samples", w->stats.n, w->n_samples);

  /* processes: their counts must add up to the samples (the cluster statistics rely on it) */
  INT_FIELD(o, "processes", 0, NNP_MAX_PROCESSES, 0, w->n_processes);
  json_t *ps = json_object_get(o, "process_samples");
  if (ps && !json_is_null(ps)) {
    if (!json_is_array(ps) || json_array_size(ps) > NNP_MAX_PROCESSES)
      return nnp_rd_bad(rd, "process_samples", "expected an array of at most %d counts", NNP_MAX_PROCESSES);
    long long sum = 0;
    size_t np = json_array_size(ps);
    for (size_t p = 0; p < np; p++) {
      json_t *x = json_array_get(ps, p);
      if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > INT32_MAX)
        return nnp_rd_bad(rd, "process_samples", "element %zu is not a count", p);
      w->process_samples[p] = (int)json_integer_value(x);
      sum += json_integer_value(x);
    }
    if (np && (int)np != w->n_processes)
      return nnp_rd_bad(rd, "process_samples", "has %zu counts for %d processes", np, w->n_processes);
    if (np && sum != w->n_samples)
      return nnp_rd_bad(rd, "process_samples", "counts add up to %lld, samples_s has %d", sum, w->n_samples);
  }
  if (w->n_processes && !(ps && json_array_size(ps))) w->n_processes = 0; /* counts unknown: one group */
  return NNP_OK;
}

/* --- load and coldstart sections (schema 1.1 and 1.2) ------------------------------------ */

/* An array of numbers (null: -1, "not measured") into a malloc'd array. */
static nnp_status get_num_array(const nnp_reader *rd, json_t *obj, const char *key, int max, double **out, int *n) {
  *out = NULL;
  *n = 0;
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) return NNP_OK;
  if (!json_is_array(v)) return nnp_rd_bad(rd, key, "expected an array of numbers");
  size_t m = json_array_size(v);
  if (m > (size_t)max) return nnp_rd_bad(rd, key, "more than %d elements (%zu)", max, m);
  if (!m) return NNP_OK;
  *out = nnp_malloc(m * sizeof **out);
  if (!*out) return nnp_error(NNP_ERR_NOMEM, "%s: out of memory", rd->name);
  *n = (int)m;
  for (size_t i = 0; i < m; i++) {
    json_t *x = json_array_get(v, i);
    if (json_is_null(x)) (*out)[i] = -1;
    else if (json_is_number(x) && isfinite(json_number_value(x)) && json_number_value(x) >= 0) (*out)[i] = json_number_value(x);
    else {
      nnp_free(*out); /* the caller gets nothing on an error (found by fuzz_result_load) */
      *out = NULL;
      *n = 0;
      return nnp_rd_bad(rd, key, "element %zu is not a finite number >= 0 or null", i);
    }
  }
  return NNP_OK;
}

static nnp_status get_seed(const nnp_reader *rd, json_t *obj, const char *key, uint64_t *out) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) return NNP_OK;
  if (!json_is_integer(v) || json_integer_value(v) < 0) return nnp_rd_bad(rd, key, "expected an integer >= 0");
  *out = (uint64_t)json_integer_value(v);
  return NNP_OK;
}

static nnp_status read_load_run(nnp_reader *rd, json_t *o, nnp_load_run_record *u) {
  if (!json_is_object(o)) return nnp_rd_bad(rd, "", "expected an object");
  NNP_TRY(nnp_rd_get_str(rd, o, "purpose", u->purpose, sizeof u->purpose));
  NNP_TRY(nnp_rd_get_num(rd, o, "target_qps", -1, &u->target_qps));
  NNP_TRY(get_seed(rd, o, "seed", &u->seed));
  NNP_TRY(nnp_rd_get_bool(rd, o, "passed", &u->passed));
  INT_FIELD(o, "queries", 0, INT64_MAX, 0, u->queries);
  INT_FIELD(o, "completed", 0, INT64_MAX, 0, u->completed);
  INT_FIELD(o, "dropped", 0, INT64_MAX, 0, u->dropped);
  INT_FIELD(o, "late", 0, INT64_MAX, 0, u->late);
  if (u->completed + u->dropped != u->queries)
    return nnp_rd_bad(rd, "completed", "%lld completed + %lld dropped, but %lld queries", (long long)u->completed,
               (long long)u->dropped, (long long)u->queries);
  const struct {
    const char *key;
    double *dst;
  } nums[] = {{"offered_qps", &u->offered_qps}, {"achieved_qps", &u->achieved_qps}, {"span_s", &u->span_s},
              {"p50_s", &u->p50_s},             {"p90_s", &u->p90_s},               {"p99_s", &u->p99_s},
              {"p999_s", &u->p999_s},           {"mean_s", &u->mean_s},             {"max_s", &u->max_s}};
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) NNP_TRY(nnp_rd_get_num(rd, o, nums[i].key, -1, nums[i].dst));
  INT_FIELD(o, "samples_total", 0, INT64_MAX, 0, u->samples_total);
  NNP_TRY(get_num_array(rd, o, "samples_s", NNP_LOAD_RESERVOIR, &u->samples_s, &u->n_samples));
  for (int i = 0; i < u->n_samples; i++)
    if (u->samples_s[i] < 0) return nnp_rd_bad(rd, "samples_s", "element %d is null", i);
  if (u->n_samples > u->samples_total && json_object_get(o, "samples_total"))
    return nnp_rd_bad(rd, "samples_s", "%d samples drawn from %lld", u->n_samples, (long long)u->samples_total);
  return NNP_OK;
}

static nnp_status read_load(nnp_reader *rd, json_t *o, nnp_load_section *l) {
  snprintf(rd->where, sizeof rd->where, "load");
  NNP_TRY(nnp_rd_get_str(rd, o, "scenario", l->scenario, sizeof l->scenario));
  if (!l->scenario[0]) return nnp_rd_bad(rd, "scenario", "missing");
  NNP_TRY(get_seed(rd, o, "seed", &l->seed));
  NNP_TRY(nnp_rd_get_num(rd, o, "duration_s", -1, &l->duration_s));
  INT_FIELD(o, "max_queries", 0, INT64_MAX, 0, l->max_queries);
  INT_FIELD(o, "max_batch", 0, 1 << 30, 0, l->max_batch);
  INT_FIELD(o, "streams", 0, 1 << 30, 0, l->streams);
  NNP_TRY(nnp_rd_get_num(rd, o, "interval_s", -1, &l->interval_s));
  INT_FIELD(o, "instances", 0, NNP_LOAD_MAX_WORKERS, 0, l->instances);
  NNP_TRY(nnp_rd_get_str(rd, o, "backend_options", l->backend_options, sizeof l->backend_options));
  NNP_TRY(nnp_rd_get_num(rd, o, "qps", -1, &l->qps));
  NNP_TRY(nnp_rd_get_num(rd, o, "latency_bound_s", -1, &l->latency_bound_s));
  NNP_TRY(nnp_rd_get_num(rd, o, "capacity_qps", -1, &l->capacity_qps));
  NNP_TRY(nnp_rd_get_num(rd, o, "max_qps", -1, &l->max_qps));
  json_t *runs = json_object_get(o, "runs");
  if (!runs || !json_is_array(runs)) return nnp_rd_bad(rd, "runs", "missing or not an array");
  size_t n = json_array_size(runs);
  if (n > 4096) return nnp_rd_bad(rd, "runs", "too many runs (%zu)", n);
  if (n) {
    l->runs = nnp_calloc(n, sizeof *l->runs);
    if (!l->runs) return nnp_error(NNP_ERR_NOMEM, "%s: out of memory", rd->name);
  }
  for (size_t i = 0; i < n; i++) {
    l->n_runs = (int)i + 1; /* counted before reading, so a failure frees what was read */
    snprintf(rd->where, sizeof rd->where, "load.runs[%zu]", i);
    NNP_TRY(read_load_run(rd, json_array_get(runs, i), &l->runs[i]));
  }
  snprintf(rd->where, sizeof rd->where, "load");
  json_t *st = json_object_get(o, "startup");
  if (st && !json_is_null(st)) {
    if (!json_is_array(st) || json_array_size(st) > NNP_LOAD_MAX_WORKERS)
      return nnp_rd_bad(rd, "startup", "expected an array of at most %d workers", NNP_LOAD_MAX_WORKERS);
    for (size_t k = 0; k < json_array_size(st); k++) {
      json_t *w = json_array_get(st, k);
      snprintf(rd->where, sizeof rd->where, "load.startup[%zu]", k);
      if (!json_is_object(w)) return nnp_rd_bad(rd, "", "expected an object");
      nnp_load_startup *s = &l->startup[k];
      NNP_TRY(nnp_rd_get_num(rd, w, "spawn_to_ready_s", -1, &s->spawn_to_ready_s));
      NNP_TRY(nnp_rd_get_num(rd, w, "load_s", -1, &s->load_s));
      NNP_TRY(nnp_rd_get_num(rd, w, "first_s", -1, &s->first_s));
      NNP_TRY(nnp_rd_get_num(rd, w, "cold_start_s", -1, &s->cold_start_s));
      l->n_startup = (int)k + 1;
    }
  }
  return NNP_OK;
}

/* A series: "runs" and the four phases' samples_s (P50/P99 are recomputed from them). */
static nnp_status read_coldstart_series(nnp_reader *rd, json_t *o, nnp_coldstart_series *s) {
  long long runs = 0;
  NNP_TRY(nnp_rd_get_int(rd, o, "runs", 0, 1 << 20, 0, &runs));
  NNP_TRY(nnp_rd_get_str(rd, o, "note", s->note, sizeof s->note));
  if (runs > 0) {
    s->s = nnp_calloc((size_t)runs, sizeof *s->s);
    if (!s->s) return nnp_error(NNP_ERR_NOMEM, "%s: out of memory", rd->name);
    s->n = (int)runs;
    for (int i = 0; i < s->n; i++) s->s[i] = (nnp_coldstart_sample){-1, -1, -1, -1};
  }
  char base[128];
  snprintf(base, sizeof base, "%s", rd->where);
  for (int ph = 0; ph < NNP_COLDSTART_PHASES; ph++) {
    json_t *p;
    NNP_TRY(nnp_rd_get_obj(rd, o, nnp_coldstart_phase_names[ph], &p));
    if (!p) continue;
    snprintf(rd->where, sizeof rd->where, "%s.%s", base, nnp_coldstart_phase_names[ph]);
    double *v;
    int n;
    NNP_TRY(get_num_array(rd, p, "samples_s", 1 << 20, &v, &n));
    if (n != s->n) {
      nnp_free(v);
      return nnp_rd_bad(rd, "samples_s", "%d samples for %d runs", n, s->n);
    }
    for (int i = 0; i < n; i++) {
      nnp_coldstart_sample *c = &s->s[i];
      double *dst[] = {&c->spawn_to_ready_s, &c->load_s, &c->first_s, &c->cold_start_s};
      *dst[ph] = v[i];
    }
    nnp_free(v);
    snprintf(rd->where, sizeof rd->where, "%s", base);
  }
  return NNP_OK;
}

static nnp_status read_coldstart(nnp_reader *rd, json_t *o, nnp_coldstart_section *c) {
  snprintf(rd->where, sizeof rd->where, "coldstart");
  NNP_TRY(read_coldstart_series(rd, o, &c->plain));
  NNP_TRY(nnp_rd_get_str(rd, o, "cache_dir", c->cache_dir, sizeof c->cache_dir));
  const struct {
    const char *key;
    nnp_coldstart_series *s;
  } more[] = {{"cold_cache", &c->cold}, {"warm_cache", &c->warm}};
  for (int i = 0; i < 2; i++) {
    json_t *sub;
    snprintf(rd->where, sizeof rd->where, "coldstart");
    NNP_TRY(nnp_rd_get_obj(rd, o, more[i].key, &sub));
    if (!sub) continue;
    snprintf(rd->where, sizeof rd->where, "coldstart.%s", more[i].key);
    NNP_TRY(read_coldstart_series(rd, sub, more[i].s));
  }
  return NNP_OK;
}

/* Schema 1.1 load/coldstart documents had no rows: the backend was described at the top
 * level. It becomes the one configuration row that 1.2 writes. */
static nnp_status legacy_row(nnp_reader *rd, json_t *root, nnp_bench_result *r) {
  r->rows = nnp_calloc(1, sizeof *r->rows);
  if (!r->rows) return nnp_error(NNP_ERR_NOMEM, "%s: out of memory", rd->name);
  r->n_rows = r->cap_rows = 1;
  nnp_bench_row *w = &r->rows[0];
  w->spawn_to_ready_s = w->parse_s = w->compile_s = w->load_s = w->first_s = w->cold_start_s = -1;
  w->acc.top1 = w->acc.top5 = -1;
  w->batch = 1;
  NNP_TRY(nnp_rd_get_str(rd, root, "backend", w->backend, sizeof w->backend));
  NNP_TRY(nnp_rd_get_str(rd, root, "backend_version", w->backend_version, sizeof w->backend_version));
  NNP_TRY(nnp_rd_get_str(rd, root, "note", w->note, sizeof w->note));
  INT_FIELD(root, "threads", 0, 1 << 20, 0, w->threads);
  snprintf(w->label, sizeof w->label, "%.31s fp32 t%d b1", w->backend, w->threads);
  snprintf(w->scenario, sizeof w->scenario, "%s", r->load ? "load" : "coldstart");
  if (r->load) {
    INT_FIELD(root, "instances", 0, NNP_LOAD_MAX_WORKERS, 0, r->load->instances);
    NNP_TRY(nnp_rd_get_str(rd, root, "backend_options", r->load->backend_options, sizeof r->load->backend_options));
    if (r->load->n_startup) {
      const nnp_load_startup *s = &r->load->startup[0];
      w->spawn_to_ready_s = s->spawn_to_ready_s, w->load_s = s->load_s, w->first_s = s->first_s;
      w->cold_start_s = s->cold_start_s;
    }
  }
  return NNP_OK;
}

static nnp_status read_document(nnp_reader *rd, json_t *root, nnp_bench_result *r) {
  if (!json_is_object(root)) return nnp_rd_bad(rd, "(top level)", "expected an object");
  long long version = 0;
  NNP_TRY(nnp_rd_get_int(rd, root, "schema_version", 0, INT32_MAX, 0, &version));
  if (!json_object_get(root, "schema_version")) return nnp_rd_bad(rd, "schema_version", "missing: not an nnperf result");
  if (version != NNP_RESULT_SCHEMA_VERSION)
    return nnp_error(NNP_ERR_UNSUPPORTED, "%s: schema_version %lld; this nnperf reads version %d", rd->name, version,
                     NNP_RESULT_SCHEMA_VERSION);
  char tool[32] = "";
  NNP_TRY(nnp_rd_get_str(rd, root, "tool", tool, sizeof tool));
  if (!tool[0]) return nnp_rd_bad(rd, "tool", "missing: not an nnperf result");
  if (strcmp(tool, "nnperf")) return nnp_rd_bad(rd, "tool", "'%s', expected \"nnperf\"", tool);
  NNP_TRY(nnp_rd_get_str(rd, root, "nnperf_version", r->nnperf_version, sizeof r->nnperf_version));
  NNP_TRY(nnp_rd_get_str(rd, root, "command_line", r->command_line, sizeof r->command_line));
  NNP_TRY(nnp_rd_get_str(rd, root, "model", r->model, sizeof r->model));
  json_t *seed = json_object_get(root, "seed");
  if (seed && !json_is_null(seed)) {
    /* written as uint64 (%llu); jansson reads integers as signed 64-bit and refuses
     * larger ones, so very large seeds do not survive: the bench CLI caps seeds at 2^62 */
    if (!json_is_integer(seed) || json_integer_value(seed) < 0) return nnp_rd_bad(rd, "seed", "expected an integer >= 0");
    r->seed = (uint64_t)json_integer_value(seed);
  }
  nnp_loop_spec_default(&r->loop);
  json_t *sub;
  NNP_TRY(nnp_rd_get_obj(rd, root, "loop", &sub));
  if (sub) NNP_TRY(read_loop(rd, sub, &r->loop));
  rd->where[0] = 0;
  NNP_TRY(nnp_rd_get_obj(rd, root, "env", &sub));
  if (sub) NNP_TRY(nnp_rd_read_env(rd, sub, &r->env));
  rd->where[0] = 0;
  NNP_TRY(nnp_rd_get_num(rd, root, "accuracy_rtol", -1, &r->accuracy_rtol));
  NNP_TRY(nnp_rd_get_str(rd, root, "baseline", r->baseline, sizeof r->baseline));
  NNP_TRY(nnp_rd_get_bool(rd, root, "allow_mixed", &r->allow_mixed));
  NNP_TRY(nnp_rd_get_bool(rd, root, "noisy", &r->noisy));
  char kind[16] = "";
  NNP_TRY(nnp_rd_get_str(rd, root, "kind", kind, sizeof kind));
  if (!strcmp(kind, "llm")) return nnp_result_read_llm(rd, root, r);
  if (!strcmp(kind, "llm-load")) return nnp_result_read_llm_load(rd, root, r);
  if (kind[0] && strcmp(kind, "bench") && strcmp(kind, "load") && strcmp(kind, "coldstart"))
    return nnp_rd_bad(rd, "kind", "unknown kind '%s' (bench, load, coldstart, llm, llm-load)", kind);
  json_t *load, *cold;
  NNP_TRY(nnp_rd_get_obj(rd, root, "load", &load));
  NNP_TRY(nnp_rd_get_obj(rd, root, "coldstart", &cold));
  if (load && cold) return nnp_rd_bad(rd, "coldstart", "a document has a load or a coldstart section, not both");
  if ((!strcmp(kind, "load") && !load) || (!strcmp(kind, "coldstart") && !cold))
    return nnp_rd_bad(rd, kind, "missing: the document's kind is \"%s\"", kind);
  if (load) {
    r->load = nnp_calloc(1, sizeof *r->load);
    if (!r->load) return nnp_error(NNP_ERR_NOMEM, "%s: out of memory", rd->name);
    NNP_TRY(read_load(rd, load, r->load));
  }
  if (cold) {
    r->coldstart = nnp_calloc(1, sizeof *r->coldstart);
    if (!r->coldstart) return nnp_error(NNP_ERR_NOMEM, "%s: out of memory", rd->name);
    NNP_TRY(read_coldstart(rd, cold, r->coldstart));
  }
  rd->where[0] = 0;
  json_t *rows = json_object_get(root, "rows");
  if (!rows && (load || cold)) return legacy_row(rd, root, r);
  if (!rows || !json_is_array(rows)) return nnp_rd_bad(rd, "rows", "missing or not an array");
  size_t n = json_array_size(rows);
  if (n > 1 << 20) return nnp_rd_bad(rd, "rows", "too many rows (%zu)", n);
  if (n) {
    r->rows = nnp_calloc(n, sizeof *r->rows);
    if (!r->rows) return nnp_error(NNP_ERR_NOMEM, "%s: out of memory for %zu rows", rd->name, n);
    r->cap_rows = (int)n;
  }
  for (size_t i = 0; i < n; i++) {
    r->n_rows = (int)i + 1; /* counted before reading, so a failure frees what was read */
    NNP_TRY(read_row(rd, json_array_get(rows, i), (int)i, &r->rows[i]));
  }
  return NNP_OK;
}

nnp_status nnp_result_read_buffer(const char *data, size_t n, const char *name, nnp_bench_result *out) {
  if (!out) return nnp_error(NNP_ERR_INVALID, "result_load: no output");
  memset(out, 0, sizeof *out);
  nnp_reader rd = {.name = name ? name : "result"};
  if (!data) return nnp_error(NNP_ERR_INVALID, "%s: no data", rd.name);
  json_error_t jerr;
  /* JSON_REJECT_DUPLICATES: a key given twice is ambiguous, not "the last one wins" */
  json_t *root = json_loadb(data, n, JSON_REJECT_DUPLICATES, &jerr);
  if (!root)
    return nnp_error(NNP_ERR_FORMAT, "%s: not valid JSON at line %d column %d: %s", rd.name, jerr.line, jerr.column,
                     jerr.text);
  nnp_status s = read_document(&rd, root, out);
  json_decref(root);
  if (s != NNP_OK) {
    nnp_bench_result_free(out);
    memset(out, 0, sizeof *out);
  }
  return s;
}

/* Results are a few MB; 2 GiB is far past any real one and still fits json_loadb. */
#define NNP_RESULT_MAX_BYTES ((size_t)1 << 31)

nnp_status nnp_result_read_file(const char *path, nnp_bench_result *out) {
  if (out) memset(out, 0, sizeof *out);
  if (!path || !*path) return nnp_error(NNP_ERR_INVALID, "result_load: empty path");
  /* nnp_read_file refuses FIFOs and devices before reading: report, compare and
   * bench --resume on a FIFO would otherwise wait forever for a writer. */
  void *buf = NULL;
  size_t len = 0;
  NNP_TRY(nnp_read_file(path, NNP_RESULT_MAX_BYTES, &buf, &len));
  nnp_status s = nnp_result_read_buffer(buf ? buf : "", len, path, out);
  nnp_free(buf);
  return s;
}
