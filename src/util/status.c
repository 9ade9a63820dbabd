#include "nnperf/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define NNP_ERROR_MAX 1024
static _Thread_local char last_error[NNP_ERROR_MAX];

const char *nnp_status_name(nnp_status s) {
  switch (s) {
    case NNP_OK: return "ok";
    case NNP_ERR_INVALID: return "invalid argument";
    case NNP_ERR_IO: return "i/o error";
    case NNP_ERR_FORMAT: return "malformed input";
    case NNP_ERR_UNSUPPORTED: return "unsupported";
    case NNP_ERR_SHAPE: return "shape error";
    case NNP_ERR_NOMEM: return "out of memory";
    case NNP_ERR_LIMIT: return "limit exceeded";
    case NNP_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

nnp_status nnp_error_record(nnp_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return s;
}

nnp_status nnp_error_context_record(nnp_status s, const char *fmt, ...) {
  char prefix[512];
  char old[NNP_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, last_error, sizeof old);
  if (!old[0]) snprintf(old, sizeof old, "%s", nnp_status_name(s));
  size_t np = strlen(prefix);
  if (np > sizeof last_error - 3) np = sizeof last_error - 3;
  memcpy(last_error, prefix, np);
  last_error[np] = ':';
  last_error[np + 1] = ' ';
  size_t room = sizeof last_error - np - 3;
  size_t no = strlen(old);
  if (no > room) no = room;
  memcpy(last_error + np + 2, old, no);
  last_error[np + 2 + no] = 0;
  return s;
}

const char *nnp_last_error(void) { return last_error[0] ? last_error : "no error"; }

void nnp_clear_error(void) { last_error[0] = 0; }
