/* Shared helpers of the kernel tests: a seeded generator and a max-error comparison. */
#ifndef NNP_KERNEL_TEST_UTIL_H
#define NNP_KERNEL_TEST_UTIL_H

#include <math.h>
#include <stdint.h>

static uint64_t kt_state = 0x9e3779b97f4a7c15ull;
static inline uint32_t kt_next(void) {
  kt_state ^= kt_state << 13;
  kt_state ^= kt_state >> 7;
  kt_state ^= kt_state << 17;
  return (uint32_t)(kt_state >> 16);
}
/* integer in [lo, hi] */
static inline int64_t kt_int(int64_t lo, int64_t hi) { return lo + (int64_t)(kt_next() % (uint32_t)(hi - lo + 1)); }
static inline float kt_float(void) { return (float)(kt_next() % 20001) / 10000.0f - 1.0f; }
static inline void kt_fill(float *p, int64_t n) {
  for (int64_t i = 0; i < n; i++) p[i] = kt_float();
}
/* max |a - b| / (1 + |b|) */
static inline double kt_max_err(const float *a, const float *b, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs((double)a[i] - (double)b[i]) / (1.0 + fabs((double)b[i]));
    if (!(e <= m)) m = e; /* NaN propagates as a failure */
  }
  return m;
}

#endif
