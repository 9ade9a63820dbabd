/* bench --resume: reads back the rows of an earlier result JSON (see resume.h). */
#include "bench/resume.h"

#include <math.h>
#include <string.h>

#include "nnperf/result_load.h"

/* The schema is read by nnp_result_load_file (src/result/result_read.c), which also
 * refuses FIFOs and devices; resuming only adds what a resumed run cannot do without:
 * the model and every row's configuration, which nnp_resume_check_* compare. */
nnp_status nnp_resume_load(const char *path, nnp_bench_result *out) {
  nnp_status ls = nnp_result_load_file(path, out);
  if (ls != NNP_OK) return nnp_error_context(ls, "--resume");
  nnp_status st = NNP_OK;
  if (!out->model[0])
    st = nnp_error(NNP_ERR_FORMAT, "--resume %s: not an nnperf bench result (it names no model)", path);
  for (int i = 0; st == NNP_OK && i < out->n_rows; i++) {
    const nnp_bench_row *w = &out->rows[i];
    if (!w->backend[0] || !w->scenario[0])
      st = nnp_error(NNP_ERR_FORMAT, "--resume %s: rows[%d] lacks its configuration (backend, threads, batch, scenario)",
                     path, i);
  }
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
    DIFF_("accuracy tolerance (--precision list, or an nnperf that judged int8 by max_rel)", "%g",
          loaded->accuracy_rtol, now->accuracy_rtol)
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
  nnp_bench_row fresh;
  NNP_TRY(nnp_run_row_once(req, &fresh));
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
