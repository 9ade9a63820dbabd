/* Thread pool: a run cuts [0, n) into a fixed set of contiguous chunks (the same cut for
 * the same n and thread count, every run) and every thread, the caller included, claims
 * chunks from one atomic counter until none is left.
 *
 * Why claiming rather than one fixed range per thread: on a shared machine a worker is
 * often descheduled or still waking up when a run starts, and with fixed ranges the
 * whole run waited for it (one wait per layer, ~100 layers per inference: 2 threads were
 * slower than 1 on mobilenet_v2). Now the threads that are running take its chunks.
 * Results cannot depend on who runs a chunk: every kernel computes each index of its
 * range from that index alone (tiles, planes, panels, images).
 *
 * Why spinning before sleeping: consecutive runs are a few microseconds apart (one per
 * layer), and a condition-variable wake-up costs about as much as a small layer's share.
 * Workers spin on the generation for NNP_SPIN_ROUNDS pauses (tens of microseconds) and
 * only then sleep; the caller spins likewise while the last chunks finish.
 *
 * Claim word: generation (high 32 bits) | next chunk (bits 16..31) | chunk count (low 16
 * bits). A worker reads the run's fn/ctx/n only after claiming a chunk of the current
 * generation, and the caller returns only when every chunk is done, so a worker that
 * wakes late (after the run) claims nothing and never reads a finished run's ctx. */
#include "util/threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "nnperf/alloc.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

enum {
  CHUNKS_PER_THREAD = 4, /* claims per thread: enough to even out a late thread */
  NNP_SPIN_ROUNDS = 4000 /* pauses before sleeping: ~50-100 us */
};

struct nnp_threadpool {
  int threads;
  pthread_t *workers;
  int n_started;
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  atomic_uint generation; /* bumped per run; workers wait for a change */
  atomic_ullong claim;    /* generation | next chunk | chunk count */
  atomic_int chunks_done;
  atomic_int sleepers;       /* workers asleep (or about to be) on `wake` */
  atomic_bool caller_asleep; /* the caller waits on `done` */
  atomic_bool stop;
  /* the current run: written before claim is published, read after a claim */
  nnp_range_fn fn;
  void *ctx;
  int64_t n;
  int chunks;
};

typedef struct worker_arg {
  nnp_threadpool *tp;
} worker_arg;

static void range_of(int64_t n, int parts, int i, int64_t *b, int64_t *e) {
  int64_t q = n / parts, r = n % parts;
  *b = i * q + (i < r ? i : r);
  *e = *b + q + (i < r ? 1 : 0);
}

/* Claims and runs chunks of generation gen until none is left. */
static void run_chunks(nnp_threadpool *tp, unsigned gen) {
  for (;;) {
    unsigned long long c = atomic_load(&tp->claim);
    if ((unsigned)(c >> 32) != gen) return;
    unsigned next = (unsigned)(c >> 16) & 0xffffu, total = (unsigned)c & 0xffffu;
    if (next >= total) return;
    if (!atomic_compare_exchange_weak(&tp->claim, &c, c + (1ull << 16))) continue;
    int64_t b, e;
    range_of(tp->n, tp->chunks, (int)next, &b, &e);
    if (b < e) tp->fn(tp->ctx, b, e);
    if (atomic_fetch_add(&tp->chunks_done, 1) + 1 == (int)total && atomic_load(&tp->caller_asleep)) {
      pthread_mutex_lock(&tp->mu);
      pthread_cond_signal(&tp->done);
      pthread_mutex_unlock(&tp->mu);
    }
  }
}

static void *worker_main(void *p) {
  nnp_threadpool *tp = ((worker_arg *)p)->tp;
  nnp_free(p);
  unsigned seen = atomic_load(&tp->generation);
  for (;;) {
    unsigned gen = atomic_load(&tp->generation);
    for (int i = 0; gen == seen && i < NNP_SPIN_ROUNDS && !atomic_load(&tp->stop); i++) {
      cpu_relax();
      gen = atomic_load(&tp->generation);
    }
    if (gen == seen) { /* sleep; sleepers is raised before the last look at generation */
      pthread_mutex_lock(&tp->mu);
      atomic_fetch_add(&tp->sleepers, 1);
      while (!atomic_load(&tp->stop) && (gen = atomic_load(&tp->generation)) == seen)
        pthread_cond_wait(&tp->wake, &tp->mu);
      atomic_fetch_sub(&tp->sleepers, 1);
      pthread_mutex_unlock(&tp->mu);
    }
    if (atomic_load(&tp->stop)) break;
    seen = gen;
    run_chunks(tp, gen);
  }
  return NULL;
}

nnp_status nnp_threadpool_create(int threads, nnp_threadpool **out) {
  *out = NULL;
  if (threads < 1 || threads > 1024) return nnp_error(NNP_ERR_INVALID, "thread count %d is out of range 1..1024", threads);
  nnp_threadpool *tp = nnp_calloc(1, sizeof *tp);
  if (!tp) return nnp_error(NNP_ERR_NOMEM, "out of memory creating a thread pool");
  tp->threads = threads;
  pthread_mutex_init(&tp->mu, NULL);
  pthread_cond_init(&tp->wake, NULL);
  pthread_cond_init(&tp->done, NULL);
  atomic_init(&tp->generation, 0);
  atomic_init(&tp->claim, 0);
  atomic_init(&tp->chunks_done, 0);
  atomic_init(&tp->sleepers, 0);
  atomic_init(&tp->caller_asleep, false);
  atomic_init(&tp->stop, false);
  if (threads > 1) {
    tp->workers = nnp_calloc((size_t)threads - 1, sizeof *tp->workers);
    if (!tp->workers) {
      nnp_threadpool_destroy(tp);
      return nnp_error(NNP_ERR_NOMEM, "out of memory creating a thread pool");
    }
  }
  for (int i = 1; i < threads; i++) {
    worker_arg *a = nnp_malloc(sizeof *a);
    if (!a) {
      nnp_threadpool_destroy(tp);
      return nnp_error(NNP_ERR_NOMEM, "out of memory creating a thread pool");
    }
    a->tp = tp;
    if (pthread_create(&tp->workers[i - 1], NULL, worker_main, a) != 0) {
      nnp_free(a);
      nnp_threadpool_destroy(tp);
      return nnp_error(NNP_ERR_INTERNAL, "cannot start thread %d of %d", i + 1, threads);
    }
    tp->n_started++;
  }
  *out = tp;
  return NNP_OK;
}

void nnp_threadpool_destroy(nnp_threadpool *tp) {
  if (!tp) return;
  pthread_mutex_lock(&tp->mu);
  atomic_store(&tp->stop, true);
  pthread_cond_broadcast(&tp->wake);
  pthread_mutex_unlock(&tp->mu);
  for (int i = 0; i < tp->n_started; i++) pthread_join(tp->workers[i], NULL);
  pthread_mutex_destroy(&tp->mu);
  pthread_cond_destroy(&tp->wake);
  pthread_cond_destroy(&tp->done);
  nnp_free(tp->workers);
  nnp_free(tp);
}

int nnp_threadpool_threads(const nnp_threadpool *tp) { return tp ? tp->threads : 1; }

int nnp_threadpool_chunks(const nnp_threadpool *tp, int64_t n) {
  int64_t most = tp && tp->threads > 1 ? (int64_t)tp->threads * CHUNKS_PER_THREAD : 1;
  if (most > 0xffff) most = 0xffff;
  return (int)(n < most ? n : most);
}

void nnp_threadpool_run(nnp_threadpool *tp, nnp_range_fn fn, void *ctx, int64_t n) {
  if (n <= 0) return;
  if (!tp || tp->threads == 1 || n == 1) {
    fn(ctx, 0, n);
    return;
  }
  tp->fn = fn;
  tp->ctx = ctx;
  tp->n = n;
  tp->chunks = nnp_threadpool_chunks(tp, n);
  atomic_store(&tp->chunks_done, 0);
  unsigned gen = atomic_load(&tp->generation) + 1;
  atomic_store(&tp->claim, ((unsigned long long)gen << 32) | (unsigned)tp->chunks);
  atomic_store(&tp->generation, gen);
  if (atomic_load(&tp->sleepers) > 0) {
    pthread_mutex_lock(&tp->mu);
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->mu);
  }
  run_chunks(tp, gen);
  for (int i = 0; atomic_load(&tp->chunks_done) < tp->chunks; i++) {
    if (i < NNP_SPIN_ROUNDS) {
      cpu_relax();
      continue;
    }
    pthread_mutex_lock(&tp->mu);
    atomic_store(&tp->caller_asleep, true);
    while (atomic_load(&tp->chunks_done) < tp->chunks) pthread_cond_wait(&tp->done, &tp->mu);
    atomic_store(&tp->caller_asleep, false);
    pthread_mutex_unlock(&tp->mu);
  }
}
