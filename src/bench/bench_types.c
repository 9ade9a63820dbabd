#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/bench.h"
#include "llm/llm_load_result.h"
#include "nnperf/llm_bench.h"

const char *nnp_precision_name(nnp_precision p) {
  switch (p) {
    case NNP_FP32: return "fp32";
    case NNP_FP16: return "fp16";
    case NNP_INT8: return "int8";
    case NNP_MIXED: return "mixed";
    case NNP_PREC_BF16: return "bf16";
  }
  return "?";
}

int nnp_precision_parse(const char *s, nnp_precision *out) {
  for (int p = NNP_FP32; p <= NNP_PREC_BF16; p++)
    if (!strcmp(s, nnp_precision_name((nnp_precision)p))) {
      *out = (nnp_precision)p;
      return 1;
    }
  return 0;
}

const char *nnp_row_status_name(nnp_row_status s) {
  switch (s) {
    case NNP_ROW_OK: return "ok";
    case NNP_ROW_UNAVAILABLE: return "unavailable";
    case NNP_ROW_UNSUPPORTED: return "unsupported";
    case NNP_ROW_FAILED: return "failed";
    case NNP_ROW_CRASHED: return "crashed";
    case NNP_ROW_TIMEOUT: return "timeout";
    case NNP_ROW_OOM: return "out-of-memory";
  }
  return "?";
}

void nnp_loop_spec_default(nnp_loop_spec *s) {
  s->warmup_min = 20;
  s->warmup_max = 200;
  s->warmup_window = 10;
  s->warmup_tol = 0.02;
  s->warmup_max_time_s = 10.0;
  s->iterations = 200;
  s->min_time_s = 2.0;
  s->max_time_s = 60.0;
}

static void free_outputs(nnp_tensor *t, int n) {
  if (!t) return;
  for (int i = 0; i < n; i++) nnp_tensor_free(&t[i]);
  nnp_free(t);
}

void nnp_bench_row_free(nnp_bench_row *r) {
  nnp_free(r->samples);
  free_outputs(r->first_outputs, r->n_outputs);
  free_outputs(r->last_outputs, r->n_outputs);
  r->samples = NULL;
  r->first_outputs = r->last_outputs = NULL;
  r->n_samples = r->n_outputs = 0;
}

void nnp_bench_result_free(nnp_bench_result *r) {
  for (int i = 0; i < r->n_rows; i++) nnp_bench_row_free(&r->rows[i]);
  nnp_free(r->rows);
  r->rows = NULL;
  r->n_rows = r->cap_rows = 0;
  nnp_load_section_free(r->load);
  nnp_free(r->load);
  r->load = NULL;
  nnp_coldstart_section_free(r->coldstart);
  nnp_free(r->coldstart);
  r->coldstart = NULL;
  if (r->llm) nnp_llm_result_free(r->llm);
  nnp_free(r->llm);
  r->llm = NULL;
  nnp_llm_load_result_free(r->llm_load);
  nnp_free(r->llm_load);
  r->llm_load = NULL;
}

const char *nnp_result_kind(const nnp_bench_result *r) {
  return r->load ? "load" : r->coldstart ? "coldstart" : r->llm ? "llm" : r->llm_load ? "llm-load" : "bench";
}

uint64_t nnp_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void nnp_fill_seeded(nnp_tensor *t, uint64_t seed) {
  int64_t n = nnp_tensor_numel(t);
  int is_float = t->dtype == NNP_F32 || t->dtype == NNP_F64 || t->dtype == NNP_F16 || t->dtype == NNP_BF16;
  if (!is_float) {
    memset(t->data, 0, nnp_tensor_nbytes(t));
    return;
  }
  uint64_t base = seed * 0x9E3779B97F4A7C15ull;
  if (t->dtype == NNP_F32) { /* the common case without the per-element type switch */
    float *x = t->data;
    for (int64_t i = 0; i < n; i++)
      x[i] = (float)(2.0 * ((double)(nnp_mix64(base + (uint64_t)i) >> 11) * 0x1p-53) - 1.0);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    nnp_tensor_set_f64(t, i, 2.0 * ((double)(nnp_mix64(base + (uint64_t)i) >> 11) * 0x1p-53) - 1.0);
}
