#!/usr/bin/python3
"""tokenizer_json_ref.py — an independent reference for tests/test_tokenizer_json.c:
the Hugging Face tokenizer.json pipeline (added tokens, normalizer,
pre-tokenizer, model, post-processor) written from the tokenizers
documentation in plain Python over unicodedata and re, sharing no tables or
code with the C implementation. It covers the components the tests' files
use: BertNormalizer, Lowercase, NFD, NFC, NFKC, NFKD, StripAccents, Strip,
Replace (String, and Regex through Python's re with \s spelled out as
Rust's White_Space), Precompiled (SentencePiece's charsmap: the darts-clone
trie read from its bytes, grapheme clusters from the regex module's \X);
BertPreTokenizer, WhitespaceSplit, Whitespace, ByteLevel (GPT-2 regex),
Metaspace, Sequence; WordPiece, BPE, Unigram; TemplateProcessing,
BertProcessing, RobertaProcessing.

Usage: tokenizer_json_ref.py TOKENIZER_JSON CASES
  CASES: one case per line, "MAX_LENGTH A B": A and B are "x" + the hex of
  the UTF-8 text, B is "-" for a single text, MAX_LENGTH 0 is no limit.
Output: one line per case, "ids=1,2,3 types=0,0,0".
"""
import base64
import json
import re
import struct
import sys
import unicodedata

WHITE_SPACE = [chr(c) for c in list(range(9, 14)) + [32, 0x85, 0xA0, 0x1680] + list(range(0x2000, 0x200B))
               + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000]]


def char_class(pred):
    """A regex class of every code point pred accepts, as ranges."""
    out, start, prev = [], None, None
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        if pred(cp):
            if start is None:
                start = cp
            prev = cp
        elif start is not None:
            out.append((start, prev))
            start = None
    if start is not None:
        out.append((start, prev))
    return "".join(re.escape(chr(a)) if a == b else re.escape(chr(a)) + "-" + re.escape(chr(b)) for a, b in out)


L = char_class(lambda c: unicodedata.category(chr(c)).startswith("L"))
N = char_class(lambda c: unicodedata.category(chr(c)).startswith("N"))
S = "".join(re.escape(c) for c in WHITE_SPACE)
GPT2 = re.compile("'s|'t|'re|'ve|'m|'ll|'d| ?[%s]+| ?[%s]+| ?[^%s%s%s]+|[%s]+(?![^%s])|[%s]+" % (L, N, S, L, N, S, S, S))


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_MAP = bytes_to_unicode()


def is_ws(ch):
    return ch in WHITE_SPACE


def is_punct(ch):
    cp = ord(ch)
    return 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126 or unicodedata.category(ch).startswith("P")


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
            or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


class Charsmap:
    """SentencePiece's precompiled_charsmap as Hugging Face's Precompiled
    normalizer uses it: a grapheme cluster under 6 bytes is replaced whole
    when a key prefixes it, else each code point on its own; a lookup takes
    the shortest key that prefixes the bytes."""

    def __init__(self, b64):
        raw = base64.b64decode(b64, validate=True)
        size = struct.unpack_from("<I", raw)[0]
        self.units = struct.unpack_from("<%dI" % (size // 4), raw, 4)
        self.strings = raw[4 + size:]
        try:
            import regex
        except ImportError as e:
            raise SystemExit("the Precompiled reference needs python3-regex (scripts/setup.sh): %s" % e)
        self.clusters = regex.compile(r"\X")

    def lookup(self, text):
        a = self.units

        def offset(u):
            return (u >> 10) << ((u & (1 << 9)) >> 6)

        pos = offset(a[0])
        for c in text.encode("utf-8"):
            if c == 0:
                return None
            pos ^= c
            u = a[pos]
            if u & 0x800000FF != c:
                return None
            pos ^= offset(u)
            if (u >> 8) & 1:
                v = a[pos] & 0x7FFFFFFF
                return self.strings[v:self.strings.index(b"\0", v)].decode("utf-8")
        return None

    def normalize(self, s):
        out = []
        for g in self.clusters.findall(s):
            t = self.lookup(g) if len(g.encode("utf-8")) < 6 else None
            if t is not None:
                out.append(t)
                continue
            for ch in g:
                t = self.lookup(ch)
                out.append(ch if t is None else t)
        return "".join(out)


CHARSMAPS = {}


def rust_regex(pat):
    """pat with \s and \S spelled as Rust's White_Space (Python's \s also takes
    U+001C..U+001F); the tests' patterns use nothing else that differs."""
    out, i, in_class = [], 0, False
    while i < len(pat):
        c = pat[i]
        if c == "\\" and i + 1 < len(pat):
            e = pat[i + 1]
            if e == "s":
                out.append(S if in_class else "[%s]" % S)
            elif e == "S" and not in_class:
                out.append("[^%s]" % S)
            elif e == "S":
                raise SystemExit("\\S inside a class is not in the reference")
            else:
                out.append(pat[i:i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class and not out[-1].endswith("["):
            in_class = False
        out.append(c)
        i += 1
    return re.compile("".join(out))


def normalize(n, s):
    if n is None:
        return s
    t = n["type"]
    if t == "Sequence":
        for x in n["normalizers"]:
            s = normalize(x, s)
        return s
    if t == "BertNormalizer":
        lower = n.get("lowercase", True)
        strip = n.get("strip_accents")
        strip = lower if strip is None else strip
        out = []
        for ch in s:
            if n.get("clean_text", True):
                if ord(ch) in (0, 0xFFFD) or (ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")):
                    continue
                if ch in "\t\n\r" or is_ws(ch):
                    ch = " "
            if n.get("handle_chinese_chars", True) and is_cjk(ord(ch)):
                ch = " " + ch + " "
            out.append(ch)
        s = "".join(out)
        if strip:
            s = "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")
        if lower:
            s = "".join(c.lower() for c in s)
        return s
    if t == "Lowercase":
        return "".join(c.lower() for c in s)
    if t in ("NFD", "NFC", "NFKC", "NFKD"):
        return unicodedata.normalize(t, s)
    if t == "Precompiled":
        key = n["precompiled_charsmap"]
        if key not in CHARSMAPS:
            CHARSMAPS[key] = Charsmap(key)
        return CHARSMAPS[key].normalize(s)
    if t == "StripAccents":
        return "".join(c for c in s if unicodedata.category(c) != "Mn")
    if t == "Strip":
        while n.get("strip_left", True) and s and is_ws(s[0]):
            s = s[1:]
        while n.get("strip_right", True) and s and is_ws(s[-1]):
            s = s[:-1]
        return s
    if t == "Replace":
        if "Regex" in n["pattern"]:
            return rust_regex(n["pattern"]["Regex"]).sub(lambda m: n["content"], s)
        return s.replace(n["pattern"]["String"], n["content"])
    raise SystemExit("normalizer %s not in the reference" % t)


def pre_tokenize(p, pieces):
    if p is None:
        return pieces
    t = p["type"]
    if t == "Sequence":
        for x in p["pretokenizers"]:
            pieces = pre_tokenize(x, pieces)
        return pieces
    out = []
    for idx, s in enumerate(pieces):
        if t == "WhitespaceSplit":
            out += [w for w in re.split("[%s]+" % S, s) if w]
        elif t == "BertPreTokenizer":
            for w in re.split("[%s]+" % S, s):
                cur = ""
                for ch in w:
                    if is_punct(ch):
                        if cur:
                            out.append(cur)
                        out.append(ch)
                        cur = ""
                    else:
                        cur += ch
                if cur:
                    out.append(cur)
        elif t == "ByteLevel":
            if p.get("add_prefix_space", True) and not s.startswith(" "):
                s = " " + s
            words = GPT2.findall(s) if p.get("use_regex", True) else [s]
            out += ["".join(BYTE_MAP[b] for b in w.encode("utf-8")) for w in words]
        elif t == "Metaspace":
            r = p.get("replacement", "\u2581")
            scheme = p.get("prepend_scheme", "always")
            s = s.replace(" ", r)
            if s and not s.startswith(r) and (scheme == "always" or (scheme == "first" and idx == 0)):
                s = r + s
            if p.get("split", True):
                parts = s.split(r)
                words = ([parts[0]] if parts[0] else []) + [r + x for x in parts[1:]]
                out += [w for w in words if w]
            else:
                out.append(s)
        else:
            raise SystemExit("pre_tokenizer %s not in the reference" % t)
    return out


class Model:
    def __init__(self, m):
        self.t = m["type"]
        self.m = m
        if self.t == "Unigram":
            self.pieces = {p: i for i, (p, _) in enumerate(m["vocab"])}
            self.scores = [s for _, s in m["vocab"]]
            self.unk = m.get("unk_id")
            self.unk_score = min(self.scores) - 10
            self.maxlen = max(len(p) for p in self.pieces)
        else:
            self.vocab = m["vocab"]
            self.unk = self.vocab.get(m.get("unk_token")) if m.get("unk_token") else None
        if self.t == "BPE":
            self.ranks = {}
            for i, mg in enumerate(m["merges"]):
                a, b = mg.split(" ", 1) if isinstance(mg, str) else mg
                self.ranks.setdefault((a, b), i)

    def word(self, w):
        if self.t == "WordPiece":
            if len(w) > self.m.get("max_input_chars_per_word", 100):
                return [self.unk]
            out, start = [], 0
            pre = self.m.get("continuing_subword_prefix", "##")
            while start < len(w):
                end = len(w)
                while end > start:
                    sub = (pre if start else "") + w[start:end]
                    if sub in self.vocab:
                        break
                    end -= 1
                if end == start:
                    return [self.unk]
                out.append(self.vocab[sub])
                start = end
            return out
        if self.t == "BPE":
            syms = list(w)
            while True:
                best = None
                for i in range(len(syms) - 1):
                    r = self.ranks.get((syms[i], syms[i + 1]))
                    if r is not None and (best is None or r < best[0]):
                        best = (r, i)
                if best is None:
                    break
                i = best[1]
                syms[i:i + 2] = [syms[i] + syms[i + 1]]
            return [self.vocab.get(s, self.unk) for s in syms]
        # Unigram: Viterbi, shorter piece kept on ties, unknown characters as unk
        n = len(w)
        best = [(-1e300, 0, None)] * (n + 1)
        best[0] = (0.0, 0, None)
        for i in range(n):
            single = False
            for e in range(i + 1, min(n, i + self.maxlen) + 1):
                p = w[i:e]
                if p in self.pieces and self.pieces[p] != self.unk:
                    if e == i + 1:
                        single = True
                    sc = best[i][0] + self.scores[self.pieces[p]]
                    if sc > best[e][0]:
                        best[e] = (sc, i, self.pieces[p])
            if not single:
                sc = best[i][0] + self.unk_score
                if sc > best[i + 1][0]:
                    best[i + 1] = (sc, i, self.unk)
        ids, e = [], n
        while e > 0:
            ids.append(best[e][2])
            e = best[e][1]
        ids.reverse()
        out = []
        for i in ids:
            if i == self.unk and out and out[-1] == self.unk:
                continue
            out.append(i)
        return out


def main():
    tj = json.load(open(sys.argv[1], encoding="utf-8"))
    model = Model(tj["model"])
    specials = sorted((a["content"], a["id"]) for a in tj.get("added_tokens") or [])
    specials.sort(key=lambda x: -len(x[0]))
    post = tj.get("post_processor")

    def tokenize(text):
        ids, i, run = [], 0, 0
        while i <= len(text):
            hit = None
            if i < len(text):
                for s, sid in specials:
                    if text.startswith(s, i):
                        hit = (s, sid)
                        break
            if hit or i == len(text):
                seg = text[run:i]
                if seg:
                    for w in pre_tokenize(tj.get("pre_tokenizer"), [normalize(tj.get("normalizer"), seg)]):
                        ids += model.word(w)
                if hit:
                    ids.append(hit[1])
                    i += len(hit[0])
                    run = i
                    continue
            i += 1
        return ids

    def template(pair):
        t = post["type"] if post else None
        if t == "TemplateProcessing":
            out = []
            for it in post["pair" if pair else "single"]:
                if "Sequence" in it:
                    out.append((it["Sequence"]["id"], it["Sequence"]["type_id"]))
                else:
                    for i in post["special_tokens"][it["SpecialToken"]["id"]]["ids"]:
                        out.append((i, it["SpecialToken"]["type_id"]))
            return out
        if t in ("BertProcessing", "RobertaProcessing"):
            c, s = post["cls"][1], post["sep"][1]
            tb = 1 if t == "BertProcessing" else 0
            if t == "BertProcessing":
                return [(c, 0), ("A", 0), (s, 0)] + ([("B", 1), (s, 1)] if pair else [])
            return [(c, 0), ("A", 0), (s, 0)] + ([(s, tb), ("B", tb), (s, tb)] if pair else [])
        return [("A", 0)] + ([("B", 1)] if pair else [])

    for line in open(sys.argv[2], encoding="ascii"):
        mx, a, b = line.split()
        mx = int(mx)
        ta = tokenize(bytes.fromhex(a[1:]).decode("utf-8", "replace"))
        tb = tokenize(bytes.fromhex(b[1:]).decode("utf-8", "replace")) if b != "-" else None
        tpl = template(tb is not None)
        if mx:
            budget = mx - sum(1 for x, _ in tpl if x not in ("A", "B"))
            if tb is None:
                ta = ta[:budget]
            elif len(ta) + len(tb) > budget:
                short, long_ = sorted([len(ta), len(tb)])
                if short <= budget / 2:
                    n1, n2 = short, budget - short
                else:
                    n1 = budget // 2
                    n2 = n1 + budget % 2
                if len(ta) > len(tb):
                    ka, kb = n2, n1
                else:
                    ka, kb = n1, n2
                ta, tb = ta[:ka], tb[:kb]
        ids, types = [], []
        for x, ty in tpl:
            seq = ta if x == "A" else tb if x == "B" else [x]
            ids += seq
            types += [ty] * len(seq)
        print("ids=%s types=%s" % (",".join(map(str, ids)), ",".join(map(str, types))))


main()
