/* Query arrival schedules of the load scenarios (docs/load.md). Every schedule is a pure
 * function of its parameters and seed, so two runs with the same seed offer the system
 * exactly the same arrivals and differ only by the system's own behaviour. */
#ifndef NNP_LOAD_SCHEDULE_H
#define NNP_LOAD_SCHEDULE_H

#include <stdint.h>

/* Server scenario: a Poisson process of rate qps. out[i] = arrival of query i in seconds
 * from the start (exponential gaps drawn from mix64(seed, i)); non-decreasing. */
void nnp_schedule_poisson(double qps, int64_t n, uint64_t seed, double *out);

/* Server scenario as run: a Poisson process of rate qps conditioned on exactly n arrivals
 * in n/qps seconds (arrivals are then uniform order statistics). Short runs offer exactly
 * the target rate instead of one that varies by 1/sqrt(n) from seed to seed, so runs at
 * one QPS with different seeds differ in the pattern of arrivals only. */
void nnp_schedule_poisson_exact(double qps, int64_t n, uint64_t seed, double *out);

/* Multi-stream: per_tick queries at the start of every interval (0, interval, 2 interval, ...). */
void nnp_schedule_periodic(double interval_s, int per_tick, int64_t n, double *out);

/* Offline: every query available at once. */
void nnp_schedule_offline(int64_t n, double *out);

#endif
