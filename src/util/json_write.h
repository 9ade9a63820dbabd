/* Minimal JSON output helpers (strings escaped per RFC 8259). */
#ifndef NNP_UTIL_JSON_WRITE_H
#define NNP_UTIL_JSON_WRITE_H

#include <stdio.h>

void nnp_json_string(FILE *f, const char *s);
/* A double as JSON (non-finite values become null). */
void nnp_json_number(FILE *f, double v);

#endif
