/* The sweep runner (nnperf/sweep.h): the row loop every workload shares — resume,
 * interruption, per-row callbacks, the result's header. What a row measures is the
 * workload's (sweep_inference.c for `nnperf bench` rows). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/orchestrator.h"
#include "bench/resume.h"
#include "nnperf/alloc.h"
#include "nnperf/sweep.h"

void nnp_sweep_spec_default(nnp_sweep_spec *spec) {
  memset(spec, 0, sizeof *spec);
  nnp_loop_spec_default(&spec->loop);
  nnp_plan_options_default(&spec->plan);
  spec->seed = 1;
  spec->processes = 3;
  spec->timeout_s = 600;
}

void nnp_sweep_interrupt(void) { nnp_bench_interrupted = 1; }

nnp_status nnp_sweep_row_key(const nnp_bench_row *row, char *key, size_t n) {
  /* the variant is what the label says beyond the configuration (" cache", " #2") */
  char plain[96];
  snprintf(plain, sizeof plain, "%s %s t%d b%lld", row->backend, nnp_precision_name(row->precision), row->threads,
           (long long)row->batch);
  size_t pl = strlen(plain);
  const char *variant = !strncmp(row->label, plain, pl) ? row->label + pl : "";
  while (*variant == ' ') variant++;
  int w = snprintf(key, n, "backend=%s precision=%s threads=%d batch=%lld scenario=%s%s%s", row->backend,
                   nnp_precision_name(row->precision), row->threads, (long long)row->batch, row->scenario,
                   *variant ? " variant=" : "", variant);
  if (w < 0 || (size_t)w >= n) return nnp_error(NNP_ERR_LIMIT, "row '%s': its key does not fit %zu bytes", row->label, n);
  return NNP_OK;
}

int nnp_sweep_find_row(const nnp_bench_result *res, const char *key) {
  char k[NNP_SWEEP_KEY_MAX];
  for (int i = 0; i < res->n_rows; i++)
    if (nnp_sweep_row_key(&res->rows[i], k, sizeof k) == NNP_OK && !strcmp(k, key)) return i;
  return -1;
}

/* The header every kind of result has: the run's model, environment, loop and seed. */
static void fill_header(const nnp_sweep_spec *spec, nnp_bench_result *res) {
  memset(res, 0, sizeof *res);
  snprintf(res->model, sizeof res->model, "%s", spec->model ? spec->model : "");
  snprintf(res->nnperf_version, sizeof res->nnperf_version, "0.1.0");
  snprintf(res->command_line, sizeof res->command_line, "%s", spec->command_line ? spec->command_line : "");
  nnp_env_capture(&res->env);
  res->loop = spec->loop;
  res->seed = spec->seed;
  snprintf(res->baseline, sizeof res->baseline, "%s", spec->baseline ? spec->baseline : "");
  res->allow_mixed = spec->allow_mixed;
}

/* The resumed result measures what this sweep would (model, seed, loop, tolerance), and
 * its rows are this sweep's first rows, in order. */
static nnp_status check_resume(const nnp_sweep_workload *wl, void *state, const nnp_sweep_spec *spec,
                               const nnp_bench_result *res, int n_rows) {
  const nnp_bench_result *done = spec->resume;
  const char *name = spec->resume_name ? spec->resume_name : "the resumed result";
  NNP_TRY(nnp_resume_check_run(done, res, name));
  if (done->n_rows > n_rows)
    return nnp_error(NNP_ERR_INVALID, "--resume %s: it has %d rows, this command makes %d: resume with the same options",
                     name, done->n_rows, n_rows);
  for (int i = 0; i < done->n_rows; i++) {
    nnp_bench_row planned;
    NNP_TRY(wl->plan_row(state, i, &planned));
    nnp_status s = nnp_resume_check_row(&done->rows[i], &planned, i, spec->processes, name);
    nnp_bench_row_free(&planned);
    NNP_TRY(s);
  }
  return NNP_OK;
}

/* The planned row index's key into key. */
static nnp_status planned_key(const nnp_sweep_workload *wl, void *state, int index, char *key, size_t n) {
  nnp_bench_row planned;
  NNP_TRY(wl->plan_row(state, index, &planned));
  nnp_status s = nnp_sweep_row_key(&planned, key, n);
  nnp_bench_row_free(&planned);
  return s;
}

/* With resume_by_key: every resumed row is one this sweep makes (found by its key) and
 * was measured as this sweep would measure it. */
static nnp_status check_resume_by_key(const nnp_sweep_workload *wl, void *state, const nnp_sweep_spec *spec,
                                      const nnp_bench_result *res, int n_rows) {
  const nnp_bench_result *done = spec->resume;
  const char *name = spec->resume_name ? spec->resume_name : "the resumed result";
  NNP_TRY(nnp_resume_check_run(done, res, name));
  for (int j = 0; j < done->n_rows; j++) {
    char want[NNP_SWEEP_KEY_MAX], key[NNP_SWEEP_KEY_MAX];
    NNP_TRY(nnp_sweep_row_key(&done->rows[j], want, sizeof want));
    int i = 0;
    for (; i < n_rows; i++) {
      NNP_TRY(planned_key(wl, state, i, key, sizeof key));
      if (!strcmp(key, want)) break;
    }
    if (i == n_rows)
      return nnp_error(NNP_ERR_INVALID, "--resume %s: its row '%s' (%s) is not one this sweep makes: resume with the "
                       "same plan", name, done->rows[j].label, want);
    nnp_bench_row planned;
    NNP_TRY(wl->plan_row(state, i, &planned));
    nnp_status s = nnp_resume_check_row(&done->rows[j], &planned, i, spec->processes, name);
    nnp_bench_row_free(&planned);
    NNP_TRY(s);
  }
  return NNP_OK;
}

/* The resumed row that stands for planned row index, or -1 (run it): by position, or
 * with resume_by_key the one with its key. */
static int resumed_row(const nnp_sweep_workload *wl, void *state, const nnp_sweep_spec *spec, int index) {
  if (!spec->resume) return -1;
  if (!spec->resume_by_key) return index < spec->resume->n_rows ? index : -1;
  char key[NNP_SWEEP_KEY_MAX];
  return planned_key(wl, state, index, key, sizeof key) == NNP_OK ? nnp_sweep_find_row(spec->resume, key) : -1;
}

/* A deep copy of a resumed row (its samples; a document holds no outputs). */
static nnp_status copy_row(const nnp_bench_row *from, nnp_bench_row *to) {
  *to = *from;
  to->samples = NULL;
  to->n_outputs = 0;
  to->first_outputs = to->last_outputs = NULL;
  if (from->n_samples > 0) {
    to->samples = nnp_malloc(sizeof *to->samples * (size_t)from->n_samples);
    if (!to->samples) return nnp_error(NNP_ERR_NOMEM, "resume: no memory for the samples of %s", from->label);
    memcpy(to->samples, from->samples, sizeof *to->samples * (size_t)from->n_samples);
  }
  return NNP_OK;
}

/* A row is complete when ok from every process asked for, or not ok for its own reason;
 * one cut short by Ctrl-C or SIGTERM is not a result (left out, so a resume reruns it). */
static bool cut_short(const nnp_sweep_spec *spec, const nnp_bench_row *row) {
  if (!nnp_bench_interrupted || row->status == NNP_ROW_UNAVAILABLE) return false;
  return !(row->status == NNP_ROW_OK && row->n_processes == spec->processes);
}

/* Row index into res->rows[index]: kept from the resumed result's row `from` (>= 0) or
 * measured now. *dropped: it was cut short and is not in place. */
static nnp_status one_row(const nnp_sweep_workload *wl, void *state, const nnp_sweep_spec *spec, nnp_bench_result *res,
                          int index, int n_rows, int from, bool *dropped) {
  nnp_bench_row *row = &res->rows[index];
  if (spec->progress) {
    nnp_bench_row planned;
    if (wl->plan_row(state, index, &planned) == NNP_OK)
      spec->progress(spec->ud, index + 1, n_rows, planned.label, "start", 0, 0);
    nnp_bench_row_free(&planned);
  }
  *dropped = false;
  if (from >= 0) {
    NNP_TRY(copy_row(&spec->resume->rows[from], row));
    if (wl->resume_row && spec->resume->n_rows < n_rows) NNP_TRY(wl->resume_row(state, index, row));
    return NNP_OK;
  }
  NNP_TRY(wl->run_row(state, index, row, spec->progress, spec->ud));
  if (!cut_short(spec, row)) return NNP_OK;
  nnp_bench_row_free(row);
  memset(row, 0, sizeof *row);
  *dropped = true;
  return NNP_OK;
}

static nnp_status run_rows(const nnp_sweep_workload *wl, void *state, const nnp_sweep_spec *spec,
                           nnp_bench_result *res, nnp_sweep_outcome *outcome) {
  int n_rows = outcome->n_planned;
  for (int i = 0; i < n_rows && !nnp_bench_interrupted; i++) {
    int from = resumed_row(wl, state, spec, i);
    bool kept = from >= 0, dropped;
    NNP_TRY(one_row(wl, state, spec, res, i, n_rows, from, &dropped));
    if (dropped) break;
    res->n_rows++;
    outcome->n_kept += kept;
    if (wl->finish_row) wl->finish_row(state, res, i, kept);
    nnp_row_status s = res->rows[i].status;
    if (s != NNP_ROW_OK && s != NNP_ROW_UNAVAILABLE) outcome->any_failed = true;
    if (spec->row_done) spec->row_done(spec->ud, res, i, kept);
  }
  return NNP_OK;
}

nnp_status nnp_sweep_run(const nnp_sweep_spec *spec, nnp_bench_result *res, nnp_sweep_outcome *outcome) {
  nnp_sweep_outcome ignored;
  if (!outcome) outcome = &ignored;
  memset(outcome, 0, sizeof *outcome);
  const nnp_sweep_workload *wl = spec->workload ? spec->workload : &nnp_sweep_inference;
  fill_header(spec, res);
  if (spec->processes < 1 || spec->processes > NNP_MAX_PROCESSES)
    return nnp_error(NNP_ERR_INVALID, "sweep: processes %d: wants 1..%d", spec->processes, NNP_MAX_PROCESSES);
  void *state = NULL;
  NNP_TRY(wl->open(spec, res, &state));
  int n_rows = wl->n_rows(state);
  outcome->n_planned = n_rows;
  nnp_status s = NNP_OK;
  if (spec->resume) {
    s = spec->resume_by_key ? check_resume_by_key(wl, state, spec, res, n_rows)
                            : check_resume(wl, state, spec, res, n_rows);
    outcome->resume_refused = s != NNP_OK;
    res->noisy = spec->resume->noisy;
  }
  if (s == NNP_OK && n_rows > 0) {
    res->rows = nnp_calloc((size_t)n_rows, sizeof *res->rows);
    res->cap_rows = n_rows;
    if (!res->rows) s = nnp_error(NNP_ERR_NOMEM, "sweep: no memory for %d rows", n_rows);
  }
  if (s == NNP_OK) s = run_rows(wl, state, spec, res, outcome);
  wl->close(state);
  if (nnp_env_is_busy(&res->env)) res->noisy = true;
  outcome->interrupted = nnp_bench_interrupted != 0;
  return s;
}
