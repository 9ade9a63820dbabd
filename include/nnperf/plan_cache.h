/* The native engine's plan cache: the graph after the passes (nodes, attributes, folded
 * weights), stored in a versioned, checksummed, mmap-able file, so that a later load
 * skips ONNX parsing and the passes. Format: docs/plan-cache.md.
 *
 * A cache file is never trusted: magic, format version, nnperf version, key, size,
 * checksum and every offset and count are checked; a file that fails any check is
 * reported (NNP_ERR_FORMAT with the reason) and the caller rebuilds it. */
#ifndef NNPERF_PLAN_CACHE_H
#define NNPERF_PLAN_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "nnperf/engine.h"
#include "nnperf/ir.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NNP_PLAN_CACHE_FORMAT 1
#define NNP_PLAN_CACHE_KEY_MAX 2048

/* 64-bit hash of bytes (four interleaved multiply-xor lanes, folded; not cryptographic:
 * it detects corruption and model changes, not an attacker forging a collision). */
uint64_t nnp_hash64(const void *data, size_t n, uint64_t seed);

/* The cache key of compiling model_path under opt: the model file's size and hash, the
 * input shapes and dim bindings, the passes, memory_plan and fast_kernels switches, the
 * CPU's kernel ISA and the nnperf version. Threads are not part of it (the passes do not
 * depend on them). Frozen-constant inputs (opt->n_consts) make a plan uncacheable:
 * NNP_ERR_UNSUPPORTED. */
nnp_status nnp_plan_cache_key(const char *model_path, const nnp_plan_options *opt, char *key, size_t n);
/* DIR/plan-<hash of key>.nnpplan */
nnp_status nnp_plan_cache_path(const char *dir, const char *key, char *path, size_t n);

/* Writes g (an optimised graph, nnp_plan_graph) atomically to path under key. Graph-valued
 * attributes are not storable: NNP_ERR_UNSUPPORTED. */
nnp_status nnp_plan_cache_write(const char *path, const char *key, const nnp_graph *g);

/* Parses a cache image of len bytes (hostile-safe). On success *out is a graph whose
 * initializer data points into buf (buf must outlive it): release it with
 * nnp_plan_cache_graph_destroy(g, buf, len). key NULL: any key is accepted (fuzzing).
 * Failures are NNP_ERR_FORMAT with the reason ("checksum mismatch", "truncated", ...). */
nnp_status nnp_plan_cache_parse(const void *buf, size_t len, const char *key, nnp_graph **out);
void nnp_plan_cache_graph_destroy(nnp_graph *g, const void *buf, size_t len);

/* What nnp_plan_cache_compile did. */
typedef enum nnp_plan_cache_outcome {
  NNP_PLAN_CACHE_OFF = 0,     /* no cache dir, or the plan is not cacheable */
  NNP_PLAN_CACHE_HIT = 1,     /* loaded from the cache file */
  NNP_PLAN_CACHE_WRITTEN = 2, /* no file: compiled and written */
  NNP_PLAN_CACHE_REBUILT = 3  /* a corrupt or stale file: warned, compiled, rewritten */
} nnp_plan_cache_outcome;

typedef struct nnp_cached_plan {
  nnp_plan *plan;
  nnp_graph *graph;   /* the graph the plan borrows: parsed ONNX, or the mapped cache's */
  void *map;          /* the cache file's mapping on a hit (graph borrows from it) */
  size_t map_len;
  nnp_plan_cache_outcome outcome;
  char path[4200];    /* the cache file ("" when off) */
  char reason[256];   /* REBUILT: why the file was not trusted */
} nnp_cached_plan;

/* Compiles model_path under opt through the cache in dir (NULL or "": no cache). A valid
 * file skips parsing and passes; a missing one is written after compiling; a corrupt or
 * stale one is reported on stderr ("plan cache X is corrupt (reason); rebuilding") and
 * rewritten. A cache that cannot be written is warned about, not an error. */
nnp_status nnp_plan_cache_compile(const char *dir, const char *model_path, const nnp_plan_options *opt,
                                  nnp_cached_plan *out);
void nnp_cached_plan_destroy(nnp_cached_plan *cp);

#ifdef __cplusplus
}
#endif
#endif
