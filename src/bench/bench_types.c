#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/bench.h"

const char *nnp_precision_name(nnp_precision p) {
  switch (p) {
    case NNP_FP32: return "fp32";
    case NNP_FP16: return "fp16";
    case NNP_INT8: return "int8";
    case NNP_MIXED: return "mixed";
  }
  return "?";
}

int nnp_precision_parse(const char *s, nnp_precision *out) {
  for (int p = NNP_FP32; p <= NNP_MIXED; p++)
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
}
