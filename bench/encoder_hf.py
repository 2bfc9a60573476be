#!/usr/bin/env python3
"""encoder_hf.py — on the GPU machine (transformers and PyTorch there, no
network): random-weight Hugging Face encoders saved with their tokenizer
files, run through transformers and through rlx (build/encoder_dump), and
compared: token ids (exact), last_hidden_state and pooler_output (cosine,
max abs error) on the CPU and on Vulkan, then the speed of a BERT-base
layer stack against PyTorch f32 and f16 at seq 128.

    python3 bench/encoder_hf.py [--dump build/encoder_dump] [--devices cpu,H200] [--work /tmp/enc_hf]

Models: BertModel with bert-base's config (seed 0) and a WordPiece vocab.txt
built from the test sentences' words and characters (BertTokenizer, lower
case); XLMRobertaModel with a small config, compared on token ids given as
they are (rlx's tokenizer.json support is separate). One table at the end.
"""
import argparse, os, statistics, struct, subprocess, sys, time

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Café Ångström naïve résumé — accents and dashes!",
    "中文字符和日本語のテキスト mixed with English.",
    "Emoji 😀🎉 and symbols ©®™ in a sentence.",
    "Punctuation runs?!?... and (nested [brackets] {here}).",
    "Averyveryverylongwordthatkeepsgoingwithoutanyspacesatall" * 2,
    "  leading and trailing spaces  ",
    "UPPER lower MiXeD case",
    "numbers 12345 and 3.14159 and 1,000,000",
    "a",
]


def build_vocab(texts):
    """A WordPiece vocabulary that covers the sentences: specials, lower-cased
    words, every character alone and as a ## continuation."""
    from transformers.models.bert.tokenization_bert import BasicTokenizer
    basic = BasicTokenizer(do_lower_case=True)
    words, chars = [], []
    for t in texts:
        for w in basic.tokenize(t):
            if len(w) <= 12 and w not in words:
                words.append(w)
            for c in w:
                if c not in chars:
                    chars.append(c)
    return ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words + \
        [c for c in chars if c not in words] + ["##" + c for c in chars]


def read_dump(path):
    raw = open(path, "rb").read()
    H, has_pool, count = struct.unpack_from("<3i", raw, 0)
    off, out = 12, []
    import numpy as np
    for _ in range(count):
        (n,) = struct.unpack_from("<i", raw, off); off += 4
        ids = list(struct.unpack_from("<%di" % n, raw, off)); off += 4 * n
        hid = np.frombuffer(raw, dtype=np.float32, count=n * H, offset=off).reshape(n, H); off += 4 * n * H
        pool = np.frombuffer(raw, dtype=np.float32, count=H, offset=off); off += 4 * H
        out.append((ids, hid, pool if has_pool else None))
    return out


def compare(a, b):
    import numpy as np
    a, b = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-300))
    return cos, float(np.abs(a - b).max())


def run_dump(dump, model_dir, inputs, device, work):
    path_in, path_out = os.path.join(work, "in.txt"), os.path.join(work, "out_%s.bin" % device)
    open(path_in, "w").write("\n".join(inputs) + "\n")
    r = subprocess.run([dump, model_dir, path_in, path_out, "--device", device], capture_output=True, text=True)
    if r.returncode != 0:
        print("encoder_dump failed on %s: %s" % (device, r.stderr.strip()))
        return None
    return read_dump(path_out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dump", default="build/encoder_dump")
    p.add_argument("--devices", default="cpu,H200")
    p.add_argument("--work", default="/tmp/enc_hf")
    p.add_argument("--runs", type=int, default=20)
    a = p.parse_args()
    import numpy as np, torch
    from transformers import BertConfig, BertModel, BertTokenizer, XLMRobertaConfig, XLMRobertaModel
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    os.makedirs(a.work, exist_ok=True)
    rows = []

    # --- BERT-base shape, texts through both tokenizers
    bdir = os.path.join(a.work, "bert")
    os.makedirs(bdir, exist_ok=True)
    vocab = build_vocab(SENTENCES)
    open(os.path.join(bdir, "vocab.txt"), "w").write("\n".join(vocab) + "\n")
    tok = BertTokenizer(os.path.join(bdir, "vocab.txt"), do_lower_case=True)
    tok.save_pretrained(bdir)
    torch.manual_seed(0)
    bert = BertModel(BertConfig(vocab_size=len(vocab))).eval()
    bert.save_pretrained(bdir, safe_serialization=True)
    want = []
    with torch.no_grad():
        for s in SENTENCES:
            enc = tok(s, return_tensors="pt")
            o = bert(**enc)
            want.append((enc["input_ids"][0].tolist(), o.last_hidden_state[0].numpy(), o.pooler_output[0].numpy()))
    for dev in a.devices.split(","):
        got = run_dump(a.dump, bdir, SENTENCES, dev, a.work)
        if got is None:
            continue
        same = sum(g[0] == w[0] for g, w in zip(got, want))
        hc = [compare(g[1], w[1]) if g[0] == w[0] else (float("nan"), float("nan")) for g, w in zip(got, want)]
        pc = [compare(g[2], w[2]) for g, w in zip(got, want) if g[2] is not None and g[0] == w[0]]
        rows.append(("bert-base", dev, "%d/%d" % (same, len(SENTENCES)), min(c for c, _ in hc), max(m for _, m in hc),
                     min(c for c, _ in pc) if pc else float("nan"), max(m for _, m in pc) if pc else float("nan")))

    # --- XLM-R, small config, ids as they are
    xdir = os.path.join(a.work, "xlmr")
    torch.manual_seed(1)
    xcfg = XLMRobertaConfig(vocab_size=1000, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                            intermediate_size=1024, max_position_embeddings=130)
    xlmr = XLMRobertaModel(xcfg).eval()
    xlmr.save_pretrained(xdir, safe_serialization=True)
    g = torch.Generator().manual_seed(2)
    id_rows = [[0] + torch.randint(5, 1000, (n,), generator=g).tolist() + [2] for n in (5, 17, 60, 126)]
    xwant = []
    with torch.no_grad():
        for ids in id_rows:
            o = xlmr(input_ids=torch.tensor([ids]))
            xwant.append((ids, o.last_hidden_state[0].numpy(), o.pooler_output[0].numpy()))
    for dev in a.devices.split(","):
        got = run_dump(a.dump, xdir, ["ids: " + " ".join(map(str, r)) for r in id_rows], dev, a.work)
        if got is None:
            continue
        hc = [compare(gg[1], w[1]) for gg, w in zip(got, xwant)]
        pc = [compare(gg[2], w[2]) for gg, w in zip(got, xwant) if gg[2] is not None]
        rows.append(("xlm-roberta small", dev, "ids given", min(c for c, _ in hc), max(m for _, m in hc),
                     min(c for c, _ in pc) if pc else float("nan"), max(m for _, m in pc) if pc else float("nan")))

    # --- speed: BERT-base at seq 128, rlx wall ms (encoder_dump --bench) vs PyTorch eager
    speed = []
    if torch.cuda.is_available():
        model = bert.to("cuda")
        dev = [d for d in a.devices.split(",") if d != "cpu"]
        for B in (1, 8, 32):
            ids = torch.randint(5, len(vocab), (B, 128), device="cuda")
            for prec in ("f32", "fast"):
                model = model.half() if prec == "fast" else model.float()
                with torch.no_grad():
                    for _ in range(5):
                        model(input_ids=ids)
                    torch.cuda.synchronize()
                    ts = []
                    for _ in range(a.runs):
                        t0 = time.perf_counter(); model(input_ids=ids); torch.cuda.synchronize()
                        ts.append((time.perf_counter() - t0) * 1e3)
                r = subprocess.run([a.dump, bdir, "--bench", "%d,128" % B, "--runs", str(a.runs), "--precision", prec] +
                                   (["--device", dev[0]] if dev else []), capture_output=True, text=True)
                ms = float(r.stdout.split("median_ms")[1].split()[0]) if "median_ms" in r.stdout else float("nan")
                speed.append((B, prec, ms, statistics.median(ts)))

    print("\n| model | device | token ids equal | hidden min cosine | hidden max abs err | pooler min cosine | pooler max abs err |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %s | %s | %.7f | %.2e | %.7f | %.2e |" % r)
    if speed:
        print("\n| batch | precision | rlx wall ms | PyTorch ms (f32 / f16) | PyTorch / rlx |")
        print("|---:|---|---:|---:|---:|")
        for B, prec, ms, tt in speed:
            print("| %d | %s | %.3f | %.3f | %.2f |" % (B, prec, ms, tt, tt / ms if ms > 0 else float("nan")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
