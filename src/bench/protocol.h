/* The worker protocol (docs/worker-protocol.md): newline-terminated text records, and
 * tensor records whose header line is followed by exactly NBYTES of raw little-endian
 * data. The same reader parses the spec (in the worker) and the replies (in the parent);
 * it treats its input as untrusted: bounded lines, checked sizes. */
#ifndef NNP_BENCH_PROTOCOL_H
#define NNP_BENCH_PROTOCOL_H

#include <stddef.h>
#include <stdio.h>

#include "nnperf/status.h"
#include "nnperf/tensor.h"

#define NNP_PROTO_VERSION 1
#define NNP_PROTO_MAX_LINE 65536

typedef struct nnp_proto_reader {
  char *buf;
  size_t len, cap, pos;
  size_t max_payload; /* largest tensor payload accepted */
} nnp_proto_reader;

typedef struct nnp_proto_msg {
  char *line;        /* the record's text line, NUL-terminated (points into the reader) */
  int is_tensor;     /* "tensor TAG INDEX DTYPE RANK D0.. NBYTES NAME" */
  char tag[16];
  int index;
  const char *name;  /* rest of the header line */
  nnp_tensor tensor; /* data points into the reader: valid until the next call */
} nnp_proto_msg;

void nnp_proto_reader_init(nnp_proto_reader *r, size_t max_payload);
void nnp_proto_reader_free(nnp_proto_reader *r);
nnp_status nnp_proto_feed(nnp_proto_reader *r, const void *data, size_t n);
/* 1: *m holds the next record; 0: need more bytes; -1: malformed (error recorded). */
int nnp_proto_next(nnp_proto_reader *r, nnp_proto_msg *m);

/* Writes a tensor record. */
int nnp_proto_write_tensor(FILE *f, const char *tag, int index, const char *name, const nnp_tensor *t);

/* Splits line into at most max whitespace-separated tokens in place; returns count. */
int nnp_proto_split(char *line, char **tok, int max);

#endif
