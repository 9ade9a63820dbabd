/* Overflow-checked int64 arithmetic for op geometry.
 *
 * Kernel sizes, strides, pads and tensor dims come from the model file, which may be
 * hostile: every product or sum that sizes an output or a buffer is computed with these,
 * so an overflow becomes an error instead of undefined behaviour or a wrapped size.
 * Each returns true when the exact result does not fit (then *r holds the wrapped value
 * and must not be used). */
#ifndef NNP_OPS_CHECKED_MATH_H
#define NNP_OPS_CHECKED_MATH_H

#include <stdbool.h>
#include <stdint.h>

static inline bool nnp_mul_overflows(int64_t a, int64_t b, int64_t *r) {
  return __builtin_mul_overflow(a, b, r);
}

static inline bool nnp_add_overflows(int64_t a, int64_t b, int64_t *r) {
  return __builtin_add_overflow(a, b, r);
}

#endif
