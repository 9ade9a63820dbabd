/* The result of nnperf llm load: one row per measured run (a concurrency, a request rate,
 * a find-max-rate probe or an explain rung), each with the metrics of
 * nnp_llm_metrics_compute, its failures by cause, the server's own gauges and timings.
 * Written as the result document of kind "llm-load" (docs/result-schema.md), a table,
 * CSV and an HTML page (llm_load_report.c). */
#ifndef NNP_LLM_LOAD_RESULT_H
#define NNP_LLM_LOAD_RESULT_H

#include <stdio.h>

#include "llm/llm_client.h"
#include "nnperf/bench.h"
#include "nnperf/env.h"
#include "nnperf/llm.h"

#define NNP_LLM_MAX_CAUSES 8

typedef struct nnp_llm_failure_cause {
  char cause[32];     /* "http", "timeout", "cut-short", "malformed event", ... */
  int count;
  char example[200];  /* the first such request's reason */
} nnp_llm_failure_cause;

typedef struct nnp_llm_load_row {
  char label[64];
  char scenario[16];  /* "closed", "open", "probe" (find-max-rate), "rung" */
  int concurrency;    /* closed loop streams (0: open loop) */
  double rate, burstiness;
  int max_concurrency;
  /* the server's configuration (llama-server backend; -1/"" when unknown) */
  int slots, cont_batching, cache_prompt, shared_prefix;
  char kv_type[16];
  char repack[8];     /* llama-server weight repacking: "on", "off" ("" for an endpoint) */
  char server_args[512];
  char note[256];     /* why a controlled variable is what it is (e.g. repack off: the CPU has AMX) */
  double load_s, cold_start_s; /* this row's server start (-1: reused server or endpoint) */
  nnp_llm_metrics m;
  nnp_llm_failure_cause causes[NNP_LLM_MAX_CAUSES];
  int n_causes;
  nnp_llm_server_gauges gauges;
  /* llama-server's own timings over the measured ok requests, beside nnperf's */
  int n_timed;
  double server_ttft_s, server_decode_tok_s, client_ttft_s, client_decode_tok_s;
  int slo_passed;     /* probe: the SLO held at the chosen percentile and nothing failed */
  /* every request of the row, warm-ups first (flagged), owned: the raw records compare's
   * statistics and any later recomputation start from */
  nnp_llm_request *reqs;
  int n_reqs;
  /* the CNN rows' footprint and energy: the files the llama-server process mapped
   * (/proc/PID/maps, the GGUF left out), the GGUF's bytes, and energy_j per output token
   * over the whole run (warm-ups included) where a counter is readable; unknown (-1) for
   * an --endpoint, which is no process of this run */
  nnp_row_extras ext;
} nnp_llm_load_row;

/* Strings are owned (a result read back from JSON or the history has no command line
 * to point into). */
typedef struct nnp_llm_load_result {
  char command_line[1024], model[512], backend[32], endpoint[256], api[16];
  char nnperf_version[32];
  char weight_type[16]; /* the GGUF's main weight type ("Q4_1"; "" for an endpoint): a controlled variable */
  char prompt_len[48], gen_len[48];
  int threads, num_requests, warmup_requests, n_vocab;
  double timeout_s;
  uint64_t seed;
  nnp_llm_slo slo;
  int slo_percentile;
  double max_rate;     /* --find-max-rate: highest passing rate (0: none passed; -1: not searched) */
  nnp_env env;
  nnp_llm_load_row *rows;
  int n_rows;
} nnp_llm_load_result;

/* Fills a row's metrics, failure causes and timing comparison from a finished run. */
nnp_status nnp_llm_load_row_fill(nnp_llm_load_row *row, const nnp_llm_load_out *o, const nnp_llm_slo *slo,
                                 uint64_t seed);
/* The SLO value of the chosen percentile (50, 90, 95 or 99) of s. */
double nnp_llm_stat_pct(const nnp_stats *s, int pct);

struct nnp_bench_result;
/* b->rows := one bench row per b->llm_load row (configuration, status, output tokens/s as
 * items/s, no samples), so history and the generic tables list llm load runs. */
nnp_status nnp_llm_load_mirror(struct nnp_bench_result *b);

/* Frees the rows and their requests (the result itself is the caller's). */
void nnp_llm_load_result_free(nnp_llm_load_result *r);

void nnp_llm_load_print_table(FILE *f, const nnp_llm_load_result *r);
/* The kind "llm-load" document (docs/result-schema.md); src/result/result_read_llm_load.c
 * reads it back. */
void nnp_llm_load_report_json(FILE *f, const nnp_llm_load_result *r);
nnp_status nnp_llm_load_write_json(const nnp_llm_load_result *r, const char *path);
nnp_status nnp_llm_load_write_csv(const nnp_llm_load_result *r, const char *path);
nnp_status nnp_llm_load_write_html(const nnp_llm_load_result *r, const char *path);

#endif
