/* Thread pool: a run cuts [0, n) into a fixed set of contiguous chunks (the same cut for
 * the same n and thread count, every run) and every thread, the caller included, claims
 * chunks from one atomic counter until none is left.
 *
 * Why claiming rather than one fixed range per thread: on a shared machine a worker is
 * often descheduled or still waking up when a run starts, and with fixed ranges the
 * whole run waited for it (one wait per layer, ~100 layers per inference: 2 threads were
 * slower than 1 on mobilenet_v2). Now the threads that are running take its chunks.
 *
 * nnp_threadpool_run: every thread claims the next chunk from one claim word, so on two
 * threads each runs about every other chunk. nnp_threadpool_run_homed: thread i (the
 * caller is 0) first claims from the front of its own contiguous share of the chunks,
 * then from the back of the others', so with every thread running each streams through
 * one contiguous half. Memory-bound kernels gained from that (2 threads, best of 15:
 * resnet18's stem MaxPool 0.086 -> 0.068 ms, EfficientNet-Lite0's depthwise layers on
 * 56x56 and 28x28 planes 10-26%), the 3x3 layers on 56x56 planes lost 3-16% (their row
 * tasks then read the whole input plane in each thread, where alternate chunks split
 * it), so the kernel chooses. Each share is one claim word: generation (high 32 bits) |
 * next (bits 16..31) | end (low 16 bits); a plain run puts every chunk in share 0.
 * Results cannot depend on who runs a chunk: every kernel computes each index of its
 * range from that index alone (tiles, planes, panels, images).
 *
 * Why spinning before sleeping: consecutive runs are a few microseconds apart (one per
 * layer), and a condition-variable wake-up costs about as much as a small layer's share.
 * Workers spin on the generation for NNP_SPIN_ROUNDS pauses (tens of microseconds) and
 * only then sleep; the caller spins likewise while the last chunks finish.
 *
 * A worker reads the run's fn/ctx/n only after claiming a chunk of the current
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
  atomic_ullong *claims;  /* per thread: generation | next chunk | end of its share */
  atomic_int chunks_done;
  atomic_int sleepers;       /* workers asleep (or about to be) on `wake` */
  atomic_bool caller_asleep; /* the caller waits on `done` */
  atomic_bool stop;
  /* the current run: written before claim is published, read after a claim */
  nnp_range_fn fn;
  void *ctx;
  int64_t n;
  int chunks;
  atomic_bool homed; /* nnp_threadpool_run_homed; read before a claim, hence atomic */
};

typedef struct worker_arg {
  nnp_threadpool *tp;
  int self; /* 1..threads-1; the caller is 0 */
} worker_arg;

static void range_of(int64_t n, int parts, int i, int64_t *b, int64_t *e) {
  int64_t q = n / parts, r = n % parts;
  *b = i * q + (i < r ? i : r);
  *e = *b + q + (i < r ? 1 : 0);
}

/* One chunk of generation gen from the front (own share) or the back (another's) of a
 * claim word; false when the word is of another generation or its share is used up. */
static bool claim(atomic_ullong *w, unsigned gen, bool front, unsigned *chunk) {
  for (;;) {
    unsigned long long c = atomic_load(w);
    if ((unsigned)(c >> 32) != gen) return false;
    const unsigned next = (unsigned)(c >> 16) & 0xffffu, end = (unsigned)c & 0xffffu;
    if (next >= end) return false;
    if (atomic_compare_exchange_weak(w, &c, front ? c + (1ull << 16) : c - 1)) {
      *chunk = front ? next : end - 1;
      return true;
    }
  }
}

/* Claims and runs chunks of generation gen until none is left: its own share first. */
static void run_chunks(nnp_threadpool *tp, unsigned gen, int self) {
  const bool homed = atomic_load(&tp->homed); /* another run's value fails the claims below */
  for (;;) {
    unsigned chunk;
    bool got = claim(&tp->claims[homed ? self : 0], gen, true, &chunk);
    for (int k = 1; homed && !got && k < tp->threads; k++)
      got = claim(&tp->claims[(self + k) % tp->threads], gen, false, &chunk);
    if (!got) return;
    int64_t b, e;
    range_of(tp->n, tp->chunks, (int)chunk, &b, &e);
    if (b < e) tp->fn(tp->ctx, b, e);
    if (atomic_fetch_add(&tp->chunks_done, 1) + 1 == tp->chunks && atomic_load(&tp->caller_asleep)) {
      pthread_mutex_lock(&tp->mu);
      pthread_cond_signal(&tp->done);
      pthread_mutex_unlock(&tp->mu);
    }
  }
}

static void *worker_main(void *p) {
  nnp_threadpool *tp = ((worker_arg *)p)->tp;
  const int self = ((worker_arg *)p)->self;
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
    run_chunks(tp, gen, self);
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
  atomic_init(&tp->chunks_done, 0);
  atomic_init(&tp->sleepers, 0);
  atomic_init(&tp->caller_asleep, false);
  atomic_init(&tp->stop, false);
  atomic_init(&tp->homed, false);
  tp->claims = nnp_calloc((size_t)threads, sizeof *tp->claims);
  if (!tp->claims) {
    nnp_threadpool_destroy(tp);
    return nnp_error(NNP_ERR_NOMEM, "out of memory creating a thread pool");
  }
  for (int i = 0; i < threads; i++) atomic_init(&tp->claims[i], 0);
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
    a->self = i;
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
  nnp_free(tp->claims);
  nnp_free(tp);
}

int nnp_threadpool_threads(const nnp_threadpool *tp) { return tp ? tp->threads : 1; }

int nnp_threadpool_chunks(const nnp_threadpool *tp, int64_t n) {
  int64_t most = tp && tp->threads > 1 ? (int64_t)tp->threads * CHUNKS_PER_THREAD : 1;
  if (most > 0xffff) most = 0xffff;
  return (int)(n < most ? n : most);
}

static void run(nnp_threadpool *tp, nnp_range_fn fn, void *ctx, int64_t n, bool homed) {
  if (n <= 0) return;
  if (!tp || tp->threads == 1 || n == 1) {
    fn(ctx, 0, n);
    return;
  }
  tp->fn = fn;
  tp->ctx = ctx;
  tp->n = n;
  tp->chunks = nnp_threadpool_chunks(tp, n);
  atomic_store(&tp->homed, homed);
  atomic_store(&tp->chunks_done, 0);
  unsigned gen = atomic_load(&tp->generation) + 1;
  for (int i = 0; i < tp->threads; i++) { /* thread i's share of the chunks */
    int64_t b = 0, e = i == 0 ? tp->chunks : 0;
    if (homed) range_of(tp->chunks, tp->threads, i, &b, &e);
    atomic_store(&tp->claims[i], ((unsigned long long)gen << 32) | ((unsigned long long)b << 16) | (unsigned)e);
  }
  atomic_store(&tp->generation, gen);
  if (atomic_load(&tp->sleepers) > 0) {
    pthread_mutex_lock(&tp->mu);
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->mu);
  }
  run_chunks(tp, gen, 0);
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

void nnp_threadpool_run(nnp_threadpool *tp, nnp_range_fn fn, void *ctx, int64_t n) { run(tp, fn, ctx, n, false); }

void nnp_threadpool_run_homed(nnp_threadpool *tp, nnp_range_fn fn, void *ctx, int64_t n) {
  run(tp, fn, ctx, n, true);
}
