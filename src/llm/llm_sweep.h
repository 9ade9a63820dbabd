/* The LLM sweep: backends x threads x prompt lengths x concurrency, one worker process
 * per row, as a library call (no argv): `nnperf llm bench` and plan files build a spec and
 * run it here. */
#ifndef NNP_LLM_SWEEP_H
#define NNP_LLM_SWEEP_H

#include "nnperf/llm_bench.h"

#define NNP_LLM_MAX_LIST 16

typedef struct nnp_llm_sweep_spec {
  const char *model;          /* GGUF path */
  const char *backends[NNP_LLM_MAX_LIST];
  int n_backends;
  int threads[NNP_LLM_MAX_LIST], n_threads;
  int prompt_lens[NNP_LLM_MAX_LIST], n_prompt_lens;
  int concurrency[NNP_LLM_MAX_LIST], n_concurrency;
  int gen_len;
  int requests;               /* measured requests per row (rounded up to the concurrency) */
  int warmup;                 /* warm-up requests per row (at least the concurrency) */
  const char *options;        /* "BACKEND:K=V,...;BACKEND:..." */
  uint64_t seed;
  double timeout_s;
  long long mem_limit;        /* bytes, 0 = none */
} nnp_llm_sweep_spec;

void nnp_llm_sweep_spec_default(nnp_llm_sweep_spec *s);

typedef struct nnp_llm_sweep_hooks {
  /* progress of the current row (TTY display); may be NULL */
  void (*progress)(void *ud, int row, int rows, const char *label, const char *phase, int done, int total);
  /* after each finished row (e.g. rewrite the JSON atomically); may be NULL */
  void (*row_done)(void *ud, const nnp_llm_result *r, int row);
  void *ud;
} nnp_llm_sweep_hooks;

/* Checks the model (a GGUF that nnperf can read) and runs every row into r (rows that
 * cannot run are recorded with their reason: unavailable, a prompt beyond the context).
 * NNP_OK unless the model itself is bad or memory runs out; row failures are rows. */
nnp_status nnp_llm_sweep_run(const nnp_llm_sweep_spec *s, nnp_llm_result *r, const nnp_llm_sweep_hooks *hooks);

/* Fills each row's accuracy against the first ok llama.cpp row with the same prompt and
 * generation lengths (the same prompts: ids match). */
void nnp_llm_compare_tokens(nnp_llm_result *r);

#endif
