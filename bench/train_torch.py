#!/usr/bin/env python3
"""train_torch.py — one GPT train step (forward, backward, AdamW) in PyTorch
eager against rlx's (build/train_bench) in the same run: the model of
src/models/gpt.h (pre-LN, learned positions, tied head, GELU tanh, byte
vocabulary), random tokens, median step time after warm-up.

    python3 bench/train_torch.py [--bench build/train_bench] [--device cuda|cpu]
        [--layers 12 --d-model 768 --heads 12 --seq 1024 --batch 8] [--steps 10]
        [--threads 1,2] [--rlx-device H200] [--modes f32,bf16]

cuda: PyTorch f32 with TF32 off, and AMP bf16 (torch.autocast) against rlx
on Vulkan in f32 and in its fast precision; attention through
F.scaled_dot_product_attention (is_causal), as PyTorch models use it
(written out on a PyTorch without it, Debian's 1.13); peak
memory from torch.cuda.max_memory_allocated, rlx's from its arena + params.
cpu: float32 at each --threads count (torch.set_num_threads; rlx --threads).
One table: rlx ms, PyTorch ms, rlx tokens/s over PyTorch's (> 1: rlx faster).
"""
import argparse, math, statistics, subprocess, sys, time


def make_params(cfg, device, torch):
    D, F, V, L, S = cfg["d_model"], 4 * cfg["d_model"], 256, cfg["layers"], cfg["seq"]
    g = torch.Generator(device="cpu").manual_seed(0)
    n = lambda *s, sd=0.02: (torch.randn(*s, generator=g) * sd).to(device).requires_grad_()
    z = lambda *s: torch.zeros(*s, device=device, requires_grad=True)
    o = lambda *s: torch.ones(*s, device=device, requires_grad=True)
    P = {"wte": n(V, D), "wpe": n(S, D), "ln_f.weight": o(D), "ln_f.bias": z(D)}
    for l in range(L):
        p = "h.%d." % l
        P.update({p + "ln1.weight": o(D), p + "ln1.bias": z(D), p + "attn.qkv.weight": n(3 * D, D), p + "attn.qkv.bias": z(3 * D),
                  p + "attn.proj.weight": n(D, D, sd=0.02 / math.sqrt(2 * L)), p + "attn.proj.bias": z(D),
                  p + "ln2.weight": o(D), p + "ln2.bias": z(D), p + "mlp.fc.weight": n(F, D), p + "mlp.fc.bias": z(F),
                  p + "mlp.proj.weight": n(D, F, sd=0.02 / math.sqrt(2 * L)), p + "mlp.proj.bias": z(D)})
    return P


def loss_fn(cfg, P, tokens, targets, torch):
    import torch.nn.functional as F
    D, H = cfg["d_model"], cfg["heads"]
    B, S = tokens.shape
    x = P["wte"][tokens] + P["wpe"][:S]
    for l in range(cfg["layers"]):
        p = lambda n: P["h.%d.%s" % (l, n)]
        h = F.layer_norm(x, (D,), p("ln1.weight"), p("ln1.bias"), 1e-5)
        q, k, v = (t.reshape(B, S, H, D // H).transpose(1, 2)
                   for t in F.linear(h, p("attn.qkv.weight"), p("attn.qkv.bias")).split(D, dim=-1))
        if hasattr(F, "scaled_dot_product_attention"):
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:   # torch < 2.0 (Debian's 1.13): the same arithmetic written out
            att = (q @ k.transpose(-1, -2)) / math.sqrt(D // H)
            att = att.masked_fill(torch.triu(torch.ones(S, S, dtype=torch.bool, device=x.device), 1), float("-inf"))
            a = att.softmax(-1) @ v
        a = a.transpose(1, 2).reshape(B, S, D)
        x = x + F.linear(a, p("attn.proj.weight"), p("attn.proj.bias"))
        h = F.layer_norm(x, (D,), p("ln2.weight"), p("ln2.bias"), 1e-5)
        h = F.gelu(F.linear(h, p("mlp.fc.weight"), p("mlp.fc.bias")), approximate="tanh")
        x = x + F.linear(h, p("mlp.proj.weight"), p("mlp.proj.bias"))
    x = F.layer_norm(x, (D,), P["ln_f.weight"], P["ln_f.bias"], 1e-5)
    return F.cross_entropy((x @ P["wte"].t()).reshape(B * S, -1).float(), targets.reshape(B * S))


def torch_step_ms(cfg, device, mode, steps, torch):
    P = make_params(cfg, device, torch)
    opt = torch.optim.AdamW(list(P.values()), lr=3e-4, weight_decay=0.01)
    B, S = cfg["batch"], cfg["seq"]
    tokens = torch.randint(0, 256, (B, S), device=device)
    targets = torch.randint(0, 256, (B, S), device=device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def step():
        opt.zero_grad(set_to_none=True)
        if mode == "bf16":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = loss_fn(cfg, P, tokens, targets, torch)
        else:
            loss = loss_fn(cfg, P, tokens, targets, torch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(P.values()), 1.0)
        opt.step()
        return loss
    for _ in range(3):
        step()
    sync()
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    ts = []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss = step()
        loss.item()   # rlx reads its loss back each step too
        sync()
        ts.append((time.perf_counter() - t0) * 1e3)
    peak = torch.cuda.max_memory_allocated() / 2 ** 20 if device == "cuda" else float("nan")
    return statistics.median(ts), peak


def rlx_step(a, cfg, prec, device, threads):
    cmd = [a.bench, "--layers", str(cfg["layers"]), "--d-model", str(cfg["d_model"]), "--heads", str(cfg["heads"]),
           "--seq", str(cfg["seq"]), "--batch", str(cfg["batch"]), "--steps", str(a.steps), "--precision", prec,
           "--device", device, "--threads", str(threads)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    line = [l for l in r.stdout.splitlines() if l.startswith("RESULT")]
    if not line:
        print("train_bench failed: %s" % r.stderr.strip()[-800:])
        return float("nan"), float("nan")
    f = line[0].split()
    val = lambda k: float(f[f.index(k) + 1])
    return val("step_ms"), val("arena_mb") + val("param_mb")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bench", default="build/train_bench")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--rlx-device", default="vulkan")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--d-model", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--modes", default="f32,bf16")
    a = p.parse_args()
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    cfg = {"layers": a.layers, "d_model": a.d_model, "heads": a.heads, "seq": a.seq, "batch": a.batch}
    tokens = a.batch * a.seq
    rows = []
    if a.device == "cuda":
        for mode in a.modes.split(","):
            prec = "fast" if mode == "bf16" else "f32"
            rms, rmem = rlx_step(a, cfg, prec, a.rlx_device, 0)
            tms, tmem = torch_step_ms(cfg, "cuda", mode, a.steps, torch)
            rows.append(("rlx %s / torch %s" % (prec, mode), rms, tms, rmem, tmem))
    else:
        for th in map(int, a.threads.split(",")):
            torch.set_num_threads(th)
            rms, rmem = rlx_step(a, cfg, "f32", "cpu", th)
            tms, _ = torch_step_ms(cfg, "cpu", "f32", a.steps, torch)
            rows.append(("f32, %d thread%s" % (th, "s" if th > 1 else ""), rms, tms, rmem, float("nan")))
    print("\nGPT %d layers, d_model %d, %d heads, seq %d, batch %d (%d tokens a step); torch %s" %
          (a.layers, a.d_model, a.heads, a.seq, a.batch, tokens, torch.__version__))
    print("| run | rlx ms | PyTorch ms | rlx tok/s | PyTorch tok/s | rlx / PyTorch tok/s | rlx MiB | PyTorch peak MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, rms, tms, rmem, tmem in rows:
        print("| %s | %.1f | %.1f | %.0f | %.0f | %.2f | %.0f | %.0f |" % (name, rms, tms, tokens / rms * 1e3,
                                                                        tokens / tms * 1e3, tms / rms, rmem, tmem))
    return 0


if __name__ == "__main__":
    sys.exit(main())
