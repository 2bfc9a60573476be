#!/usr/bin/python3
"""spm_tokenizer_ref.py — writes an XLM-R-shaped tokenizer.json for
tests/test_tokenizer_json.c from a tiny SentencePiece Unigram model trained
here with Debian's python3-sentencepiece, so that the Precompiled normalizer
is tested on a real precompiled_charsmap (the nmt_nfkc rule's, which is the
same whatever the training text) rather than one written by hand.

The file is shaped as Hugging Face converts XLM-R / multilingual-e5 / bge-m3:
normalizer Sequence [Precompiled, Replace {"Regex": " {2,}"} -> " "],
pre_tokenizer Metaspace (prepend_scheme always, split), the Unigram model
with the trained pieces and scores, and no post-processor.

Usage: spm_tokenizer_ref.py OUT_JSON
"""
import io
import json
import sys

try:
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb
except ImportError as e:
    sys.exit("spm_tokenizer_ref.py needs python3-sentencepiece and python3-protobuf (scripts/setup.sh): %s" % e)

CORPUS = [
    "hello world, the quick brown fox jumps over the lazy dog",
    "caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00fcber stra\u00dfe \u00e5ngstr\u00f6m",
    "\u4e2d\u6587 \u5b57 \u6f22\u5b57 \u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4 \u0440\u0443\u0441\u0441\u043a\u0438\u0439",
    "fine office flow 12345 67890 hello hello world world",
    "\U0001F600 \U0001F44D \U0001F1EB\U0001F1F7 the end",
]


def main():
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(CORPUS * 40), model_writer=model, vocab_size=150,
                                   model_type="unigram", normalization_rule_name="nmt_nfkc", character_coverage=1.0,
                                   hard_vocab_limit=False, minloglevel=2, num_threads=1)
    proto = pb.ModelProto()
    proto.ParseFromString(model.getvalue())
    charsmap = proto.normalizer_spec.precompiled_charsmap
    if len(charsmap) < 1000:
        sys.exit("the trained model has no precompiled_charsmap")
    import base64
    vocab = [[p.piece, p.score] for p in proto.pieces]
    tj = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode("ascii")},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": None,
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": proto.trainer_spec.unk_id, "vocab": vocab, "byte_fallback": False},
    }
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False)


main()
