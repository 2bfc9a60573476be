#!/usr/bin/env python3
"""gpu_compare.py — runs build/vk_bench (rlx on Vulkan) and the same work in
PyTorch on the same GPU in the same run, and prints one table with ratios.

    python3 bench/gpu_compare.py [--quick]

PyTorch timing: CUDA events, warm-up, median of many runs; TF32 off for the
fp32 matmul. The copy row is the memory roofline both sides are compared to.
"""
import subprocess, sys, statistics

quick = "--quick" in sys.argv
out = subprocess.run(["build/vk_bench"] + (["--quick"] if quick else []), capture_output=True, text=True)
print(out.stdout, end="")
if out.returncode != 0:
    print(out.stderr)
    sys.exit(1)
rlx = {}
for line in out.stdout.splitlines():
    if line.startswith("RESULT "):
        _, name, sec, _, amount, unit = line.split()
        rlx[name] = (float(sec), float(amount), unit)

import torch
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = "cuda"

def bench(fn, runs=30, warm=5):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b) / 1e3)
    return statistics.median(ts)

big = (1 << 20) if quick else (64 << 20)
x = torch.randn(big // 1024, 1024, device=dev); y = torch.randn_like(x)
out_buf = torch.empty_like(x)
g = torch.randn(1024, device=dev); bb = torch.randn(1024, device=dev)
m = 512 if quick else 4096
A = torch.randn(m, m, device=dev); B = torch.randn(m, m, device=dev)
Ah, Bh = A.half(), B.half()
q = torch.randn(1, 12, 512, 64, device=dev); k = torch.randn_like(q); v = torch.randn_like(q)
qh, kh, vh = q.half(), k.half(), v.half()
torch_t = {
    "copy_256MiB": bench(lambda: out_buf.copy_(x)),
    "add_256MiB": bench(lambda: torch.add(x, y, out=out_buf)),
    "layer_norm_256MiB": bench(lambda: torch.nn.functional.layer_norm(x, (1024,), g, bb)),
    "matmul_4096_f32": bench(lambda: torch.mm(A, B), runs=10),
    "matmul_4096_f32_fast": bench(lambda: torch.mm(Ah, Bh), runs=10),
    "matmul_4096_f16": bench(lambda: torch.mm(Ah, Bh), runs=10),
    "rms_norm_256MiB": bench(lambda: torch.nn.functional.rms_norm(x, (1024,), g)),
    "attention_1x12x512x64": bench(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v)),
    "attention_1x12x512x64_f16": bench(lambda: torch.nn.functional.scaled_dot_product_attention(qh, kh, vh)),
    "attention_1x12x512x64_fast": bench(lambda: torch.nn.functional.scaled_dot_product_attention(qh, kh, vh)),
}
# PyTorch eager: 100 dependent ops on a 4-element tensor, wall time per iteration
import time
tiny = torch.ones(4, device=dev); one_t = torch.ones(4, device=dev)
def tiny_chain():
    y = tiny
    for i in range(100):
        y = y + one_t if i % 2 else y * one_t
    return y
for _ in range(20): tiny_chain()
torch.cuda.synchronize()
walls = []
for _ in range(200):
    t0 = time.perf_counter(); tiny_chain(); torch.cuda.synchronize(); walls.append(time.perf_counter() - t0)
torch_tiny_wall = statistics.median(walls)
copy_rlx = rlx.get("copy_256MiB", (None,))[0]
copy_torch = torch_t["copy_256MiB"]
print()
print(f"| {'benchmark':28} | {'rlx ms':>9} | {'torch ms':>9} | {'rlx/torch speed':>15} | {'rlx rate':>14} | {'% of copy bw':>12} |")
print(f"|{'-'*30}|{'-'*11}|{'-'*11}|{'-'*17}|{'-'*16}|{'-'*14}|")
for name, (sec, amount, unit) in rlx.items():
    if name not in torch_t:
        continue
    tt = torch_t[name]
    rate = amount / sec / (1e9 if unit == "GB/s" else 1e12)
    pct = ""
    if unit == "GB/s" and copy_torch:
        # bandwidth relative to the copy roofline measured by torch in this run
        copy_bw = 2.0 * big * 4 / copy_torch
        pct = f"{100 * (amount / sec) / copy_bw:.0f}%"
    print(f"| {name:28} | {sec*1e3:9.3f} | {tt*1e3:9.3f} | {tt/sec:15.2f} | {rate:8.1f} {unit:5} | {pct:>12} |")
for name in ("run_100_tiny_steps_device", "run_100_tiny_steps_wall", "run_100_tiny_steps_host",
             "run_1_tiny_step_device", "run_1_tiny_step_wall", "run_1_tiny_step_host"):
    if name in rlx:
        print(f"| {name:28} | {rlx[name][0]*1e3:9.4f} | {'':9} | {'':15} | {rlx[name][0]*1e6:8.1f} us    | {'':12} |")
print(f"| {'torch eager 100 tiny ops wall':28} | {torch_tiny_wall*1e3:9.4f} | {'':9} | {'':15} | {torch_tiny_wall*1e6:8.1f} us    | {'':12} |")
print(f"\ntorch {torch.__version__}, device {torch.cuda.get_device_name()}")
