#!/usr/bin/env python3
"""Writes a tiny llama-architecture GGUF with seeded random weights, for the LLM tests.

The tests need a model that llama.cpp (and any GGUF reader) loads in milliseconds: 2
layers, 64-wide, 512-token vocabulary (3 specials, the 256 byte tokens, words), grouped
KV heads as real models have them. Weights are N(0, 0.05) from numpy's seeded generator,
so the same seed gives the same file and the same greedy tokens.

  make_tiny_gguf.py OUT.gguf [--seed N] [--layers N] [--ctx N] [--f16]

Runs under the LLM venv (scripts/install-llm.sh): ~/.cache/nnperf/venv-llm/bin/python.
"""
import argparse

import numpy as np
import gguf


def vocab(n_vocab):
    tokens, types = ["<unk>", "<s>", "</s>"], [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL,
                                               gguf.TokenType.CONTROL]
    for b in range(256):
        tokens.append("<0x%02X>" % b)
        types.append(gguf.TokenType.BYTE)
    k = 0
    while len(tokens) < n_vocab:
        tokens.append("\u2581w%d" % k)
        types.append(gguf.TokenType.NORMAL)
        k += 1
    scores = [0.0] * 3 + [0.0] * 256 + [-float(i) for i in range(n_vocab - 259)]
    return tokens, scores, types


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--f16", action="store_true", help="matrices in f16 (norms stay f32)")
    a = ap.parse_args()
    n_vocab, n_embd, n_head, n_head_kv, n_ff = 512, 64, 4, 2, 128
    head_dim = n_embd // n_head
    rng = np.random.default_rng(a.seed)
    mat_type = np.float16 if a.f16 else np.float32

    def mat(rows, cols):
        return (rng.standard_normal((rows, cols)) * 0.05).astype(mat_type)

    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name("nnperf-tiny-llama")
    w.add_context_length(a.ctx)
    w.add_embedding_length(n_embd)
    w.add_block_count(a.layers)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_rope_dimension_count(head_dim)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16 if a.f16 else gguf.LlamaFileType.ALL_F32)
    tokens, scores, types = vocab(n_vocab)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    # numpy shapes are (rows, cols) = ggml's (ne1, ne0): (out features, in features)
    w.add_tensor("token_embd.weight", mat(n_vocab, n_embd))
    w.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    w.add_tensor("output.weight", mat(n_vocab, n_embd))
    for i in range(a.layers):
        p = "blk.%d." % i
        w.add_tensor(p + "attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", mat(n_embd, n_embd))
        w.add_tensor(p + "attn_k.weight", mat(n_head_kv * head_dim, n_embd))
        w.add_tensor(p + "attn_v.weight", mat(n_head_kv * head_dim, n_embd))
        w.add_tensor(p + "attn_output.weight", mat(n_embd, n_embd))
        w.add_tensor(p + "ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        w.add_tensor(p + "ffn_gate.weight", mat(n_ff, n_embd))
        w.add_tensor(p + "ffn_up.weight", mat(n_ff, n_embd))
        w.add_tensor(p + "ffn_down.weight", mat(n_embd, n_ff))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
