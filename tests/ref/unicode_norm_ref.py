#!/usr/bin/python3
"""unicode_norm_ref.py — the reference for rlx's NFC / NFKC / NFKD
(tests/test_tokenizer_json.c): Python's unicodedata.normalize, the same
Unicode version (14) as the generated tables.

Usage: unicode_norm_ref.py CASES
  CASES: one string per line, as the hex of its UTF-8.
Output: per line "NFC NFKC NFKD", each as hex of the UTF-8 ("-" if empty).
"""
import sys
import unicodedata

for line in open(sys.argv[1], encoding="ascii"):
    s = bytes.fromhex(line.strip()).decode("utf-8")
    print(" ".join(unicodedata.normalize(f, s).encode("utf-8").hex() or "-" for f in ("NFC", "NFKC", "NFKD")))
