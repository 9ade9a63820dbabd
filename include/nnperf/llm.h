/* LLM rows: a request is a prompt and a stream of output tokens.
 *
 * Every LLM measurement, in-process (`nnperf llm bench`: a worker runs the framework) or
 * over HTTP (`nnperf llm load`: a server streams tokens), ends as the same record per
 * request: when it was due, when it was sent, and when each output token arrived. All
 * metrics (TTFT, TPOT, ITL, E2E, throughput, goodput) are computed from those records in
 * one place (src/llm/llm_metrics.c), as CNN rows' statistics come from raw samples. */
#ifndef NNPERF_LLM_H
#define NNPERF_LLM_H

#include <stdbool.h>
#include <stdint.h>

#include "nnperf/stats.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Greedy token ids kept per request for the accuracy comparison between backends. */
#define NNP_LLM_KEEP_TOKENS 32

/* One request as the harness saw it. Times are CLOCK_MONOTONIC seconds (the same clock in
 * every process of the machine). A streamed chunk that carries k tokens gives k entries
 * with the same arrival time: the ITL between them is 0, as `vllm bench serve` counts it. */
typedef struct nnp_llm_request {
  int id;                /* which prompt it was: the same id means the same prompt */
  double t_due;          /* when it should have been sent (open loop: its scheduled arrival;
                          * closed loop and in-process batches: equal to t_sent) */
  double t_sent;         /* when it was handed to the framework / written to the socket */
  double t_done;         /* when the last byte of the answer arrived (or it failed) */
  double *token_t;       /* owned: arrival time of each output token, n_tokens of them */
  int n_tokens, cap_tokens;
  int prompt_tokens;     /* prompt length as the framework counted it (or as sent) */
  int32_t tokens[NNP_LLM_KEEP_TOKENS]; /* first generated token ids (-1: unknown, e.g. HTTP) */
  int n_kept;
  bool warmup;           /* warm-up requests are recorded but never in the metrics */
  bool ok;
  char error[200];       /* why it failed: "HTTP 500", "stream cut short after 3 tokens", ... */
} nnp_llm_request;

void nnp_llm_request_free(nnp_llm_request *r);
/* A measured request's TTFT, TPOT ((E2E - TTFT) / (tokens - 1), 0 for one token) and
 * E2E, from its scheduled arrival (t_due). 0 for a warm-up, failed or empty request. */
int nnp_llm_request_latency(const nnp_llm_request *r, double *ttft, double *tpot, double *e2e);
/* Appends one token arrival time (grows token_t). */
nnp_status nnp_llm_request_add_token(nnp_llm_request *r, double t);

/* Latency objectives for goodput: a request is good when it succeeded and each given
 * bound holds (<= 0: no bound). */
typedef struct nnp_llm_slo {
  double ttft_s, tpot_s, e2e_s;
} nnp_llm_slo;

typedef struct nnp_llm_metrics {
  int n_ok, n_failed;     /* measured requests (warm-ups excluded) */
  int n_good;             /* ok and within every SLO bound */
  /* per-request latencies (seconds); ITL pools every gap of every request. A stats
   * block with n == 0 was not measurable (e.g. TPOT of one-token answers). */
  nnp_stats ttft, tpot, itl, e2e;
  double duration_s;      /* first measured t_due -> last measured t_done */
  double req_per_s;       /* ok requests / duration */
  double goodput_req_per_s;
  double out_tok_per_s;   /* output tokens of ok requests / duration */
  double total_tok_per_s; /* prompt + output tokens / duration */
  int64_t prompt_tokens, output_tokens;
} nnp_llm_metrics;

/* Computes the metrics of reqs[0..n) (warm-ups skipped). seed makes the bootstrap
 * intervals repeatable. Never fails on odd input: failed requests only count. */
nnp_status nnp_llm_metrics_compute(const nnp_llm_request *reqs, int n, const nnp_llm_slo *slo, uint64_t seed,
                                   nnp_llm_metrics *out);

/* The seeded prompt every backend receives: token ids drawn from [lo, n_vocab) with
 * lo = min(256, n_vocab / 2) (above the special tokens of common vocabularies), unique per
 * request, identical across backends and reproducible in Python:
 *   z = mix64(seed * 0x9E3779B97F4A7C15 + (request << 24) + pos),  id = lo + z % (n_vocab - lo)
 * with mix64 the splitmix64 finaliser (nnp_mix64). */
int32_t nnp_llm_prompt_token(uint64_t seed, int request, int pos, int32_t n_vocab);

#ifdef __cplusplus
}
#endif
#endif
