/* explain's ladder: a rung slower than the measured rung before it is found (issue 25). */
#include "report/ladder.h"
#include "test.h"

int main(void) {
  /* naive 20, +fold 10, (not measured), +threads 6.0, +blocked 7.4, +x 7.5 (within 5%) */
  const double p50[] = {20, 10, 0, 6.0, 7.4, 7.5};
  int prev[6];
  CHECK(nnp_ladder_backwards(p50, 6, 0.05, prev) == 1);
  CHECK(prev[4] == 3);
  CHECK(prev[0] == -1 && prev[1] == -1 && prev[2] == -1 && prev[3] == -1 && prev[5] == -1);
  const double up[] = {5, 0, 8};
  CHECK(nnp_ladder_backwards(up, 3, 0.05, prev) == 1 && prev[2] == 0); /* skips the unmeasured rung */
  TEST_MAIN_END();
}
