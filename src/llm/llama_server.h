/* llama.cpp's llama-server as nnperf llm load's own backend: started on a free loopback
 * port, waited for (/health), and always stopped: on success, on error, on Ctrl-C
 * (nnp_llama_server_stop from the handler's flag), and if nnperf itself dies (the child
 * asks the kernel for SIGKILL when its parent goes: PR_SET_PDEATHSIG). */
#ifndef NNP_LLM_LLAMA_SERVER_H
#define NNP_LLM_LLAMA_SERVER_H

#include <sys/types.h>

#include "nnperf/status.h"

typedef struct nnp_llama_server_opts {
  const char *binary;      /* NULL: $NNP_LLAMA_SERVER, else ~/.cache/nnperf/llama-0.3.36/bin/llama-server */
  const char *model;       /* GGUF path */
  int threads;             /* -t and -tb */
  int parallel;            /* --parallel: slots (1 = no concurrent batching) */
  int ctx_per_slot;        /* context tokens each slot needs (prompt + generation) */
  int cont_batching;       /* 0: --no-cont-batching */
  const char *kv_type;     /* --cache-type-k/-v: NULL (f16, the default) or "q8_0" ... */
  int repack;              /* 1: --repack (weights repacked at load), 0: --no-repack (llm_repack.h) */
  double ready_timeout_s;  /* give up waiting for /health after this */
} nnp_llama_server_opts;

typedef struct nnp_llama_server {
  pid_t pid;               /* 0: not running */
  int port;
  char url[64];            /* http://127.0.0.1:PORT */
  char log_path[256];      /* the server's stdout+stderr (kept on failure, removed on success) */
  char binary[512];
  double t_spawn, t_ready; /* CLOCK_MONOTONIC: fork, and the first /health answering 200 */
  char args[512];          /* the command line, for results */
} nnp_llama_server;

/* The binary that would be used, and whether it exists (hint says how to build it). */
int nnp_llama_server_find(const char *binary, char *out, size_t cap);

nnp_status nnp_llama_server_start(const nnp_llama_server_opts *o, nnp_llama_server *s);
/* SIGTERM, then SIGKILL after 5 s; waits for it. Safe to call twice. */
void nnp_llama_server_stop(nnp_llama_server *s);
/* The pid a signal handler should kill (0: none). */
extern volatile pid_t nnp_llama_server_running_pid;

#endif
