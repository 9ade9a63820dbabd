/* String -> int map (open addressing), for value names. Keys are borrowed: the caller
 * keeps them alive as long as the map. */
#ifndef NNP_UTIL_STRMAP_H
#define NNP_UTIL_STRMAP_H

#include "nnperf/status.h"

typedef struct nnp_strmap nnp_strmap;

nnp_status nnp_strmap_create(nnp_strmap **out);
void nnp_strmap_destroy(nnp_strmap *m);
/* Inserts or replaces. */
nnp_status nnp_strmap_put(nnp_strmap *m, const char *key, int value);
/* Value, or -1 when absent. */
int nnp_strmap_get(const nnp_strmap *m, const char *key);

#endif
