/* `nnperf llm bench`: LLM inference rows, one worker process per row, as CNN rows are.
 *
 * A row is one backend x threads x prompt length x concurrency. Its worker runs rounds of
 * `concurrency` requests (all sequences of a round in one batch), warm-up rounds first, and
 * sends back every request's token arrival times; the metrics are computed here, from
 * those records (nnp_llm_metrics_compute), with the prefill and decode rates that
 * llama-bench calls pp and tg. */
#ifndef NNPERF_LLM_BENCH_H
#define NNPERF_LLM_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "nnperf/bench.h"
#include "nnperf/env.h"
#include "nnperf/llm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NNP_LLM_RESULT_KIND "llm"

typedef struct nnp_llm_row {
  /* configuration */
  char backend[32];
  char backend_version[128];
  char weight_type[32];  /* what the backend computes with: "Q4_1", "fp32 (dequantised Q4_1)" */
  char options[256];
  int threads, prompt_len, gen_len, concurrency;
  char label[96];        /* "llama.cpp t2 p128 g32 c1" */
  /* outcome */
  nnp_row_status status;
  char reason[512];
  char note[512];
  int exit_status, term_signal;
  /* phases (seconds, -1 when not measured) */
  double spawn_to_ready_s, load_s;
  double cold_start_s;   /* process start -> first token of the first (warm-up) request */
  /* every request the worker ran, warm-ups included (flagged) */
  nnp_llm_request *reqs;
  int n_reqs;
  nnp_llm_metrics m;
  double prefill_tok_per_s; /* prompt tokens / time to the round's last first token */
  double decode_tok_per_s;  /* tokens after the first / time from there to the round's end, all
                             * sequences together (llama-bench tg at concurrency 1) */
  double harness_overhead_s; /* worker time outside the framework per generated token */
  int64_t peak_rss_bytes, vmhwm_bytes, kv_cache_bytes;
  char kv_source[32];     /* "framework" or "model dimensions" */
  /* what a deployment ships and spends, as CNN rows have them (footprint, energy): the
   * files the worker loaded, the GGUF's bytes, and energy_j per OUTPUT TOKEN over the
   * measured rounds where a counter is readable (docs/llm.md) */
  nnp_row_extras ext;
  /* accuracy against the reference row (same prompts): greedy tokens and first tokens */
  bool compared;
  char reference[96];
  double token_agreement;      /* equal positions among the first kept tokens, all requests */
  int first_divergence;        /* first position where request 0's tokens differ, -1 none */
  double first_token_agreement; /* requests whose first token (the argmax of the prompt's
                                 * logits) agrees */
  /* nnperf sweep (docs/sweep.md): where the row ran, as a bench row's host fields;
   * hw_class "" for a one-machine run (then no "host" in the document) */
  char hw_class[48];
  char node[64];
  char job_id[32];
  nnp_env host_env;
} nnp_llm_row;

void nnp_llm_row_free(nnp_llm_row *r);

typedef struct nnp_llm_result {
  char model[512];
  char nnperf_version[32];
  char command_line[1024];
  nnp_env env;
  uint64_t seed;
  int requests, warmup;   /* measured and warm-up requests per row */
  bool allow_mixed;       /* rank rows of different weight types */
  bool noisy;
  int n_rows, cap_rows;
  nnp_llm_row *rows;
} nnp_llm_result;

void nnp_llm_result_free(nnp_llm_result *r);

#ifdef __cplusplus
}
#endif
#endif
