/* The allocator, with failure injection for allocation-failure tests. */
#include "nnperf/alloc.h"

#include <stdlib.h>
#include <string.h>

static long alloc_count;  /* allocations since the last nnp_alloc_fail_after */
static long fail_at;      /* 0: never fail */

static int should_fail(void) {
  alloc_count++;
  return fail_at > 0 && alloc_count >= fail_at;
}

void nnp_alloc_fail_after(long n) {
  fail_at = n;
  alloc_count = 0;
}

long nnp_alloc_count(void) { return alloc_count; }

void *nnp_malloc(size_t n) {
  if (should_fail()) return NULL;
  return malloc(n ? n : 1);
}

void *nnp_calloc(size_t count, size_t size) {
  if (should_fail()) return NULL;
  return calloc(count ? count : 1, size ? size : 1);
}

void *nnp_realloc(void *p, size_t n) {
  if (should_fail()) return NULL;
  return realloc(p, n ? n : 1);
}

void nnp_free(void *p) { free(p); }

char *nnp_strdup(const char *s) {
  if (!s) s = "";
  size_t n = strlen(s) + 1;
  char *d = nnp_malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void *nnp_aligned_alloc(size_t n) {
  if (should_fail()) return NULL;
  void *p = NULL;
  if (posix_memalign(&p, 64, n ? n : 64) != 0) return NULL;
  return p;
}

void nnp_aligned_free(void *p) { free(p); }
