#include "bench/timing_loop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double nnp_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double nnp_median(const double *x, int n, double *tmp) {
  memcpy(tmp, x, sizeof(double) * (size_t)n);
  qsort(tmp, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

#define WARMUP_WINDOW_MAX 256

nnp_status nnp_timing_loop(const nnp_loop_spec *spec, nnp_loop_prepare_fn prepare, nnp_loop_infer_fn infer, void *ctx,
                           nnp_sample_sink sink, void *sink_ud, nnp_loop_outcome *out) {
  long iteration = 0;
  memset(out, 0, sizeof *out);
  int window = spec->warmup_window;
  if (window < 2) window = 2;
  if (window > WARMUP_WINDOW_MAX / 2) window = WARMUP_WINDOW_MAX / 2;
  /* Warm-up: a ring of the last 2*window times; stable when the medians of the two
   * halves differ by less than warmup_tol. Bounded by warmup_max and warmup_max_time_s. */
  double ring[WARMUP_WINDOW_MAX], tmp[WARMUP_WINDOW_MAX];
  double t_warm0 = nnp_now();
  for (int i = 0; i < spec->warmup_max; i++) {
    if (prepare) NNP_TRY(prepare(ctx, iteration++));
    double t0 = nnp_now();
    NNP_TRY(infer(ctx));
    double t1 = nnp_now();
    ring[i % (2 * window)] = t1 - t0;
    out->warmup_iterations = i + 1;
    if (i + 1 >= spec->warmup_min && i + 1 >= 2 * window) {
      double older[WARMUP_WINDOW_MAX / 2], newer[WARMUP_WINDOW_MAX / 2];
      for (int k = 0; k < window; k++) {
        older[k] = ring[(i + 1 + k) % (2 * window)];
        newer[k] = ring[(i + 1 + window + k) % (2 * window)];
      }
      double a = nnp_median(older, window, tmp), b = nnp_median(newer, window, tmp);
      if (b > 0 && fabs(a - b) / b < spec->warmup_tol) {
        out->warmup_stable = true;
        break;
      }
    }
    /* a slow model (seconds per inference) must not spend minutes warming up */
    if (i + 1 >= 2 && t1 - t_warm0 > spec->warmup_max_time_s) break;
  }
  double start = nnp_now();
  for (int n = 0;; n++) {
    double elapsed = nnp_now() - start;
    if (n >= spec->iterations && elapsed >= spec->min_time_s) break;
    if (elapsed >= spec->max_time_s && n > 0) {
      out->time_capped = true;
      break;
    }
    if (prepare) NNP_TRY(prepare(ctx, iteration++));
    double t0 = nnp_now();
    nnp_status s = infer(ctx);
    double t1 = nnp_now();
    if (s != NNP_OK) return s;
    out->n_samples = n + 1;
    if (sink) sink(sink_ud, t1 - t0);
  }
  return NNP_OK;
}
