#include "cli/load_args.h"
#include "nnperf/backend.h"

#include "cli/cli.h"

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

int cli_want_int(const char *v, long long lo, long long hi, long long *out) {
  char *end;
  long long x = strtoll(v, &end, 10);
  if (end == v || *end || x < lo || x > hi) return 0;
  *out = x;
  return 1;
}

int cli_load_target_option(const char *cmd, const char *a, const char *val, nnp_load_target_options *to, int *rc) {
  long long v;
  char *end;
  *rc = CLI_OK;
  if (!strcmp(a, "--backend")) {
    /* an unknown name is a command-line error (2), as in bench; a missing model is input (1) */
    if (!nnp_backend_find(val)) *rc = cli_usage_error(cmd, "unknown backend '%s'; nnperf backends lists them", val);
    else to->backend = val;
  }
  else if (!strcmp(a, "--backend-options")) to->options = val;
  else if (!strcmp(a, "--threads")) {
    if (!cli_want_int(val, 1, 256, &v)) *rc = cli_usage_error(cmd, "--threads wants 1..256, not '%s'", val);
    else to->threads = (int)v;
  } else if (!strcmp(a, "--seed")) {
    /* at most 2^62, as bench: result_load reads seeds back as signed 64-bit integers */
    if (!cli_want_int(val, 0, (1LL << 62), &v)) *rc = cli_usage_error(cmd, "--seed wants an integer, not '%s'", val);
    else to->seed = (uint64_t)v;
  } else if (!strcmp(a, "--timeout")) {
    to->timeout_s = strtod(val, &end);
    if (end == val || *end || !(to->timeout_s > 0)) *rc = cli_usage_error(cmd, "--timeout wants seconds, not '%s'", val);
  } else return 0;
  return 1;
}
