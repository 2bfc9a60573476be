#!/usr/bin/env python3
"""torch_llama.py — the PyTorch comparison point for bench/llm_bench on the
GPU machine: the same Llama shapes (Llama-3.2-1B, Llama-3-8B) with random
weights in bf16 (PyTorch has no GGUF block types), prefill of the prompt and
greedy decode one token at a time with a KV cache, timed like llm_bench
(median wall time per decode step, median of 5 prefill runs after a warm-up). Prefill
computes the last prompt row's logits only (logits_to_keep=1), as rlx's
generation graph and llama.cpp do.

    python3 bench/torch_llama.py [--model 1b|8b|all] [--prompt 128] [--decode 32]
                                 [--mode eager|graph|all] [--matvec]

Modes:
  eager  Hugging Face transformers LlamaForCausalLM, DynamicCache, one
         forward per token (what most PyTorch users run);
  graph  the same model with a static cache, each decode step captured once in
         a CUDA graph and replayed (no Python or launch overhead per kernel:
         the GPU-bound limit of this PyTorch model).
--matvec adds the decode-shaped bf16 linear layers alone (CUDA-graph replay of
         the layer's matvec, CUDA events), with the bytes each reads.

Bytes per token (the floor's numerator) are the bf16 weights a decode step
reads (the embedding by row unless tied) plus the bf16 KV cache up to the
position; the floor divides them by --bandwidth (4000 GB/s, as llm_bench).
"""
import argparse, statistics, time

PREFILL_RUNS = 5   # prefill is the median of these runs (after a warm-up), as llm_bench takes 3

import torch

SHAPES = {  # as bench/llm_bench.c and models/llama.c read them
    "1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
               num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=True),
    "8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
               num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=False),
}


def build(name):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(**SHAPES[name], rope_theta=500000.0, max_position_embeddings=8192, rms_norm_eps=1e-5,
                      torch_dtype=torch.bfloat16)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    for p in model.parameters():   # small random weights keep activations finite
        p.data.normal_(0.0, 0.02)
    return model.eval(), cfg


def bytes_per_token(model, cfg, ctx):
    total = sum(p.numel() * p.element_size() for p in model.parameters())
    if not cfg.tie_word_embeddings:
        total -= model.model.embed_tokens.weight.numel() * 2
    hd = cfg.hidden_size // cfg.num_attention_heads
    kv = 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * hd * 2 * ctx
    return total + kv


@torch.inference_mode()
def run_eager(model, cfg, n_prompt, n_decode):
    from transformers import DynamicCache
    ids = (torch.arange(n_prompt, device="cuda") * 7919) % cfg.vocab_size
    ids = ids[None]

    def prefill():
        cache = DynamicCache()
        out = model(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
        return out, cache

    prefill()
    tps = []
    for _ in range(PREFILL_RUNS):
        torch.cuda.synchronize()
        t = time.perf_counter()
        out, cache = prefill()
        torch.cuda.synchronize()
        tps.append(time.perf_counter() - t)
    tp = statistics.median(tps)
    tok = out.logits[:, -1].argmax(-1, keepdim=True)
    td = []
    for _ in range(n_decode):
        t = time.perf_counter()
        out = model(input_ids=tok, past_key_values=cache, use_cache=True)
        tok = out.logits[:, -1].argmax(-1, keepdim=True)
        tok.item()   # the token on the host, as a generate loop needs it
        td.append(time.perf_counter() - t)
    return tp, statistics.median(td)


@torch.inference_mode()
def run_graph(model, cfg, n_prompt, n_decode):
    from transformers import StaticCache
    max_len = n_prompt + n_decode + 8
    cache = StaticCache(config=cfg, max_batch_size=1, max_cache_len=max_len, device="cuda", dtype=torch.bfloat16)
    ids = ((torch.arange(n_prompt, device="cuda") * 7919) % cfg.vocab_size)[None]
    tok = torch.zeros((1, 1), dtype=torch.long, device="cuda")
    pos = torch.zeros((1,), dtype=torch.long, device="cuda")

    def prefill():
        cache.reset()
        out = model(input_ids=ids, past_key_values=cache, cache_position=torch.arange(n_prompt, device="cuda"),
                    use_cache=True, logits_to_keep=1)
        return out.logits[:, -1].argmax(-1, keepdim=True)

    def decode():
        out = model(input_ids=tok, past_key_values=cache, cache_position=pos, use_cache=True)
        return out.logits[:, -1].argmax(-1, keepdim=True)

    prefill()
    tps = []
    for _ in range(PREFILL_RUNS):
        torch.cuda.synchronize()
        t = time.perf_counter()
        first = prefill()
        torch.cuda.synchronize()
        tps.append(time.perf_counter() - t)
    tp = statistics.median(tps)
    tok.copy_(first)
    pos.fill_(n_prompt)
    s = torch.cuda.Stream()   # warm-up on a side stream, then capture
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            decode()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        nxt = decode()
    td = []
    for i in range(n_decode):
        t = time.perf_counter()
        pos.fill_(n_prompt + i)
        g.replay()
        tok.copy_(nxt)
        tok.item()
        td.append(time.perf_counter() - t)
    return tp, statistics.median(td)


@torch.inference_mode()
def matvec_rows(name, cfg):
    d, ff, hd = cfg.hidden_size, cfg.intermediate_size, cfg.hidden_size // cfg.num_attention_heads
    kvd = cfg.num_key_value_heads * hd
    shapes = [("q / o", d, d), ("k / v", kvd, d), ("gate", ff, d), ("down", d, ff), ("lm head", cfg.vocab_size, d)]
    rows = []
    for label, n, k in shapes:
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
        y = torch.nn.functional.linear(x, w)
        reps = 20
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(reps):
                torch.matmul(x, w.t(), out=y)
        ts = []
        for _ in range(10):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(); g.replay(); b.record(); b.synchronize()
            ts.append(a.elapsed_time(b) * 1e3 / reps)
        us = statistics.median(ts)
        rows.append((name, label, n, k, us, n * k * 2 / us / 1e3))
        del w, x, y, g
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="all")
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--decode", type=int, default=32)
    ap.add_argument("--mode", default="all")
    ap.add_argument("--bandwidth", type=float, default=4000.0)
    ap.add_argument("--matvec", action="store_true")
    a = ap.parse_args()
    models = ["1b", "8b"] if a.model == "all" else [a.model]
    modes = ["eager", "graph"] if a.mode == "all" else [a.mode]
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print("| model | mode | prefill tok/s | decode tok/s | GB/token (bf16) | floor tok/s | % of floor |")
    print("|---|---|---:|---:|---:|---:|---:|")
    mv = []
    for name in models:
        model, cfg = build(name)
        gb = bytes_per_token(model, cfg, a.prompt + a.decode // 2) / 1e9
        for mode in modes:
            try:
                tp, td = (run_eager if mode == "eager" else run_graph)(model, cfg, a.prompt, a.decode)
            except Exception as e:   # report and go on: one mode failing should not hide the others
                print(f"| {name} | {mode} | failed: {type(e).__name__}: {str(e)[:120]} | | | | |")
                continue
            floor = a.bandwidth / gb
            print(f"| {name} | {mode} | {a.prompt / tp:.1f} | {1 / td:.1f} | {gb:.3f} | {floor:.1f} | {100 / td / floor:.0f}% |")
            print(f"RESULT torch {name} {mode} decode_tok_s {1 / td:.3f} prefill_tok_s {a.prompt / tp:.3f} gb_per_token {gb:.4f}",
                  flush=True)
        if a.matvec:
            mv += matvec_rows(name, cfg)
        del model
        torch.cuda.empty_cache()
    if mv:
        print("\n| model | shape | N x K | bf16 linear us | GB/s |\n|---|---|---|---:|---:|")
        for name, label, n, k, us, gbs in mv:
            print(f"| {name} | {label} | {n} x {k} | {us:.2f} | {gbs:.0f} |")


if __name__ == "__main__":
    main()
