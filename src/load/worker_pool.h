/* A pool of serve-mode workers (docs/worker-protocol.md, "Serve mode") and the event
 * loop that offers them a schedule of queries. The workers are started once per command
 * and reused by every run of a search or sweep, as a deployed server is: the runs then
 * differ by the offered load only. Each worker is a separate process started by
 * nnp_worker_spawn, under the same isolation and limits as a bench row. */
#ifndef NNP_LOAD_WORKER_POOL_H
#define NNP_LOAD_WORKER_POOL_H

#include <stdint.h>

#include "bench/orchestrator.h"
#include "bench/protocol.h"
#include "load/tracker.h"

#define NNP_LOAD_MAX_INSTANCES 64
#define NNP_LOAD_MAX_STREAMS 16 /* requests in flight per worker (--streams) */

typedef struct nnp_load_worker {
  nnp_worker_proc proc;
  nnp_proto_reader rd;
  char err_tail[4096];  /* the end of its stderr, for the failure message (room for a sanitizer report) */
  int streams;          /* requests it runs at once: what its "serving N" said (1 if no N) */
  int in_flight;        /* requests sent and not yet answered */
  /* the requests in flight, by slot: queries [req_first, req_first + req_count); count 0 = free */
  int64_t req_first[NNP_LOAD_MAX_STREAMS];
  int req_count[NNP_LOAD_MAX_STREAMS];
  /* start-up, from its records (seconds): */
  double spawn_to_ready_s, load_s, first_s, cold_start_s;
  char version[128], note[256];
} nnp_load_worker;

typedef struct nnp_load_pool {
  int n;
  nnp_load_worker w[NNP_LOAD_MAX_INSTANCES];
  double timeout_s;     /* limit for start-up and for each run's drain */
} nnp_load_pool;

/* Starts `instances` workers for req (req->serve is forced on; req->streams asks each to
 * run that many requests at once) and waits until every one has loaded the model and
 * answered its first inference. On failure the pool is
 * stopped and the error names the worker and its reason. */
nnp_status nnp_load_pool_start(const nnp_row_request *req, int instances, double timeout_s, nnp_load_pool *p);

/* Requests the pool runs at once: the workers' streams added up. */
int nnp_load_pool_slots(const nnp_load_pool *p);

typedef struct nnp_load_run {
  double *arrival;   /* n scheduled arrivals (seconds from the start); closed loop fills them */
  int64_t n;
  int max_batch;     /* queries per request: > 1 only offline (dynamic batching) */
  int closed;        /* single-stream: query i+1 arrives when query i completes */
  double duration_s; /* closed loop: stop issuing after this long (0 = all n) */
  double drain_s;    /* after the last arrival, wait this long for completions; the rest drop */
  double bound_s;    /* latency bound for `late`, 0 = none */
} nnp_load_run;

/* Offers run to the pool; latency[i] (n entries, -1 = dropped) from scheduled arrival to
 * completion, and the summary. A dead or misbehaving worker ends the run with an error. */
nnp_status nnp_load_pool_run(nnp_load_pool *p, nnp_load_run *run, double *latency, nnp_load_summary *out);

/* Asks every worker to quit, then ends its process group. Safe on a half-started pool. */
void nnp_load_pool_stop(nnp_load_pool *p);

#endif
