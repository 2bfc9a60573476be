#!/usr/bin/env python3
"""encoder_ref.py — float64 reference of a BERT-family encoder forward pass
(BERT, RoBERTa / XLM-R, DistilBERT) for tests/test_encoder.c, independent of
rlx: it reads config.json and model.safetensors with its own parser and runs
the transformers modeling code's arithmetic in numpy float64.

    encoder_ref.py DIR IDS.bin OUT.bin B S

IDS.bin: int32 ids [B, S], then type ids [B, S], then the attention mask
[B, S]. OUT.bin: float64 last_hidden_state [B, S, H], the mean-pooled
embedding [B, H], the CLS embedding [B, H], the max-pooled embedding [B, H],
then (when present) pooler_output [B, H] and logits [B, L].
"""
import json, struct, sys
import numpy as np


def load_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    kinds = {"F32": np.float32, "F16": np.float16, "F64": np.float64}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        if t["dtype"] == "BF16":
            u = np.frombuffer(data[b:e], dtype=np.uint16).astype(np.uint32) << 16
            a = u.view(np.float32)
        else:
            a = np.frombuffer(data[b:e], dtype=kinds[t["dtype"]])
        out[name] = a.astype(np.float64).reshape(t["shape"])
    return out


def layer_norm(x, w, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


def erf(x):
    from math import erf as e
    return np.vectorize(e)(x)


ACTS = {
    "gelu": lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2))),
    "gelu_new": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "relu": lambda x: np.maximum(x, 0),
}


def main():
    d, ids_path, out_path, B, S = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    cfg = json.load(open(d + "/config.json"))
    W = load_safetensors(d + "/model.safetensors")
    arr = np.fromfile(ids_path, dtype=np.int32).reshape(3, B, S)
    ids, types, mask = arr[0], arr[1], arr[2].astype(np.float64)
    mt = cfg["model_type"]
    db = mt == "distilbert"
    pre = ""
    if "embeddings.word_embeddings.weight" not in W:
        pre = {"bert": "bert.", "roberta": "roberta.", "xlm-roberta": "roberta.", "distilbert": "distilbert."}[mt]
    g = lambda n: W[pre + n]
    H = cfg["dim"] if db else cfg["hidden_size"]
    nh = cfg["n_heads"] if db else cfg["num_attention_heads"]
    L = cfg["n_layers"] if db else cfg["num_hidden_layers"]
    eps = 1e-12 if db else cfg.get("layer_norm_eps", 1e-12)
    act = ACTS[cfg.get("activation" if db else "hidden_act", "gelu")]
    if mt in ("roberta", "xlm-roberta"):
        pad = cfg.get("pad_token_id", 1)
        keep = (ids != pad).astype(np.int64)
        pos = np.cumsum(keep, axis=1) * keep + pad
    else:
        pos = np.broadcast_to(np.arange(S), (B, S))
    x = g("embeddings.word_embeddings.weight")[ids] + g("embeddings.position_embeddings.weight")[pos]
    if not db:
        x = x + g("embeddings.token_type_embeddings.weight")[types]
    x = layer_norm(x, g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"), eps)
    lin = lambda h, n: h @ W[n + ".weight"].T + W[n + ".bias"]
    addmask = (1.0 - mask)[:, None, None, :] * -1e30
    hd = H // nh
    for l in range(L):
        if db:
            p = pre + "transformer.layer.%d." % l
            names = (p + "attention.q_lin", p + "attention.k_lin", p + "attention.v_lin", p + "attention.out_lin",
                     p + "sa_layer_norm", p + "ffn.lin1", p + "ffn.lin2", p + "output_layer_norm")
        else:
            p = pre + "encoder.layer.%d." % l
            names = (p + "attention.self.query", p + "attention.self.key", p + "attention.self.value",
                     p + "attention.output.dense", p + "attention.output.LayerNorm", p + "intermediate.dense",
                     p + "output.dense", p + "output.LayerNorm")
        split = lambda t: t.reshape(B, S, nh, hd).transpose(0, 2, 1, 3)
        q, k, v = split(lin(x, names[0])), split(lin(x, names[1])), split(lin(x, names[2]))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd) + addmask
        s = np.exp(s - s.max(-1, keepdims=True))
        a = (s / s.sum(-1, keepdims=True)) @ v
        a = a.transpose(0, 2, 1, 3).reshape(B, S, H)
        x = layer_norm(x + lin(a, names[3]), W[names[4] + ".weight"], W[names[4] + ".bias"], eps)
        f = lin(act(lin(x, names[5])), names[6])
        x = layer_norm(x + f, W[names[7] + ".weight"], W[names[7] + ".bias"], eps)
    m3 = mask[:, :, None]
    mean = (x * m3).sum(1) / np.maximum(m3.sum(1), 1e-9)
    cls = x[:, 0]
    mx = (x + (m3 - 1) * 1e30).max(1)
    outs = [x, mean, cls, mx]
    pooled = None
    if pre + "pooler.dense.weight" in W:
        pooled = np.tanh(lin(cls, pre + "pooler.dense"))
        outs.append(pooled)
    if mt == "bert" and "classifier.weight" in W:
        outs.append(lin(pooled, "classifier"))
    elif mt in ("roberta", "xlm-roberta") and "classifier.out_proj.weight" in W:
        outs.append(lin(np.tanh(lin(cls, "classifier.dense")), "classifier.out_proj"))
    elif db and "classifier.weight" in W:
        outs.append(lin(np.maximum(lin(cls, "pre_classifier"), 0), "classifier"))
    np.concatenate([o.reshape(-1) for o in outs]).astype(np.float64).tofile(out_path)


if __name__ == "__main__":
    main()
