/* llama-server's Prometheus /metrics, sampled while a load runs: how many requests it was
 * processing and deferring, how many slots each decode batched, prompt-cache hits. */
#ifndef NNP_LLM_METRICS_SCRAPE_H
#define NNP_LLM_METRICS_SCRAPE_H

#include <stddef.h>

typedef struct nnp_llm_server_gauges nnp_llm_server_gauges;

/* The value of metric `name` (e.g. "llamacpp:requests_processing") in Prometheus text
 * text[0..len); -1 when absent or malformed. Never reads past len. */
double nnp_prom_value(const char *text, size_t len, const char *name);

/* Folds one /metrics answer into g (first: the counters at the run's start). */
void nnp_llm_gauges_add(nnp_llm_server_gauges *g, const char *text, size_t len);

#endif
