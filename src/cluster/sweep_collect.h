/* nnperf sweep collect: every row of a plan's results folder gathered into one result per
 * kind of row, each row labelled with its model and keeping its host (class, node, job
 * id, environment). */
#ifndef NNP_CLUSTER_SWEEP_COLLECT_H
#define NNP_CLUSTER_SWEEP_COLLECT_H

#include "nnperf/bench.h"
#include "nnperf/sweep_plan.h"

/* Reads the rows of every group of the plan, for the class "local" and each hardware
 * class: the inference rows into *cnn (a bench document), the LLM rows into *llm (an llm
 * document, whose labels also name the class of rows measured elsewhere than here:
 * "tiny.gguf llama.cpp t1 p24 g12 c1 @cpu"). Each header is the collecting machine's;
 * both are initialised here and freed by the caller, even on error. */
nnp_status nnp_sweep_collect(const nnp_sweep_plan *plan, const char *dir, nnp_bench_result *cnn,
                             nnp_bench_result *llm);

#endif
