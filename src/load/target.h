/* What a load or cold-start command offers its workers: the model as a file they can
 * open (zoo models written to a temporary folder), the seeded inputs every backend sees
 * (as bench makes them) and the worker request with the backend's worker command. */
#ifndef NNP_LOAD_TARGET_H
#define NNP_LOAD_TARGET_H

#include "bench/orchestrator.h"
#include "nnperf/engine.h"

typedef struct nnp_load_target {
  char model_path[4096], tmpdir[256], self[4096], options[1024];
  int n_inputs;
  nnp_tensor inputs[NNP_PLAN_MAX_BINDINGS];
  char names[NNP_PLAN_MAX_BINDINGS][256];
  const char *name_ptrs[NNP_PLAN_MAX_BINDINGS];
  const char *ext_argv[4];
  nnp_row_request req; /* ready for nnp_worker_spawn / nnp_load_pool_start */
} nnp_load_target;

typedef struct nnp_load_target_options {
  const char *model;    /* .onnx path or zoo:NAME */
  const char *backend;
  const char *options;  /* backend options K=V,... or NULL */
  int threads;
  uint64_t seed;
  long long mem_limit;  /* bytes, 0 = none */
  int pin;              /* pin each worker to CPUs 0..threads-1 */
  double timeout_s;
} nnp_load_target_options;

nnp_status nnp_load_target_open(const nnp_load_target_options *o, nnp_load_target *t);
void nnp_load_target_close(nnp_load_target *t);

#endif
