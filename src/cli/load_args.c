#include "cli/load_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_duration(const char *s, double *seconds) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || !(v > 0)) return 0;
  double scale = !*end || !strcmp(end, "s") ? 1 : !strcmp(end, "ms") ? 1e-3 : !strcmp(end, "us") ? 1e-6 : -1;
  if (scale < 0) return 0;
  *seconds = v * scale;
  return 1;
}

void cli_join_args(int argc, char **argv, char *out, size_t n) {
  size_t len = 0;
  out[0] = 0;
  for (int i = 0; i < argc && len + 1 < n; i++) {
    int w = snprintf(out + len, n - len, "%s%s", i ? " " : "nnperf ", argv[i]);
    if (w < 0) break;
    len += (size_t)w;
  }
}
