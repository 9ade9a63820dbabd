/* The inference workload's twin rows (issues 23, 28), planned only (no worker runs):
 * --cache gives native and torch-compile a warm-cache twin right after the row,
 * --realistic a realistic twin after every row, --device moves the torch rows alone (their
 * label names it); every row keeps a key of its own, so resume and plans tell them apart. */
#include <stdlib.h>
#include <string.h>

#include "nnperf/bench.h"
#include "nnperf/sweep.h"
#include "test.h"

static const char *const EXPECTED[] = {
    /* backend, suffix after "B fp32 t1 b1" */
    "native", "",
    "native", " realistic",
    "native", " cache",
    "native", " realistic cache",
    "xnnpack", "",
    "xnnpack", " realistic",
    "torch-compile", " cuda:1",
    "torch-compile", " cuda:1 realistic",
    "torch-compile", " cuda:1 cache",
    "torch-compile", " cuda:1 realistic cache",
};

static void test_twins(void) {
  /* planning needs no torch: a missing interpreter makes the probe answer at once
   * (unavailable) instead of importing torch */
  setenv("NNPERF_TORCH_PYTHON", "/nonexistent/python", 1);
  nnp_sweep_spec spec;
  nnp_sweep_spec_default(&spec);
  spec.model = "zoo:tiny";
  spec.n_backends = 3;
  spec.backends[0] = "native", spec.backends[1] = "xnnpack", spec.backends[2] = "torch-compile";
  spec.n_threads = 1;
  spec.threads[0] = 1;
  spec.cache_dir = "/nonexistent/cache"; /* planning writes nothing there */
  spec.realistic = true;
  spec.device = "cuda:1";
  nnp_bench_result res;
  memset(&res, 0, sizeof res);
  void *state = NULL;
  CHECK_OK(nnp_sweep_inference.open(&spec, &res, &state));
  int n = nnp_sweep_inference.n_rows(state);
  int want = (int)(sizeof EXPECTED / sizeof *EXPECTED / 2);
  CHECK_MSG(n == want, "rows: %d, want %d", n, want);
  char keys[16][NNP_SWEEP_KEY_MAX];
  for (int i = 0; i < n && i < want; i++) {
    nnp_bench_row row;
    CHECK_OK(nnp_sweep_inference.plan_row(state, i, &row));
    char label[96];
    snprintf(label, sizeof label, "%s fp32 t1 b1%s", EXPECTED[2 * i], EXPECTED[2 * i + 1]);
    CHECK_MSG(!strcmp(row.label, label), "row %d: '%s', want '%s'", i, row.label, label);
    CHECK(row.ext.realistic == (strstr(label, "realistic") != NULL));
    CHECK(!strcmp(row.ext.device, strncmp(label, "torch", 5) ? "cpu" : "cuda:1"));
    CHECK_OK(nnp_sweep_row_key(&row, keys[i], sizeof keys[i]));
    for (int j = 0; j < i; j++) CHECK_MSG(strcmp(keys[i], keys[j]), "rows %d and %d share key '%s'", j, i, keys[i]);
    nnp_bench_row_free(&row);
  }
  nnp_sweep_inference.close(state);
}

int main(void) {
  test_twins();
  TEST_MAIN_END();
}
