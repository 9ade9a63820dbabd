/* The parent side of an LLM row: one worker process (the llama.cpp C worker or a Python
 * one), its spec on stdin, its records on stdout (docs/llm.md), time and memory limits;
 * whatever happens to the worker becomes the row's status and reason. */
#ifndef NNP_LLM_WORKER_H
#define NNP_LLM_WORKER_H

#include "nnperf/llm_bench.h"

typedef struct nnp_llm_row_request {
  const char *const *argv;   /* worker command, NULL-terminated */
  const char *pythonpath;    /* for a Python worker, or NULL */
  const char *backend, *model_path, *options, *weight_type;
  int threads, prompt_len, gen_len, concurrency, requests, warmup;
  uint64_t seed;
  double timeout_s;
  long long mem_limit;       /* bytes of resident memory, 0 = none */
} nnp_llm_row_request;

typedef void (*nnp_llm_progress_fn)(void *ud, const char *phase, int done, int total);

/* Runs one row; fills *row (free with nnp_llm_row_free). NNP_OK unless no worker could
 * be started at all. */
nnp_status nnp_llm_run_row(const nnp_llm_row_request *req, nnp_llm_row *row, nnp_llm_progress_fn progress, void *ud);

/* A row's configuration from q, every measurement unset (also for rows that never run). */
void nnp_llm_row_init(const nnp_llm_row_request *q, nnp_llm_row *row);

/* Prefill and decode rates of a row from its measured rounds (requests sent together). */
void nnp_llm_row_rates(nnp_llm_row *row);

#endif
