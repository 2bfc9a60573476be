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
  uni_nfkd_map    one step of compatibility decomposition (field 5 with a
                  <tag>): (cp << 32) | (start << 8) | count, the code points
                  being uni_nfkd_pool[start .. start + count).
  uni_comp_pairs  canonical composition: (d0 << 42) | (d1 << 21) | composite,
                  sorted by (d0, d1), for every two-part canonical
                  decomposition that NFC recomposes. The composition
                  exclusions (script-specific, post-composition-version and
                  non-starter decompositions) are derived rather than read:
                  a pair is left out when unicodedata.normalize("NFC") of the
                  composite does not give the composite back.
  uni_gcb_runs    Grapheme_Cluster_Break, with Extended_Pictographic folded
                  in as one more value, as runs (first << 5) | uni_gcb. Python
                  has no such property: it is read from the Unicode data files
                  of Debian's unicode-data package (GCB_FILE, EMOJI_FILE),
                  whose version is recorded as RLX_UNICODE_GCB_VERSION.

The one lowercase mapping longer than one code point (U+0130 -> i + U+0307)
is checked here and handled in unicode.c.

Run:  /usr/bin/python3 scripts/gen_unicode_tables.py   (from the repo root)
"""
import os
import re
import sys
import unicodedata

# Order fixes the numeric value of uni_gc in unicode_tables.h.
CATEGORIES = ["Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
              "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So",
              "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"]
MAX_CP = 0x110000
HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3
NFKD_MAX = 18   # UNI_NFKD_MAX in unicode.h: U+FDFA expands to 18 code points
GCB_FILE = "/usr/share/unicode/auxiliary/GraphemeBreakProperty.txt"
EMOJI_FILE = "/usr/share/unicode/emoji/emoji-data.txt"
# Order fixes the numeric value of uni_gcb in unicode_tables.h; Other is 0.
GCB = ["Other", "CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator", "Prepend",
       "SpacingMark", "L", "V", "T", "LV", "LVT", "ExtPict"]


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


def nfkd_map():
    """One-step compatibility decompositions and the pool they index."""
    out, pool = [], []
    for cp in range(MAX_CP):
        d = unicodedata.decomposition(chr(cp))
        if not d.startswith("<"):
            continue
        parts = [int(x, 16) for x in d.split()[1:]]
        start = len(pool)
        pool += parts
        if len(parts) > 255 or start >= 1 << 24:
            sys.exit("compatibility decomposition of U+%04X does not fit the layout" % cp)
        out.append((cp, start, len(parts)))
    return out, pool


def comp_pairs(nfd):
    out = []
    for cp, a, b in nfd:
        if b and unicodedata.normalize("NFC", chr(cp)) == chr(cp):
            out.append((a, b, cp))
    return sorted(out)


def check_norm(nfd, nfkd, pool, comp):
    """The runtime algorithm (recursive expansion through both tables,
    canonical ordering, then canonical composition with the blocking rule and
    Hangul by arithmetic) must give unicodedata's NFKD / NFC / NFKC for every
    code point and for sampled strings."""
    canon = {cp: (a, b) for cp, a, b in nfd}
    compat = {cp: pool[s:s + k] for cp, s, k in nfkd}
    pair = {(a, b): c for a, b, c in comp}
    ccc = lambda c: unicodedata.combining(chr(c))

    def expand(cp, k, acc):
        if HANGUL_FIRST <= cp <= HANGUL_LAST:
            s = cp - HANGUL_FIRST
            acc += [0x1100 + s // 588, 0x1161 + (s % 588) // 28]
            if s % 28:
                acc.append(0x11A7 + s % 28)
        elif cp in canon:
            for x in canon[cp]:
                if x:
                    expand(x, k, acc)
        elif k and cp in compat:
            for x in compat[cp]:
                expand(x, k, acc)
        else:
            acc.append(cp)

    def compose(v):
        if not v:
            return v
        out, si = [v[0]], 0 if ccc(v[0]) == 0 else None
        for c in v[1:]:
            cc = ccc(c)
            if si is not None:
                last = ccc(out[-1]) if len(out) - 1 > si else -1
                s = out[si]
                blocked = len(out) - 1 > si and (last == 0 or last >= cc)
                if not blocked:
                    if 0x1100 <= s < 0x1113 and 0x1161 <= c < 0x1176 and len(out) - 1 == si:
                        out[si] = 0xAC00 + ((s - 0x1100) * 21 + c - 0x1161) * 28
                        continue
                    if 0xAC00 <= s <= 0xD7A3 and (s - 0xAC00) % 28 == 0 and 0x11A7 < c < 0x11C3 and len(out) - 1 == si:
                        out[si] = s + c - 0x11A7
                        continue
                    if (s, c) in pair:
                        out[si] = pair[(s, c)]
                        continue
            if cc == 0:
                si = len(out)
            out.append(c)
        return out

    def norm(form, text):
        acc = []
        for ch in text:
            expand(ord(ch), "K" in form, acc)
        i = 0
        while i < len(acc):
            j = i
            while j < len(acc) and ccc(acc[j]) != 0:
                j += 1
            if j > i:
                acc[i:j] = sorted(acc[i:j], key=ccc)
            i = j + 1
        if "C" in form:
            acc = compose(acc)
        return "".join(map(chr, acc))

    for cp in range(MAX_CP):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        for form in ("NFKD", "NFC", "NFKC"):
            if norm(form, chr(cp)) != unicodedata.normalize(form, chr(cp)):
                sys.exit("%s of U+%04X differs from unicodedata" % (form, cp))
        if len(unicodedata.normalize("NFKD", chr(cp))) > NFKD_MAX:
            sys.exit("NFKD of U+%04X is longer than UNI_NFKD_MAX" % cp)
    import random
    rng = random.Random(7)
    marks = [0x300, 0x301, 0x316, 0x323, 0x328, 0x327, 0x308, 0x345, 0x1161, 0x11A8, 0x3099, 0x0F71, 0x0F72]
    bases = [0x41, 0x61, 0x45, 0x1100, 0xAC00, 0xAC01, 0x3046, 0x0F40, 0x1E0B, 0x212B, 0xFB01, 0x2126, 0x0344]
    for _ in range(20000):
        t = "".join(chr(rng.choice(marks + bases)) for _ in range(rng.randint(1, 6)))
        for form in ("NFD", "NFKD", "NFC", "NFKC"):
            if norm(form, t) != unicodedata.normalize(form, t):
                sys.exit("%s of %r differs from unicodedata" % (form, t))


def parse_ucd(path, want=None):
    """{code point: value} from a UCD-style file ("a..b ; Value # ...")."""
    out, version = {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"#.*-(\d+\.\d+\.\d+)\.txt", line) or re.match(r"# Used with Emoji Version (\d+\.\d+)", line)
        if m and not version:
            version = m.group(1)
        line = line.split("#")[0].strip()
        if not line:
            continue
        rng, val = [x.strip() for x in line.split(";")[:2]]
        if want and val != want:
            continue
        a, _, b = rng.partition("..")
        for cp in range(int(a, 16), int(b or a, 16) + 1):
            out[cp] = val
    return out, version


def gcb_table():
    for f in (GCB_FILE, EMOJI_FILE):
        if not os.path.exists(f):
            sys.exit("%s not found: apt-get install unicode-data" % f)
    gcb, version = parse_ucd(GCB_FILE)
    pict, emoji_version = parse_ucd(EMOJI_FILE, "Extended_Pictographic")
    for cp in pict:
        if cp in gcb:
            sys.exit("U+%04X is Extended_Pictographic and %s: uni_gcb cannot hold both" % (cp, gcb[cp]))
        gcb[cp] = "ExtPict"
    if not version or not emoji_version:
        sys.exit("no version line in the Unicode data files")
    return runs_of(lambda cp: GCB.index(gcb.get(cp, "Other"))), version, emoji_version


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
    nfkd, pool = nfkd_map()
    comp = comp_pairs(nfd)
    check_norm(nfd, nfkd, pool, comp)
    gcb, gcb_version, emoji_version = gcb_table()

    banner = ("/* Generated by scripts/gen_unicode_tables.py from Python %s's unicodedata\n"
              " * (Unicode %s) and, for grapheme clusters, GraphemeBreakProperty.txt\n"
              " * (Unicode %s) and emoji-data.txt (Emoji %s). Do not edit: change the\n"
              " * script and run it again. */\n"
              % (sys.version.split()[0], version, gcb_version, emoji_version))
    gcb_enum = ",\n".join("    UNI_GCB_%s%s" % (c, " = 0" if i == 0 else "") for i, c in enumerate(GCB))
    enum = ",\n".join("    UNI_%s%s" % (c, " = 0" if i == 0 else "") for i, c in enumerate(CATEGORIES))
    header = banner + """/*
 * unicode_tables.h — the generated Unicode data behind unicode.c: general
 * category, canonical combining class, simple lowercase, one-step
 * canonical and compatibility decomposition, canonical composition and the
 * grapheme cluster break property. See scripts/gen_unicode_tables.py for
 * the layout.
 */
#ifndef RLX_MODELS_UNICODE_TABLES_H
#define RLX_MODELS_UNICODE_TABLES_H

#include <stddef.h>
#include <stdint.h>

#define RLX_UNICODE_VERSION "%s"
#define RLX_UNICODE_GCB_VERSION "%s"     /* Grapheme_Cluster_Break */
#define RLX_UNICODE_EMOJI_VERSION "%s"   /* Extended_Pictographic */

/* General categories; Cn (unassigned) is 0. */
typedef enum uni_gc {
%s
} uni_gc;

/* Grapheme_Cluster_Break values; ExtPict is Extended_Pictographic (whose
 * code points are all Other otherwise). */
typedef enum uni_gcb {
%s
} uni_gcb;

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
extern const uint64_t      uni_nfkd_map[];     /* (cp << 32) | (start << 8) | count */
extern const size_t        uni_nfkd_map_len;
extern const uint32_t      uni_nfkd_pool[];
extern const uint64_t      uni_comp_pairs[];   /* (d0 << 42) | (d1 << 21) | composite */
extern const size_t        uni_comp_pairs_len;
extern const uint32_t      uni_gcb_runs[];     /* (first << 5) | uni_gcb */
extern const size_t        uni_gcb_runs_len;

#endif
""" % (version, gcb_version, emoji_version, enum, gcb_enum)

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
    body += "const size_t uni_nfd_pairs_len = %d;\n\n" % len(nfd)
    body += "const uint64_t uni_nfkd_map[] = {\n%s\n};\n" % rows(
        ["0x%xull" % (cp << 32 | st << 8 | k) for cp, st, k in nfkd], 4)
    body += "const size_t uni_nfkd_map_len = %d;\n" % len(nfkd)
    body += "const uint32_t uni_nfkd_pool[] = {\n%s\n};\n\n" % rows(["0x%x" % c for c in pool], 8)
    body += "const uint64_t uni_comp_pairs[] = {\n%s\n};\n" % rows(
        ["0x%xull" % (a << 42 | b << 21 | c) for a, b, c in comp], 4)
    body += "const size_t uni_comp_pairs_len = %d;\n\n" % len(comp)
    body += "const uint32_t uni_gcb_runs[] = {\n%s\n};\n" % rows(
        ["0x%x" % (cp << 5 | v) for cp, v in gcb], 8)
    body += "const size_t uni_gcb_runs_len = %d;\n" % len(gcb)

    for name, text in (("unicode_tables.h", header), ("unicode_tables.c", body)):
        with open(os.path.join(root, "src", "models", name), "w") as f:
            f.write(text)
    print("unicode %s: %d category runs, %d ccc runs, %d lowercase runs, %d decompositions, "
          "%d compatibility ones (%d pool), %d compositions; grapheme breaks %s: %d runs"
          % (version, len(gc), len(ccc), len(low), len(nfd), len(nfkd), len(pool), len(comp), gcb_version, len(gcb)))


if __name__ == "__main__":
    main()
