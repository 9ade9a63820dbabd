/* nnperf backends: what can run here. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "nnperf/backend.h"

int nnp_cmd_backends(int argc, char **argv) {
  int all = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: nnperf backends [--all]\n\n"
             "Lists every backend nnperf knows, whether it is available on this machine, its\n"
             "version, and how to install it when it is not. --all includes test-only backends.\n");
      return CLI_OK;
    } else if (!strcmp(argv[i], "--all")) all = 1;
    else return cli_usage_error("backends", "unknown option '%s'", argv[i]);
  }
  printf("%-14s %-12s %s\n", "backend", "status", "version / install hint");
  for (int i = 0; i < nnp_backend_count(); i++) {
    const nnp_backend_entry *e = nnp_backend_get(i);
    if (e->hidden && !all) continue;
    char version[256] = "";
    nnp_status s = nnp_backend_probe(e, version, sizeof version);
    if (s == NNP_OK) printf("%-14s %-12s %s\n", e->name, "available", version);
    else printf("%-14s %-12s %s (install: %s)\n", e->name, "unavailable", nnp_last_error(), e->install_hint);
  }
  return CLI_OK;
}
