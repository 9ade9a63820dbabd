/* The load workload of the sweep library (sweep_load.h). */
#include "load/sweep_load.h"

#include <stdio.h>
#include <string.h>

#include "load/load_table.h"
#include "load/target.h"
#include "load/worker_pool.h"
#include "nnperf/alloc.h"

typedef struct load_state {
  const nnp_sweep_spec *spec;
  nnp_sweep_load_args args;
  nnp_load_target_options to;
  char options[1024];
  nnp_load_target t;
  bool target_open, pool_started;
  nnp_load_pool pool;
  nnp_load_result res;
} load_state;

static void load_close(void *state) {
  load_state *st = state;
  if (!st) return;
  if (st->pool_started) nnp_load_pool_stop(&st->pool);
  if (st->target_open) nnp_load_target_close(&st->t);
  nnp_load_result_free(&st->res);
  nnp_free(st);
}

/* The backend's part of spec->backend_options ("B:K=V,..."), or NULL. */
static const char *backend_options(const nnp_sweep_spec *s, const char *backend) {
  size_t bl = strlen(backend);
  if (s->backend_options && !strncmp(s->backend_options, backend, bl) && s->backend_options[bl] == ':')
    return s->backend_options + bl + 1;
  return NULL;
}

static nnp_status load_open(const nnp_sweep_spec *spec, nnp_bench_result *res, void **state) {
  if (!spec->workload_args) return nnp_error(NNP_ERR_INVALID, "sweep: the load workload needs its arguments");
  if (spec->n_backends != 1 || spec->n_threads > 1)
    return nnp_error(NNP_ERR_INVALID, "sweep: a load row has one backend and one thread count");
  load_state *st = nnp_calloc(1, sizeof *st);
  if (!st) return nnp_error(NNP_ERR_NOMEM, "sweep: no memory");
  st->spec = spec;
  st->args = *(const nnp_sweep_load_args *)spec->workload_args;
  st->args.cfg.seed = spec->seed;
  st->res.cfg = st->args.cfg;
  st->res.capacity_qps = st->res.max_qps = -1;
  st->to = (nnp_load_target_options){.model = spec->model, .backend = spec->backends[0],
                                     .options = backend_options(spec, spec->backends[0]),
                                     .threads = spec->n_threads ? spec->threads[0] : 1, .seed = spec->seed,
                                     .mem_limit = spec->mem_limit_bytes, .pin = spec->pin, .timeout_s = spec->timeout_s};
  nnp_status s = nnp_load_target_open(&st->to, &st->t);
  if (s != NNP_OK) { /* the caller names the model */
    load_close(st);
    return s;
  }
  st->target_open = true;
  res->accuracy_rtol = -1; /* nothing compared */
  *state = st;
  return NNP_OK;
}

static int load_n_rows(void *state) {
  (void)state;
  return 1;
}

/* The row as the load document has it; version, note and phases once the pool ran. */
static void fill_row(const load_state *st, const char *error, nnp_bench_row *row) {
  const nnp_load_worker *w0 = st->pool_started ? &st->pool.w[0] : NULL;
  nnp_load_meta meta = {.backend = st->to.backend, .backend_version = w0 ? w0->version : "",
                        .note = w0 ? w0->note : "", .threads = st->to.threads};
  nnp_load_startup first = {-1, -1, -1, -1};
  if (w0) first = (nnp_load_startup){w0->spawn_to_ready_s, w0->load_s, w0->first_s, w0->cold_start_s};
  nnp_load_row_fill(row, &meta, &st->t, &first, error);
}

static nnp_status load_plan_row(void *state, int index, nnp_bench_row *row) {
  (void)index;
  load_state *st = state;
  nnp_load_meta meta = {.backend = st->to.backend, .threads = st->to.threads};
  nnp_load_row_fill(row, &meta, &st->t, NULL, NULL);
  return NNP_OK;
}

static nnp_status load_run_row(void *state, int index, nnp_bench_row *row, nnp_sweep_progress_fn progress, void *ud) {
  load_state *st = state;
  const nnp_load_config *cfg = &st->args.cfg;
  if (progress) progress(ud, index + 1, 1, st->to.backend, "load", 0, 0);
  if (cfg->scenario != NNP_LOAD_MULTI_STREAM) st->t.req.streams = cfg->streams;
  NNP_TRY(nnp_load_pool_start(&st->t.req, st->args.instances, st->to.timeout_s, &st->pool));
  st->pool_started = true;
  if (progress) progress(ud, index + 1, 1, st->to.backend, "measure", 0, 0);
  nnp_status s = st->args.search == NNP_LOAD_FIND_MAX_QPS ? nnp_load_find_max_qps(&st->pool, cfg, &st->res)
                 : st->args.search == NNP_LOAD_QPS_SWEEP  ? nnp_load_sweep(&st->pool, cfg, &st->res)
                                                          : nnp_load_measure(&st->pool, cfg, cfg->qps, cfg->seed,
                                                                             "measure", &st->res);
  char err[1024] = "";
  if (s != NNP_OK) snprintf(err, sizeof err, "%s", nnp_last_error());
  fill_row(st, err, row);
  return NNP_OK;
}

/* The runs become the document's load section; then the workers go. */
static void load_finish_row(void *state, nnp_bench_result *res, int index, bool kept) {
  (void)index, (void)kept;
  load_state *st = state;
  if (nnp_load_doc_set_load(res, &st->res, st->pool_started ? &st->pool : NULL, st->to.options,
                            st->args.instances) != NNP_OK)
    fprintf(stderr, "nnperf load: %s\n", nnp_last_error());
  if (st->pool_started) nnp_load_pool_stop(&st->pool);
  st->pool_started = false;
}

const nnp_sweep_workload nnp_sweep_load = {
    .kind = "bench",
    .open = load_open,
    .n_rows = load_n_rows,
    .plan_row = load_plan_row,
    .run_row = load_run_row,
    .finish_row = load_finish_row,
    .close = load_close,
};
