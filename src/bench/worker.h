/* The worker side of a benchmark row: runs in its own process (`nnperf __worker`),
 * reads the spec on stdin, loads the backend, runs the timing loop, streams results on
 * stdout. See docs/worker-protocol.md. */
#ifndef NNP_BENCH_WORKER_H
#define NNP_BENCH_WORKER_H

/* Returns the process exit code: 0 after "done", 1 after "error", 2 on a bad spec. */
int nnp_worker_main(int in_fd, int out_fd);

#endif
