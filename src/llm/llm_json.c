/* The LLM result document (kind "llm"): configuration, outcome, phases, metrics with
 * their intervals, and every request's raw token times, so each number can be traced
 * back to the samples it came from (docs/result-schema.md). */
#include <string.h>

#include "llm/llm_report.h"
#include "result/result_json.h"
#include "util/atomic_file.h"
#include "util/json_write.h"

static void num_or_null(FILE *f, double v, int valid) {
  if (valid) nnp_json_number(f, v);
  else fputs("null", f);
}

/* "key": the latency distribution, written as every result document writes one */
static void stats(FILE *f, const char *key, const nnp_stats *s) {
  fprintf(f, "\"%s\": ", key);
  nnp_result_write_stats(f, s);
}

void nnp_llm_write_request(FILE *f, const nnp_llm_request *q) {
  fprintf(f, "{\"id\": %d, \"warmup\": %s, \"ok\": %s, \"prompt_tokens\": %d, \"t_due\": %.9f, \"t_sent\": %.9f, "
             "\"t_done\": %.9f, \"error\": ",
          q->id, q->warmup ? "true" : "false", q->ok ? "true" : "false", q->prompt_tokens, q->t_due, q->t_sent,
          q->t_done);
  NNP_JSON_FIELD(f, q->error);
  fputs(", \"token_t\": [", f); /* after t_sent, seconds */
  for (int k = 0; k < q->n_tokens; k++) fprintf(f, "%s%.6f", k ? ", " : "", q->token_t[k] - q->t_sent);
  fputs("], \"tokens\": [", f);
  for (int k = 0; k < q->n_kept; k++) fprintf(f, "%s%d", k ? ", " : "", q->tokens[k]);
  fputs("]}", f);
}

static void metrics(FILE *f, const nnp_llm_metrics *m) {
  fprintf(f, "{\"n_ok\": %d, \"n_failed\": %d, \"n_good\": %d, ", m->n_ok, m->n_failed, m->n_good);
  stats(f, "ttft_s", &m->ttft);
  fputs(", ", f);
  stats(f, "tpot_s", &m->tpot);
  fputs(", ", f);
  stats(f, "itl_s", &m->itl);
  fputs(", ", f);
  stats(f, "e2e_s", &m->e2e);
  fputs(", \"duration_s\": ", f);
  nnp_json_number(f, m->duration_s);
  fputs(", \"req_per_s\": ", f);
  nnp_json_number(f, m->req_per_s);
  fputs(", \"out_tok_per_s\": ", f);
  nnp_json_number(f, m->out_tok_per_s);
  fputs(", \"total_tok_per_s\": ", f);
  nnp_json_number(f, m->total_tok_per_s);
  fprintf(f, ", \"prompt_tokens\": %lld, \"output_tokens\": %lld}", (long long)m->prompt_tokens,
          (long long)m->output_tokens);
}

static void row_config(FILE *f, const nnp_llm_row *w) {
  fputs("    {\"label\": ", f);
  NNP_JSON_FIELD(f, w->label);
  fputs(", \"backend\": ", f);
  NNP_JSON_FIELD(f, w->backend);
  fputs(", \"backend_version\": ", f);
  NNP_JSON_FIELD(f, w->backend_version);
  fputs(", \"weight_type\": ", f);
  NNP_JSON_FIELD(f, w->weight_type);
  fputs(", \"options\": ", f);
  NNP_JSON_FIELD(f, w->options);
  fprintf(f, ",\n     \"threads\": %d, \"prompt_len\": %d, \"gen_len\": %d, \"concurrency\": %d, \"status\": \"%s\"",
          w->threads, w->prompt_len, w->gen_len, w->concurrency, nnp_row_status_name(w->status));
  fputs(", \"reason\": ", f);
  NNP_JSON_FIELD(f, w->reason);
  fputs(", \"note\": ", f);
  NNP_JSON_FIELD(f, w->note);
  fprintf(f, ", \"exit_status\": %d, \"term_signal\": %d", w->exit_status, w->term_signal);
}

static void row_numbers(FILE *f, const nnp_llm_row *w) {
  int ok = w->status == NNP_ROW_OK;
  fputs(",\n     \"spawn_to_ready_s\": ", f);
  num_or_null(f, w->spawn_to_ready_s, w->spawn_to_ready_s >= 0);
  fputs(", \"load_s\": ", f);
  num_or_null(f, w->load_s, w->load_s >= 0);
  fputs(", \"cold_start_s\": ", f);
  num_or_null(f, w->cold_start_s, w->cold_start_s >= 0);
  fputs(", \"prefill_tok_per_s\": ", f);
  num_or_null(f, w->prefill_tok_per_s, ok);
  fputs(", \"decode_tok_per_s\": ", f);
  num_or_null(f, w->decode_tok_per_s, ok);
  fputs(", \"harness_overhead_per_token_s\": ", f);
  num_or_null(f, w->harness_overhead_s, w->harness_overhead_s >= 0);
  fprintf(f, ",\n     \"peak_rss_bytes\": %lld, \"vmhwm_bytes\": %lld, \"kv_cache_bytes\": %lld, \"kv_source\": ",
          (long long)w->peak_rss_bytes, (long long)w->vmhwm_bytes, (long long)w->kv_cache_bytes);
  NNP_JSON_FIELD(f, w->kv_source);
  fputs(",\n     ", f); /* the CNN rows' objects; energy per output token */
  nnp_result_write_footprint_energy(f, &w->ext, "j_per_output_token");
  fprintf(f, ",\n     \"accuracy\": {\"compared\": %s, \"reference\": ", w->compared ? "true" : "false");
  NNP_JSON_FIELD(f, w->reference);
  fputs(", \"token_agreement\": ", f);
  num_or_null(f, w->token_agreement, w->compared);
  fputs(", \"first_token_agreement\": ", f);
  num_or_null(f, w->first_token_agreement, w->compared);
  fprintf(f, ", \"first_divergence\": %d}", w->first_divergence);
  fputs(",\n     \"metrics\": ", f);
  if (ok) metrics(f, &w->m);
  else fputs("null", f);
}

static void row(FILE *f, const nnp_llm_row *w) {
  row_config(f, w);
  if (w->hw_class[0]) NNP_RESULT_WRITE_HOST(f, "     ", w);
  row_numbers(f, w);
  fputs(",\n     \"requests\": [", f);
  for (int i = 0; i < w->n_reqs; i++) {
    fputs(i ? ",\n       " : "\n       ", f);
    nnp_llm_write_request(f, &w->reqs[i]);
  }
  fputs("]}", f);
}

void nnp_llm_report_json(FILE *f, const nnp_llm_result *r) {
  fprintf(f,
          "{\n  \"schema_version\": %d,\n  \"schema_minor\": %d,\n  \"tool\": \"nnperf\",\n"
          "  \"kind\": \"" NNP_LLM_RESULT_KIND "\",\n",
          NNP_RESULT_SCHEMA_VERSION, NNP_RESULT_SCHEMA_MINOR);
  fputs("  \"nnperf_version\": ", f);
  NNP_JSON_FIELD(f, r->nnperf_version);
  fputs(",\n  \"command_line\": ", f);
  NNP_JSON_FIELD(f, r->command_line);
  fputs(",\n  \"model\": ", f);
  NNP_JSON_FIELD(f, r->model);
  fprintf(f, ",\n  \"seed\": %llu,\n  \"requests\": %d,\n  \"warmup\": %d,\n  \"allow_mixed\": %s,\n  \"noisy\": %s",
          (unsigned long long)r->seed, r->requests, r->warmup, r->allow_mixed ? "true" : "false",
          r->noisy ? "true" : "false");
  fputs(",\n  \"env\": ", f);
  nnp_env_write_json(f, &r->env);
  fputs(",\n  \"rows\": [", f);
  for (int i = 0; i < r->n_rows; i++) {
    fputs(i ? ",\n" : "\n", f);
    row(f, &r->rows[i]);
  }
  fputs(r->n_rows ? "\n  ]\n}\n" : "]\n}\n", f);
}

nnp_status nnp_llm_write_json(const nnp_llm_result *r, const char *path) {
  nnp_atomic_file af;
  nnp_status s = nnp_atomic_open(&af, path);
  if (s != NNP_OK) return nnp_error_context(s, "--json");
  nnp_llm_report_json(af.f, r);
  return nnp_atomic_commit(&af);
}
