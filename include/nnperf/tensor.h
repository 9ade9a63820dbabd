/* Typed dense tensors. dtype values are ONNX's TensorProto.DataType numbers. */
#ifndef NNPERF_TENSOR_H
#define NNPERF_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NNP_MAX_RANK 8

typedef enum nnp_dtype {
  NNP_UNDEFINED = 0,
  NNP_F32 = 1,
  NNP_U8 = 2,
  NNP_I8 = 3,
  NNP_U16 = 4,
  NNP_I16 = 5,
  NNP_I32 = 6,
  NNP_I64 = 7,
  NNP_STRING = 8,
  NNP_BOOL = 9,
  NNP_F16 = 10,
  NNP_F64 = 11,
  NNP_U32 = 12,
  NNP_U64 = 13,
  NNP_BF16 = 16 /* bfloat16: the top 16 bits of a float32 */
} nnp_dtype;

/* Byte size of one element; 0 for types nnperf cannot hold (string, complex, ...). */
size_t nnp_dtype_size(nnp_dtype dt);
const char *nnp_dtype_name(nnp_dtype dt);

/* A tensor view: shape + pointer. The struct does not say who owns data; the function
 * that filled it does (nnp_tensor_alloc -> nnp_tensor_free; engine buffers -> engine). */
typedef struct nnp_tensor {
  nnp_dtype dtype;
  int rank;
  int64_t dims[NNP_MAX_RANK];
  void *data;
} nnp_tensor;

int64_t nnp_tensor_numel(const nnp_tensor *t);
size_t nnp_tensor_nbytes(const nnp_tensor *t);

/* Element count of a shape with overflow and negative-dimension checks. */
nnp_status nnp_shape_numel(int rank, const int64_t *dims, int64_t *out);
/* Byte size with overflow check and a limit (NNP_TENSOR_MAX_BYTES). */
nnp_status nnp_shape_nbytes(nnp_dtype dt, int rank, const int64_t *dims, size_t *out);
#define NNP_TENSOR_MAX_BYTES ((size_t)1 << 36) /* 64 GiB: anything larger is hostile */

/* Allocates t->data for t's dtype and shape (zero-filled). */
nnp_status nnp_tensor_alloc(nnp_tensor *t);
void nnp_tensor_free(nnp_tensor *t);
/* Deep copy into dst (allocates). */
nnp_status nnp_tensor_clone(const nnp_tensor *src, nnp_tensor *dst);
bool nnp_tensor_same_shape(const nnp_tensor *a, const nnp_tensor *b);
/* "1x3x224x224" into buf; returns buf. */
const char *nnp_shape_str(int rank, const int64_t *dims, char *buf, size_t n);

/* Value of element i converted to double / int64 whatever the dtype (for small
 * integer tensors such as shapes and axes). */
double nnp_tensor_get_f64(const nnp_tensor *t, int64_t i);
int64_t nnp_tensor_get_i64(const nnp_tensor *t, int64_t i);
void nnp_tensor_set_f64(nnp_tensor *t, int64_t i, double v);

float nnp_f16_to_f32(uint16_t h);
uint16_t nnp_f32_to_f16(float f);
float nnp_bf16_to_f32(uint16_t h);
uint16_t nnp_f32_to_bf16(float f); /* round to nearest even; NaN stays NaN */

#ifdef __cplusplus
}
#endif
#endif
