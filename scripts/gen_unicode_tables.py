#!/usr/bin/python3
"""gen_unicode_tables.py — writes src/models/unicode_tables.{h,c}, the Unicode
data the tokenizers need, from Python's unicodedata (so the tables follow the
Unicode version of the Python that runs this; the header records it).

Tables, each sorted by code point and searched by bisection in unicode.c:
  uni_gc_runs     general category of every code point, as runs:
                  (first << 5) | category; a run lasts until the next one.
  uni_ccc_runs    canonical combining class, the same way: (first << 8) | ccc.
  uni_lower_runs  simple lowercase mapping: {first, last, delta, stride}, each
                  maps first, first+stride, ..., last to cp + delta.
  uni_nfd_pairs   one step of canonical decomposition (UnicodeData field 5
                  without a <tag>): (cp << 42) | (d0 << 21) | d1, d1 = 0 for a
                  singleton. Hangul syllables are left to the algorithm.

The one lowercase mapping longer than one code point (U+0130 -> i + U+0307)
is checked here and handled in unicode.c.

Run:  /usr/bin/python3 scripts/gen_unicode_tables.py   (from the repo root)
"""
import os
import sys
import unicodedata

# Order fixes the numeric value of uni_gc in unicode_tables.h.
CATEGORIES = ["Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
              "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So",
              "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"]
MAX_CP = 0x110000
HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3


def runs_of(value_of):
    """(first code point, value) wherever the value changes."""
    out, prev = [], None
    for cp in range(MAX_CP):
        v = value_of(cp)
        if v != prev:
            out.append((cp, v))
            prev = v
    return out


def lower_runs():
    maps = []
    for cp in range(MAX_CP):
        low = chr(cp).lower()
        if len(low) == 1 and ord(low) != cp:
            maps.append((cp, ord(low) - cp))
        elif len(low) > 1 and cp != 0x130:
            sys.exit("unexpected multi-character lowercase of U+%04X; unicode.c handles only U+0130" % cp)
    if chr(0x130).lower() != "i\u0307":
        sys.exit("U+0130 no longer lowercases to i + U+0307")
    runs = []   # [first, last, delta, stride]
    for cp, delta in maps:
        if runs:
            r = runs[-1]
            if r[2] == delta:
                if r[0] == r[1] and cp - r[1] in (1, 2):
                    r[1], r[3] = cp, cp - r[0]
                    continue
                if cp - r[1] == r[3]:
                    r[1] = cp
                    continue
        runs.append([cp, cp, delta, 1])
    return runs


def nfd_pairs():
    out = []
    for cp in range(MAX_CP):
        if HANGUL_FIRST <= cp <= HANGUL_LAST:
            continue
        d = unicodedata.decomposition(chr(cp))
        if not d or d.startswith("<"):
            continue
        parts = [int(x, 16) for x in d.split()]
        if len(parts) > 2:
            sys.exit("canonical decomposition of U+%04X has %d parts" % (cp, len(parts)))
        out.append((cp, parts[0], parts[1] if len(parts) > 1 else 0))
    return out


def check_nfd(pairs):
    """The runtime algorithm (recursive expansion, then a stable sort of each
    run of non-starters by class) must give unicodedata's NFD for every code
    point; a string-level sample checks the reordering across characters."""
    table = {cp: (a, b) for cp, a, b in pairs}

    def expand(cp, acc):
        if HANGUL_FIRST <= cp <= HANGUL_LAST:
            s = cp - HANGUL_FIRST
            acc += [0x1100 + s // 588, 0x1161 + (s % 588) // 28]
            if s % 28:
                acc.append(0x11A7 + s % 28)
        elif cp in table:
            a, b = table[cp]
            expand(a, acc)
            if b:
                expand(b, acc)
        else:
            acc.append(cp)

    def nfd(text):
        acc = []
        for ch in text:
            expand(ord(ch), acc)
        i = 0
        while i < len(acc):
            if unicodedata.combining(chr(acc[i])) == 0:
                i += 1
                continue
            j = i
            while j < len(acc) and unicodedata.combining(chr(acc[j])) != 0:
                j += 1
            acc[i:j] = sorted(acc[i:j], key=lambda c: unicodedata.combining(chr(c)))
            i = j
        return "".join(map(chr, acc))

    for cp in range(MAX_CP):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        d = nfd(chr(cp))
        if d != unicodedata.normalize("NFD", chr(cp)):
            sys.exit("NFD of U+%04X differs from unicodedata" % cp)
        if len(d) > 4:
            sys.exit("NFD of U+%04X is longer than UNI_NFD_MAX (4)" % cp)
    for s in ["e\u0301\u0323", "\u1e0b\u0323", "\u00e9\u0316\u0300", "\u01d5\u0328", "q\u0307\u0323"]:
        if nfd(s) != unicodedata.normalize("NFD", s):
            sys.exit("NFD of %r differs from unicodedata" % s)


def rows(items, per_line, indent="    "):
    lines = []
    for i in range(0, len(items), per_line):
        lines.append(indent + ", ".join(items[i:i + per_line]) + ",")
    return "\n".join(lines)


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    version = unicodedata.unidata_version
    gc = runs_of(lambda cp: CATEGORIES.index(unicodedata.category(chr(cp))))
    ccc = runs_of(lambda cp: unicodedata.combining(chr(cp)))
    low = lower_runs()
    nfd = nfd_pairs()
    check_nfd(nfd)

    banner = ("/* Generated by scripts/gen_unicode_tables.py from Python %s's unicodedata\n"
              " * (Unicode %s). Do not edit: change the script and run it again. */\n"
              % (sys.version.split()[0], version))
    enum = ",\n".join("    UNI_%s%s" % (c, " = 0" if i == 0 else "") for i, c in enumerate(CATEGORIES))
    header = banner + """/*
 * unicode_tables.h — the generated Unicode data behind unicode.c: general
 * category, canonical combining class, simple lowercase and one-step
 * canonical decomposition. See scripts/gen_unicode_tables.py for the layout.
 */
#ifndef RLX_MODELS_UNICODE_TABLES_H
#define RLX_MODELS_UNICODE_TABLES_H

#include <stddef.h>
#include <stdint.h>

#define RLX_UNICODE_VERSION "%s"

/* General categories; Cn (unassigned) is 0. */
typedef enum uni_gc {
%s
} uni_gc;

typedef struct uni_lower_run {
    uint32_t first, last;
    int32_t  delta;
    uint32_t stride;
} uni_lower_run;

extern const uint32_t      uni_gc_runs[];      /* (first << 5) | uni_gc  */
extern const size_t        uni_gc_runs_len;
extern const uint32_t      uni_ccc_runs[];     /* (first << 8) | ccc     */
extern const size_t        uni_ccc_runs_len;
extern const uni_lower_run uni_lower_runs[];
extern const size_t        uni_lower_runs_len;
extern const uint64_t      uni_nfd_pairs[];    /* (cp << 42) | (d0 << 21) | d1 */
extern const size_t        uni_nfd_pairs_len;

#endif
""" % (version, enum)

    body = banner + '#include "models/unicode_tables.h"\n\n'
    body += "const uint32_t uni_gc_runs[] = {\n%s\n};\n" % rows(
        ["0x%x" % (cp << 5 | v) for cp, v in gc], 8)
    body += "const size_t uni_gc_runs_len = %d;\n\n" % len(gc)
    body += "const uint32_t uni_ccc_runs[] = {\n%s\n};\n" % rows(
        ["0x%x" % (cp << 8 | v) for cp, v in ccc], 8)
    body += "const size_t uni_ccc_runs_len = %d;\n\n" % len(ccc)
    body += "const uni_lower_run uni_lower_runs[] = {\n%s\n};\n" % rows(
        ["{0x%x, 0x%x, %d, %d}" % tuple(r) for r in low], 4)
    body += "const size_t uni_lower_runs_len = %d;\n\n" % len(low)
    body += "const uint64_t uni_nfd_pairs[] = {\n%s\n};\n" % rows(
        ["0x%xull" % (cp << 42 | a << 21 | b) for cp, a, b in nfd], 4)
    body += "const size_t uni_nfd_pairs_len = %d;\n" % len(nfd)

    for name, text in (("unicode_tables.h", header), ("unicode_tables.c", body)):
        with open(os.path.join(root, "src", "models", name), "w") as f:
            f.write(text)
    print("unicode %s: %d category runs, %d ccc runs, %d lowercase runs, %d decompositions"
          % (version, len(gc), len(ccc), len(low), len(nfd)))


if __name__ == "__main__":
    main()
