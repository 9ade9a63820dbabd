/* The result document: one writer, one reader, one schema (docs/result-schema.md).
 *
 * Every kind of run — bench rows, a load test's "load" section, a cold start's
 * "coldstart" section — is one nnp_bench_result (nnperf/bench.h) and one JSON document;
 * src/result/ owns it: result_write.c writes it, result_read.c reads it back into the
 * same structs, result_sections.c holds the sections' helpers. Written, read and written
 * again, a document comes out byte for byte the same (tests/unit/test_result_load.c).
 *
 * Room for more kinds: a section is a top-level key named by the result's kind
 * (nnp_result_kind); "llm" is reserved for the LLM benchmark's section, which adds its
 * writer and reader here beside "load" and "coldstart". */
#ifndef NNPERF_RESULT_H
#define NNPERF_RESULT_H

#include <stddef.h>
#include <stdio.h>

#include "nnperf/bench.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The whole document as JSON (raw samples included). */
void nnp_result_write(FILE *f, const nnp_bench_result *r);

/* The same, to path atomically (temp file in the same folder, fsync, rename), so a reader
 * always sees either the previous complete file or the new one. */
nnp_status nnp_result_write_file(const nnp_bench_result *r, const char *path);

/* Parses data[0..n) (a whole document). name labels error messages (a path, or "history
 * run 3"). On success *out owns its rows and samples: release it with
 * nnp_bench_result_free. On failure *out is left empty and the error message names the
 * field at fault, e.g. "r.json: rows[1].stats.p50: expected a number or null". Unknown
 * fields are ignored (the schema lets writers add fields); a schema_version other than
 * NNP_RESULT_SCHEMA_VERSION is NNP_ERR_UNSUPPORTED. Outputs of the inferences are not in
 * the JSON: rows come back with n_outputs 0. */
nnp_status nnp_result_read_buffer(const char *data, size_t n, const char *name, nnp_bench_result *out);

/* The same, from a file; anything but a regular file (a FIFO, a device) is refused
 * before reading, so a FIFO does not block. */
nnp_status nnp_result_read_file(const char *path, nnp_bench_result *out);

#ifdef __cplusplus
}
#endif
#endif
