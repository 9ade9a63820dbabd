/* The one allocator interface. All nnperf memory (including protobuf-c's) goes through
 * these functions so that tests can make the Nth allocation fail (SQLite/Lua style). */
#ifndef NNPERF_ALLOC_H
#define NNPERF_ALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void *nnp_malloc(size_t n);
void *nnp_calloc(size_t count, size_t size);
void *nnp_realloc(void *p, size_t n);
void nnp_free(void *p);
char *nnp_strdup(const char *s);
/* 64-byte aligned, for tensor data; free with nnp_aligned_free. */
void *nnp_aligned_alloc(size_t n);
void nnp_aligned_free(void *p);

/* Test hook: the n-th allocation from now (1-based) and every one after it fail;
 * 0 disables failure injection. Returns the number of allocations since the last call. */
void nnp_alloc_fail_after(long n);
long nnp_alloc_count(void);

#ifdef __cplusplus
}
#endif
#endif
