/* nnperf's only contact with Slurm: its client commands (sbatch, squeue, sacct, scancel),
 * run as child processes. nnperf schedules nothing itself. */
#ifndef NNP_CLUSTER_SLURM_H
#define NNP_CLUSTER_SLURM_H

#include <stddef.h>

#include "nnperf/status.h"

/* NNP_ERR_UNSUPPORTED "Slurm is not available: ..." when sbatch/squeue are not on PATH. */
nnp_status nnp_slurm_available(void);

/* Runs argv (argv[0] looked up on PATH), stdout and stderr into out (NUL-terminated,
 * trailing newlines cut). Returns the exit status, -1 when it could not run. */
int nnp_slurm_command(char *const argv[], char *out, size_t n);

/* sbatch --parsable OPTIONS SCRIPT: *job_id filled (script NULL: --wrap=true). With test_only, `--test-only`: Slurm
 * checks partition, constraint and limits and submits nothing. The error names the
 * class and carries sbatch's own message. */
nnp_status nnp_slurm_submit(const char *const *options, int n_options, const char *script, int test_only,
                            const char *what, char *job_id, size_t n);

typedef struct nnp_slurm_job_state {
  char state[24];   /* PENDING, RUNNING, COMPLETED, CANCELLED, FAILED, TIMEOUT, ...; "UNKNOWN" */
  char node[64];    /* node list, "" before it starts */
  char reason[96];  /* squeue's reason (pending) */
} nnp_slurm_job_state;

/* States of n jobs: squeue (which keeps ended jobs MinJobAge seconds), then sacct for the
 * ones squeue no longer knows (accounting may be off: then they stay UNKNOWN). */
void nnp_slurm_job_states(const char *const *ids, int n, nnp_slurm_job_state *out);

/* True for a state that will not change any more. */
int nnp_slurm_state_final(const char *state);

#endif
