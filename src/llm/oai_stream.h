/* The OpenAI-compatible streaming answer (completions and chat completions, stream:true)
 * read into nnperf's per-request record: one output-token arrival time per token, the
 * server's usage counts and, where llama-server sends them, its own `timings`.
 *
 * Token counting: a chunk with text counts one token at its arrival time; chunks with
 * empty text (llama-server sends one when a token ends inside a UTF-8 character) are
 * remembered, and when the final `usage` says more tokens were generated than chunks
 * with text came, the surplus is placed at those empty chunks' times first, then at the
 * last token's time (a chunk that carried several tokens: their ITL is 0, as
 * `vllm bench serve` counts it). */
#ifndef NNP_LLM_OAI_STREAM_H
#define NNP_LLM_OAI_STREAM_H

#include "llm/sse.h"
#include "nnperf/llm.h"

/* llama-server's `timings` of one request (its own clocks): prompt processing and
 * generation. valid is 0 when the server sent none. */
typedef struct nnp_oai_timings {
  int valid;
  double prompt_n, prompt_ms, predicted_n, predicted_ms;
} nnp_oai_timings;

#define NNP_OAI_MAX_EMPTY 256

typedef struct nnp_oai_stream {
  nnp_sse_parser sse;
  nnp_llm_request *rec;
  double now;                          /* arrival time of the bytes being fed */
  double empty_t[NNP_OAI_MAX_EMPTY];   /* arrival times of chunks with empty text */
  int n_empty;
  int done;                            /* "data: [DONE]" seen */
  int finished;                        /* a choice with a finish_reason seen */
  long long usage_prompt, usage_completion; /* -1: the server sent no usage */
  nnp_oai_timings timings;
} nnp_oai_stream;

void nnp_oai_stream_init(nnp_oai_stream *s, nnp_llm_request *rec);
void nnp_oai_stream_free(nnp_oai_stream *s);
/* Feeds bytes that arrived at time now. Returns 0, or -1 once the stream is malformed
 * (s->sse.why says why: bad JSON, an error event, oversized lines, ...). */
int nnp_oai_stream_feed(nnp_oai_stream *s, const char *buf, size_t len, double now);
/* End of the body: delivers a last unterminated event and reconciles the token count
 * with usage. Returns 0, or -1 when the end itself was malformed. */
int nnp_oai_stream_finish(nnp_oai_stream *s);

#endif
