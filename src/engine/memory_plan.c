/* Greedy-by-size best-fit placement (as TFLite's arena planner): quadratic in the number of
 * buffers, which is a few hundred for the largest zoo models. */
#include <stdlib.h>
#include <string.h>

#include "engine/memory_plan.h"
#include "nnperf/alloc.h"

static size_t round_up(size_t n) { return (n + NNP_ARENA_ALIGN - 1) / NNP_ARENA_ALIGN * NNP_ARENA_ALIGN; }

typedef struct buf {
  size_t size, offset;
  int first, last;
} buf;

static int root_of(const nnp_mem_item *items, int i) {
  while (items[i].inplace_of >= 0) i = items[i].inplace_of;
  return i;
}

static int by_size_desc(const void *a, const void *b) {
  const buf *x = *(const buf *const *)a, *y = *(const buf *const *)b;
  if (x->size != y->size) return x->size < y->size ? 1 : -1;
  return x->first - y->first;
}

static int by_offset(const void *a, const void *b) {
  const buf *x = *(const buf *const *)a, *y = *(const buf *const *)b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

nnp_status nnp_memory_plan(nnp_mem_item *items, int n, nnp_mem_stats *stats) {
  memset(stats, 0, sizeof *stats);
  if (n == 0) return NNP_OK;
  buf *bufs = nnp_calloc((size_t)n, sizeof *bufs);
  buf **order = nnp_calloc((size_t)n, sizeof *order);
  const buf **overl = nnp_calloc((size_t)n, sizeof *overl);
  if (!bufs || !order || !overl) {
    nnp_free(bufs);
    nnp_free(order);
    nnp_free(overl);
    return nnp_error(NNP_ERR_NOMEM, "out of memory planning memory");
  }
  /* one buffer per in-place chain, at its root, spanning the chain's lifetimes */
  for (int i = 0; i < n; i++) {
    bufs[i].first = items[i].first;
    bufs[i].last = -1;
    stats->naive += round_up(items[i].size);
    if (items[i].inplace_of >= 0) stats->inplace++;
  }
  int max_step = 0;
  for (int i = 0; i < n; i++) {
    buf *r = &bufs[root_of(items, i)];
    size_t sz = round_up(items[i].size);
    if (sz > r->size) r->size = sz;
    if (items[i].first < r->first) r->first = items[i].first;
    if (items[i].last > r->last) r->last = items[i].last;
    if (items[i].last > max_step) max_step = items[i].last;
  }
  int nb = 0;
  for (int i = 0; i < n; i++)
    if (items[i].inplace_of < 0) order[nb++] = &bufs[i];
  for (int s = 0; s <= max_step; s++) {
    size_t live = 0;
    for (int k = 0; k < nb; k++)
      if (order[k]->first <= s && s <= order[k]->last) live += order[k]->size;
    if (live > stats->lower_bound) stats->lower_bound = live;
  }
  qsort(order, (size_t)nb, sizeof *order, by_size_desc);
  for (int k = 0; k < nb; k++) {
    buf *b = order[k];
    int no = 0;
    for (int j = 0; j < k; j++) {
      const buf *o = order[j];
      if (o->first <= b->last && b->first <= o->last) overl[no++] = o;
    }
    qsort(overl, (size_t)no, sizeof *overl, by_offset);
    size_t best = (size_t)-1, best_gap = (size_t)-1, prev_end = 0;
    for (int j = 0; j < no; j++) {
      if (overl[j]->offset > prev_end) {
        size_t gap = overl[j]->offset - prev_end;
        if (gap >= b->size && gap < best_gap) {
          best_gap = gap;
          best = prev_end;
        }
      }
      size_t end = overl[j]->offset + overl[j]->size;
      if (end > prev_end) prev_end = end;
    }
    b->offset = best != (size_t)-1 ? best : prev_end;
    if (b->offset + b->size > stats->planned) stats->planned = b->offset + b->size;
  }
  for (int i = 0; i < n; i++) items[i].offset = bufs[root_of(items, i)].offset;
  nnp_free(bufs);
  nnp_free(order);
  nnp_free(overl);
  return NNP_OK;
}
