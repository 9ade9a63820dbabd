/* INT8 depthwise convolution (kernels/qdwconv.h): the generic body and the dispatch. */
#include "kernels/qdwconv.h"

#include "kernels/dispatch.h"

static void requant_row(const int32_t *acc, int64_t n, const nnp_qepilogue *ep, int64_t row, uint8_t *y) {
  for (int64_t i = 0; i < n; i++) y[i] = nnp_qrequant(acc[i], ep, row);
}
#define QDW_FLAT qdw_flat_generic
#define QDW_RANGE qdw_range_generic
#define QDW_REQUANT requant_row
#define QDW_ACC_ROW nnp_qdw_acc_row_c
#include "kernels/qdwconv_impl.h"

void nnp_qdwconv(const nnp_qdw_desc *d, const uint8_t *x, int32_t x_zp, const int16_t *w, uint8_t *y,
                 const nnp_qepilogue *ep, nnp_threadpool *tp, bool generic) {
  qdw_job j = {.d = d, .x = x, .xzp = x_zp, .w = w, .y = y, .ep = ep};
  nnp_threadpool_run(tp,
                     generic                      ? qdw_range_generic
                     : nnp_dispatch_isa(NNP_KF_QDWCONV) == NNP_ISA_AVX512_VNNI ? nnp_qdw_range_avx512vnni
                                                  : nnp_qdw_range_avx2,
                     &j, d->c);
}
