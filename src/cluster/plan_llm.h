/* A sweep plan's LLM groups as sweep specs of the LLM workload (src/llm/llm_sweep.h). */
#ifndef NNP_CLUSTER_PLAN_LLM_H
#define NNP_CLUSTER_PLAN_LLM_H

#include "llm/llm_sweep.h"
#include "nnperf/sweep_plan.h"

/* Fills spec (after nnp_sweep_spec_default) and llm for LLM group g: the group's GGUF,
 * its backends x threads x prompt lengths x concurrency, the plan's seed, worker timeout
 * and memory limit, one worker process per row; spec->workload_args points at llm.
 * Callbacks and resume are the caller's. Pointers refer into plan. */
void nnp_plan_llm_group_spec(const nnp_sweep_plan *plan, int g, nnp_llm_sweep_spec *llm, nnp_sweep_spec *spec);

#endif
