/* Static memory planning: offsets of the runtime intermediates in one arena.
 *
 * Each buffer lives over steps [first, last] (inclusive). Two buffers may share bytes only
 * if their lifetimes do not intersect. An in-place pair (the output of an elementwise
 * step written over its dying input) is merged into one buffer by the caller's inplace_of
 * link before placement. Placement is greedy by size (largest first), each buffer at the
 * lowest offset of the best-fitting (smallest sufficient) gap between the buffers already
 * placed whose lifetimes intersect its own. */
#ifndef NNP_ENGINE_MEMORY_PLAN_H
#define NNP_ENGINE_MEMORY_PLAN_H

#include <stddef.h>

#include "nnperf/status.h"

#define NNP_ARENA_ALIGN 64

typedef struct nnp_mem_item {
  size_t size;    /* bytes */
  int first, last;
  int inplace_of; /* index of the item whose bytes this one reuses, or -1 */
  size_t offset;  /* out */
} nnp_mem_item;

typedef struct nnp_mem_stats {
  size_t planned;     /* arena bytes */
  size_t naive;       /* every item its own buffer */
  size_t lower_bound; /* max over steps of the bytes live at that step (after in-place merging) */
  int inplace;        /* items placed over their input */
} nnp_mem_stats;

/* Fills items[i].offset. inplace_of must point to an earlier-dying item whose last step is
 * this item's first step and whose size is at least this one's (chains allowed). */
nnp_status nnp_memory_plan(nnp_mem_item *items, int n, nnp_mem_stats *stats);

#endif
