/* Minimal JSON output helpers (strings escaped per RFC 8259). */
#ifndef NNP_UTIL_JSON_WRITE_H
#define NNP_UTIL_JSON_WRITE_H

#include <stddef.h>
#include <stdio.h>

void nnp_json_string(FILE *f, const char *s);
/* A double as JSON (non-finite values become null). */
void nnp_json_number(FILE *f, double v);

/* Length of the valid UTF-8 sequence at s (at most avail bytes), 0 when invalid:
 * overlong 3/4-byte forms, UTF-16 surrogates and code points beyond U+10FFFF count as
 * invalid. */
size_t nnp_utf8_seq_len(const unsigned char *s, size_t avail);
/* Copies s (at most cap bytes: fixed arrays may lack a terminator if a caller filled
 * them carelessly) into dst[dcap] with invalid UTF-8 bytes replaced by '?', cut at a
 * character boundary to fit. Report reasons come from crashing workers and anything can
 * be in them; one bad byte would make a whole JSON or CSV file unreadable to strict
 * parsers. */
void nnp_json_clean_utf8(char *dst, size_t dcap, const char *s, size_t cap);

/* A fixed-size string field (cap bytes) as a JSON string, invalid UTF-8 replaced
 * (nnp_json_clean_utf8; at most 2047 bytes are written). */
void nnp_json_clean_string(FILE *f, const char *s, size_t cap);
#define NNP_JSON_FIELD(f, field) nnp_json_clean_string((f), (field), sizeof(field))

#endif
