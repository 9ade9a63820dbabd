/* Thread pool: every index of [0, n) is visited exactly once, for many n and thread
 * counts (including n smaller than the thread count), over repeated runs. */
#include <stdatomic.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "test.h"
#include "util/threadpool.h"

typedef struct job {
  atomic_int *hits;
} job;

static void visit(void *p, int64_t b, int64_t e) {
  job *j = p;
  for (int64_t i = b; i < e; i++) atomic_fetch_add(&j->hits[i], 1);
}

int main(void) {
  for (int threads = 1; threads <= 5; threads++) {
    nnp_threadpool *tp = NULL;
    CHECK_OK(nnp_threadpool_create(threads, &tp));
    CHECK(nnp_threadpool_threads(tp) == threads);
    for (int64_t n = 0; n < 40; n += (n < 10 ? 1 : 7))
      for (int rep = 0; rep < 20; rep++) {
        atomic_int hits[64];
        for (int i = 0; i < 64; i++) atomic_init(&hits[i], 0);
        job j = {hits};
        nnp_threadpool_run(tp, visit, &j, n);
        int bad = 0;
        for (int64_t i = 0; i < 64; i++) bad += atomic_load(&hits[i]) != (i < n ? 1 : 0);
        CHECK_MSG(bad == 0, "threads %d n %lld: %d indices visited a wrong number of times", threads, (long long)n, bad);
      }
    nnp_threadpool_destroy(tp);
  }
  nnp_threadpool *tp = NULL;
  CHECK(nnp_threadpool_create(0, &tp) != NNP_OK);
  /* a NULL pool runs on the caller */
  atomic_int hits[3];
  for (int i = 0; i < 3; i++) atomic_init(&hits[i], 0);
  job j = {hits};
  nnp_threadpool_run(NULL, visit, &j, 3);
  CHECK(atomic_load(&hits[0]) == 1 && atomic_load(&hits[2]) == 1);
  TEST_MAIN_END();
}
