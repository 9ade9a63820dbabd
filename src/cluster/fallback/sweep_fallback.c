/* A stand-in for the sweep library (nnperf/sweep.h) until its implementation, written in
 * branch `sweep`, is merged: CMakeLists.txt compiles this file only while
 * src/bench/sweep.c does not exist, so the merge drops it without an edit. It runs the
 * inference rows on the orchestrator (src/bench/orchestrator.h) the way nnperf bench
 * does: seeded inputs, one row per backend x precision x batch x threads, rows kept by
 * key on resume, the row-finished callback after each row. Not here (the library has
 * them): dynamic shapes, the plan-cache twin, int8 models, accuracy between rows. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/orchestrator.h"
#include "nnperf/alloc.h"
#include "nnperf/backend.h"
#include "nnperf/onnx.h"
#include "nnperf/sweep.h"
#include "zoo/zoo_file.h"

void nnp_sweep_spec_default(nnp_sweep_spec *s) {
  memset(s, 0, sizeof *s);
  nnp_loop_spec_default(&s->loop);
  nnp_plan_options_default(&s->plan);
  s->seed = 1;
  s->processes = 3;
  s->timeout_s = 600;
}

void nnp_sweep_interrupt(void) { nnp_bench_interrupted = 1; }

nnp_status nnp_sweep_row_key(const nnp_bench_row *r, char *key, size_t n) {
  int w = snprintf(key, n, "backend=%s precision=%s threads=%d batch=%lld scenario=%s", r->backend,
                   nnp_precision_name(r->precision), r->threads, (long long)r->batch, r->scenario);
  return w >= 0 && (size_t)w < n ? NNP_OK : nnp_error(NNP_ERR_LIMIT, "row key of %s is too long", r->label);
}

int nnp_sweep_find_row(const nnp_bench_result *res, const char *key) {
  char k[NNP_SWEEP_KEY_MAX];
  for (int i = 0; i < res->n_rows; i++)
    if (nnp_sweep_row_key(&res->rows[i], k, sizeof k) == NNP_OK && !strcmp(k, key)) return i;
  return -1;
}

typedef struct batch_inputs {
  nnp_tensor t[NNP_PLAN_MAX_BINDINGS];
  const char *names[NNP_PLAN_MAX_BINDINGS];
  int n;
  char scenario[160];
} batch_inputs;

static nnp_status make_inputs(const nnp_sweep_spec *s, const nnp_graph *g, int64_t batch, batch_inputs *in) {
  nnp_plan_options o = s->plan;
  int64_t dims[NNP_MAX_RANK];
  int rank = 0;
  if (s->static_shape) {
    for (const char *p = s->static_shape; *p && rank < NNP_MAX_RANK; p += *p == 'x') dims[rank++] = strtoll(p, (char **)&p, 10);
    NNP_TRY(nnp_plan_options_bind_shape(&o, g->values[g->inputs[0]].name, rank, dims));
  } else {
    for (int i = 0; i < g->n_inputs; i++) {
      const nnp_value *v = &g->values[g->inputs[i]];
      if (v->rank >= 1 && v->dims[0].value < 0 && v->dims[0].symbol && o.n_dims < NNP_PLAN_MAX_BINDINGS) {
        o.dims[o.n_dims].symbol = v->dims[0].symbol;
        o.dims[o.n_dims++].value = batch;
      }
    }
  }
  snprintf(in->scenario, sizeof in->scenario, "static:");
  for (in->n = 0; in->n < g->n_inputs; in->n++) {
    nnp_tensor *t = &in->t[in->n];
    NNP_TRY(nnp_resolve_input_shape(g, &o, in->n, t));
    NNP_TRY(nnp_tensor_alloc(t));
    nnp_fill_seeded(t, s->seed + (uint64_t)in->n);
    in->names[in->n] = g->values[g->inputs[in->n]].name;
    char d[128];
    size_t len = strlen(in->scenario);
    snprintf(in->scenario + len, sizeof in->scenario - len, "%s%s", in->n ? "," : "", nnp_shape_str(t->rank, t->dims, d, sizeof d));
  }
  return NNP_OK;
}

static int allowed_cpus(void) {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

/* One row: kept from the resumed result when its key is there, else measured. */
static void one_row(const nnp_sweep_spec *s, nnp_row_request *req, nnp_bench_result *res, nnp_sweep_outcome *out) {
  nnp_bench_row *row = &res->rows[res->n_rows];
  const nnp_backend_entry *e = nnp_backend_find(req->backend);
  char key[NNP_SWEEP_KEY_MAX], version[256];
  const char *ext_argv[] = {e ? nnp_external_python_for(e) : "", "-m", "nnperf_worker", NULL};
  nnp_row_init(req, row);
  int at = nnp_sweep_row_key(row, key, sizeof key) == NNP_OK && s->resume ? nnp_sweep_find_row(s->resume, key) : -1;
  bool kept = at >= 0;
  if (kept) {
    nnp_bench_row *old = &((nnp_bench_result *)s->resume)->rows[at];
    *row = *old; /* moved: the caller's resume result gives its row up */
    memset(old, 0, sizeof *old);
    out->n_kept++;
  } else if (!e || nnp_backend_probe(e, version, sizeof version) != NNP_OK) {
    row->status = NNP_ROW_UNAVAILABLE;
    snprintf(row->reason, sizeof row->reason, "%s", e ? nnp_last_error() : "unknown backend");
  } else {
    if (e->kind == NNP_BACKEND_EXTERNAL) req->external_argv = ext_argv, req->pythonpath = nnp_external_pythonpath();
    if (nnp_run_row_processes(req, s->processes, row, NULL, NULL) != NNP_OK) {
      nnp_bench_row_free(row);
      nnp_row_init(req, row);
      row->status = NNP_ROW_FAILED;
      snprintf(row->reason, sizeof row->reason, "%s", nnp_last_error());
    }
    if (nnp_bench_interrupted) { /* cut short: left out, a resume runs it again */
      nnp_bench_row_free(row);
      memset(row, 0, sizeof *row);
      out->interrupted = true;
      return;
    }
  }
  out->any_failed |= row->status != NNP_ROW_OK && row->status != NNP_ROW_UNAVAILABLE;
  res->n_rows++;
  if (s->row_done) s->row_done(s->ud, res, res->n_rows - 1, kept);
}

static void run_batch(const nnp_sweep_spec *s, const char *path, const batch_inputs *in, int64_t batch,
                      nnp_bench_result *res, nnp_sweep_outcome *out) {
  char self[4096];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  self[sl > 0 ? sl : 0] = 0;
  int n_thr = s->n_threads ? s->n_threads : 1, n_prec = s->n_precisions ? s->n_precisions : 1;
  for (int ti = 0; ti < n_thr; ti++)
    for (int pi = 0; pi < n_prec; pi++)
      for (int k = 0; k < s->n_backends && !nnp_bench_interrupted; k++) {
        nnp_row_request req = {.worker_exe = self, .backend = s->backends[k], .model_path = path, .options = "",
                               .precision = s->n_precisions ? s->precisions[pi] : NNP_FP32,
                               .threads = s->n_threads ? s->threads[ti] : allowed_cpus(), .batch = batch,
                               .scenario = in->scenario, .n_inputs = in->n, .inputs = in->t,
                               .input_names = in->names, .dyn_input = -1, .dyn_dims = "", .loop = s->loop,
                               .seed = s->seed, .timeout_s = s->timeout_s, .mem_limit = s->mem_limit_bytes};
        one_row(s, &req, res, out);
      }
}

nnp_status nnp_sweep_run(const nnp_sweep_spec *s, nnp_bench_result *res, nnp_sweep_outcome *out) {
  memset(res, 0, sizeof *res);
  memset(out, 0, sizeof *out);
  if (s->dynamic_shape) return nnp_error(NNP_ERR_UNSUPPORTED, "%s: dynamic shapes need the sweep library", s->model);
  char path[4096], tmpdir[256];
  nnp_graph *g = NULL;
  NNP_TRY(nnp_zoo_model_file(s->model, "sweep", path, sizeof path, tmpdir, sizeof tmpdir));
  nnp_status st = nnp_onnx_load(path, NULL, &g);
  int n_batch = s->static_shape || !s->n_batches ? 1 : s->n_batches;
  out->n_planned = n_batch * s->n_backends * (s->n_threads ? s->n_threads : 1) * (s->n_precisions ? s->n_precisions : 1);
  res->rows = st == NNP_OK ? nnp_calloc((size_t)out->n_planned + 1, sizeof *res->rows) : NULL;
  res->cap_rows = out->n_planned + 1;
  snprintf(res->model, sizeof res->model, "%s", s->model);
  snprintf(res->nnperf_version, sizeof res->nnperf_version, "0.1.0");
  snprintf(res->command_line, sizeof res->command_line, "%s", s->command_line ? s->command_line : "");
  nnp_env_capture(&res->env);
  res->loop = s->loop, res->seed = s->seed, res->accuracy_rtol = -1;
  if (st == NNP_OK && !res->rows) st = nnp_error(NNP_ERR_NOMEM, "%s: no memory for the rows", s->model);
  for (int b = 0; st == NNP_OK && b < n_batch && !nnp_bench_interrupted; b++) {
    batch_inputs in;
    memset(&in, 0, sizeof in);
    int64_t batch = s->n_batches ? s->batches[b] : 1;
    st = make_inputs(s, g, batch, &in);
    if (st == NNP_OK) run_batch(s, path, &in, batch, res, out);
    for (int i = 0; i < in.n; i++) nnp_tensor_free(&in.t[i]);
  }
  out->interrupted |= nnp_bench_interrupted != 0;
  if (g) nnp_graph_destroy(g);
  nnp_zoo_model_file_remove(path, tmpdir);
  return st;
}
