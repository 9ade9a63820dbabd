#include "load/target.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nnperf/backend.h"
#include "nnperf/bench.h"
#include "nnperf/onnx.h"
#include "zoo/zoo_file.h"

static nnp_status materialise(const char *model, nnp_load_target *t) {
  /* a plain path is checked here, so that a missing model fails before any worker starts */
  if (strncmp(model, "zoo:", 4) && access(model, R_OK) != 0)
    return nnp_error(NNP_ERR_IO, "cannot read the model: %s", strerror(errno)); /* the caller names it */
  return nnp_zoo_model_file(model, "load", t->model_path, sizeof t->model_path, t->tmpdir, sizeof t->tmpdir);
}

nnp_status nnp_load_target_open(const nnp_load_target_options *o, nnp_load_target *t) {
  memset(t, 0, sizeof *t);
  const nnp_backend_entry *be = nnp_backend_find(o->backend);
  if (!be) return nnp_error(NNP_ERR_INVALID, "unknown backend '%s' (see nnperf backends)", o->backend);
  NNP_TRY(materialise(o->model, t));
  nnp_graph *g = NULL;
  nnp_status st = nnp_onnx_load(t->model_path, NULL, &g);
  if (st == NNP_OK && g->n_inputs > NNP_PLAN_MAX_BINDINGS)
    st = nnp_error(NNP_ERR_LIMIT, "model has %d inputs; nnperf load handles up to %d", g->n_inputs, NNP_PLAN_MAX_BINDINGS);
  nnp_plan_options po;
  nnp_plan_options_default(&po);
  for (int i = 0; st == NNP_OK && i < g->n_inputs; i++) { /* seeded, identical for every backend */
    st = nnp_resolve_input_shape(g, &po, i, &t->inputs[i]);
    if (st == NNP_OK) st = nnp_tensor_alloc(&t->inputs[i]);
    if (st != NNP_OK) break;
    nnp_fill_seeded(&t->inputs[i], o->seed + (uint64_t)i);
    snprintf(t->names[i], sizeof t->names[i], "%s", g->values[g->inputs[i]].name);
    t->name_ptrs[i] = t->names[i];
    t->n_inputs = i + 1;
  }
  if (g) nnp_graph_destroy(g);
  if (st != NNP_OK) {
    nnp_load_target_close(t);
    return st;
  }
  ssize_t sl = readlink("/proc/self/exe", t->self, sizeof t->self - 1);
  t->self[sl > 0 ? sl : 0] = 0;
  snprintf(t->options, sizeof t->options, "%s", o->options ? o->options : "");
  nnp_row_request *r = &t->req;
  r->worker_exe = t->self;
  r->backend = o->backend;
  r->model_path = t->model_path;
  r->options = t->options;
  r->precision = NNP_FP32;
  r->threads = o->threads;
  r->batch = 1;
  r->scenario = "load";
  r->n_inputs = t->n_inputs;
  r->inputs = t->inputs;
  r->input_names = t->name_ptrs;
  r->dyn_input = -1;
  nnp_loop_spec_default(&r->loop);
  r->seed = o->seed;
  r->timeout_s = o->timeout_s;
  r->mem_limit = o->mem_limit;
  r->pin_cpus = o->pin ? o->threads : 0;
  if (be->kind == NNP_BACKEND_EXTERNAL) {
    t->ext_argv[0] = nnp_external_python();
    t->ext_argv[1] = "-m";
    t->ext_argv[2] = "nnperf_worker";
    t->ext_argv[3] = NULL;
    r->external_argv = t->ext_argv;
    r->pythonpath = nnp_external_pythonpath();
  }
  return NNP_OK;
}

void nnp_load_target_close(nnp_load_target *t) {
  for (int i = 0; i < t->n_inputs; i++) nnp_tensor_free(&t->inputs[i]);
  t->n_inputs = 0;
  nnp_zoo_model_file_remove(t->model_path, t->tmpdir);
}
