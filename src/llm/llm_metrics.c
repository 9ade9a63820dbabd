/* LLM metrics from per-request token timestamps: the one place they are computed, for
 * in-process rows (nnperf llm bench) and served ones (nnperf llm load) alike. The
 * definitions follow `vllm bench serve`, so numbers compare with what users know:
 *   TTFT = first token - due time      (open loop: the scheduled arrival, not the send)
 *   E2E  = end of the answer - due time
 *   TPOT = (E2E - TTFT) / (tokens - 1), per request with at least two tokens
 *   ITL  = every gap between consecutive tokens, pooled over requests */
#include <stdlib.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/bench.h"
#include "nnperf/llm.h"

void nnp_llm_request_free(nnp_llm_request *r) {
  if (!r) return;
  nnp_free(r->token_t);
  r->token_t = NULL;
  r->n_tokens = r->cap_tokens = 0;
}

nnp_status nnp_llm_request_add_token(nnp_llm_request *r, double t) {
  if (r->n_tokens == r->cap_tokens) {
    int cap = r->cap_tokens ? r->cap_tokens * 2 : 64;
    double *g = nnp_realloc(r->token_t, sizeof(double) * (size_t)cap);
    if (!g) return nnp_error(NNP_ERR_NOMEM, "out of memory recording token times");
    r->token_t = g;
    r->cap_tokens = cap;
  }
  r->token_t[r->n_tokens++] = t;
  return NNP_OK;
}

int32_t nnp_llm_prompt_token(uint64_t seed, int request, int pos, int32_t n_vocab) {
  if (n_vocab <= 1) return 0;
  int32_t lo = n_vocab / 2 < 256 ? n_vocab / 2 : 256;
  uint64_t z = nnp_mix64(seed * 0x9E3779B97F4A7C15ull + ((uint64_t)request << 24) + (uint64_t)pos);
  return lo + (int32_t)(z % (uint64_t)(n_vocab - lo));
}

/* A growing array of samples; a failed allocation only drops samples (the counts say). */
typedef struct sample_buf {
  double *v;
  int n, cap;
} sample_buf;

static nnp_status push(sample_buf *b, double x) {
  if (b->n == b->cap) {
    int cap = b->cap ? b->cap * 2 : 64;
    double *g = nnp_realloc(b->v, sizeof(double) * (size_t)cap);
    if (!g) return nnp_error(NNP_ERR_NOMEM, "out of memory computing LLM metrics");
    b->v = g;
    b->cap = cap;
  }
  b->v[b->n++] = x;
  return NNP_OK;
}

static double request_end(const nnp_llm_request *r) {
  double last = r->n_tokens ? r->token_t[r->n_tokens - 1] : r->t_sent;
  return r->t_done > last ? r->t_done : last;
}

int nnp_llm_request_latency(const nnp_llm_request *r, double *ttft, double *tpot, double *e2e) {
  if (r->warmup || !r->ok || r->n_tokens == 0) return 0;
  *ttft = r->token_t[0] - r->t_due;
  *e2e = request_end(r) - r->t_due;
  *tpot = r->n_tokens > 1 ? (*e2e - *ttft) / (r->n_tokens - 1) : 0;
  return 1;
}

static int within_slo(const nnp_llm_request *r, const nnp_llm_slo *slo) {
  if (!slo) return 1;
  double ttft, tpot, e2e;
  nnp_llm_request_latency(r, &ttft, &tpot, &e2e);
  return !(slo->ttft_s > 0 && ttft > slo->ttft_s) && !(slo->tpot_s > 0 && tpot > slo->tpot_s) &&
         !(slo->e2e_s > 0 && e2e > slo->e2e_s);
}

/* Adds one ok request's latencies to the four sample sets. */
static nnp_status collect(const nnp_llm_request *r, sample_buf s[4]) {
  double ttft, tpot, e2e;
  nnp_llm_request_latency(r, &ttft, &tpot, &e2e);
  NNP_TRY(push(&s[0], ttft));
  NNP_TRY(push(&s[3], e2e));
  if (r->n_tokens > 1) NNP_TRY(push(&s[1], tpot));
  for (int k = 1; k < r->n_tokens; k++) NNP_TRY(push(&s[2], r->token_t[k] - r->token_t[k - 1]));
  return NNP_OK;
}

nnp_status nnp_llm_metrics_compute(const nnp_llm_request *reqs, int n, const nnp_llm_slo *slo, uint64_t seed,
                                   nnp_llm_metrics *out) {
  memset(out, 0, sizeof *out);
  sample_buf s[4] = {{0}};
  double t0 = 0, t1 = 0;
  int any = 0;
  nnp_status st = NNP_OK;
  for (int i = 0; i < n && st == NNP_OK; i++) {
    const nnp_llm_request *r = &reqs[i];
    if (r->warmup) continue;
    if (!any || r->t_due < t0) t0 = r->t_due;
    if (!any || request_end(r) > t1) t1 = request_end(r);
    any = 1;
    if (!r->ok || r->n_tokens == 0) {
      out->n_failed++;
      continue;
    }
    out->n_ok++;
    out->n_good += within_slo(r, slo);
    out->prompt_tokens += r->prompt_tokens;
    out->output_tokens += r->n_tokens;
    st = collect(r, s);
  }
  nnp_stats *dst[4] = {&out->ttft, &out->tpot, &out->itl, &out->e2e};
  for (int k = 0; k < 4; k++) {
    if (st == NNP_OK && s[k].n > 0) st = nnp_stats_compute(s[k].v, s[k].n, seed + (uint64_t)k, dst[k]);
    nnp_free(s[k].v);
  }
  out->duration_s = any ? t1 - t0 : 0;
  if (out->duration_s > 0) {
    out->req_per_s = out->n_ok / out->duration_s;
    out->goodput_req_per_s = out->n_good / out->duration_s;
    out->out_tok_per_s = (double)out->output_tokens / out->duration_s;
    out->total_tok_per_s = (double)(out->output_tokens + out->prompt_tokens) / out->duration_s;
  }
  return st;
}
