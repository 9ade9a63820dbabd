/* Fast MaxPool 2-D (float32 and uint8), AveragePool 2-D and GlobalAveragePool against naive loops: random
 * shapes, kernels, strides, pads (windows partly or wholly in the padding), threads 1..4. */
#include <math.h>
#include <string.h>

#include "kernel_test_util.h"
#include "kernels/cpu.h"
#include "kernels/pool.h"
#include "nnperf/alloc.h"
#include "test.h"

int main(void) {
  nnp_threadpool *pools[4] = {NULL};
  for (int t = 1; t < 4; t++) CHECK_OK(nnp_threadpool_create(t + 1, &pools[t]));
  int planes_checked = 0;
  for (int trial = 0; trial < 200; trial++) {
    nnp_pool2d_desc d = {.planes = kt_int(1, 9), .kh = kt_int(1, 4), .kw = kt_int(1, 4), .sh = kt_int(1, 3),
                         .sw = kt_int(1, 3)};
    d.ph = kt_int(0, d.kh - 1);
    d.pw = kt_int(0, d.kw - 1);
    d.h = kt_int(d.kh, 17);
    d.w = kt_int(d.kw, trial % 2 ? 19 : 70); /* wide rows: the AVX2 rows' stride-2 vectors need 16 + kw columns */
    if (trial % 10 == 9) { /* planes larger than the AVX2 planes' buffer: they go band by band */
      d.planes = kt_int(1, 2);
      d.h = kt_int(40, 120);
      d.w = kt_int(200, 400);
    }
    d.oh = (d.h + 2 * d.ph - d.kh) / d.sh + 1 + (trial % 3 == 0); /* sometimes a ceil_mode extra window */
    d.ow = (d.w + 2 * d.pw - d.kw) / d.sw + 1;
    int64_t nx = d.planes * d.h * d.w, ny = d.planes * d.oh * d.ow;
    float *x = nnp_malloc((size_t)nx * 4), *want = nnp_malloc((size_t)ny * 4), *got = nnp_malloc((size_t)ny * 4);
    kt_fill(x, nx);
    if (trial % 5 == 0) /* ties of +0 and -0 as the maxima: the first tap in (kh, kw) order wins, bit for bit */
      for (int64_t i = 0; i < nx; i++) x[i] = kt_next() % 3 ? (kt_next() & 1 ? 0.0f : -0.0f) : -fabsf(x[i]);
    if (trial % 5 == 1) /* NaNs: one as a window's first valid tap stays, a later one never wins */
      for (int64_t i = 0; i < nx; i++)
        if (kt_next() % 6 == 0) x[i] = NAN;
    for (int64_t p = 0; p < d.planes; p++)
      for (int64_t oh = 0; oh < d.oh; oh++)
        for (int64_t ow = 0; ow < d.ow; ow++) {
          float best = -INFINITY; /* the first valid tap, then `v > best` tap by tap (a NaN first tap stays) */
          bool first = true;
          for (int64_t kh = 0; kh < d.kh; kh++)
            for (int64_t kw = 0; kw < d.kw; kw++) {
              int64_t ih = oh * d.sh - d.ph + kh, iw = ow * d.sw - d.pw + kw;
              if (ih < 0 || ih >= d.h || iw < 0 || iw >= d.w) continue;
              const float v = x[(p * d.h + ih) * d.w + iw];
              if (first || v > best) best = v;
              first = false;
            }
          want[(p * d.oh + oh) * d.ow + ow] = best;
        }
    for (int t = 0; t < 8; t++) { /* threads 1..4, the portable rows and the dispatched ones (AVX2 here) */
      memset(got, 0, (size_t)ny * 4);
      nnp_maxpool2d(&d, x, got, t >= 4, pools[t % 4]);
      CHECK_MSG(memcmp(got, want, (size_t)ny * 4) == 0, "maxpool trial %d threads %d %s differs", trial, t % 4 + 1,
                t >= 4 ? "portable" : "dispatched");
    }
    if (nnp_cpu_has_avx2_fma()) { /* the AVX2 rows and padded planes each, whichever the dispatch picks */
      memset(got, 0, (size_t)ny * 4);
      for (int64_t p = 0; p < d.planes; p++)
        for (int64_t oh = 0; oh < d.oh; oh++)
          nnp_maxpool_row_avx2(&d, x + p * d.h * d.w, oh, got + (p * d.oh + oh) * d.ow);
      CHECK_MSG(memcmp(got, want, (size_t)ny * 4) == 0, "maxpool trial %d AVX2 rows differ", trial);
      if (nnp_maxpool_plane_avx2_fits(&d)) {
        memset(got, 0, (size_t)ny * 4);
        nnp_maxpool_planes_avx2(&d, x, got, 0, d.planes);
        CHECK_MSG(memcmp(got, want, (size_t)ny * 4) == 0, "maxpool trial %d AVX2 planes differ", trial);
        planes_checked++;
      }
    }
    for (int64_t i = 0; i < nx; i++) /* the sums below want numbers */
      if (isnan(x[i])) x[i] = 1.0f;
    /* AveragePool on the same windows, both divisor rules, end pads 0..2 past what the
     * window needs: against a double-summing oracle (the reference op's rule) */
    for (int incl = 0; incl < 2; incl++) {
      nnp_avgpool2d_desc a = {.p = d, .ph_end = kt_int(0, 2), .pw_end = kt_int(0, 2), .include_pad = incl};
      for (int64_t p = 0; p < d.planes; p++)
        for (int64_t oh = 0; oh < d.oh; oh++)
          for (int64_t ow = 0; ow < d.ow; ow++) {
            double sum = 0;
            int64_t valid = 0, padded = 0;
            for (int64_t kh = 0; kh < d.kh; kh++)
              for (int64_t kw = 0; kw < d.kw; kw++) {
                int64_t ih = oh * d.sh - d.ph + kh, iw = ow * d.sw - d.pw + kw;
                if (ih >= -d.ph && ih < d.h + a.ph_end && iw >= -d.pw && iw < d.w + a.pw_end) padded++;
                if (ih >= 0 && ih < d.h && iw >= 0 && iw < d.w) valid++, sum += x[(p * d.h + ih) * d.w + iw];
              }
            const int64_t cnt = incl ? padded : valid;
            want[(p * d.oh + oh) * d.ow + ow] = cnt ? (float)(sum / (double)cnt) : 0.0f;
          }
      for (int t = 0; t < 8; t++) { /* threads 1..4, the portable rows and the dispatched ones (AVX2 here) */
        memset(got, 0, (size_t)ny * 4);
        nnp_avgpool2d(&a, x, got, t >= 4, pools[t % 4]);
        CHECK_MSG(kt_max_err(got, want, ny) < 1e-6, "avgpool trial %d include_pad %d threads %d %s: err %g", trial,
                  incl, t % 4 + 1, t >= 4 ? "portable" : "dispatched", kt_max_err(got, want, ny));
      }
    }
    /* uint8: the same windows on bytes (the naive max starts at 0, the identity for bytes) */
    uint8_t *xq = nnp_malloc((size_t)nx), *wq = nnp_malloc((size_t)ny), *gq = nnp_malloc((size_t)ny);
    for (int64_t i = 0; i < nx; i++) xq[i] = (uint8_t)(trial % 4 == 0 ? kt_next() % 3 : kt_next()); /* ties */
    for (int64_t p = 0; p < d.planes; p++)
      for (int64_t oh = 0; oh < d.oh; oh++)
        for (int64_t ow = 0; ow < d.ow; ow++) {
          uint8_t best = 0;
          for (int64_t kh = 0; kh < d.kh; kh++)
            for (int64_t kw = 0; kw < d.kw; kw++) {
              int64_t ih = oh * d.sh - d.ph + kh, iw = ow * d.sw - d.pw + kw;
              if (ih >= 0 && ih < d.h && iw >= 0 && iw < d.w && xq[(p * d.h + ih) * d.w + iw] > best)
                best = xq[(p * d.h + ih) * d.w + iw];
            }
          wq[(p * d.oh + oh) * d.ow + ow] = best;
        }
    for (int t = 0; t < 4; t++) {
      memset(gq, 0xa5, (size_t)ny);
      nnp_maxpool2d_u8(&d, xq, gq, pools[t]);
      CHECK_MSG(memcmp(gq, wq, (size_t)ny) == 0, "uint8 maxpool trial %d threads %d differs", trial, t + 1);
    }
    nnp_free(xq);
    nnp_free(wq);
    nnp_free(gq);
    float gap_want[9], gap_got[9];
    for (int64_t p = 0; p < d.planes; p++) {
      double acc = 0;
      for (int64_t i = 0; i < d.h * d.w; i++) acc += x[p * d.h * d.w + i];
      gap_want[p] = (float)(acc / (double)(d.h * d.w));
    }
    for (int t = 0; t < 4; t++) {
      nnp_global_avgpool(d.planes, d.h * d.w, x, gap_got, pools[t]);
      CHECK(kt_max_err(gap_got, gap_want, d.planes) < 1e-6);
    }
    nnp_free(x);
    nnp_free(want);
    nnp_free(got);
  }
  for (int t = 1; t < 4; t++) nnp_threadpool_destroy(pools[t]);
  if (nnp_cpu_has_avx2_fma()) CHECK_MSG(planes_checked >= 60, "only %d trials reached the AVX2 planes", planes_checked);
  TEST_MAIN_END();
}
