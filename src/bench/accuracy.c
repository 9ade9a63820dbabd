#include "bench/accuracy.h"

#include <math.h>
#include <string.h>

double nnp_accuracy_default_rtol(nnp_precision p) {
  switch (p) {
    case NNP_FP32: return 1e-4;
    case NNP_FP16: return 1e-2;
    default: return 5e-2;
  }
}

/* Indices of the k largest values of row[0..c) into top (k <= 5). */
static void topk(const nnp_tensor *t, int64_t row, int64_t c, int k, int64_t *top) {
  for (int j = 0; j < k; j++) {
    top[j] = -1;
    double best = -INFINITY;
    for (int64_t x = 0; x < c; x++) {
      int taken = 0;
      for (int q = 0; q < j; q++) taken |= top[q] == x;
      double v = nnp_tensor_get_f64(t, row * c + x);
      if (!taken && (top[j] < 0 || v > best)) {
        best = v;
        top[j] = x;
      }
    }
  }
}

void nnp_accuracy_compare(const nnp_tensor *got, const nnp_tensor *ref, int n, double rtol, nnp_accuracy *acc) {
  acc->compared = true;
  acc->max_abs = 0;
  acc->max_rel = 0;
  acc->cosine = 1;
  acc->top1 = acc->top5 = -1;
  acc->within_tol = true;
  double min_cos = 1;
  for (int k = 0; k < n; k++) {
    const nnp_tensor *a = &got[k], *b = &ref[k];
    if (!a->data || !b->data || !nnp_tensor_same_shape(a, b)) {
      acc->within_tol = false;
      acc->max_abs = acc->max_rel = INFINITY;
      continue;
    }
    int64_t ne = nnp_tensor_numel(b);
    double err = 0, scale = 0, dot = 0, na = 0, nb = 0;
    for (int64_t i = 0; i < ne; i++) {
      double x = nnp_tensor_get_f64(a, i), y = nnp_tensor_get_f64(b, i);
      double d = fabs(x - y);
      if (!(d <= err)) err = d; /* NaN propagates as the worst error */
      if (fabs(y) > scale) scale = fabs(y);
      dot += x * y;
      na += x * x;
      nb += y * y;
    }
    double rel = scale > 0 ? err / scale : err;
    double cos = (na > 0 && nb > 0) ? dot / (sqrt(na) * sqrt(nb)) : (na == nb ? 1 : 0);
    if (!(err <= acc->max_abs)) acc->max_abs = err;
    if (!(rel <= acc->max_rel)) acc->max_rel = rel;
    if (cos < min_cos || cos != cos) min_cos = cos;
    if (!(rel <= rtol)) acc->within_tol = false;
    if (k == 0 && b->rank == 2 && b->dims[1] >= 5 && nnp_dtype_size(b->dtype) && b->dtype != NNP_BOOL) {
      int64_t rows = b->dims[0], c = b->dims[1], agree1 = 0, agree5 = 0;
      for (int64_t r = 0; r < rows; r++) {
        int64_t ta[5], tb[5];
        topk(a, r, c, 5, ta);
        topk(b, r, c, 5, tb);
        agree1 += ta[0] == tb[0];
        /* top-5 agreement: the reference's top-1 class is in the row's top 5 */
        for (int j = 0; j < 5; j++) agree5 += ta[j] == tb[0];
      }
      acc->top1 = rows ? (double)agree1 / (double)rows : -1;
      acc->top5 = rows ? (double)agree5 / (double)rows : -1;
    }
  }
  acc->cosine = min_cos;
}
