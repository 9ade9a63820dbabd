#include "util/strmap.h"

#include <stdint.h>
#include <string.h>

#include "nnperf/alloc.h"

struct nnp_strmap {
  size_t cap, count; /* cap is a power of two */
  const char **keys;
  int *values;
};

static uint64_t hash_str(const char *s) { /* FNV-1a */
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

nnp_status nnp_strmap_create(nnp_strmap **out) {
  nnp_strmap *m = nnp_calloc(1, sizeof *m);
  if (!m) return nnp_error(NNP_ERR_NOMEM, "out of memory (name map)");
  m->cap = 64;
  m->keys = nnp_calloc(m->cap, sizeof *m->keys);
  m->values = nnp_calloc(m->cap, sizeof *m->values);
  if (!m->keys || !m->values) {
    nnp_strmap_destroy(m);
    return nnp_error(NNP_ERR_NOMEM, "out of memory (name map)");
  }
  *out = m;
  return NNP_OK;
}

void nnp_strmap_destroy(nnp_strmap *m) {
  if (!m) return;
  nnp_free(m->keys);
  nnp_free(m->values);
  nnp_free(m);
}

static size_t slot_of(const nnp_strmap *m, const char *key) {
  size_t i = (size_t)hash_str(key) & (m->cap - 1);
  while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & (m->cap - 1);
  return i;
}

static nnp_status grow(nnp_strmap *m) {
  size_t ncap = m->cap * 2;
  const char **nk = nnp_calloc(ncap, sizeof *nk);
  int *nv = nnp_calloc(ncap, sizeof *nv);
  if (!nk || !nv) {
    nnp_free(nk);
    nnp_free(nv);
    return nnp_error(NNP_ERR_NOMEM, "out of memory (name map)");
  }
  nnp_strmap old = *m;
  m->cap = ncap;
  m->keys = nk;
  m->values = nv;
  for (size_t i = 0; i < old.cap; i++) {
    if (!old.keys[i]) continue;
    size_t s = slot_of(m, old.keys[i]);
    m->keys[s] = old.keys[i];
    m->values[s] = old.values[i];
  }
  nnp_free(old.keys);
  nnp_free(old.values);
  return NNP_OK;
}

nnp_status nnp_strmap_put(nnp_strmap *m, const char *key, int value) {
  if ((m->count + 1) * 2 > m->cap) NNP_TRY(grow(m));
  size_t s = slot_of(m, key);
  if (!m->keys[s]) {
    m->keys[s] = key;
    m->count++;
  }
  m->values[s] = value;
  return NNP_OK;
}

int nnp_strmap_get(const nnp_strmap *m, const char *key) {
  size_t s = slot_of(m, key);
  return m->keys[s] ? m->values[s] : -1;
}
