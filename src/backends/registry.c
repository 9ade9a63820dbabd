/* Every backend nnperf knows, in the order `nnperf backends` lists them. Adding a
 * backend: its file plus one line here. */
#include <string.h>

#include "nnperf/backend.h"

extern const nnp_backend_vtable nnp_backend_native;
extern const nnp_backend_vtable nnp_backend_fault;

static const nnp_backend_entry entries[] = {
    {"native", NNP_BACKEND_INPROC, &nnp_backend_native, "nnperf's own C engine", "built in", 0},
    {"fault", NNP_BACKEND_INPROC, &nnp_backend_fault, "native engine with an injected fault (harness tests)",
     "built in", 1},
};

int nnp_backend_count(void) { return (int)(sizeof entries / sizeof *entries); }

const nnp_backend_entry *nnp_backend_get(int i) {
  return i >= 0 && i < nnp_backend_count() ? &entries[i] : NULL;
}

const nnp_backend_entry *nnp_backend_find(const char *name) {
  for (int i = 0; i < nnp_backend_count(); i++)
    if (!strcmp(entries[i].name, name)) return &entries[i];
  return NULL;
}
