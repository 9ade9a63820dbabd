/* nnperf's OpenAI-compatible streaming client: drives one server with a closed or open
 * loop of requests over libcurl's multi interface, all connections in one thread, so
 * every token's arrival time is read off one clock as the bytes come in. Every way a
 * request can go wrong (HTTP error, malformed or cut stream, no tokens, timeout,
 * connection refused) ends as a failed nnp_llm_request with its reason; the run goes on. */
#ifndef NNP_LLM_CLIENT_H
#define NNP_LLM_CLIENT_H

#include <signal.h>

#include "llm/llm_workload.h"
#include "llm/oai_stream.h"
#include "nnperf/llm.h"

typedef struct nnp_llm_endpoint {
  char base_url[256];     /* "http://127.0.0.1:8080" (no trailing slash) */
  int chat;               /* /v1/chat/completions instead of /v1/completions */
  const char *model;      /* the "model" field; NULL/"" omitted */
  const char *api_key;    /* from --api-key-env: sent as a bearer token, never stored */
  double timeout_s;       /* per request, from the start of sending */
  int n_vocab;            /* prompt token ids are drawn below it */
} nnp_llm_endpoint;

typedef struct nnp_llm_load_plan {
  int concurrency;        /* closed loop: streams each sending its next request when the last ends */
  double rate;            /* open loop (when concurrency == 0): requests/s */
  double burstiness;      /* gamma shape of the gaps (1: Poisson) */
  int max_concurrency;    /* open loop: at most this many in flight (0: unbounded) */
  int num_requests, warmup_requests;
  nnp_len_dist prompt_len, gen_len;
  int shared_prefix;      /* prompt tokens every request shares (prefix-cache rung) */
  int cache_prompt;       /* llama-server's cache_prompt: -1 not sent */
  uint64_t seed;
  int first_request;      /* prompt index of the first request: rows never share prompts */
  double metrics_interval_s; /* > 0: sample the server's /metrics this often */
  double max_duration_s;  /* the whole run stops (requests failed "run stopped") after this */
} nnp_llm_load_plan;

/* llama-server's /metrics sampled over the run (Prometheus text; -1: not exposed). */
typedef struct nnp_llm_server_gauges {
  int samples;
  double processing_max, processing_mean, deferred_max, deferred_mean;
  double busy_slots_per_decode;  /* slots decoding per llama_decode over this row (-1: unknown) */
  double kv_usage_max;           /* kv_cache_usage_ratio where the server has it */
  double prompt_cached_tokens;   /* prompt tokens served from the cache during the run */
  /* The server's counters at the first sample: its per-decode average and cache counter
   * are cumulative since it started, so a row's share is the difference from these. */
  double start_decodes, start_busy_total, start_cached;
} nnp_llm_server_gauges;

typedef struct nnp_llm_load_out {
  nnp_llm_request *reqs;  /* warm-ups first (marked), then the measured requests */
  nnp_oai_timings *timings; /* the server's own timings per request */
  int n;
  double t_start, t_first_token; /* run start; first token of any request (cold start) */
  nnp_llm_server_gauges gauges;
} nnp_llm_load_out;

/* Set by a SIGINT/SIGTERM handler: the run stops, its requests fail "interrupted". */
extern volatile sig_atomic_t nnp_llm_interrupted;

nnp_status nnp_llm_client_global_init(void);
/* Runs the plan against e. Fails only on bad arguments or out of memory; requests that
 * fail are in out with their reasons. */
nnp_status nnp_llm_load_run(const nnp_llm_endpoint *e, const nnp_llm_load_plan *p, nnp_llm_load_out *out);
void nnp_llm_load_out_free(nnp_llm_load_out *o);

/* GET base_url + path into a malloc'd NUL-terminated body (at most max_bytes), with the
 * HTTP status. A transport error is NNP_ERR_IO with curl's reason. */
nnp_status nnp_llm_http_get(const char *base_url, const char *path, const char *api_key, double timeout_s,
                            size_t max_bytes, long *http_code, char **body);

#endif
