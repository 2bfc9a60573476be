"""conftest.py — fixtures of the rlx Python suite: tiny random-weight models
written here with numpy (a Llama GGUF, a BERT folder), the repository root,
the CLI, and which Vulkan device the parity tests may use (lavapipe in CI).
"""
import json
import os
import struct

import numpy as np
import pytest

import rlx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cli_path():
    p = os.path.join(ROOT, os.environ.get("RLX_CLI") or os.path.join("build", "rlx"))   # relative: to the repo
    return p if os.path.exists(p) else None


def vulkan_available():
    return any(d.backend == "vulkan" and d.usable for d in rlx.devices())


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


# ---- GGUF (v3) writer: the format's facts, as the spec gives them
_GGUF_U32, _GGUF_I32, _GGUF_F32, _GGUF_STR, _GGUF_ARR = 4, 5, 6, 8, 9


def _gstr(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _gkv(key, value):
    out = _gstr(key)
    if isinstance(value, str):
        return out + struct.pack("<I", _GGUF_STR) + _gstr(value)
    if isinstance(value, float):
        return out + struct.pack("<If", _GGUF_F32, value)
    if isinstance(value, int):
        return out + struct.pack("<II", _GGUF_U32, value)
    kind, items = value   # ("str" | "f32" | "i32", list)
    if kind == "str":
        return out + struct.pack("<IIQ", _GGUF_ARR, _GGUF_STR, len(items)) + b"".join(_gstr(s) for s in items)
    code, fmt = {"f32": (_GGUF_F32, "f"), "i32": (_GGUF_I32, "i")}[kind]
    return out + struct.pack("<IIQ", _GGUF_ARR, code, len(items)) + struct.pack("<%d%s" % (len(items), fmt), *items)


PIECES = ["\u2581the", "\u2581a", "\u2581in", "\u2581and", "\u2581of", "\u2581God", "\u2581said", "e", "t", "o",
          "\u2581", "h", "s", "n", "i", "r", "d", "l", "th", "he"]


def write_tiny_gguf(path, n_layer=2, n_embd=32, n_head=4, n_head_kv=2, n_ff=64, n_ctx=128, seed=7):
    """A random-weight llama GGUF (f32 weights) with a SentencePiece vocabulary."""
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % i for i in range(256)] + PIECES
    types = [2, 3, 3] + [6] * 256 + [1] * len(PIECES)
    scores = [0.0] * 259 + [-float(i) for i in range(len(PIECES))]
    kvs = [("general.architecture", "llama"), ("general.name", "rlx-py-tiny"),
           ("llama.context_length", n_ctx), ("llama.embedding_length", n_embd), ("llama.block_count", n_layer),
           ("llama.feed_forward_length", n_ff), ("llama.attention.head_count", n_head),
           ("llama.attention.head_count_kv", n_head_kv), ("llama.rope.freq_base", 10000.0),
           ("llama.attention.layer_norm_rms_epsilon", 1e-5), ("tokenizer.ggml.model", "llama"),
           ("tokenizer.ggml.tokens", ("str", tokens)), ("tokenizer.ggml.scores", ("f32", scores)),
           ("tokenizer.ggml.token_type", ("i32", types)), ("tokenizer.ggml.bos_token_id", 1),
           ("tokenizer.ggml.eos_token_id", 2), ("tokenizer.ggml.unknown_token_id", 0)]
    r = np.random.default_rng(seed)
    hd = n_embd // n_head
    V = len(tokens)
    tensors = [("token_embd.weight", r.uniform(-0.5, 0.5, (V, n_embd))),
               ("output_norm.weight", 1 + r.uniform(-0.1, 0.1, (n_embd,))),
               ("output.weight", r.uniform(-0.3, 0.3, (V, n_embd)))]
    for l in range(n_layer):
        p = "blk.%d." % l
        tensors += [(p + "attn_norm.weight", 1 + r.uniform(-0.1, 0.1, (n_embd,))),
                    (p + "attn_q.weight", r.uniform(-0.3, 0.3, (n_head * hd, n_embd))),
                    (p + "attn_k.weight", r.uniform(-0.3, 0.3, (n_head_kv * hd, n_embd))),
                    (p + "attn_v.weight", r.uniform(-0.3, 0.3, (n_head_kv * hd, n_embd))),
                    (p + "attn_output.weight", r.uniform(-0.3, 0.3, (n_embd, n_head * hd))),
                    (p + "ffn_norm.weight", 1 + r.uniform(-0.1, 0.1, (n_embd,))),
                    (p + "ffn_gate.weight", r.uniform(-0.3, 0.3, (n_ff, n_embd))),
                    (p + "ffn_up.weight", r.uniform(-0.3, 0.3, (n_ff, n_embd))),
                    (p + "ffn_down.weight", r.uniform(-0.3, 0.3, (n_embd, n_ff)))]
    align = 32
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(_gkv(k, v) for k, v in kvs)
    infos, blobs, off = b"", [], 0
    for name, a in tensors:
        a = np.ascontiguousarray(a, dtype=np.float32)
        dims = list(reversed(a.shape))   # GGUF lists the contiguous dim first
        infos += _gstr(name) + struct.pack("<I", len(dims)) + struct.pack("<%dQ" % len(dims), *dims)
        infos += struct.pack("<IQ", 0, off)   # type F32, offset in the data section
        blobs.append((off, a.tobytes()))
        off += (a.nbytes + align - 1) // align * align
    meta = head + infos
    meta += b"\0" * ((-len(meta)) % align)
    data = bytearray(off)
    for o, b in blobs:
        data[o:o + len(b)] = b
    with open(path, "wb") as f:
        f.write(meta + bytes(data))
    return path


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory):
    return write_tiny_gguf(str(tmp_path_factory.mktemp("gguf") / "tiny.gguf"))


# ---- a tiny BERT folder: config.json, model.safetensors, vocab.txt
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "cat", "dog", "sat", "on", "mat", "ran",
         "fast", "hello", "world", ",", ".", "!", "##s"]


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a, dtype=np.float32)
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        blobs.append(a.tobytes())
        off += a.nbytes
    h = json.dumps(header).encode()
    h += b" " * ((-len(h)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def write_tiny_bert(d, hidden=32, layers=2, heads=4, ff=64, max_pos=32, seed=3):
    os.makedirs(d, exist_ok=True)
    V = len(VOCAB) + 12
    cfg = {"model_type": "bert", "vocab_size": V, "hidden_size": hidden, "num_hidden_layers": layers,
           "num_attention_heads": heads, "intermediate_size": ff, "max_position_embeddings": max_pos,
           "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu"}
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    r = np.random.default_rng(seed)
    u = lambda *s: r.uniform(-0.4, 0.4, s)
    t = {"embeddings.word_embeddings.weight": u(V, hidden), "embeddings.position_embeddings.weight": u(max_pos, hidden),
         "embeddings.token_type_embeddings.weight": u(2, hidden),
         "embeddings.LayerNorm.weight": 1 + u(hidden) / 4, "embeddings.LayerNorm.bias": u(hidden) / 4}
    for l in range(layers):
        p = "encoder.layer.%d." % l
        for n, (o, i) in (("attention.self.query", (hidden, hidden)), ("attention.self.key", (hidden, hidden)),
                          ("attention.self.value", (hidden, hidden)), ("attention.output.dense", (hidden, hidden)),
                          ("intermediate.dense", (ff, hidden)), ("output.dense", (hidden, ff))):
            t[p + n + ".weight"] = u(o, i)
            t[p + n + ".bias"] = u(o) / 4
        for n in ("attention.output.LayerNorm", "output.LayerNorm"):
            t[p + n + ".weight"] = 1 + u(hidden) / 4
            t[p + n + ".bias"] = u(hidden) / 4
    t["pooler.dense.weight"] = u(hidden, hidden)
    t["pooler.dense.bias"] = u(hidden) / 4
    write_safetensors(os.path.join(d, "model.safetensors"), t)
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("\n".join(VOCAB + ["[unused%d]" % i for i in range(12)]) + "\n")
    return d


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory):
    return write_tiny_bert(str(tmp_path_factory.mktemp("bert") / "tiny-bert"))
