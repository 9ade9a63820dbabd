/* Reading Linux /proc: memory figures of a process. */
#ifndef NNP_UTIL_PROCFS_H
#define NNP_UTIL_PROCFS_H

#include <stdint.h>
#include <sys/types.h>

/* A "Key:   N kB" line of /proc/<pid>/status (pid 0: this process) in bytes, e.g. key
 * "VmRSS" or "VmHWM"; -1 when unreadable. */
int64_t nnp_proc_status_bytes(pid_t pid, const char *key);

#endif
