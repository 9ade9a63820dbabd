/* A GGUF header reader that trusts nothing: nnperf checks an LLM file itself before any
 * framework opens it, so a file that is not GGUF, cut short, or declaring absurd sizes gets
 * one clear line naming what is wrong (and a framework never gets to crash on it), and the
 * row knows the model's dimensions (context, layers, vocabulary, weight type) without
 * asking the framework. Only the header and the tensor table are read; tensor data is
 * checked for fitting in the file, never loaded. */
#ifndef NNP_LLM_GGUF_H
#define NNP_LLM_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "nnperf/status.h"

typedef struct nnp_gguf_info {
  uint32_t version;
  uint64_t n_tensors, n_kv;
  char arch[64];           /* general.architecture, e.g. "llama" */
  char name[128];          /* general.name, may be empty */
  int64_t n_ctx_train;     /* ARCH.context_length (-1 when absent) */
  int64_t n_layer;         /* ARCH.block_count */
  int64_t n_embd;          /* ARCH.embedding_length */
  int64_t n_head, n_head_kv; /* ARCH.attention.head_count(_kv) */
  int64_t n_vocab;         /* entries of tokenizer.ggml.tokens */
  char weight_type[16];    /* the tensor type holding most of the weight bytes, e.g. "Q4_1" */
  int64_t n_params;        /* elements of all tensors */
  int64_t tensor_bytes;    /* bytes of all tensor data */
  int64_t file_bytes;
} nnp_gguf_info;

/* Parses a GGUF image in memory; what names the image in errors is `what` (a path). */
nnp_status nnp_gguf_parse(const uint8_t *data, size_t size, const char *what, nnp_gguf_info *out);

/* Maps path read-only and parses it. */
nnp_status nnp_gguf_read_info(const char *path, nnp_gguf_info *out);

/* Bytes of KV cache for n_ctx positions at elem_bytes per element (f16: 2): keys and
 * values of every layer, n_embd / n_head * n_head_kv wide. -1 when dimensions are unknown. */
int64_t nnp_gguf_kv_bytes(const nnp_gguf_info *g, int64_t n_ctx, int elem_bytes);

#endif
