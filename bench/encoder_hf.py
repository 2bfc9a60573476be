#!/usr/bin/env python3
"""encoder_hf.py — on the GPU machine (transformers and PyTorch there, no
network): random-weight Hugging Face encoders saved with their tokenizer
files, run through transformers and through rlx, compared and timed. One
table per section, all in the same call.

    python3 bench/encoder_hf.py [--dump build/encoder_dump] [--rlx build/rlx]
        [--devices cpu,H200] [--sections ids,xlmr,speed,cpu,embed] [--threads N]
        [--xlmr-tokenizer DIR] [--work /tmp/enc_hf]

Sections:
  ids    BertModel with bert-base's config (seed 0) and a WordPiece vocab.txt
         (BertTokenizer, lower case): token ids on tricky strings (exact), then
         last_hidden_state and pooler_output (cosine, max abs error) per device.
  xlmr   XLMRobertaModel, small config (seed 1). With --xlmr-tokenizer DIR (a
         folder holding tokenizer.json, e.g. made by bench/xlmr_tokenizer.py),
         the same sentences go through Hugging Face tokenizers and rlx; without
         it, token ids are given as they are.
  speed  BERT-base at seq 128, batch 1 / 8 / 32: rlx wall ms (encoder_dump
         --bench) against PyTorch eager f32 (TF32 off) and f16 on the GPU.
  cpu    the same shapes at batch 1 and 8 on the CPU, --threads threads each:
         rlx against onnxruntime's CPU provider (the model exported here) and
         PyTorch.
  embed  `rlx embed` end to end on 10,000 short lines (process wall time,
         model load included, and the throughput rlx reports) against
         sentence-transformers (mean pooling) on the GPU and on the CPU, with
         the embeddings compared.
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


WORDS = ("time year people way day man thing woman life child world school state family student group "
         "country problem hand part place case week company system program question work government number "
         "night point home water room mother area money story fact month lot right study book eye job word "
         "business issue side kind head house service friend father power hour game line end member law car "
         "city community name president team minute idea kid body information back parent face others level "
         "office door health person art war history party result change morning reason research girl guy "
         "moment air teacher force education good new first last long great little own other old right big "
         "high different small large next early young important few public bad same able is was are be have "
         "do say get make go know take see come think look want give use find tell ask seem feel try leave "
         "call the of and to in for on with at by from up about into over after").split()


def basic_words(text):
    """BERT's basic tokenizer, lower-casing: accents stripped, punctuation and
    CJK characters split off (transformers 5 no longer exports its own)."""
    import unicodedata
    text = "".join(c for c in unicodedata.normalize("NFD", text.lower()) if unicodedata.category(c) != "Mn")
    out, cur = [], ""
    for ch in text:
        cp = ord(ch)
        cjk = 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x2FA1F
        punct = (33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126 or
                 unicodedata.category(ch).startswith("P"))
        if ch.isspace() or punct or cjk:
            if cur:
                out.append(cur)
            cur = ""
            if punct or cjk:
                out.append(ch)
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def build_vocab(texts):
    """A WordPiece vocabulary that covers the sentences: specials, lower-cased
    words (the test sentences' and WORDS), every character alone and as a ##
    continuation."""
    words, chars = [], []
    for t in list(texts) + [" ".join(WORDS)]:
        for w in basic_words(t):
            if len(w) <= 12 and w not in words:
                words.append(w)
            for c in w:
                if c not in chars:
                    chars.append(c)
    return ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words + \
        [c for c in chars if c not in words] + ["##" + c for c in chars]


def read_dump(path):
    import numpy as np
    raw = open(path, "rb").read()
    H, has_pool, count = struct.unpack_from("<3i", raw, 0)
    off, out = 12, []
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


def run_dump(a, model_dir, inputs, device):
    path_in, path_out = os.path.join(a.work, "in.txt"), os.path.join(a.work, "out_%s.bin" % device)
    open(path_in, "w").write("\n".join(inputs) + "\n")
    r = subprocess.run([a.dump, model_dir, path_in, path_out, "--device", device, "--threads", str(a.threads)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("encoder_dump failed on %s: %s" % (device, r.stderr.strip()))
        return None
    return read_dump(path_out)


def rlx_bench_ms(a, model_dir, B, S, prec, device, runs):
    r = subprocess.run([a.dump, model_dir, "--bench", "%d,%d" % (B, S), "--runs", str(runs), "--precision", prec,
                        "--device", device, "--threads", str(a.threads)], capture_output=True, text=True)
    if "median_ms" not in r.stdout:
        print("encoder_dump --bench failed: %s" % r.stderr.strip())
        return float("nan")
    return float(r.stdout.split("median_ms")[1].split()[0])


def check_rows(name, dev, got, want, ids_note=None):
    """One table row: ids equal, then hidden / pooler agreement where the ids agree."""
    nan = float("nan")
    same = sum(g[0] == w[0] for g, w in zip(got, want))
    hc = [compare(g[1], w[1]) for g, w in zip(got, want) if g[0] == w[0]]
    pc = [compare(g[2], w[2]) for g, w in zip(got, want) if g[2] is not None and w[2] is not None and g[0] == w[0]]
    for g, w in zip(got, want):
        if g[0] != w[0]:
            print("%s: ids differ on %s\n  rlx  %s\n  want %s" % (name, dev, g[0], w[0]))
    return (name, dev, ids_note or "%d/%d" % (same, len(want)),
            min((c for c, _ in hc), default=nan), max((m for _, m in hc), default=nan),
            min((c for c, _ in pc), default=nan), max((m for _, m in pc), default=nan))


def make_bert(a):
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer
    bdir = os.path.join(a.work, "bert")
    os.makedirs(bdir, exist_ok=True)
    vocab = build_vocab(SENTENCES)
    open(os.path.join(bdir, "vocab.txt"), "w").write("\n".join(vocab) + "\n")
    tok = BertTokenizer(os.path.join(bdir, "vocab.txt"), do_lower_case=True)
    tok.save_pretrained(bdir)
    torch.manual_seed(0)
    bert = BertModel(BertConfig(vocab_size=len(vocab))).eval()
    bert.save_pretrained(bdir, safe_serialization=True)
    return bdir, bert, tok, vocab


def section_ids(a, bert, tok, bdir, rows):
    import torch
    want = []
    with torch.no_grad():
        for s in SENTENCES:
            enc = tok(s, return_tensors="pt")
            o = bert(**enc)
            want.append((enc["input_ids"][0].tolist(), o.last_hidden_state[0].numpy(), o.pooler_output[0].numpy()))
    for dev in a.devices.split(","):
        got = run_dump(a, bdir, SENTENCES, dev)
        if got is not None:
            rows.append(check_rows("bert-base", dev, got, want))


def section_xlmr(a, rows):
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaModel
    xdir = os.path.join(a.work, "xlmr")
    os.makedirs(xdir, exist_ok=True)
    hf_tok = None
    if a.xlmr_tokenizer:
        from tokenizers import Tokenizer
        import shutil
        for f in os.listdir(a.xlmr_tokenizer):
            shutil.copy(os.path.join(a.xlmr_tokenizer, f), xdir)
        hf_tok = Tokenizer.from_file(os.path.join(xdir, "tokenizer.json"))
    vocab = hf_tok.get_vocab_size() if hf_tok else 1000
    torch.manual_seed(1)
    xcfg = XLMRobertaConfig(vocab_size=vocab, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                            intermediate_size=1024, max_position_embeddings=514, pad_token_id=1, bos_token_id=0,
                            eos_token_id=2)
    xlmr = XLMRobertaModel(xcfg).eval()
    xlmr.save_pretrained(xdir, safe_serialization=True)
    if hf_tok:
        inputs = SENTENCES
        id_rows = [hf_tok.encode(s).ids for s in SENTENCES]
    else:
        g = torch.Generator().manual_seed(2)
        id_rows = [[0] + torch.randint(5, 1000, (n,), generator=g).tolist() + [2] for n in (5, 17, 60, 126)]
        inputs = ["ids: " + " ".join(map(str, r)) for r in id_rows]
    want = []
    with torch.no_grad():
        for ids in id_rows:
            o = xlmr(input_ids=torch.tensor([ids]))
            want.append((ids, o.last_hidden_state[0].numpy(), o.pooler_output[0].numpy()))
    for dev in a.devices.split(","):
        got = run_dump(a, xdir, inputs, dev)
        if got is not None:
            rows.append(check_rows("xlm-roberta small", dev, got, want, None if hf_tok else "ids given"))


def torch_ms(fn, runs, sync):
    for _ in range(5):
        fn()
    sync()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter(); fn(); sync()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def section_speed(a, bert, bdir, vocab, speed):
    import torch
    if not torch.cuda.is_available():
        return
    gpu = [d for d in a.devices.split(",") if d != "cpu"]
    model = bert.to("cuda")
    for B in (1, 8, 32):
        ids = torch.randint(5, len(vocab), (B, 128), device="cuda")
        for prec in ("f32", "fast"):
            model = model.half() if prec == "fast" else model.float()
            with torch.no_grad():
                tt = torch_ms(lambda: model(input_ids=ids), a.runs, torch.cuda.synchronize)
            ms = rlx_bench_ms(a, bdir, B, 128, prec, gpu[0] if gpu else "vulkan", a.runs)
            speed.append((B, prec, ms, tt))
    bert.to("cpu").float()


def section_cpu(a, bert, bdir, vocab, cpu_rows):
    import numpy as np, torch
    torch.set_num_threads(a.threads)
    onnx_path = os.path.join(a.work, "bert.onnx")
    ids0 = torch.randint(5, len(vocab), (1, 128))
    model = bert.to("cpu").float().eval()
    sess = None
    try:
        import onnxruntime as ort
        kw = dict(input_names=["input_ids"], output_names=["last_hidden_state"],
                  dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "last_hidden_state": {0: "batch", 1: "seq"}},
                  opset_version=17)

        class Hidden(torch.nn.Module):
            def __init__(self, m):
                super().__init__(); self.m = m

            def forward(self, input_ids):
                return self.m(input_ids=input_ids).last_hidden_state
        try:
            torch.onnx.export(Hidden(model), (ids0,), onnx_path, dynamo=False, **kw)
        except TypeError:
            torch.onnx.export(Hidden(model), (ids0,), onnx_path, **kw)
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = a.threads, 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    except Exception as e:   # the table says what was missing
        print("onnxruntime unavailable or export failed: %s" % e)
    runs = max(5, a.runs // 2)
    for B in (1, 8):
        ids = torch.randint(5, len(vocab), (B, 128))
        ort_ms = float("nan")
        if sess is not None:
            feed = {"input_ids": ids.numpy().astype(np.int64)}
            ort_ms = torch_ms(lambda: sess.run(None, feed), runs, lambda: None)
        with torch.no_grad():
            pt_ms = torch_ms(lambda: model(input_ids=ids), runs, lambda: None)
        ms = rlx_bench_ms(a, bdir, B, 128, "f32", "cpu", runs)
        cpu_rows.append((B, ms, ort_ms, pt_ms))


def section_embed(a, bdir, embed_rows):
    import numpy as np, random, torch
    rnd = random.Random(3)
    lines = [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(6, 20))) for _ in range(10000)]
    path = os.path.join(a.work, "lines.txt")
    open(path, "w").write("\n".join(lines) + "\n")
    st = None
    try:
        from sentence_transformers import SentenceTransformer, models
        name = "sentence-transformers"
    except Exception:
        name = "transformers (sentence-transformers missing)"
    for dev in a.devices.split(","):
        cpu = dev == "cpu"
        npy = os.path.join(a.work, "emb_%s.npy" % dev)
        t0 = time.perf_counter()
        r = subprocess.run([a.rlx, "embed", "-m", bdir, "--device", dev, "--batch", "64", "--threads", str(a.threads),
                            "-i", path, "--npy", npy], capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if r.returncode != 0:
            print("rlx embed failed on %s: %s" % (dev, r.stderr.strip()[-500:]))
            continue
        rep = [l for l in r.stderr.splitlines() if "texts/s" in l and " in " in l]
        rlx_tps = float(rep[-1].split("(")[1].split()[0]) if rep else float("nan")
        mine = np.load(npy)
        tdev = "cpu" if cpu else "cuda"
        if cpu:
            torch.set_num_threads(a.threads)
        t0 = time.perf_counter()
        if name == "sentence-transformers":
            st = SentenceTransformer(modules=[models.Transformer(bdir, max_seq_length=512),
                                              models.Pooling(768, pooling_mode="mean")], device=tdev)
            st.encode(lines[:256], batch_size=64)
            t1 = time.perf_counter()
            ref = st.encode(lines, batch_size=64, convert_to_numpy=True)
        else:
            from transformers import AutoModel, AutoTokenizer
            tk, m = AutoTokenizer.from_pretrained(bdir), AutoModel.from_pretrained(bdir).to(tdev).eval()
            t1 = time.perf_counter()
            out = []
            with torch.no_grad():
                for i in range(0, len(lines), 64):
                    enc = tk(lines[i:i + 64], padding=True, return_tensors="pt").to(tdev)
                    h = m(**enc).last_hidden_state
                    msk = enc["attention_mask"].unsqueeze(-1).to(h.dtype)
                    out.append(((h * msk).sum(1) / msk.sum(1)).cpu().numpy())
            ref = np.concatenate(out)
        t2 = time.perf_counter()
        cos = min(compare(mine[i], ref[i])[0] for i in range(0, len(lines), 97))
        embed_rows.append((dev, len(lines) / wall, rlx_tps, len(lines) / (t2 - t1), len(lines) / (t2 - t0), cos, name))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dump", default="build/encoder_dump")
    p.add_argument("--rlx", default="build/rlx")
    p.add_argument("--devices", default="cpu,H200")
    p.add_argument("--sections", default="ids,xlmr,speed,cpu,embed")
    p.add_argument("--xlmr-tokenizer", default=None)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--work", default="/tmp/enc_hf")
    p.add_argument("--runs", type=int, default=20)
    a = p.parse_args()
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    os.makedirs(a.work, exist_ok=True)
    sections = a.sections.split(",")
    rows, speed, cpu_rows, embed_rows = [], [], [], []
    bdir, bert, tok, vocab = make_bert(a)
    import traceback
    for name, fn in (("ids", lambda: section_ids(a, bert, tok, bdir, rows)), ("xlmr", lambda: section_xlmr(a, rows)),
                     ("speed", lambda: section_speed(a, bert, bdir, vocab, speed)),
                     ("cpu", lambda: section_cpu(a, bert, bdir, vocab, cpu_rows)),
                     ("embed", lambda: section_embed(a, bdir, embed_rows))):
        if name in sections:
            try:   # one failing section still leaves the others' tables
                fn()
            except Exception:
                print("section %s failed:" % name)
                traceback.print_exc()

    if rows:
        print("\n| model | device | token ids equal | hidden min cosine | hidden max abs err | pooler min cosine | pooler max abs err |")
        print("|---|---|---|---:|---:|---:|---:|")
        for r in rows:
            print("| %s | %s | %s | %.7f | %.2e | %.7f | %.2e |" % r)
    if speed:
        print("\n| batch | precision | rlx wall ms | PyTorch ms (f32 / f16) | PyTorch / rlx |")
        print("|---:|---|---:|---:|---:|")
        for B, prec, ms, tt in speed:
            print("| %d | %s | %.3f | %.3f | %.2f |" % (B, prec, ms, tt, tt / ms if ms > 0 else float("nan")))
    if cpu_rows:
        print("\n| CPU, %d threads, seq 128 | rlx ms | onnxruntime ms | PyTorch ms | onnxruntime / rlx | PyTorch / rlx |" % a.threads)
        print("|---:|---:|---:|---:|---:|---:|")
        for B, ms, o, t in cpu_rows:
            print("| batch %d | %.2f | %.2f | %.2f | %.2f | %.2f |" % (B, ms, o, t, o / ms, t / ms))
    if embed_rows:
        print("\n| embed 10,000 lines | rlx texts/s (process, load included) | rlx texts/s (reported) | reference texts/s (encode) | reference texts/s (load included) | min cosine | reference |")
        print("|---|---:|---:|---:|---:|---:|---|")
        for r in embed_rows:
            print("| %s | %.0f | %.0f | %.0f | %.0f | %.7f | %s |" % r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
