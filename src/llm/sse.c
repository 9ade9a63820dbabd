/* Server-sent events parser (https://html.spec.whatwg.org/#event-stream-interpretation),
 * bounded: a server may send anything, so lines, events and the whole body have limits,
 * and a violation fails the stream with a reason the request record keeps. */
#include "llm/sse.h"

#include <stdio.h>
#include <string.h>

#include "nnperf/alloc.h"

void nnp_sse_init(nnp_sse_parser *p, nnp_sse_event_fn on_event, void *ctx) {
  memset(p, 0, sizeof *p);
  p->on_event = on_event;
  p->ctx = ctx;
}

void nnp_sse_free(nnp_sse_parser *p) {
  nnp_free(p->line);
  nnp_free(p->data);
  p->line = p->data = NULL;
}

static int fail(nnp_sse_parser *p, const char *why) {
  if (!p->failed) snprintf(p->why, sizeof p->why, "%s", why);
  p->failed = 1;
  return -1;
}

static int dispatch(nnp_sse_parser *p) {
  if (!p->has_data) return 0;
  p->data[p->data_len] = '\0';
  p->has_data = 0;
  size_t len = p->data_len;
  p->data_len = 0;
  char why[sizeof p->why] = "";
  if (p->on_event(p->ctx, p->data, len, why, sizeof why)) return fail(p, why[0] ? why : "event rejected");
  return 0;
}

/* One complete line: empty = end of event; "data:" appends; comments and other fields
 * (event, id, retry, unknown) are ignored, as the format says. */
static int process_line(nnp_sse_parser *p) {
  const char *l = p->line;
  size_t n = p->line_len;
  if (n == 0) return dispatch(p);
  if (l[0] == ':') return 0;
  const char *colon = memchr(l, ':', n);
  size_t name_len = colon ? (size_t)(colon - l) : n;
  if (name_len != 4 || memcmp(l, "data", 4) != 0) return 0;
  const char *v = colon ? colon + 1 : l + n;
  if (v < l + n && *v == ' ') v++;
  size_t vlen = (size_t)(l + n - v);
  size_t need = p->data_len + (p->has_data ? 1 : 0) + vlen;
  if (need >= NNP_SSE_MAX_LINE) return fail(p, "malformed stream: one event's data is longer than 64 KiB");
  if (!p->data && !(p->data = nnp_malloc(NNP_SSE_MAX_LINE))) return fail(p, "out of memory reading the stream");
  if (p->has_data) p->data[p->data_len++] = '\n';
  memcpy(p->data + p->data_len, v, vlen);
  p->data_len += vlen;
  p->has_data = 1;
  return 0;
}

int nnp_sse_feed(nnp_sse_parser *p, const char *buf, size_t len) {
  if (p->failed) return -1;
  if (len > NNP_SSE_MAX_BODY - p->body_bytes) return fail(p, "malformed stream: answer longer than 16 MiB");
  p->body_bytes += len;
  if (!p->line && !(p->line = nnp_malloc(NNP_SSE_MAX_LINE))) return fail(p, "out of memory reading the stream");
  for (size_t i = 0; i < len; i++) {
    char c = buf[i];
    if (c == '\n' && p->last_was_cr) {
      p->last_was_cr = 0;
      continue;
    }
    p->last_was_cr = c == '\r';
    if (c == '\n' || c == '\r') {
      if (process_line(p)) return -1;
      p->line_len = 0;
      continue;
    }
    if (c == '\0') return fail(p, "malformed stream: NUL byte in an event");
    if (p->line_len + 1 >= NNP_SSE_MAX_LINE) return fail(p, "malformed stream: a line longer than 64 KiB");
    p->line[p->line_len++] = c;
  }
  return 0;
}

int nnp_sse_finish(nnp_sse_parser *p) {
  if (p->failed) return -1;
  if (p->line_len > 0) {
    if (process_line(p)) return -1;
    p->line_len = 0;
  }
  return dispatch(p);
}
