/* Thread pool: every index of [0, n) is visited exactly once, for many n and thread
 * counts (including n smaller than the thread count), over repeated runs; each call gets
 * one chunk of the static cut; a slow thread's chunks are taken by the others (still
 * exactly once); runs right after another (workers spinning) and after a pause (workers
 * asleep) both complete. All of it for nnp_threadpool_run and nnp_threadpool_run_homed
 * (own shares first, then the others' from their ends), runs of the two interleaved. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

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

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

/* Records each call's range, and makes every thread but the first caller slow. */
typedef struct chunk_job {
  atomic_int *hits;
  atomic_int calls;
  int64_t bounds[256][2];
  pthread_t caller;
  bool slow_workers;
} chunk_job;

static void visit_chunk(void *p, int64_t b, int64_t e) {
  chunk_job *j = p;
  if (j->slow_workers && !pthread_equal(pthread_self(), j->caller)) sleep_us(2000);
  int k = atomic_fetch_add(&j->calls, 1);
  if (k < 256) {
    j->bounds[k][0] = b;
    j->bounds[k][1] = e;
  }
  for (int64_t i = b; i < e; i++) atomic_fetch_add(&j->hits[i], 1);
}

/* Each call is one chunk of the static cut of [0, n) into `chunks`, each chunk once. */
static void check_chunks(int threads, bool slow, long pause_us, bool homed) {
  nnp_threadpool *tp = NULL;
  CHECK_OK(nnp_threadpool_create(threads, &tp));
  if (!tp) return;
  for (int64_t n = 1; n < 200; n += 13) {
    if (pause_us) sleep_us(pause_us); /* the workers go to sleep */
    static atomic_int hits[200];
    for (int i = 0; i < 200; i++) atomic_init(&hits[i], 0);
    static chunk_job j;
    memset(&j, 0, sizeof j);
    j.hits = hits;
    atomic_init(&j.calls, 0);
    j.caller = pthread_self();
    j.slow_workers = slow;
    (homed ? nnp_threadpool_run_homed : nnp_threadpool_run)(tp, visit_chunk, &j, n);
    int chunks = nnp_threadpool_chunks(tp, n), calls = atomic_load(&j.calls), bad = 0;
    CHECK(chunks >= 1 && chunks <= n && chunks <= 4 * threads);
    CHECK_MSG(calls == (n == 1 ? 1 : chunks), "threads %d n %lld: %d calls for %d chunks", threads, (long long)n, calls, chunks);
    for (int64_t i = 0; i < 200; i++) bad += atomic_load(&hits[i]) != (i < n ? 1 : 0);
    for (int k = 0; k < calls && k < 256; k++) { /* chunk boundaries: multiples of the cut */
      int64_t q = n / chunks, r = n % chunks, b = j.bounds[k][0], c = b < r * (q + 1) ? b / (q + 1) : r + (b - r * (q + 1)) / q;
      int64_t cb = c * q + (c < r ? c : r), ce = cb + q + (c < r ? 1 : 0);
      bad += b != cb || j.bounds[k][1] != ce;
    }
    CHECK_MSG(bad == 0, "threads %d n %lld slow %d homed %d: %d wrong visits or chunk bounds", threads, (long long)n,
              slow, homed, bad);
  }
  nnp_threadpool_destroy(tp);
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
        (rep % 2 ? nnp_threadpool_run_homed : nnp_threadpool_run)(tp, visit, &j, n);
        int bad = 0;
        for (int64_t i = 0; i < 64; i++) bad += atomic_load(&hits[i]) != (i < n ? 1 : 0);
        CHECK_MSG(bad == 0, "threads %d n %lld: %d indices visited a wrong number of times", threads, (long long)n, bad);
      }
    nnp_threadpool_destroy(tp);
  }
  for (int threads = 2; threads <= 4; threads++) {
    for (int homed = 0; homed < 2; homed++) {
      check_chunks(threads, false, 0, homed);
      check_chunks(threads, true, 0, homed);
      check_chunks(threads, false, 3000, homed);
    }
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
