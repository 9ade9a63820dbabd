/* Server-sent events (the text/event-stream format OpenAI-compatible servers stream
 * completions in), parsed without trusting the server: every line and the whole body are
 * bounded, and anything malformed ends the stream with a reason instead of a crash. */
#ifndef NNP_LLM_SSE_H
#define NNP_LLM_SSE_H

#include <stddef.h>

/* One line may hold one streamed chunk (a token, or the last chunk with usage and
 * timings): 64 KiB is far beyond any real one. A whole answer of 16 MiB is beyond any
 * generation nnperf asks for. */
#define NNP_SSE_MAX_LINE (64u * 1024u)
#define NNP_SSE_MAX_BODY (16u * 1024u * 1024u)

/* Called once per complete event with its data field (lines joined by '\n', NUL
 * terminated). Returns 0 to go on, non-zero to stop (the parser then stays failed with
 * the reason the callback left in why). */
typedef int (*nnp_sse_event_fn)(void *ctx, const char *data, size_t len, char *why, size_t why_cap);

typedef struct nnp_sse_parser {
  char *line;              /* the line being read (up to NNP_SSE_MAX_LINE) */
  size_t line_len;
  char *data;              /* data of the event being read (up to NNP_SSE_MAX_LINE) */
  size_t data_len;
  int has_data;
  size_t body_bytes;
  int last_was_cr;         /* a "\r\n" pair is one line end */
  int failed;
  char why[200];           /* reason once failed */
  nnp_sse_event_fn on_event;
  void *ctx;
} nnp_sse_parser;

void nnp_sse_init(nnp_sse_parser *p, nnp_sse_event_fn on_event, void *ctx);
void nnp_sse_free(nnp_sse_parser *p);
/* Feeds len bytes; returns 0, or -1 once the parser has failed (p->why says why). */
int nnp_sse_feed(nnp_sse_parser *p, const char *buf, size_t len);
/* End of the body: an event not closed by an empty line is still delivered (servers
 * often close right after the last data line). Returns 0 or -1 as nnp_sse_feed. */
int nnp_sse_finish(nnp_sse_parser *p);

#endif
