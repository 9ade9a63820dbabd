#include "util/json_write.h"

#include <math.h>
#include <string.h>

void nnp_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c == '\n') fputs("\\n", f);
    else if (c == '\t') fputs("\\t", f);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

void nnp_json_number(FILE *f, double v) {
  if (!isfinite(v)) fputs("null", f);
  else fprintf(f, "%.9g", v);
}

size_t nnp_utf8_seq_len(const unsigned char *s, size_t avail) {
  unsigned char c = s[0];
  size_t len;
  unsigned int cp;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; }
  else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; }
  else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; }
  else return 0;
  if (len > avail) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  /* overlong 3/4-byte forms, UTF-16 surrogates, beyond U+10FFFF */
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return len;
}

void nnp_json_clean_utf8(char *dst, size_t dcap, const char *s, size_t cap) {
  if (dcap == 0) return;
  size_t n = strnlen(s, cap), o = 0;
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    size_t len = nnp_utf8_seq_len(u + i, n - i);
    if (o + (len ? len : 1) >= dcap) break;
    if (len == 0) {
      dst[o++] = '?';
      i++;
    } else {
      memcpy(dst + o, u + i, len);
      o += len;
      i += len;
    }
  }
  dst[o] = '\0';
}

void nnp_json_clean_string(FILE *f, const char *s, size_t cap) {
  char buf[2048];
  nnp_json_clean_utf8(buf, sizeof buf, s, cap);
  nnp_json_string(f, buf);
}
