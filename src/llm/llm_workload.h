/* What nnperf llm load offers a server: arrival times, prompt and output lengths, and the
 * request bodies. Every draw is a pure function of the seed and the request index, so two
 * runs with one seed offer the same traffic and differ only by the server. */
#ifndef NNP_LLM_WORKLOAD_H
#define NNP_LLM_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "nnperf/status.h"

/* A length: fixed N, uniform:LO:HI, or normal:MEAN:SD (rounded, clamped to [1, 1<<20]). */
typedef struct nnp_len_dist {
  enum { NNP_LEN_FIXED, NNP_LEN_UNIFORM, NNP_LEN_NORMAL } kind;
  double a, b;
} nnp_len_dist;

/* Parses "128", "uniform:64:256" or "normal:128:32"; what names the option in errors. */
nnp_status nnp_len_dist_parse(const char *s, const char *what, nnp_len_dist *out);
int nnp_len_dist_draw(const nnp_len_dist *d, uint64_t seed, int request);
int nnp_len_dist_max(const nnp_len_dist *d);
/* "128", "uniform:64:256", ... as given (for tables and results). */
void nnp_len_dist_format(const nnp_len_dist *d, char *buf, size_t cap);

/* Open loop: n arrival offsets (seconds from the start) with gaps from a gamma
 * distribution of shape burstiness and mean 1/rate (burstiness 1: Poisson, as
 * `vllm bench serve --burstiness` defines it; below 1 burstier, above 1 more regular). */
void nnp_llm_arrivals(double rate, double burstiness, int n, uint64_t seed, double *out);

/* What a request body says; the prompt is nnp_llm_prompt_token(seed, request, pos) except
 * for its first shared_prefix positions, which every request shares (request index 0's
 * tokens): the prefix-cache scenario. */
typedef struct nnp_llm_body_spec {
  int chat;                 /* chat completions (text prompt) instead of completions (token ids) */
  const char *model;        /* "model" field; NULL or "" to omit */
  int prompt_len, gen_len, shared_prefix, n_vocab;
  uint64_t seed;
  int request;
  int cache_prompt;         /* llama-server's cache_prompt: -1 not sent, 0 off, 1 on */
} nnp_llm_body_spec;

/* A malloc'd JSON body (stream:true, usage asked for, greedy, ignore_eos so every request
 * generates gen_len tokens). */
nnp_status nnp_llm_body(const nnp_llm_body_spec *s, char **out);

#endif
