#!/usr/bin/python3
"""bert_tokenizer_ref.py — an independent reference for tests/test_wordpiece.c:
BERT's BasicTokenizer + WordpieceTokenizer written from the published
algorithm (Google's BERT tokenization.py, as Hugging Face tokenizers runs it)
with Python's own unicodedata, str.split and unicodedata.normalize, so it
shares no tables or code with the C implementation.

Usage: bert_tokenizer_ref.py VOCAB CASES
  VOCAB  vocab.txt (one token per line, id = line number)
  CASES  first line: options "lowercase strip_accents cjk clean max_chars"
         (integers; strip_accents -1 follows lowercase); then one case per
         line: "MAX_LENGTH A B" where A and B are "x" + the hex of the UTF-8
         text, B is "-" for a single text, MAX_LENGTH 0 is no limit.
Output: one line per case, "ids=1,2,3 types=0,0,0".

Where Hugging Face's two implementations differ, this follows tokenizers
(the fast tokenizer transformers uses by default): lowercasing is per
character (no final-sigma rule of str.lower), no NFC pass before
splitting, and pair truncation uses tokenizers' longest-first rule.
"""
import sys
import unicodedata

SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]


def is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch).startswith("C")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


class Basic:
    def __init__(self, lowercase, strip_accents, cjk, clean):
        self.lowercase = lowercase
        self.strip = lowercase if strip_accents < 0 else bool(strip_accents)
        self.cjk = cjk
        self.clean = clean

    def clean_text(self, text):
        out = []
        for ch in text:
            if ord(ch) == 0 or ord(ch) == 0xFFFD or is_control(ch):
                continue
            out.append(" " if is_whitespace(ch) else ch)
        return "".join(out)

    def pad_cjk(self, text):
        return "".join(" %s " % ch if is_cjk(ord(ch)) else ch for ch in text)

    def split_punct(self, word):
        pieces, cur = [], []
        for ch in word:
            if is_punctuation(ch):
                if cur:
                    pieces.append("".join(cur))
                    cur = []
                pieces.append(ch)
            else:
                cur.append(ch)
        if cur:
            pieces.append("".join(cur))
        return pieces

    def tokenize(self, text):
        if self.clean:
            text = self.clean_text(text)
        if self.cjk:
            text = self.pad_cjk(text)
        out = []
        for word in text.split():
            if self.lowercase:
                word = "".join(ch.lower() for ch in word)
            if self.strip:
                word = "".join(ch for ch in unicodedata.normalize("NFD", word)
                               if unicodedata.category(ch) != "Mn")
            out.extend(self.split_punct(word))
        return out


def wordpiece(word, vocab, max_chars):
    if len(word) > max_chars:
        return [vocab["[UNK]"]]
    ids, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                found = vocab[piece]
                break
            end -= 1
        if found is None:
            return [vocab["[UNK]"]]
        ids.append(found)
        start = end
    return ids


def encode_text(text, basic, vocab, max_chars):
    """Special tokens in the raw text first (longest match), then the rest."""
    specials = sorted((s for s in SPECIALS if s in vocab), key=len, reverse=True)
    ids, run, i = [], 0, 0
    while i < len(text):
        hit = next((s for s in specials if text.startswith(s, i)), None)
        if hit is None:
            i += 1
            continue
        for w in basic.tokenize(text[run:i]):
            ids += wordpiece(w, vocab, max_chars)
        ids.append(vocab[hit])
        i += len(hit)
        run = i
    for w in basic.tokenize(text[run:]):
        ids += wordpiece(w, vocab, max_chars)
    return ids


def truncate_pair(a, b, budget):
    if a + b <= budget:
        return a, b
    short, long_is_a = min(a, b), a > b
    if 2 * short <= budget:
        keep_short, keep_long = short, budget - short
    else:
        keep_short, keep_long = budget // 2, budget - budget // 2
    return (keep_long, keep_short) if long_is_a else (keep_short, keep_long)


def main():
    vocab = {}
    with open(sys.argv[1], encoding="utf-8") as f:
        for i, line in enumerate(f.read().split("\n")):
            if line:
                vocab[line] = i
    with open(sys.argv[2]) as f:
        lines = f.read().split("\n")
    low, strip, cjk, clean, max_chars = map(int, lines[0].split())
    basic = Basic(bool(low), strip, bool(cjk), bool(clean))
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]
    for line in lines[1:]:
        if not line:
            continue
        max_len, a_hex, b_hex = line.split(" ")
        max_len = int(max_len)
        a = bytes.fromhex(a_hex[1:]).decode("utf-8", errors="replace")
        a_ids = encode_text(a, basic, vocab, max_chars)
        if b_hex == "-":
            if max_len:
                a_ids = a_ids[:max_len - 2]
            ids, types = [cls] + a_ids + [sep], [0] * (len(a_ids) + 2)
        else:
            b = bytes.fromhex(b_hex[1:]).decode("utf-8", errors="replace")
            b_ids = encode_text(b, basic, vocab, max_chars)
            if max_len:
                ka, kb = truncate_pair(len(a_ids), len(b_ids), max_len - 3)
                a_ids, b_ids = a_ids[:ka], b_ids[:kb]
            ids = [cls] + a_ids + [sep] + b_ids + [sep]
            types = [0] * (len(a_ids) + 2) + [1] * (len(b_ids) + 1)
        print("ids=%s types=%s" % (",".join(map(str, ids)), ",".join(map(str, types))))


if __name__ == "__main__":
    main()
