#include "fma_peak.h"

#include "bench/timing_loop.h"
#include "kernels/cpu.h"

#if defined(__x86_64__)
#include <immintrin.h>

enum { BURST = 100000, BURSTS = 60 };
static volatile float sink;

#define CHAINS(T, SET1, FMA, ADD, STORE, W)                                                                        \
  do {                                                                                                            \
    const float f = (float)t;                                                                                     \
    T a0 = SET1(f + 0.01f), a1 = SET1(f + 0.02f), a2 = SET1(f + 0.03f), a3 = SET1(f + 0.04f);                     \
    T a4 = SET1(f + 0.05f), a5 = SET1(f + 0.06f), a6 = SET1(f + 0.07f), a7 = SET1(f + 0.08f);                     \
    T a8 = SET1(f + 0.09f), a9 = SET1(f + 0.10f), a10 = SET1(f + 0.11f), a11 = SET1(f + 0.12f);                   \
    const T m = SET1(0.999999f), c = SET1(1e-7f);                                                                 \
    for (int it = 0; it < BURST; it++) {                                                                          \
      a0 = FMA(a0, m, c); a1 = FMA(a1, m, c); a2 = FMA(a2, m, c); a3 = FMA(a3, m, c);                             \
      a4 = FMA(a4, m, c); a5 = FMA(a5, m, c); a6 = FMA(a6, m, c); a7 = FMA(a7, m, c);                             \
      a8 = FMA(a8, m, c); a9 = FMA(a9, m, c); a10 = FMA(a10, m, c); a11 = FMA(a11, m, c);                         \
    }                                                                                                             \
    T s = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)));                                      \
    s = ADD(s, ADD(ADD(a8, a9), ADD(a10, a11)));                                                                  \
    float out[W];                                                                                                 \
    STORE(out, s);                                                                                                \
    sink = out[0];                                                                                                \
  } while (0)

__attribute__((target("avx2,fma"))) static void chains256(void *p, int64_t b, int64_t e) {
  (void)p;
  for (int64_t t = b; t < e; t++)
    CHAINS(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_storeu_ps, 8);
}

__attribute__((target("avx512f"))) static void chains512(void *p, int64_t b, int64_t e) {
  (void)p;
  for (int64_t t = b; t < e; t++)
    CHAINS(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_storeu_ps, 16);
}

double nnp_bench_fma_peak(nnp_threadpool *tp, int threads, bool avx512) {
  const nnp_cpu_features *f = nnp_cpu_get();
  if (avx512 ? !f->avx512f : !(f->avx2 && f->fma)) return 0;
  double best = 1e30;
  for (int rep = 0; rep < BURSTS; rep++) {
    double t0 = nnp_now();
    nnp_threadpool_run(tp, avx512 ? chains512 : chains256, NULL, threads);
    double dt = nnp_now() - t0;
    if (dt < best) best = dt;
  }
  return (double)threads * BURST * 12.0 * (avx512 ? 16 : 8) * 2 / best * 1e-9;
}
#else
double nnp_bench_fma_peak(nnp_threadpool *tp, int threads, bool avx512) {
  (void)tp, (void)threads, (void)avx512;
  return 0;
}
#endif
