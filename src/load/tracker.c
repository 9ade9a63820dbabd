#include "load/tracker.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnperf/alloc.h"

double nnp_quantile_sorted(const double *sorted, int64_t n, double q) {
  if (n <= 0) return -1;
  int64_t rank = (int64_t)ceil(q * (double)n - 1e-9); /* 1-based */
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return sorted[rank - 1];
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int nnp_load_summarise(const double *latency, int64_t n, double bound_s, double span_s, double offered_qps,
                       nnp_load_summary *out) {
  memset(out, 0, sizeof *out);
  out->queries = n;
  out->span_s = span_s;
  out->offered_qps = offered_qps;
  out->p50 = out->p90 = out->p99 = out->p999 = out->mean = out->max = -1;
  double *s = nnp_malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!s) return -1;
  int64_t m = 0;
  double sum = 0;
  for (int64_t i = 0; i < n; i++) {
    if (latency[i] < 0) continue;
    s[m++] = latency[i];
    sum += latency[i];
    if (bound_s > 0 && latency[i] > bound_s) out->late++;
  }
  out->completed = m;
  out->dropped = n - m;
  if (m > 0) {
    qsort(s, (size_t)m, sizeof *s, cmp_double);
    out->p50 = nnp_quantile_sorted(s, m, 0.50);
    out->p90 = nnp_quantile_sorted(s, m, 0.90);
    out->p99 = nnp_quantile_sorted(s, m, 0.99);
    out->p999 = nnp_quantile_sorted(s, m, 0.999);
    out->mean = sum / (double)m;
    out->max = s[m - 1];
  }
  out->achieved_qps = span_s > 0 ? (double)m / span_s : 0;
  nnp_free(s);
  return 0;
}
