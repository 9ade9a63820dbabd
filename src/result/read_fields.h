/* Typed getters of the result reader, shared by the readers of each kind of document
 * (result_read.c: bench, load, coldstart; result_read_llm.c: llm). Each names the place
 * it reads in its error ("r.json: rows[1].stats.p50: expected a number or null"), and an
 * absent or null field keeps the default the caller gives. */
#ifndef NNP_RESULT_READ_FIELDS_H
#define NNP_RESULT_READ_FIELDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "nnperf/bench.h"
#include "nnperf/status.h"

/* The place being read, for error messages: "name: rows[3].stats.p50". */
typedef struct nnp_reader {
  const char *name;
  char where[128];
} nnp_reader;

nnp_status nnp_rd_bad(const nnp_reader *rd, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
nnp_status nnp_rd_get_str(const nnp_reader *rd, json_t *obj, const char *key, char *out, size_t cap);
/* Numbers: null (or absent) gives null_value, e.g. -1 for "not measured". */
nnp_status nnp_rd_get_num(const nnp_reader *rd, json_t *obj, const char *key, double null_value, double *out);
nnp_status nnp_rd_get_int(const nnp_reader *rd, json_t *obj, const char *key, long long lo, long long hi,
                          long long null_value, long long *out);
nnp_status nnp_rd_get_bool(const nnp_reader *rd, json_t *obj, const char *key, bool *out);
nnp_status nnp_rd_get_obj(const nnp_reader *rd, json_t *obj, const char *key, json_t **out);
/* "p50_ci": [lo, hi] */
nnp_status nnp_rd_get_pair(const nnp_reader *rd, json_t *obj, const char *key, double *lo, double *hi);
nnp_status nnp_rd_read_env(nnp_reader *rd, json_t *o, nnp_env *e);
nnp_status nnp_rd_read_stats(nnp_reader *rd, json_t *o, nnp_stats *s);
/* "ok", "failed", ... -> the status; 0 when s names none. */
int nnp_rd_parse_status(const char *s, nnp_row_status *out);

/* An integer field in lo..hi into dst (any integer type); needs `rd` in scope. */
#define INT_FIELD(obj, key, lo, hi, nullv, dst)                               \
  do {                                                                        \
    long long v_ = 0;                                                         \
    NNP_TRY(nnp_rd_get_int(rd, (obj), (key), (lo), (hi), (nullv), &v_));      \
    (dst) = v_;                                                               \
  } while (0)

#endif
