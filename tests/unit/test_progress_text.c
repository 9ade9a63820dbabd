/* The TTY progress line (issue 25): never "246/200", and the time left. */
#include <string.h>

#include "report/progress_text.h"
#include "test.h"

int main(void) {
  char b[128];
  nnp_progress_text(b, sizeof b, "measure", 120, 200, 0, 0, 4);
  CHECK_MSG(!strcmp(b, "measure  120/200"), "'%s'", b);
  nnp_progress_text(b, sizeof b, "measure", 246, 200, 0, 0, 4);
  CHECK_MSG(!strcmp(b, "measure  246 (200 done, min time)") && !strstr(b, "246/200"), "'%s'", b);
  nnp_progress_text(b, sizeof b, "load", 0, 0, 30, 1, 4); /* 30 s per row, 3 rows left */
  CHECK_MSG(!strcmp(b, "load    , ~1m30s left"), "'%s'", b);
  nnp_progress_text(b, sizeof b, "measure", 5, 10, 20, 2, 3);
  CHECK_MSG(!strcmp(b, "measure  5/10, ~10s left"), "'%s'", b);
  nnp_progress_text(b, sizeof b, "measure", 5, 10, 20, 0, 3); /* nothing finished: no guess */
  CHECK(!strstr(b, "left"));
  TEST_MAIN_END();
}
