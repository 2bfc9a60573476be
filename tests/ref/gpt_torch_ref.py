#!/usr/bin/python3
"""gpt_torch_ref.py — the GPT of src/models/gpt.h in PyTorch (Debian's
python3-torch), for tests/test_gpt_train.c: loss and every parameter's
gradient by autograd, or N steps of torch.optim.AdamW. Written from the
model's description, not from rlx: nn.functional ops in float64.

    gpt_torch_ref.py grads CONFIG.json PARAMS.safetensors BATCH.bin OUT.bin
    gpt_torch_ref.py adamw CONFIG.json PARAMS.safetensors STEPS.bin OUT.bin

CONFIG.json: layers, d_model, heads, d_ff, vocab, max_seq, rope, B, S (and
for adamw: lr list, betas, eps, weight_decay, clip_norm).
BATCH.bin: int32 tokens [B, S] then targets [B, S]; STEPS.bin: that per step.
OUT.bin (float64): grads: the loss, then each param's gradient in the
safetensors file's order of CONFIG["params"]; adamw: the final params in
that order.
"""
import json, math, os, struct, sys
import numpy as np
import torch
import torch.nn.functional as F


def load_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        assert t["dtype"] == "F32", t["dtype"]
        out[name] = np.frombuffer(data[b:e], dtype=np.float32).reshape(t["shape"]).astype(np.float64)
    return out


def rope(x):   # [B, H, S, Dh], NEOX pairs (i, i + Dh/2), theta 10000, positions 0..S-1
    B, H, S, Dh = x.shape
    half = Dh // 2
    inv = 10000.0 ** (-torch.arange(half, dtype=x.dtype) * 2 / Dh)
    ang = torch.arange(S, dtype=x.dtype)[:, None] * inv[None, :]
    c, s = torch.cos(ang), torch.sin(ang)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


def forward(cfg, P, tokens, targets):
    D, H, L = cfg["d_model"], cfg["heads"], cfg["layers"]
    B, S = tokens.shape
    Dh = D // H
    x = P["wte"][tokens]
    if not cfg["rope"]:
        x = x + P["wpe"][torch.arange(S)]
    mask = torch.triu(torch.ones(S, S, dtype=torch.bool), 1)
    for l in range(L):
        p = lambda n: P["h.%d.%s" % (l, n)]
        h = F.layer_norm(x, (D,), p("ln1.weight"), p("ln1.bias"), 1e-5)
        qkv = F.linear(h, p("attn.qkv.weight"), p("attn.qkv.bias"))
        q, k, v = (t.reshape(B, S, H, Dh).transpose(1, 2) for t in qkv.split(D, dim=-1))
        if cfg["rope"]:
            q, k = rope(q), rope(k)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(Dh)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        a = (att @ v).transpose(1, 2).reshape(B, S, D)
        x = x + F.linear(a, p("attn.proj.weight"), p("attn.proj.bias"))
        h = F.layer_norm(x, (D,), p("ln2.weight"), p("ln2.bias"), 1e-5)
        h = F.gelu(F.linear(h, p("mlp.fc.weight"), p("mlp.fc.bias")), approximate="tanh")
        x = x + F.linear(h, p("mlp.proj.weight"), p("mlp.proj.bias"))
    x = F.layer_norm(x, (D,), P["ln_f.weight"], P["ln_f.bias"], 1e-5)
    logits = x @ P["wte"].t()
    return F.cross_entropy(logits.reshape(B * S, -1), targets.reshape(B * S))


def read_batch(raw, off, B, S):
    t = np.frombuffer(raw, dtype=np.int32, count=B * S, offset=off).reshape(B, S)
    y = np.frombuffer(raw, dtype=np.int32, count=B * S, offset=off + 4 * B * S).reshape(B, S)
    return torch.tensor(t, dtype=torch.long), torch.tensor(y, dtype=torch.long)


def main():
    mode, cfg_path, params_path, batch_path, out_path = sys.argv[1:6]
    cfg = json.load(open(cfg_path))
    names = cfg["params"]
    arrays = load_safetensors(params_path)
    dt = torch.float32 if os.environ.get("GPT_REF_F32") else torch.float64   # f32: to measure rounding's share
    P = {n: torch.tensor(arrays[n], dtype=dt, requires_grad=True) for n in names}
    raw = open(batch_path, "rb").read()
    B, S = cfg["B"], cfg["S"]
    out = []
    if mode == "grads":
        tokens, targets = read_batch(raw, 0, B, S)
        loss = forward(cfg, P, tokens, targets)
        loss.backward()
        out.append(np.array([loss.item()]))
        out += [P[n].grad.double().numpy().ravel() for n in names]
    else:
        opt = torch.optim.AdamW([P[n] for n in names], lr=cfg["lr"][0], betas=tuple(cfg["betas"]), eps=cfg["eps"],
                                weight_decay=cfg["weight_decay"])
        for step, lr in enumerate(cfg["lr"]):
            for group in opt.param_groups:
                group["lr"] = lr
            tokens, targets = read_batch(raw, step * 8 * B * S, B, S)
            opt.zero_grad()
            loss = forward(cfg, P, tokens, targets)
            loss.backward()
            if cfg["clip_norm"] > 0:
                torch.nn.utils.clip_grad_norm_([P[n] for n in names], cfg["clip_norm"])
            opt.step()
        out += [P[n].detach().double().numpy().ravel() for n in names]
    np.concatenate(out).astype(np.float64).tofile(out_path)


if __name__ == "__main__":
    main()
