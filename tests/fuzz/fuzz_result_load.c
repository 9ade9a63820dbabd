/* libFuzzer target: bytes -> result JSON reader (nnperf report/compare read files from
 * anywhere). Must either load a result that can be written again or fail cleanly. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nnperf/report.h"
#include "nnperf/result_load.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1:max_allocation_size_mb=256"; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nnp_bench_result r;
  if (nnp_result_load_buffer((const char *)data, size, "fuzz", &r) != NNP_OK) {
    if (r.rows || r.n_rows) __builtin_trap(); /* a failure leaves nothing behind */
    return 0;
  }
  for (int i = 0; i < r.n_rows; i++) { /* what the loader promises its users */
    const nnp_bench_row *w = &r.rows[i];
    long long sum = 0;
    for (int p = 0; p < w->n_processes; p++) sum += w->process_samples[p];
    if (w->n_processes > NNP_MAX_PROCESSES || (w->n_processes && sum != w->n_samples)) __builtin_trap();
    if (w->n_samples && !w->samples) __builtin_trap();
  }
  FILE *f = fopen("/dev/null", "w");
  if (f) {
    nnp_report_json(f, &r); /* everything loaded can be written again */
    fclose(f);
  }
  nnp_bench_result_free(&r);
  return 0;
}
