"""nnperf's torch LLM worker: one `nnperf llm bench` row on Hugging Face transformers.

Speaks the LLM worker protocol (docs/llm.md): a spec on stdin, records on stdout. The
model is the same GGUF file the llama.cpp row runs; transformers' GGUF loader dequantises
its weights to fp32. Rounds of `concurrency` requests go through model.generate() (greedy,
exactly gen_len new tokens, end-of-sequence ignored so every backend generates the same
count); a stopping criterion that never stops records when each token arrived
(time.monotonic is CLOCK_MONOTONIC, the parent's clock). The parent computes every metric.
"""
import os
import sys
import time

from . import footprint

M64 = (1 << 64) - 1


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def prompt_token(seed, request, pos, n_vocab):
    """nnp_llm_prompt_token (include/nnperf/llm.h), bit for bit."""
    lo = min(256, n_vocab // 2)
    z = mix64((seed * 0x9E3779B97F4A7C15 + (request << 24) + pos) & M64)
    return lo + z % (n_vocab - lo)


def read_spec():
    spec = {}
    header = sys.stdin.readline()
    if not header.startswith("nnperf-llm-spec 1"):
        fail("failed", "expected an nnperf-llm-spec 1 header on stdin")
    for line in sys.stdin:
        key, _, val = line.rstrip("\n").partition(" ")
        if key == "run":
            return spec
        spec[key] = val
    fail("failed", "the spec ended without 'run'")


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def fail(kind, msg):
    out("error %s %s" % (kind, " ".join(str(msg).split())))
    sys.exit(1)


def vmhwm():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return -1


def cache_bytes(cache):
    """Bytes the KV cache holds (DynamicCache: per layer keys and values)."""
    total = 0
    for layer in getattr(cache, "layers", []) or []:
        for name in ("keys", "values"):
            t = getattr(layer, name, None)
            if t is not None and hasattr(t, "nbytes"):
                total += t.nbytes
    return total


class TokenClock:
    """A stopping criterion that never stops: it notes when each generated token arrived."""

    def __init__(self):
        self.times = []

    def __call__(self, input_ids, scores, **kwargs):
        import torch
        self.times.append(time.monotonic())
        return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)


def load(spec):
    import torch
    import transformers
    from transformers import AutoModelForCausalLM
    out("version torch %s, transformers %s" % (torch.__version__, transformers.__version__))
    torch.set_num_threads(int(spec["threads"]))
    path = spec["model"]
    t0 = time.monotonic()
    model = AutoModelForCausalLM.from_pretrained(os.path.dirname(os.path.abspath(path)),
                                                 gguf_file=os.path.basename(path),
                                                 dtype=torch.float32)
    model.eval()
    # every backend generates exactly gen_len tokens: the model's own end-of-sequence must
    # neither stop generate() nor pad a finished sequence
    model.generation_config.eos_token_id = None
    out("load %.9f %.9f" % (time.monotonic() - t0, time.monotonic()))
    return model


def run_round(model, spec, ids, n_vocab, warm):
    import torch
    from transformers import GenerationConfig, StoppingCriteriaList
    seed, plen, glen = int(spec["seed"]), int(spec["prompt_len"]), int(spec["gen_len"])
    prompts = [[prompt_token(seed, i, p, n_vocab) for p in range(plen)] for i in ids]
    x = torch.tensor(prompts, dtype=torch.long)
    clock = TokenClock()
    gc = GenerationConfig(max_new_tokens=glen, min_new_tokens=0, do_sample=False, num_beams=1,
                          eos_token_id=None, pad_token_id=0, use_cache=True,
                          return_dict_in_generate=True)
    t_sent = time.monotonic()
    with torch.inference_mode():
        res = model.generate(x, attention_mask=torch.ones_like(x), generation_config=gc,
                             stopping_criteria=StoppingCriteriaList([clock]))
    t_done = time.monotonic()
    new = res.sequences[:, plen:]
    if new.shape[1] != glen or len(clock.times) != glen:
        fail("failed", "generate() returned %d tokens (%d timed), not %d" % (new.shape[1], len(clock.times), glen))
    for s, rid in enumerate(ids):
        dts = " ".join("%.6f" % (t - t_sent) for t in clock.times)
        out("req %d %d %d %.9f %.9f %d %s" % (rid, 1 if warm[s] else 0, plen, t_sent, t_done, glen, dts))
        out("toks %d %s" % (rid, " ".join(str(int(t)) for t in new[s, :32].tolist())))
    return cache_bytes(res.past_key_values)


def main():
    spec = read_spec()
    out("ready %.9f" % time.monotonic())
    try:
        model = load(spec)
    except Exception as e:  # the framework's own message is the row's reason
        fail("failed", "transformers could not load %s: %s" % (spec.get("model"), e))
    n_vocab = int(model.config.vocab_size)
    n_ctx = int(getattr(model.config, "max_position_embeddings", 0) or 0)
    plen, glen = int(spec["prompt_len"]), int(spec["gen_len"])
    if n_ctx and plen + glen > n_ctx:
        fail("failed", "a prompt of %d tokens plus %d generated exceeds the model's context of %d tokens"
             % (plen, glen, n_ctx))
    out("weights fp32")
    c, warmup, requests = int(spec["concurrency"]), int(spec["warmup"]), int(spec["requests"])
    kv = 0
    total = warmup + requests
    meter, tokens = None, 0  # energy over the rounds without a warm-up request
    for first in range(0, total, c):
        idx = range(first, min(first + c, total))
        ids = [i - warmup if i >= warmup else 1000000 + i for i in idx]
        if first >= warmup and meter is None:
            meter = footprint.Rapl()
        kv = max(kv, run_round(model, spec, ids, n_vocab, [i < warmup for i in idx]))
        if first >= warmup:
            tokens += len(idx) * glen
    out("kv %d" % kv)
    out("kvsource framework")
    out("memory %d" % vmhwm())
    report_footprint_energy(spec["model"], meter, tokens)
    out("done")


def report_footprint_energy(model, meter, tokens):
    """The CNN workers' footprint and energy records (docs/worker-protocol.md): the files
    this process mapped or imported (torch, transformers, ...) but the GGUF, and the
    energy per output token of the measured rounds where a RAPL counter is readable."""
    rb, rf = footprint.runtime_bytes(model)
    out("footprint %d %d %d" % (rb, rf, footprint.file_bytes(model)))
    j = meter.joules() if meter is not None else -1.0
    if j >= 0:
        out("energy %.9g %d %s" % (j, tokens, meter.source))
    else:
        out("energy -1 0 " + (meter.source if meter is not None else "not measured (no measured round)"))


if __name__ == "__main__":
    main()
