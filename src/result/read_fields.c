/* Typed getters of the result reader (read_fields.h). */
#include "result/read_fields.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>


nnp_status nnp_rd_bad(const nnp_reader *rd, const char *field, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return nnp_error(NNP_ERR_FORMAT, "%s: %s%s%s: %s", rd->name, rd->where, rd->where[0] ? "." : "", field, msg);
}

/* --- typed getters: absent fields keep the default already in *out ------------------------ */

nnp_status nnp_rd_get_str(const nnp_reader *rd, json_t *obj, const char *key, char *out, size_t cap) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) return NNP_OK;
  if (!json_is_string(v)) return nnp_rd_bad(rd, key, "expected a string");
  snprintf(out, cap, "%s", json_string_value(v));
  return NNP_OK;
}

/* Numbers: null (or absent) gives null_value, e.g. -1 for "not measured". */
nnp_status nnp_rd_get_num(const nnp_reader *rd, json_t *obj, const char *key, double null_value, double *out) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) {
    *out = null_value;
    return NNP_OK;
  }
  if (!json_is_number(v)) return nnp_rd_bad(rd, key, "expected a number or null");
  *out = json_number_value(v);
  return NNP_OK;
}

nnp_status nnp_rd_get_int(const nnp_reader *rd, json_t *obj, const char *key, long long lo, long long hi,
                          long long null_value, long long *out) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) {
    *out = null_value;
    return NNP_OK;
  }
  if (!json_is_integer(v)) return nnp_rd_bad(rd, key, "expected an integer");
  long long x = json_integer_value(v);
  if (x < lo || x > hi) return nnp_rd_bad(rd, key, "%lld is outside %lld..%lld", x, lo, hi);
  *out = x;
  return NNP_OK;
}

nnp_status nnp_rd_get_bool(const nnp_reader *rd, json_t *obj, const char *key, bool *out) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) return NNP_OK;
  if (!json_is_boolean(v)) return nnp_rd_bad(rd, key, "expected true or false");
  *out = json_is_true(v);
  return NNP_OK;
}

nnp_status nnp_rd_get_obj(const nnp_reader *rd, json_t *obj, const char *key, json_t **out) {
  json_t *v = json_object_get(obj, key);
  *out = NULL;
  if (!v || json_is_null(v)) return NNP_OK;
  if (!json_is_object(v)) return nnp_rd_bad(rd, key, "expected an object or null");
  *out = v;
  return NNP_OK;
}

/* "p50_ci": [lo, hi] */
nnp_status nnp_rd_get_pair(const nnp_reader *rd, json_t *obj, const char *key, double *lo, double *hi) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) return NNP_OK;
  if (!json_is_array(v) || json_array_size(v) != 2) return nnp_rd_bad(rd, key, "expected [lo, hi]");
  json_t *a = json_array_get(v, 0), *b = json_array_get(v, 1);
  if ((!json_is_number(a) && !json_is_null(a)) || (!json_is_number(b) && !json_is_null(b)))
    return nnp_rd_bad(rd, key, "expected [lo, hi] numbers");
  *lo = json_is_number(a) ? json_number_value(a) : NAN;
  *hi = json_is_number(b) ? json_number_value(b) : NAN;
  return NNP_OK;
}


nnp_status nnp_rd_read_env(nnp_reader *rd, json_t *o, nnp_env *e) {
  snprintf(rd->where, sizeof rd->where, "env");
  NNP_TRY(nnp_rd_get_str(rd, o, "cpu_model", e->cpu_model, sizeof e->cpu_model));
  NNP_TRY(nnp_rd_get_str(rd, o, "cpu_flags", e->cpu_flags, sizeof e->cpu_flags));
  INT_FIELD(o, "cpus_online", 0, 1 << 24, 0, e->cpus_online);
  INT_FIELD(o, "cpus_allowed", 0, 1 << 24, 0, e->cpus_allowed);
  INT_FIELD(o, "mem_total_bytes", 0, INT64_MAX, 0, e->mem_total_bytes);
  INT_FIELD(o, "mem_available_bytes", 0, INT64_MAX, 0, e->mem_available_bytes);
  NNP_TRY(nnp_rd_get_str(rd, o, "os", e->os, sizeof e->os));
  NNP_TRY(nnp_rd_get_str(rd, o, "kernel", e->kernel, sizeof e->kernel));
  NNP_TRY(nnp_rd_get_str(rd, o, "hostname", e->hostname, sizeof e->hostname));
  NNP_TRY(nnp_rd_get_str(rd, o, "compiler", e->compiler, sizeof e->compiler));
  NNP_TRY(nnp_rd_get_str(rd, o, "build_flags", e->build_flags, sizeof e->build_flags));
  NNP_TRY(nnp_rd_get_str(rd, o, "governor", e->governor, sizeof e->governor));
  NNP_TRY(nnp_rd_get_num(rd, o, "cpu_mhz", 0, &e->cpu_mhz));
  NNP_TRY(nnp_rd_get_num(rd, o, "loadavg1", 0, &e->loadavg1));
  NNP_TRY(nnp_rd_get_str(rd, o, "gpu", e->gpu, sizeof e->gpu));
  return nnp_rd_get_str(rd, o, "timestamp", e->timestamp, sizeof e->timestamp);
}

nnp_status nnp_rd_read_stats(nnp_reader *rd, json_t *o, nnp_stats *s) {
  INT_FIELD(o, "n", 0, INT32_MAX, 0, s->n);
  const struct {
    const char *key;
    double *dst;
  } nums[] = {{"min", &s->min}, {"max", &s->max}, {"mean", &s->mean}, {"stdev", &s->stdev}, {"cv", &s->cv},
              {"p50", &s->p50}, {"p90", &s->p90}, {"p95", &s->p95},   {"p99", &s->p99},     {"p999", &s->p999}};
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) NNP_TRY(nnp_rd_get_num(rd, o, nums[i].key, NAN, nums[i].dst));
  s->p50_lo = s->p50_hi = s->p99_lo = s->p99_hi = NAN;
  NNP_TRY(nnp_rd_get_pair(rd, o, "p50_ci", &s->p50_lo, &s->p50_hi));
  NNP_TRY(nnp_rd_get_pair(rd, o, "p99_ci", &s->p99_lo, &s->p99_hi));
  NNP_TRY(nnp_rd_get_bool(rd, o, "p99_underpowered", &s->p99_underpowered));
  return nnp_rd_get_bool(rd, o, "p999_underpowered", &s->p999_underpowered);
}

int nnp_rd_parse_status(const char *s, nnp_row_status *out) {
  for (int k = NNP_ROW_OK; k <= NNP_ROW_OOM; k++)
    if (!strcmp(s, nnp_row_status_name((nnp_row_status)k))) {
      *out = (nnp_row_status)k;
      return 1;
    }
  return 0;
}

