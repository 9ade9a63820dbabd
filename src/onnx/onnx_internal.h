/* Shared by the ONNX import, export and tensor readers. */
#ifndef NNP_ONNX_INTERNAL_H
#define NNP_ONNX_INTERNAL_H

#include <stdio.h>

#include <protobuf-c/protobuf-c.h>

#include "nnperf/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "util/regular_file.h" /* nnp_open_regular, nnp_read_file */

/* protobuf-c allocations go through nnp_malloc so failure injection reaches them. */
extern ProtobufCAllocator nnp_protobuf_allocator;

/* Converts a TensorProto into an allocated nnp_tensor. what names the tensor in errors
 * ("initializer 'conv1.weight'"). base_dir: folder external data is confined to, or NULL
 * to refuse external data. */
nnp_status nnp_onnx_tensor_from_proto(const Onnx__TensorProto *tp, const char *base_dir,
                                      const char *what, nnp_tensor *out);

/* protobuf-c returns NULL both for corrupt input and for allocation failure: reset
 * before an unpack, ask after a NULL. */
void nnp_protobuf_alloc_reset(void);
int nnp_protobuf_alloc_failed(void);

#endif
