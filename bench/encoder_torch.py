#!/usr/bin/env python3
"""encoder_torch.py — `rlx demo`'s post-LN transformer encoder (BERT-base shape
by default) against the same encoder in PyTorch, on the same GPU in one run.
Prints one table: rlx ms (device and wall), PyTorch ms, and PyTorch / rlx
(> 1: rlx is faster), for each precision and batch.

    python3 bench/encoder_torch.py [--rlx build/rlx] [--device cuda|cpu]
        [--rlx-device NAME] [--precisions f32,fast] [--batches 1,8,32]
        [--layers 12] [--d-model 768] [--heads 12] [--d-ff 3072] [--seq 128]
        [--runs 20] [--check-batch 1] [--compile] [--tiny]

The encoder, layer by layer, as tools/demo.c builds it: q, k, v = h W + b
(nn.Linear, weights [out, in]); softmax(q k^T / sqrt(d_head)) v over heads,
no mask; h = layer_norm(h + attn W_o + b_o, eps 1e-12); f = gelu_erf(h W_1 +
b_1) W_2 + b_2; h = layer_norm(h + f). Input [batch * seq, d_model].

Precisions. f32: PyTorch with TF32 off (torch.backends.*.allow_tf32 =
False), rlx with `--precision f32`. fast: PyTorch with the model and input
in float16 (products accumulate in f32 inside cuBLAS, but every tensor
between ops is f16), rlx with `--precision fast` (rlx_compile_options
.precision = RLX_PRECISION_FAST: matmuls may use f16 operands with f32
accumulation; everything else stays f32), so "fast" is PyTorch's usual
half-precision inference against rlx's fast mode, not the same arithmetic.

Timing. PyTorch: CUDA events around one forward pass (the input already on
the GPU), warm-up runs first, the median of --runs. rlx: `rlx demo` prints the
median of --runs of rlx_exec_run, wall (with the input's copy to the GPU)
and device (GPU timestamps, rlx_exec_stats.device_seconds); the ratio uses
the device time where there is one. rlx checks itself against an unoptimized
CPU run at the batches in --check-batch (the check costs a one-thread CPU
run of the whole encoder, so it is off for the larger batches).

On the H200 machine the Vulkan loader comes from the carried .gl debs (as
bench/gpu_run.sh installs them); VK_DRIVER_FILES defaults to NVIDIA's ICD
there.

--device cpu (with --tiny for small sizes) is a smoke run of the script on a
machine without a GPU: PyTorch on the CPU (perf_counter timing), rlx on the
CPU. --compile times torch.compile's graph instead of eager mode.
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import time


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rlx", default="build/rlx")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--rlx-device", default=None, help="rlx demo --device (default: vulkan for cuda, cpu for cpu)")
    p.add_argument("--precisions", default="f32,fast")
    p.add_argument("--batches", default="1,8,32")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--d-model", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--d-ff", type=int, default=3072)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--check-batch", default="1", help="batches at which rlx demo checks itself (comma list, or none)")
    p.add_argument("--compile", action="store_true", help="time torch.compile(model) instead of eager")
    p.add_argument("--tiny", action="store_true", help="small sizes for a smoke run: 2 layers, d 64, 4 heads, ff 128, seq 16")
    a = p.parse_args()
    if a.tiny:
        a.layers, a.d_model, a.heads, a.d_ff, a.seq = 2, 64, 4, 128, 16
        if a.batches == "1,8,32":
            a.batches = "1,2"
        a.runs = min(a.runs, 5)
    if a.rlx_device is None:
        a.rlx_device = "vulkan" if a.device == "cuda" else "cpu"
    return a


def progress(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run_rlx(a, batch, precision):
    cmd = [a.rlx, "demo", "--layers", str(a.layers), "--d-model", str(a.d_model), "--heads", str(a.heads),
           "--d-ff", str(a.d_ff), "--seq", str(a.seq), "--batch", str(batch), "--runs", str(a.runs),
           "--device", a.rlx_device, "--precision", precision]
    checks = [] if a.check_batch == "none" else [int(b) for b in a.check_batch.split(",") if b]
    if batch not in checks:
        cmd.append("--no-check")
    progress("rlx: " + " ".join(cmd))
    env = dict(os.environ)
    icd = "/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json"   # the H200 machine's (docs/gpu.md)
    if "VK_DRIVER_FILES" not in env and os.path.exists(icd):
        env["VK_DRIVER_FILES"] = icd
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:   # a failed check still times: its RESULT line is kept, marked
        sys.stderr.write(out.stdout + out.stderr)
    res = {"exit": out.returncode}
    for line in out.stdout.splitlines():
        if line.startswith("  backend") or line.startswith("  check"):
            res.setdefault("lines", []).append(line.strip())
        if line.startswith("RESULT demo "):
            f = line.split()[2:]
            kv = dict(zip(f[0::2], f[1::2]))
            res["wall_ms"] = float(kv["wall_ms"])
            res["device_ms"] = float(kv["device_ms"])
            res["rel_err"] = float(kv["rel_err"])
    return res if "wall_ms" in res else None


def build_torch(a, torch):
    nn, F = torch.nn, torch.nn.functional
    dh = a.d_model // a.heads

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v, self.o = (nn.Linear(a.d_model, a.d_model) for _ in range(4))
            self.ln1 = nn.LayerNorm(a.d_model, eps=1e-12)
            self.w1 = nn.Linear(a.d_model, a.d_ff)
            self.w2 = nn.Linear(a.d_ff, a.d_model)
            self.ln2 = nn.LayerNorm(a.d_model, eps=1e-12)

        def heads(self, x, b):   # [B*S, D] -> [B, H, S, D/H]
            return x.view(b, a.seq, a.heads, dh).transpose(1, 2)

        def forward(self, h, b):
            q, k, v = self.heads(self.q(h), b), self.heads(self.k(h), b), self.heads(self.v(h), b)
            if hasattr(F, "scaled_dot_product_attention"):
                att = F.scaled_dot_product_attention(q, k, v)
            else:   # torch < 2.0
                att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dh), dim=-1) @ v
            att = att.transpose(1, 2).reshape(b * a.seq, a.d_model)
            h = self.ln1(h + self.o(att))
            return self.ln2(h + self.w2(F.gelu(self.w1(h))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(Layer() for _ in range(a.layers))

        def forward(self, h, b: int):
            for layer in self.layers:
                h = layer(h, b)
            return h

    return Encoder()


def time_torch(a, torch, model, x, batch):
    fn = (lambda: model(x, batch))
    with torch.no_grad():
        for _ in range(5):
            fn()
        ts = []
        if a.device == "cuda":
            torch.cuda.synchronize()
            for _ in range(a.runs):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                e.synchronize()
                ts.append(s.elapsed_time(e))
        else:
            for _ in range(a.runs):
                t = time.perf_counter()
                fn()
                ts.append(1e3 * (time.perf_counter() - t))
    return statistics.median(ts)


def main():
    a = parse()
    if a.d_model % a.heads:
        sys.exit("encoder_torch: --d-model must be a multiple of --heads")
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("encoder_torch: no CUDA device (use --device cpu for a smoke run)")
    progress(f"torch {torch.__version__} on {torch.cuda.get_device_name() if a.device == 'cuda' else 'cpu'}")
    if a.compile and not hasattr(torch, "compile"):
        sys.exit(f"encoder_torch: torch {torch.__version__} has no torch.compile")
    torch.manual_seed(0)
    base = build_torch(a, torch).to(a.device).eval()
    rows = []
    for precision in a.precisions.split(","):
        if precision not in ("f32", "fast"):
            sys.exit(f"encoder_torch: unknown precision {precision} (f32, fast)")
        dtype = torch.float16 if precision == "fast" and a.device == "cuda" else torch.float32
        model = base.to(dtype)
        if a.compile:
            model = torch.compile(model)
        for batch in [int(b) for b in a.batches.split(",")]:
            x = torch.randn(batch * a.seq, a.d_model, device=a.device, dtype=dtype)
            progress(f"torch {precision} ({str(dtype).split('.')[-1]}) batch {batch}")
            t_ms = time_torch(a, torch, model, x, batch)
            r = run_rlx(a, batch, precision)
            rows.append((precision, batch, r, t_ms, str(dtype).split(".")[-1]))
            del x
            if a.device == "cuda":
                torch.cuda.empty_cache()
    shape = f"{a.layers} layers, d_model {a.d_model}, {a.heads} heads, d_ff {a.d_ff}, seq {a.seq}"
    print(f"\nencoder ({shape}); rlx demo --device {a.rlx_device}; PyTorch {torch.__version__} "
          f"{'torch.compile' if a.compile else 'eager'} on {a.device}; medians of {a.runs} runs")
    for p, b, r, _, _ in rows:
        if r:
            for line in r.get("lines", []):
                print(f"  [{p} batch {b}] {line}")
    print("\n| precision | batch | rlx device ms | rlx wall ms | PyTorch ms (dtype) | PyTorch / rlx | rlx check |")
    print("|---|---:|---:|---:|---:|---:|---|")
    failed = False
    for p, b, r, t_ms, dt in rows:
        if not r:
            failed = True
            print(f"| {p} | {b} | failed | failed | {t_ms:.3f} ({dt}) | - | - |")
            continue
        ms = r["device_ms"] if r["device_ms"] > 0 else r["wall_ms"]
        dev = f"{r['device_ms']:.3f}" if r["device_ms"] > 0 else "-"
        chk = f"{r['rel_err']:.1e}" if r["rel_err"] >= 0 else "off"
        if r["exit"] != 0:
            chk += f" (MISMATCH, exit {r['exit']})"
            failed = True
        print(f"| {p} | {b} | {dev} | {r['wall_ms']:.3f} | {t_ms:.3f} ({dt}) | {t_ms / ms:.2f} | {chk} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
