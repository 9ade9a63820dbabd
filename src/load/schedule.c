#include "load/schedule.h"

#include <math.h>

#include "nnperf/bench.h"

/* A uniform number in (0, 1) from 53 bits of mix64: never 0, so log() stays finite. */
static double uniform01(uint64_t seed, int64_t i) {
  uint64_t z = nnp_mix64(seed * 0x9E3779B97F4A7C15ull + 0xD1B54A32D192ED03ull * (uint64_t)(i + 1));
  return ((double)(z >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

void nnp_schedule_poisson(double qps, int64_t n, uint64_t seed, double *out) {
  double t = 0;
  for (int64_t i = 0; i < n; i++) {
    t += -log(uniform01(seed, i)) / qps;
    out[i] = t;
  }
}

void nnp_schedule_poisson_exact(double qps, int64_t n, uint64_t seed, double *out) {
  if (n <= 0) return;
  nnp_schedule_poisson(1.0, n, seed, out);
  double total = out[n - 1] - log(uniform01(seed, n)); /* the (n+1)th arrival closes the span */
  double scale = ((double)n / qps) / total;
  for (int64_t i = 0; i < n; i++) out[i] *= scale;
}

void nnp_schedule_periodic(double interval_s, int per_tick, int64_t n, double *out) {
  if (per_tick < 1) per_tick = 1;
  for (int64_t i = 0; i < n; i++) out[i] = (double)(i / per_tick) * interval_s;
}

void nnp_schedule_offline(int64_t n, double *out) {
  for (int64_t i = 0; i < n; i++) out[i] = 0;
}
