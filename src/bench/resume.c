/* bench --resume: reads back the rows of an earlier result JSON (see resume.h). */
#include "bench/resume.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nnperf/alloc.h"

/* --- field readers: absent or null fields keep the row's "not measured" value ---------- */

static double num_or(const json_t *o, const char *key, double def) {
  const json_t *v = json_object_get(o, key);
  return json_is_number(v) ? json_number_value(v) : def;
}

static void str_into(const json_t *o, const char *key, char *dst, size_t cap) {
  const char *s = json_string_value(json_object_get(o, key));
  snprintf(dst, cap, "%s", s ? s : "");
}

static int status_parse(const char *s, nnp_row_status *out) {
  for (int k = NNP_ROW_OK; k <= NNP_ROW_OOM; k++)
    if (s && !strcmp(s, nnp_row_status_name((nnp_row_status)k))) {
      *out = (nnp_row_status)k;
      return 1;
    }
  return 0;
}

static void read_stats(const json_t *o, nnp_stats *s) {
  memset(s, 0, sizeof *s);
  if (!json_is_object(o)) return;
  s->n = (int)num_or(o, "n", 0);
  s->min = num_or(o, "min", 0);
  s->max = num_or(o, "max", 0);
  s->mean = num_or(o, "mean", 0);
  s->stdev = num_or(o, "stdev", 0);
  s->cv = num_or(o, "cv", 0);
  s->p50 = num_or(o, "p50", 0);
  s->p90 = num_or(o, "p90", 0);
  s->p95 = num_or(o, "p95", 0);
  s->p99 = num_or(o, "p99", 0);
  s->p999 = num_or(o, "p999", 0);
  const json_t *ci = json_object_get(o, "p50_ci");
  s->p50_lo = json_number_value(json_array_get(ci, 0));
  s->p50_hi = json_number_value(json_array_get(ci, 1));
  ci = json_object_get(o, "p99_ci");
  s->p99_lo = json_number_value(json_array_get(ci, 0));
  s->p99_hi = json_number_value(json_array_get(ci, 1));
  s->p99_underpowered = json_is_true(json_object_get(o, "p99_underpowered"));
  s->p999_underpowered = json_is_true(json_object_get(o, "p999_underpowered"));
}

static void read_accuracy(const json_t *o, nnp_accuracy *a) {
  memset(a, 0, sizeof *a);
  if (!json_is_object(o)) return;
  a->compared = json_is_true(json_object_get(o, "compared"));
  str_into(o, "reference", a->reference, sizeof a->reference);
  a->max_abs = num_or(o, "max_abs", 0);
  a->max_rel = num_or(o, "max_rel", 0);
  a->cosine = num_or(o, "cosine", 0);
  a->top1 = num_or(o, "top1", -1);
  a->top5 = num_or(o, "top5", -1);
  a->within_tol = json_is_true(json_object_get(o, "within_tol"));
}

/* One row; a message naming the row and field on error. */
static nnp_status read_row(const json_t *o, int index, nnp_bench_row *w, const char *path) {
  memset(w, 0, sizeof *w);
  if (!json_is_object(o)) return nnp_error(NNP_ERR_FORMAT, "--resume %s: rows[%d] is not an object", path, index);
  const char *backend = json_string_value(json_object_get(o, "backend"));
  const char *precision = json_string_value(json_object_get(o, "precision"));
  const char *status = json_string_value(json_object_get(o, "status"));
  const char *scenario = json_string_value(json_object_get(o, "scenario"));
  if (!backend || !scenario || !json_is_integer(json_object_get(o, "threads")) ||
      !json_is_integer(json_object_get(o, "batch")))
    return nnp_error(NNP_ERR_FORMAT, "--resume %s: rows[%d] lacks its configuration (backend, threads, batch, scenario)",
                     path, index);
  if (!nnp_precision_parse(precision ? precision : "", &w->precision))
    return nnp_error(NNP_ERR_FORMAT, "--resume %s: rows[%d].precision '%s' is not a precision", path, index,
                     precision ? precision : "(missing)");
  if (!status_parse(status, &w->status))
    return nnp_error(NNP_ERR_FORMAT, "--resume %s: rows[%d].status '%s' is not a row status", path, index,
                     status ? status : "(missing)");
  str_into(o, "label", w->label, sizeof w->label);
  str_into(o, "backend", w->backend, sizeof w->backend);
  str_into(o, "backend_version", w->backend_version, sizeof w->backend_version);
  str_into(o, "scenario", w->scenario, sizeof w->scenario);
  str_into(o, "reason", w->reason, sizeof w->reason);
  str_into(o, "note", w->note, sizeof w->note);
  w->threads = (int)json_integer_value(json_object_get(o, "threads"));
  w->batch = json_integer_value(json_object_get(o, "batch"));
  w->exit_status = (int)num_or(o, "exit_status", -1);
  w->term_signal = (int)num_or(o, "term_signal", 0);
  const json_t *ph = json_object_get(o, "phases");
  w->spawn_to_ready_s = num_or(ph, "spawn_to_ready_s", -1);
  w->parse_s = num_or(ph, "parse_s", -1);
  w->compile_s = num_or(ph, "compile_s", -1);
  w->load_s = num_or(ph, "load_s", -1);
  w->first_s = num_or(ph, "first_s", -1);
  w->cold_start_s = num_or(ph, "cold_start_s", -1);
  const json_t *wu = json_object_get(o, "warmup");
  w->warmup_iterations = (int)num_or(wu, "iterations", 0);
  w->warmup_stable = json_is_true(json_object_get(wu, "stable"));
  read_stats(json_object_get(o, "stats"), &w->stats);
  w->items_per_s = num_or(o, "items_per_s", 0);
  w->measured_items_per_s = num_or(o, "measured_items_per_s", 0);
  w->time_capped = json_is_true(json_object_get(o, "time_capped"));
  const json_t *mem = json_object_get(o, "memory");
  w->peak_rss_bytes = (int64_t)num_or(mem, "peak_rss_bytes", 0);
  w->vmhwm_bytes = (int64_t)num_or(mem, "vmhwm_bytes", 0);
  read_accuracy(json_object_get(o, "accuracy"), &w->acc);

  const json_t *ps = json_object_get(o, "process_samples");
  const json_t *samples = json_object_get(o, "samples_s");
  size_t n_proc = json_array_size(ps), n_samples = json_array_size(samples);
  if (n_proc > NNP_MAX_PROCESSES || n_samples > (size_t)1 << 30)
    return nnp_error(NNP_ERR_FORMAT, "--resume %s: rows[%d] has %zu processes and %zu samples (limits %d and 2^30)", path,
                     index, n_proc, n_samples, NNP_MAX_PROCESSES);
  int64_t sum = 0;
  for (size_t p = 0; p < n_proc; p++) {
    json_int_t c = json_integer_value(json_array_get(ps, p));
    if (c < 0 || c > (json_int_t)n_samples)
      return nnp_error(NNP_ERR_FORMAT, "--resume %s: rows[%d].process_samples[%zu] = %lld is out of range", path, index, p,
                       (long long)c);
    w->process_samples[p] = (int)c;
    sum += c;
  }
  w->n_processes = (int)n_proc;
  if (n_proc && sum != (int64_t)n_samples)
    return nnp_error(NNP_ERR_FORMAT, "--resume %s: rows[%d].process_samples add up to %lld, but it has %zu samples", path,
                     index, (long long)sum, n_samples);
  if (n_samples) {
    w->samples = nnp_malloc(sizeof(double) * n_samples);
    if (!w->samples) return nnp_error(NNP_ERR_NOMEM, "%s: out of memory for rows[%d]'s samples", path, index);
    for (size_t i = 0; i < n_samples; i++) {
      const json_t *v = json_array_get(samples, i);
      double x = json_number_value(v);
      if (!json_is_number(v) || !(x >= 0) || isinf(x)) {
        nnp_bench_row_free(w);
        return nnp_error(NNP_ERR_FORMAT, "--resume %s: rows[%d].samples_s[%zu] is not a time in seconds", path, index, i);
      }
      w->samples[i] = x;
    }
    w->n_samples = (int)n_samples;
  }
  return NNP_OK;
}

nnp_status nnp_resume_load(const char *path, nnp_bench_result *out) {
  memset(out, 0, sizeof *out);
  /* O_NONBLOCK + a regular-file check first: json_load_file on a FIFO waits forever
   * for a writer (found by tests/cli/test_hostile_inputs.sh), on /dev/zero reads forever. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return nnp_error(NNP_ERR_IO, "--resume: cannot open '%s': %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return nnp_error(NNP_ERR_IO, "--resume: '%s' is not a regular file", path);
  }
  json_error_t err;
  /* JSON_REJECT_DUPLICATES: a hand-edited file with two "rows" must not be half-read. */
  json_t *root = json_loadfd(fd, JSON_REJECT_DUPLICATES, &err);
  close(fd);
  if (!root)
    return nnp_error(NNP_ERR_FORMAT, "--resume %s: not a readable result JSON: %s (line %d)", path, err.text,
                     err.line);
  nnp_status st = NNP_OK;
  const json_t *rows = json_object_get(root, "rows");
  const json_t *loop = json_object_get(root, "loop");
  const char *model = json_string_value(json_object_get(root, "model"));
  json_int_t schema = json_integer_value(json_object_get(root, "schema_version"));
  if (!json_is_object(root) || schema != NNP_RESULT_SCHEMA_VERSION) {
    st = nnp_error(NNP_ERR_FORMAT, "--resume %s: schema_version %lld, this nnperf reads %d", path,
                   (long long)schema, NNP_RESULT_SCHEMA_VERSION);
  } else if (!json_is_array(rows) || !model || !json_is_object(loop) ||
             !json_is_integer(json_object_get(root, "seed"))) {
    st = nnp_error(NNP_ERR_FORMAT, "--resume %s: not an nnperf bench result (needs model, seed, loop and rows)", path);
  } else {
    snprintf(out->model, sizeof out->model, "%s", model);
    out->seed = (uint64_t)json_integer_value(json_object_get(root, "seed"));
    out->loop.warmup_min = (int)num_or(loop, "warmup_min", -1);
    out->loop.warmup_max = (int)num_or(loop, "warmup_max", -1);
    out->loop.warmup_window = (int)num_or(loop, "warmup_window", -1);
    out->loop.warmup_tol = num_or(loop, "warmup_tol", -1);
    out->loop.iterations = (int)num_or(loop, "iterations", -1);
    out->loop.min_time_s = num_or(loop, "min_time_s", -1);
    out->loop.max_time_s = num_or(loop, "max_time_s", -1);
    out->loop.warmup_max_time_s = num_or(loop, "warmup_max_time_s", -1);
    out->accuracy_rtol = num_or(root, "accuracy_rtol", -1);
    out->noisy = json_is_true(json_object_get(root, "noisy"));
    size_t n = json_array_size(rows);
    if (n > 1 << 16) st = nnp_error(NNP_ERR_LIMIT, "--resume %s: %zu rows (at most 65536)", path, n);
    else if (n && !(out->rows = nnp_calloc(n, sizeof *out->rows)))
      st = nnp_error(NNP_ERR_NOMEM, "--resume %s: out of memory", path);
    out->cap_rows = (int)n;
    for (size_t i = 0; st == NNP_OK && i < n; i++) {
      st = read_row(json_array_get(rows, i), (int)i, &out->rows[i], path);
      if (st == NNP_OK) out->n_rows++;
    }
  }
  json_decref(root);
  if (st != NNP_OK) {
    nnp_bench_result_free(out);
    memset(out, 0, sizeof *out);
  }
  return st;
}

/* Doubles written with %.17g read back exactly; compare with a relative slack anyway, in
 * case a future writer prints fewer digits. */
static int same_num(double a, double b) { return a == b || fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

nnp_status nnp_resume_check_run(const nnp_bench_result *loaded, const nnp_bench_result *now, const char *path) {
  const char *what = NULL;
  char was[128] = "", is[128] = "";
#define DIFF_(name, fmt, a, b) \
  if (!what) { what = name; snprintf(was, sizeof was, fmt, a); snprintf(is, sizeof is, fmt, b); }
  if (strcmp(loaded->model, now->model)) DIFF_("model", "%s", loaded->model, now->model)
  if (loaded->seed != now->seed) DIFF_("--seed", "%llu", (unsigned long long)loaded->seed, (unsigned long long)now->seed)
  const nnp_loop_spec *a = &loaded->loop, *b = &now->loop;
  if (a->warmup_min != b->warmup_min) DIFF_("--warmup", "%d", a->warmup_min, b->warmup_min)
  if (a->warmup_max != b->warmup_max) DIFF_("warm-up maximum", "%d", a->warmup_max, b->warmup_max)
  if (a->iterations != b->iterations) DIFF_("--iterations", "%d", a->iterations, b->iterations)
  if (!same_num(a->min_time_s, b->min_time_s)) DIFF_("--min-time", "%g", a->min_time_s, b->min_time_s)
  if (!same_num(a->max_time_s, b->max_time_s)) DIFF_("--max-time", "%g", a->max_time_s, b->max_time_s)
  if (a->warmup_window != b->warmup_window || !same_num(a->warmup_tol, b->warmup_tol) ||
      !same_num(a->warmup_max_time_s, b->warmup_max_time_s))
    DIFF_("warm-up rule", "%s", "other", "this")
  if (!same_num(loaded->accuracy_rtol, now->accuracy_rtol))
    DIFF_("accuracy tolerance (--precision list)", "%g", loaded->accuracy_rtol, now->accuracy_rtol)
#undef DIFF_
  if (what)
    return nnp_error(NNP_ERR_INVALID, "--resume %s: %s was %s there but is %s now: resume with the same options", path,
                     what, was, is);
  return NNP_OK;
}

nnp_status nnp_resume_check_row(const nnp_bench_row *loaded, const nnp_bench_row *planned, int index,
                                int processes, const char *path) {
  if (strcmp(loaded->backend, planned->backend) || loaded->precision != planned->precision ||
      loaded->threads != planned->threads || loaded->batch != planned->batch ||
      strcmp(loaded->scenario, planned->scenario))
    return nnp_error(NNP_ERR_INVALID,
                     "--resume %s: row %d there is %s %s t%d b%lld %s, but this command's row %d is %s %s t%d b%lld %s: "
                     "resume with the same options",
                     path, index + 1, loaded->backend, nnp_precision_name(loaded->precision), loaded->threads,
                     (long long)loaded->batch, loaded->scenario, index + 1, planned->backend,
                     nnp_precision_name(planned->precision), planned->threads, (long long)planned->batch,
                     planned->scenario);
  if (loaded->status == NNP_ROW_OK && loaded->n_processes != processes)
    return nnp_error(NNP_ERR_INVALID, "--resume %s: row %d was measured by %d processes, --processes is %d now", path,
                     index + 1, loaded->n_processes, processes);
  return NNP_OK;
}

nnp_status nnp_resume_fetch_outputs(const nnp_row_request *req, nnp_bench_row *row) {
  nnp_row_request once = *req;
  once.loop.warmup_min = once.loop.warmup_max = 0;
  once.loop.iterations = 1;
  once.loop.min_time_s = 0;
  nnp_bench_row fresh;
  NNP_TRY(nnp_run_row(&once, &fresh, NULL, NULL));
  if (fresh.status == NNP_ROW_OK && fresh.n_outputs > 0) {
    row->n_outputs = fresh.n_outputs;
    row->first_outputs = fresh.first_outputs;
    row->last_outputs = fresh.last_outputs;
    fresh.n_outputs = 0;
    fresh.first_outputs = fresh.last_outputs = NULL;
  }
  nnp_bench_row_free(&fresh);
  return NNP_OK;
}
