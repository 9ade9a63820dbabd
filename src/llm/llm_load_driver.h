/* nnperf llm load as a library call: the spec a command line (or a sweep) builds, and the
 * driver that starts llama-server where asked, runs every row and stops the server. */
#ifndef NNP_LLM_LOAD_DRIVER_H
#define NNP_LLM_LOAD_DRIVER_H

#include "llm/llm_load_result.h"
#include "llm/llm_workload.h"

#define NNP_LLM_MAX_POINTS 16

typedef struct nnp_llm_load_spec {
  const char *model;        /* GGUF for llama-server */
  const char *server_bin;   /* NULL: the install-llm.sh build */
  const char *endpoint;     /* base URL of an existing server (NULL: start llama-server) */
  int chat;
  const char *model_name, *api_key;
  int threads, parallel, cont_batching; /* parallel 0: the largest concurrency */
  const char *kv_type;
  int repack;               /* llama-server weight repacking on (1) or off (0): nnp_llm_repack_choose */
  const char *repack_why;   /* why (auto's reason), written in each row's note */
  int concurrency[NNP_LLM_MAX_POINTS], n_concurrency;
  double rates[NNP_LLM_MAX_POINTS];
  int n_rates;
  double burstiness;
  int max_concurrency, num_requests, warmup_requests; /* warmup -1: as many as the concurrency */
  nnp_len_dist prompt_len, gen_len;
  uint64_t seed;
  double timeout_s, max_duration_s, metrics_interval_s;
  nnp_llm_slo slo;
  int slo_percentile;
  int find_max_rate, max_probes;
  double rate_lo;
  int explain;              /* the rungs: batching off/on, prefix cache off/on, KV f16/q8_0 */
  int shared_prefix, cache_prompt;
  int n_vocab;              /* 0: ask the server (/v1/models), else 1000 */
} nnp_llm_load_spec;

/* Runs the spec into r (rows appended; r's strings point into the spec). Returns an error
 * only when nothing could be measured (no server, bad spec); failed requests are rows'
 * failures. */
nnp_status nnp_llm_load_execute(const nnp_llm_load_spec *s, nnp_llm_load_result *r);

#endif
