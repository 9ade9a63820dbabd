/* Arrivals, lengths and request bodies of nnperf llm load (see llm_workload.h). */
#include "llm/llm_workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/bench.h"
#include "nnperf/llm.h"

/* Uniform in (0, 1) from a seeded stream position. */
static double unit(uint64_t seed, uint64_t stream, uint64_t i) {
  uint64_t z = nnp_mix64(seed * 0x9E3779B97F4A7C15ull ^ (stream << 48) ^ i);
  return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double normal01(uint64_t seed, uint64_t stream, uint64_t i) {
  double u1 = unit(seed, stream, 2 * i), u2 = unit(seed, stream, 2 * i + 1);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Gamma(shape k, scale 1) by Marsaglia and Tsang; k < 1 through the k + 1 boost. Each
 * draw uses its own slice of the stream so draws stay independent of one another. */
static double gamma_draw(double k, uint64_t seed, uint64_t i) {
  double boost = 1.0;
  if (k < 1.0) {
    boost = pow(unit(seed, 7, i), 1.0 / k);
    k += 1.0;
  }
  double d = k - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (uint64_t t = 0; t < 64; t++) {
    double x = normal01(seed, 5, i * 64 + t), v = 1.0 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    double u = unit(seed, 6, i * 64 + t);
    if (log(u) < 0.5 * x * x + d - d * v + d * log(v)) return d * v * boost;
  }
  return k * boost; /* 64 rejections in a row: practically never; the mean keeps the rate */
}

void nnp_llm_arrivals(double rate, double burstiness, int n, uint64_t seed, double *out) {
  double t = 0, k = burstiness > 0 ? burstiness : 1.0;
  for (int i = 0; i < n; i++) {
    t += gamma_draw(k, seed, (uint64_t)i) / (k * rate);
    out[i] = t;
  }
}

nnp_status nnp_len_dist_parse(const char *s, const char *what, nnp_len_dist *out) {
  memset(out, 0, sizeof *out);
  char tail[8];
  double a, b;
  if (sscanf(s, "uniform:%lf:%lf%1s", &a, &b, tail) == 2 && a >= 1 && b >= a && b <= 1 << 20) {
    *out = (nnp_len_dist){NNP_LEN_UNIFORM, a, b};
    return NNP_OK;
  }
  if (sscanf(s, "normal:%lf:%lf%1s", &a, &b, tail) == 2 && a >= 1 && b >= 0 && a <= 1 << 20) {
    *out = (nnp_len_dist){NNP_LEN_NORMAL, a, b};
    return NNP_OK;
  }
  if (sscanf(s, "%lf%1s", &a, tail) == 1 && a >= 1 && a <= 1 << 20 && a == floor(a)) {
    *out = (nnp_len_dist){NNP_LEN_FIXED, a, a};
    return NNP_OK;
  }
  return nnp_error(NNP_ERR_INVALID, "%s '%s': expected N, uniform:LO:HI or normal:MEAN:SD (1 <= N <= 1048576)", what,
                   s);
}

static int clamp_len(double x) { return x < 1 ? 1 : x > (1 << 20) ? 1 << 20 : (int)lround(x); }

int nnp_len_dist_draw(const nnp_len_dist *d, uint64_t seed, int request) {
  switch (d->kind) {
  case NNP_LEN_UNIFORM: return clamp_len(floor(d->a + unit(seed, 3, (uint64_t)request) * (d->b - d->a + 1)));
  case NNP_LEN_NORMAL: return clamp_len(d->a + d->b * normal01(seed, 4, (uint64_t)request));
  default: return clamp_len(d->a);
  }
}

int nnp_len_dist_max(const nnp_len_dist *d) {
  switch (d->kind) {
  case NNP_LEN_UNIFORM: return clamp_len(d->b);
  case NNP_LEN_NORMAL: return clamp_len(d->a + 4 * d->b);
  default: return clamp_len(d->a);
  }
}

void nnp_len_dist_format(const nnp_len_dist *d, char *buf, size_t cap) {
  if (d->kind == NNP_LEN_UNIFORM) snprintf(buf, cap, "uniform:%g:%g", d->a, d->b);
  else if (d->kind == NNP_LEN_NORMAL) snprintf(buf, cap, "normal:%g:%g", d->a, d->b);
  else snprintf(buf, cap, "%g", d->a);
}

/* Prompt token at pos of request s->request (the shared prefix is request 0's). */
static int32_t prompt_token(const nnp_llm_body_spec *s, int pos) {
  int req = pos < s->shared_prefix ? 0 : s->request + 1;
  return nnp_llm_prompt_token(s->seed, req, pos, s->n_vocab);
}

nnp_status nnp_llm_body(const nnp_llm_body_spec *s, char **out) {
  size_t cap = 512 + (size_t)s->prompt_len * 16 + (s->model ? strlen(s->model) * 6 : 0);
  char *b = nnp_malloc(cap);
  if (!b) return nnp_error(NNP_ERR_NOMEM, "out of memory building a request body");
  size_t n = 0;
  n += (size_t)snprintf(b + n, cap - n, "{");
  if (s->model && *s->model) {
    n += (size_t)snprintf(b + n, cap - n, "\"model\":\"");
    for (const char *p = s->model; *p && n + 8 < cap; p++)
      n += (size_t)snprintf(b + n, cap - n, (*p == '"' || *p == '\\') ? "\\%c" : (unsigned char)*p < 0x20 ? "?" : "%c",
                            *p);
    n += (size_t)snprintf(b + n, cap - n, "\",");
  }
  /* chat: a text prompt of seeded words (the server's tokenizer decides its token count,
   * which usage reports); completions: the token ids themselves */
  n += (size_t)snprintf(b + n, cap - n, s->chat ? "\"messages\":[{\"role\":\"user\",\"content\":\"" : "\"prompt\":[");
  for (int i = 0; i < s->prompt_len; i++)
    n += (size_t)snprintf(b + n, cap - n, s->chat ? "%sw%d" : "%s%d", i ? (s->chat ? " " : ",") : "",
                          (int)prompt_token(s, i));
  n += (size_t)snprintf(b + n, cap - n, s->chat ? "\"}]" : "]");
  n += (size_t)snprintf(b + n, cap - n,
                        ",\"max_tokens\":%d,\"temperature\":0,\"stream\":true,"
                        "\"stream_options\":{\"include_usage\":true},\"ignore_eos\":true",
                        s->gen_len);
  if (s->cache_prompt >= 0)
    n += (size_t)snprintf(b + n, cap - n, ",\"cache_prompt\":%s", s->cache_prompt ? "true" : "false");
  snprintf(b + n, cap - n, "}");
  *out = b;
  return NNP_OK;
}
