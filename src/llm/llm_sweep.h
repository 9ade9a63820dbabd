/* The LLM sweep: backends x threads x prompt lengths x concurrency, one worker process
 * per row, as a workload of the sweep library (no argv): `nnperf llm bench` and plan
 * files build a spec and run it through nnp_sweep_run. */
#ifndef NNP_LLM_SWEEP_H
#define NNP_LLM_SWEEP_H

#include "nnperf/llm_bench.h"
#include "nnperf/sweep.h"

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

/* The LLM workload of the sweep library (nnperf/sweep.h): spec->workload_args is an
 * nnp_llm_sweep_spec, spec->model its GGUF. open checks the model (a GGUF nnperf can
 * read, backends it knows) and gives the result its "llm" section (res->llm); each row
 * is measured into res->llm->rows[i] and mirrored into res->rows[i]
 * (nnp_llm_mirror_row), so resume, row callbacks, history and interruption are the
 * runner's, as for CNN rows. Rows that cannot run are rows with their reason
 * (unavailable, a prompt beyond the context). Row order: threads, prompt length,
 * concurrency, then backend (innermost), so a backend's rows sit beside its peers. */
extern const nnp_sweep_workload nnp_llm_workload;

/* The bench row that stands for an LLM row: configuration (backend, threads, label,
 * batch = concurrency, scenario "llm p128 g32 c1 w=WEIGHTS"), outcome and phases, peak
 * memory; one process; no samples (the requests live in the LLM row). */
void nnp_llm_mirror_row(const nnp_llm_row *w, nnp_bench_row *row);

/* Copies the run's header (model, version, command line, environment, seed, noisy flag)
 * into res->llm, which the document writer and the reports read. */
void nnp_llm_sync_header(nnp_bench_result *res);

/* Fills each row's accuracy against the first ok llama.cpp row with the same prompt and
 * generation lengths (the same prompts: ids match). */
void nnp_llm_compare_tokens(nnp_llm_result *r);

#endif
