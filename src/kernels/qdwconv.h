/* INT8 depthwise 2-D convolution (group = channels = output channels), uint8 activations x
 * int8 weights, with QLinearConv's requantize epilogue (kernels/qgemm.h): per channel m,
 *   y[m, oy, ox] = requant_m(sum_taps (x[m, iy, ix] - x_zp) * (w[m, tap] - w_zp[m]))
 * where taps in the padding add nothing (padding is the zero point). The weights come
 * with their zero points already subtracted, as int16. Sums are exact in int32 (9 taps of
 * at most 255 * 255; any kernel below 33000 taps), so every path gives the same bytes as
 * the reference QLinearConv. Rows of one channel are accumulated tap by tap over whole
 * output rows (the inner loops are plain strided int32 multiply-adds the compiler
 * vectorizes), then requantized per row (AVX2: 8 at a time, the float32 operations of
 * nnp_qrequant). Split across the pool by channel. */
#ifndef NNP_KERNELS_QDWCONV_H
#define NNP_KERNELS_QDWCONV_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/qgemm.h"
#include "util/threadpool.h"

typedef struct nnp_qdw_desc {
  int64_t c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
} nnp_qdw_desc;

/* x: c x h x w (one image); w: c x kh*kw int16 (zero point subtracted); y: c x oh x ow. */
void nnp_qdwconv(const nnp_qdw_desc *d, const uint8_t *x, int32_t x_zp, const int16_t *w, uint8_t *y,
                 const nnp_qepilogue *ep, nnp_threadpool *tp, bool generic);

/* The AVX2-compiled channel range (qdwconv_avx2.c; its job is qdwconv_impl.h's). */
void nnp_qdw_range_avx2(void *job, int64_t c0, int64_t c1);
/* The AVX-512 VNNI channel range (qdwconv_avx512vnni.c: 16 outputs per vpdpwssd). */
void nnp_qdw_range_avx512vnni(void *job, int64_t c0, int64_t c1);
/* y[j] = nnp_qrequant(acc[j], ep, row) for j < n (AVX2 body; qgemm_avx2.c). */
void nnp_qrequant_row_avx2(const int32_t *acc, int64_t n, const nnp_qepilogue *ep, int64_t row, uint8_t *y);

/* The portable QDW_ACC_ROW. */
static inline void nnp_qdw_acc_row_c(int32_t *acc, const uint8_t *src, int64_t lo, int64_t hi, int64_t sw,
                                     int32_t zp, int32_t wv) {
  if (sw == 1)
    for (int64_t i = lo; i < hi; i++) acc[i] += ((int32_t)src[i] - zp) * wv;
  else
    for (int64_t i = lo; i < hi; i++) acc[i] += ((int32_t)src[i * sw] - zp) * wv;
}

#endif
