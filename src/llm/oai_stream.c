/* Streamed OpenAI-compatible chunks -> token arrival times, usage and server timings. */
#include "llm/oai_stream.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* Integers a server reports are trusted only within a sane range. */
static long long bounded_int(json_t *v, long long max) {
  if (!json_is_integer(v)) return -1;
  long long x = json_integer_value(v);
  return x >= 0 && x <= max ? x : -1;
}

static double number_or(json_t *v, double dflt) { return json_is_number(v) ? json_number_value(v) : dflt; }

static void read_timings(nnp_oai_stream *s, json_t *t) {
  if (!json_is_object(t)) return;
  nnp_oai_timings *o = &s->timings;
  o->prompt_n = number_or(json_object_get(t, "prompt_n"), -1);
  o->prompt_ms = number_or(json_object_get(t, "prompt_ms"), -1);
  o->predicted_n = number_or(json_object_get(t, "predicted_n"), -1);
  o->predicted_ms = number_or(json_object_get(t, "predicted_ms"), -1);
  o->valid = o->predicted_n >= 0 && o->predicted_ms >= 0;
}

static void read_usage(nnp_oai_stream *s, json_t *u) {
  if (!json_is_object(u)) return;
  long long p = bounded_int(json_object_get(u, "prompt_tokens"), 100000000);
  long long c = bounded_int(json_object_get(u, "completion_tokens"), 100000000);
  if (p >= 0) s->usage_prompt = p;
  if (c >= 0) s->usage_completion = c;
}

/* The text of choices[0]: "text" (completions) or "delta.content" (chat); NULL when the
 * chunk carries none. */
static const char *choice_text(json_t *choice) {
  json_t *t = json_object_get(choice, "text");
  if (json_is_string(t)) return json_string_value(t);
  json_t *d = json_object_get(choice, "delta");
  t = d ? json_object_get(d, "content") : NULL;
  return json_is_string(t) ? json_string_value(t) : NULL;
}

static int read_choice(nnp_oai_stream *s, json_t *choices, char *why, size_t cap) {
  if (!choices || json_is_null(choices)) return 0;
  if (!json_is_array(choices)) {
    snprintf(why, cap, "malformed event: 'choices' is not an array");
    return -1;
  }
  if (json_array_size(choices) == 0) return 0; /* the usage-only chunk */
  json_t *c = json_array_get(choices, 0);
  if (!json_is_object(c)) {
    snprintf(why, cap, "malformed event: choices[0] is not an object");
    return -1;
  }
  const char *text = choice_text(c);
  json_t *fin = json_object_get(c, "finish_reason");
  if (json_is_string(fin)) s->finished = 1;
  if (text && text[0]) {
    if (nnp_llm_request_add_token(s->rec, s->now) != NNP_OK) {
      snprintf(why, cap, "out of memory recording tokens");
      return -1;
    }
  } else if (text && !json_is_string(fin) && s->n_empty < NNP_OAI_MAX_EMPTY) {
    s->empty_t[s->n_empty++] = s->now;
  }
  return 0;
}

static int on_event(void *ctx, const char *data, size_t len, char *why, size_t cap) {
  nnp_oai_stream *s = ctx;
  if (len == 6 && !memcmp(data, "[DONE]", 6)) {
    s->done = 1;
    return 0;
  }
  if (s->done) return 0; /* nothing after [DONE] counts */
  json_error_t err;
  json_t *j = json_loadb(data, len, 0, &err);
  if (!json_is_object(j)) {
    snprintf(why, cap, "malformed event: %s (%.40s)", j ? "not a JSON object" : err.text, data);
    json_decref(j);
    return -1;
  }
  json_t *e = json_object_get(j, "error");
  if (e && !json_is_null(e)) {
    json_t *m = json_is_object(e) ? json_object_get(e, "message") : e;
    snprintf(why, cap, "server error: %.150s", json_is_string(m) ? json_string_value(m) : "(no message)");
    json_decref(j);
    return -1;
  }
  int rc = read_choice(s, json_object_get(j, "choices"), why, cap);
  read_usage(s, json_object_get(j, "usage"));
  read_timings(s, json_object_get(j, "timings"));
  json_decref(j);
  return rc;
}

void nnp_oai_stream_init(nnp_oai_stream *s, nnp_llm_request *rec) {
  memset(s, 0, sizeof *s);
  nnp_sse_init(&s->sse, on_event, s);
  s->rec = rec;
  s->usage_prompt = s->usage_completion = -1;
}

void nnp_oai_stream_free(nnp_oai_stream *s) { nnp_sse_free(&s->sse); }

int nnp_oai_stream_feed(nnp_oai_stream *s, const char *buf, size_t len, double now) {
  s->now = now;
  return nnp_sse_feed(&s->sse, buf, len);
}

/* Tokens usage counted that no chunk with text showed apart (see the header). */
static void place_surplus(nnp_oai_stream *s) {
  nnp_llm_request *r = s->rec;
  long long surplus = s->usage_completion - r->n_tokens;
  if (surplus <= 0 || surplus > 1000000 || r->n_tokens + s->n_empty == 0) return;
  int from_empty = surplus < s->n_empty ? (int)surplus : s->n_empty;
  /* merge the empty chunks' times into the sorted token times */
  for (int k = 0; k < from_empty; k++) {
    if (nnp_llm_request_add_token(r, s->empty_t[k]) != NNP_OK) return;
    for (int i = r->n_tokens - 1; i > 0 && r->token_t[i - 1] > r->token_t[i]; i--) {
      double t = r->token_t[i];
      r->token_t[i] = r->token_t[i - 1];
      r->token_t[i - 1] = t;
    }
  }
  double last = r->token_t[r->n_tokens - 1];
  for (long long k = from_empty; k < surplus; k++)
    if (nnp_llm_request_add_token(r, last) != NNP_OK) return;
}

int nnp_oai_stream_finish(nnp_oai_stream *s) {
  int rc = nnp_sse_finish(&s->sse);
  if (rc == 0) place_surplus(s);
  if (s->usage_prompt >= 0) s->rec->prompt_tokens = (int)s->usage_prompt;
  return rc;
}
