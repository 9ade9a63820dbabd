/* ONNX model import (protobuf-c, generated at build time from Debian's onnx.proto) and
 * export of nnperf graphs as ONNX files. */
#ifndef NNPERF_ONNX_H
#define NNPERF_ONNX_H

#include <stddef.h>

#include "nnperf/ir.h"
#include "nnperf/status.h"
#include "nnperf/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NNP_MAX_OPSET 21 /* newest default-domain opset nnperf accepts */

typedef struct nnp_load_options {
  size_t max_file_bytes; /* model file size limit (default 2 GiB, protobuf's own limit) */
  int max_nodes;         /* node count limit (default 1,000,000) */
} nnp_load_options;

void nnp_load_options_default(nnp_load_options *o);

/* Parses an ONNX model file into a new graph (topologically sorted, op ids resolved).
 * External tensor data is read from files next to the model; a location that leaves
 * the model's folder (absolute, "..", or a symlink pointing outside) is rejected.
 * opt may be NULL for defaults. */
nnp_status nnp_onnx_load(const char *path, const nnp_load_options *opt, nnp_graph **out);

/* Same from memory; base_dir is where external data files live (NULL: none allowed). */
nnp_status nnp_onnx_load_buffer(const void *data, size_t size, const char *base_dir,
                                const nnp_load_options *opt, nnp_graph **out);

/* Reads a serialized TensorProto (.pb, as the ONNX test data uses). *name_out, if not
 * NULL, receives a copy of the tensor's name (free with nnp_free). */
nnp_status nnp_onnx_read_tensor(const char *path, nnp_tensor *out, char **name_out);
nnp_status nnp_onnx_parse_tensor(const void *data, size_t size, nnp_tensor *out, char **name_out);

/* Writes graph g as an ONNX model file (all tensors inline). Written to a temporary
 * file and renamed, so a reader never sees half a model. */
nnp_status nnp_onnx_save(const nnp_graph *g, const char *path);

#ifdef __cplusplus
}
#endif
#endif
