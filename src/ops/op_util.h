/* Helpers shared by op implementations: shapes, axes, broadcasting, reading small
 * integer inputs (shapes, axes, pads) that must be known at compile time. */
#ifndef NNP_OPS_OP_UTIL_H
#define NNP_OPS_OP_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/op.h"

/* Input i, or NULL if absent (i beyond n_in or omitted). */
static inline const nnp_tensor *nnp_in(const nnp_op_ctx *c, int i) {
  return i < c->n_in ? c->in[i] : NULL;
}
static inline nnp_tensor *nnp_out(const nnp_op_ctx *c, int i) {
  return i < c->n_out ? c->out[i] : NULL;
}

/* Sets dtype and shape of t. */
void nnp_set_shape(nnp_tensor *t, nnp_dtype dt, int rank, const int64_t *dims);
/* Copies dtype and shape of src into dst. */
void nnp_copy_shape(nnp_tensor *dst, const nnp_tensor *src);

/* Normalises axis (negative counts from the end) into [0, rank); error names attr. */
nnp_status nnp_norm_axis(int64_t axis, int rank, const char *what, int *out);

/* Numpy-style multidirectional broadcast of two shapes. */
nnp_status nnp_broadcast_shapes(int ra, const int64_t *da, int rb, const int64_t *db,
                                int *rank_out, int64_t *dims_out);
/* Strides (in elements) of `t` broadcast to the output shape (rank, dims): 0 along
 * broadcast axes. */
void nnp_broadcast_strides(const nnp_tensor *t, int rank, const int64_t *dims,
                           int64_t *strides);
/* Whether small holds one value per channel of big ([N,C,H,W]): [N,C,1,1] (*per_image 1
 * when N > 1), [1,C,1,1] or [C,1,1] (0); the squeeze-and-excitation scale's shapes. */
bool nnp_per_channel_of(const nnp_tensor *big, const nnp_tensor *small, int *per_image);
/* Contiguous row-major strides of a shape. */
void nnp_contiguous_strides(int rank, const int64_t *dims, int64_t *strides);

/* Reads the int64/int32 values of input i, which must be known at compile time (non-NULL
 * data). *count receives the number of elements; fails if more than max. */
nnp_status nnp_input_ints(const nnp_op_ctx *c, int i, int64_t *vals, int max, int *count);
/* Reads float values (any float type) of a known input. */
nnp_status nnp_input_floats(const nnp_op_ctx *c, int i, float *vals, int max, int *count);

/* Fails with NNP_ERR_UNSUPPORTED unless t->dtype is one of the listed (terminated by
 * NNP_UNDEFINED). */
nnp_status nnp_check_dtype(const nnp_tensor *t, const char *what, ...);

/* Whether an op that copies (Transpose, Slice, Gather, Pad rows) should split its
 * output over ctx's pool: 2 threads or more and an output of 32 KB or more. Below that a
 * pool run costs more than the copy (ops/movement.c). */
bool nnp_pooled_copy_pays(const nnp_op_ctx *ctx);

bool nnp_dtype_is_float(nnp_dtype dt);
bool nnp_dtype_is_int(nnp_dtype dt);

#endif
