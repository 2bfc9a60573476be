#!/usr/bin/python3
"""encoder_cpu.py — a Hugging Face BERT folder on this CPU: rlx's encoder
(build/encoder_dump --bench) against the same model in Debian's PyTorch, with
the same thread counts, in one run. No transformers needed: the folder
(config.json, model.safetensors with random weights, seed 0) is written here,
and the PyTorch side is BertModel's arithmetic written with torch ops
(embeddings + LayerNorm, post-LN layers, erf GELU, no mask: every row full).
Debian's PyTorch calls whatever libblas.so.3 the alternatives system points
at: install libopenblas0-openmp first (the reference BLAS is ~30x slower, and
the OpenMP build follows torch.set_num_threads); the table says which it got.

    /usr/bin/python3 bench/encoder_cpu.py [--dump build/encoder_dump]
        [--threads 1,2] [--batches 1,8] [--seq 128] [--runs 10] [--layers 12]

It first checks that both compute the same last_hidden_state (max abs
error), then prints one table: rlx ms, PyTorch ms and PyTorch / rlx (> 1: rlx
faster), medians of --runs after warm-up, the two alternating per shape.
"""
import argparse, json, os, statistics, struct, subprocess, sys, tempfile, time
import numpy as np


def write_folder(d, layers, vocab=30522, H=768, heads=12, ff=3072, maxpos=512):
    cfg = {"architectures": ["BertModel"], "model_type": "bert", "vocab_size": vocab, "hidden_size": H,
           "num_hidden_layers": layers, "num_attention_heads": heads, "intermediate_size": ff,
           "hidden_act": "gelu", "max_position_embeddings": maxpos, "type_vocab_size": 2,
           "layer_norm_eps": 1e-12}
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    rnd = np.random.default_rng(0)
    t = {}
    w = lambda *s: (rnd.standard_normal(s) * 0.02).astype(np.float32)
    ln = lambda: (1 + 0.1 * rnd.standard_normal(H)).astype(np.float32)
    t["embeddings.word_embeddings.weight"] = w(vocab, H)
    t["embeddings.position_embeddings.weight"] = w(maxpos, H)
    t["embeddings.token_type_embeddings.weight"] = w(2, H)
    t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"] = ln(), w(H)
    for i in range(layers):
        p = "encoder.layer.%d." % i
        for n in ("query", "key", "value"):
            t[p + "attention.self.%s.weight" % n], t[p + "attention.self.%s.bias" % n] = w(H, H), w(H)
        t[p + "attention.output.dense.weight"], t[p + "attention.output.dense.bias"] = w(H, H), w(H)
        t[p + "attention.output.LayerNorm.weight"], t[p + "attention.output.LayerNorm.bias"] = ln(), w(H)
        t[p + "intermediate.dense.weight"], t[p + "intermediate.dense.bias"] = w(ff, H), w(ff)
        t[p + "output.dense.weight"], t[p + "output.dense.bias"] = w(H, ff), w(H)
        t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"] = ln(), w(H)
    header, off, blobs = {}, 0, []
    for k, a in t.items():
        b = a.tobytes()
        header[k] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    hj = json.dumps(header).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj)
        for b in blobs:
            f.write(b)
    return cfg, t


def torch_bert(cfg, t):
    import torch
    import torch.nn.functional as F
    T = {k: torch.from_numpy(v) for k, v in t.items()}
    H, nh, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]

    def forward(ids):
        B, S = ids.shape
        x = T["embeddings.word_embeddings.weight"][ids] + T["embeddings.position_embeddings.weight"][:S] + \
            T["embeddings.token_type_embeddings.weight"][0]
        x = F.layer_norm(x, (H,), T["embeddings.LayerNorm.weight"], T["embeddings.LayerNorm.bias"], eps)
        for i in range(cfg["num_hidden_layers"]):
            p = "encoder.layer.%d." % i
            lin = lambda v, n: F.linear(v, T[p + n + ".weight"], T[p + n + ".bias"])
            heads = lambda v: v.view(B, S, nh, H // nh).transpose(1, 2)
            q, k, v = (heads(lin(x, "attention.self." + n)) for n in ("query", "key", "value"))
            a = torch.softmax(q @ k.transpose(-1, -2) / (H // nh) ** 0.5, -1) @ v
            a = lin(a.transpose(1, 2).reshape(B, S, H), "attention.output.dense")
            x = F.layer_norm(x + a, (H,), T[p + "attention.output.LayerNorm.weight"],
                             T[p + "attention.output.LayerNorm.bias"], eps)
            f = lin(F.gelu(lin(x, "intermediate.dense")), "output.dense")
            x = F.layer_norm(x + f, (H,), T[p + "output.LayerNorm.weight"], T[p + "output.LayerNorm.bias"], eps)
        return x
    return forward


def rlx_ms(dump, d, B, S, threads, runs):
    r = subprocess.run([dump, d, "--bench", "%d,%d" % (B, S), "--runs", str(runs), "--device", "cpu",
                        "--threads", str(threads)], capture_output=True, text=True)
    if "median_ms" not in r.stdout:
        sys.exit("encoder_dump --bench failed: " + r.stderr.strip())
    return float(r.stdout.split("median_ms")[1].split()[0])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dump", default="build/encoder_dump")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--batches", default="1,8")
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--layers", type=int, default=12)
    a = p.parse_args()
    import torch
    d = tempfile.mkdtemp(prefix="enc_cpu_")
    cfg, t = write_folder(d, a.layers)
    fwd = torch_bert(cfg, t)

    # agreement first: one row of ids through both
    ids = np.random.default_rng(1).integers(5, cfg["vocab_size"], (1, 32)).astype(np.int32)
    open(os.path.join(d, "in.txt"), "w").write("ids: " + " ".join(map(str, ids[0])) + "\n")
    r = subprocess.run([a.dump, d, os.path.join(d, "in.txt"), os.path.join(d, "out.bin"), "--device", "cpu"],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit("encoder_dump failed: " + r.stderr.strip())
    raw = open(os.path.join(d, "out.bin"), "rb").read()
    Hd = struct.unpack_from("<i", raw, 0)[0]
    n = struct.unpack_from("<i", raw, 12)[0]
    mine = np.frombuffer(raw, np.float32, n * Hd, 16 + 4 * n).reshape(n, Hd)
    with torch.no_grad():
        ref = fwd(torch.from_numpy(ids.astype(np.int64)))[0].numpy()
    err = float(np.abs(mine - ref).max())
    print("agreement: max abs error %.2e over [%d, %d]" % (err, n, Hd))

    rows = []
    for th in map(int, a.threads.split(",")):
        torch.set_num_threads(th)
        for B in map(int, a.batches.split(",")):
            x = torch.randint(5, cfg["vocab_size"], (B, a.seq))
            ours, theirs = [], []
            for _ in range(2):   # alternate: rlx, PyTorch, rlx, PyTorch
                ours.append(rlx_ms(a.dump, d, B, a.seq, th, a.runs))
                with torch.no_grad():
                    for _ in range(2):
                        fwd(x)
                    ts = []
                    for _ in range(a.runs):
                        t0 = time.perf_counter(); fwd(x); ts.append((time.perf_counter() - t0) * 1e3)
                theirs.append(statistics.median(ts))
            rows.append((th, B, statistics.median(ours), statistics.median(theirs)))
    blas = sorted({l.split()[-1] for l in open("/proc/self/maps") if "blas" in l.lower() and ".so" in l})
    print("PyTorch %s, BLAS: %s" % (torch.__version__, ", ".join(os.path.basename(b) for b in blas) or "?"))
    print("\n| threads | batch x seq | rlx ms | PyTorch ms | PyTorch / rlx |")
    print("|---:|---|---:|---:|---:|")
    for th, B, m, tt in rows:
        print("| %d | %d x %d | %.1f | %.1f | %.2f |" % (th, B, a.seq, m, tt, tt / m))
    return 0


if __name__ == "__main__":
    sys.exit(main())
