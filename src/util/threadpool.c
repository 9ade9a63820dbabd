/* Thread pool: workers sleep on a condition variable between runs; a run bumps a
 * generation counter, each worker computes its own static range and the last one to
 * finish signals the caller. Runs are one per inference step, so a mutex/condvar
 * handshake (a few microseconds) is cheap next to the work it splits. */
#include "util/threadpool.h"

#include <pthread.h>
#include <stdbool.h>

#include "nnperf/alloc.h"

struct nnp_threadpool {
  int threads;
  pthread_t *workers;
  int n_started;
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  uint64_t generation;
  int pending; /* workers still running the current generation */
  bool stop;
  nnp_range_fn fn;
  void *ctx;
  int64_t n;
};

typedef struct worker_arg {
  nnp_threadpool *tp;
  int index;
} worker_arg;

static void range_of(int64_t n, int threads, int i, int64_t *b, int64_t *e) {
  int64_t q = n / threads, r = n % threads;
  *b = i * q + (i < r ? i : r);
  *e = *b + q + (i < r ? 1 : 0);
}

static void *worker_main(void *p) {
  nnp_threadpool *tp = ((worker_arg *)p)->tp;
  int index = ((worker_arg *)p)->index;
  nnp_free(p);
  uint64_t seen = 0;
  pthread_mutex_lock(&tp->mu);
  for (;;) {
    while (!tp->stop && tp->generation == seen) pthread_cond_wait(&tp->wake, &tp->mu);
    if (tp->stop) break;
    seen = tp->generation;
    nnp_range_fn fn = tp->fn;
    void *ctx = tp->ctx;
    int64_t b, e;
    range_of(tp->n, tp->threads, index, &b, &e);
    pthread_mutex_unlock(&tp->mu);
    if (b < e) fn(ctx, b, e);
    pthread_mutex_lock(&tp->mu);
    if (--tp->pending == 0) pthread_cond_signal(&tp->done);
  }
  pthread_mutex_unlock(&tp->mu);
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
    a->index = i;
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
  tp->stop = true;
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

void nnp_threadpool_run(nnp_threadpool *tp, nnp_range_fn fn, void *ctx, int64_t n) {
  if (n <= 0) return;
  if (!tp || tp->threads == 1 || n == 1) {
    fn(ctx, 0, n);
    return;
  }
  pthread_mutex_lock(&tp->mu);
  tp->fn = fn;
  tp->ctx = ctx;
  tp->n = n;
  tp->pending = tp->threads - 1;
  tp->generation++;
  pthread_cond_broadcast(&tp->wake);
  pthread_mutex_unlock(&tp->mu);
  int64_t b, e;
  range_of(n, tp->threads, 0, &b, &e);
  if (b < e) fn(ctx, b, e);
  pthread_mutex_lock(&tp->mu);
  while (tp->pending > 0) pthread_cond_wait(&tp->done, &tp->mu);
  pthread_mutex_unlock(&tp->mu);
}
