/* Softmax rows over the pool (kernels/softmax.h): the per-ISA files hold one row each. */
#include "kernels/softmax.h"

typedef struct sm_job {
  const float *x;
  float *y;
  int64_t n;
  void (*row)(const float *x, float *y, int64_t n);
} sm_job;

static void rows_range(void *p, int64_t b, int64_t e) {
  const sm_job *j = p;
  for (int64_t r = b; r < e; r++) j->row(j->x + r * j->n, j->y + r * j->n, j->n);
}

void nnp_softmax_rows(const float *x, float *y, int64_t rows, int64_t n, bool avx512, nnp_threadpool *tp) {
  sm_job j = {.x = x, .y = y, .n = n, .row = avx512 ? nnp_softmax_row_avx512 : nnp_softmax_row_avx2};
  nnp_threadpool_run(tp, rows_range, &j, rows);
}
