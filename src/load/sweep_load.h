/* nnperf load as a workload of the sweep library (nnperf/sweep.h): a row is one backend
 * x threads offered a load scenario by a pool of serve-mode workers; the row holds the
 * configuration and the first worker's start-up phases, the document's load section the
 * runs (docs/result-schema.md). The spec gives the model, backend (one), threads (one),
 * seed, timeout, memory limit and pinning; backend_options "B:K=V,..." the backend's
 * options; workload_args (nnp_sweep_load_args) the scenario and the search. */
#ifndef NNP_LOAD_SWEEP_LOAD_H
#define NNP_LOAD_SWEEP_LOAD_H

#include "load/scenarios.h"
#include "nnperf/sweep.h"

typedef enum nnp_load_search {
  NNP_LOAD_MEASURE,      /* one run of the scenario at cfg.qps */
  NNP_LOAD_FIND_MAX_QPS, /* server: the highest QPS with P99 <= cfg.bound_s */
  NNP_LOAD_QPS_SWEEP,    /* server: latency vs QPS from 10% to 120% of the capacity */
} nnp_load_search;

typedef struct nnp_sweep_load_args {
  nnp_load_config cfg; /* its seed is the spec's */
  int instances;       /* serve-mode worker processes */
  nnp_load_search search;
} nnp_sweep_load_args;

extern const nnp_sweep_workload nnp_sweep_load;

#endif
