#include "kernels/strided_copy.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* With AVX2 the gather vectorizes (loads and permutes, the same values moved): the scalar
 * loop was an eighth of a 3 -> 32 stem's time (perf). restrict: without it GCC kept the
 * scalar loop for fear of overlap. */
__attribute__((target_clones("avx2", "default")))
#endif
void nnp_copy_every_other(float *restrict dst, const float *restrict src, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = src[2 * i];
}
