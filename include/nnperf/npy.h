/* NumPy .npy files (format versions 1-3, little-endian, C order) for inputs and outputs. */
#ifndef NNPERF_NPY_H
#define NNPERF_NPY_H

#include <stddef.h>

#include "nnperf/status.h"
#include "nnperf/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads path into an allocated tensor (free with nnp_tensor_free). Declared sizes are
 * checked against the file size before anything is allocated. */
nnp_status nnp_npy_read(const char *path, nnp_tensor *out);
nnp_status nnp_npy_parse(const void *data, size_t size, nnp_tensor *out);
/* Writes t (temp file + rename). */
nnp_status nnp_npy_write(const char *path, const nnp_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
