#!/usr/bin/python3
"""xlmr_tokenizer.py — makes an XLM-RoBERTa-shaped tokenizer folder without a
download, for bench/encoder_hf.py's xlmr section: a small SentencePiece
Unigram model trained here (Debian's python3-sentencepiece, the nmt_nfkc
normalization rule, so its precompiled character map is SentencePiece's
real one) and the tokenizer.json Hugging Face's XLM-R converter makes from
it (Precompiled + Replace(" {2,}") normalizers, Metaspace, Unigram with the
fairseq id offset, <s> $A </s>).

    /usr/bin/python3 bench/xlmr_tokenizer.py OUT_DIR

OUT_DIR gets sentencepiece.bpe.model and tokenizer.json. On the GPU machine
encoder_hf.py rebuilds tokenizer.json through transformers' converter when
sentencepiece is there, and otherwise reads this one with Hugging Face
tokenizers; either way Hugging Face's code is the reference.
"""
import base64, io, json, os, random, sys

CORPUS_WORDS = (
    "the quick brown fox jumps over lazy dog café naïve résumé Ångström façade coöperate "
    "über straße grüße déjà vu piñata São Paulo Kraków Zürich smörgåsbord "
    "中文 字符 日本語 テキスト 한국어 문장 Ελληνικά кириллица русский текст عربى हिन्दी "
    "numbers 12345 3.14159 1,000,000 ＦＵＬＬＷＩＤＴＨ ﬁne ﬂow ½ ² ™ © ® … "
    "emoji 😀 🎉 👍🏽 👨‍👩‍👧 🇫🇷 symbols punctuation?!? (nested [brackets] {here})").split()


def corpus(n, seed=0):
    rnd = random.Random(seed)
    return [" ".join(rnd.choice(CORPUS_WORDS) for _ in range(rnd.randint(3, 14))) for _ in range(n)]


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1].strip())
        return 2
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus(3000)), model_writer=model, vocab_size=600,
                                   model_type="unigram", normalization_rule_name="nmt_nfkc",
                                   character_coverage=1.0, hard_vocab_limit=False, minloglevel=2)
    raw = model.getvalue()
    open(os.path.join(out, "sentencepiece.bpe.model"), "wb").write(raw)
    proto = pb.ModelProto()
    proto.ParseFromString(raw)
    charsmap = proto.normalizer_spec.precompiled_charsmap
    vocab = [["<s>", 0.0], ["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0]]
    vocab += [[p.piece, p.score] for p in proto.pieces[3:]]
    vocab += [["<mask>", 0.0]]
    special = lambda i, s: {"id": i, "content": s, "single_word": False, "lstrip": s == "<mask>",
                            "rstrip": False, "normalized": False, "special": True}
    tj = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [special(0, "<s>"), special(1, "<pad>"), special(2, "</s>"), special(3, "<unk>"),
                         special(len(vocab) - 1, "<mask>")],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {s: {"id": s, "ids": [i], "tokens": [s]} for s, i in (("<s>", 0), ("</s>", 2))}},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": False},
    }
    json.dump(tj, open(os.path.join(out, "tokenizer.json"), "w"), ensure_ascii=False)
    print("xlmr_tokenizer: %d pieces, charsmap %d bytes -> %s" % (len(vocab), len(charsmap), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
