/*
 * test_wordpiece.c — BERT's WordPiece tokenizer and the encoder tokenizer
 * interface on vocabularies built here: hand-checked ids for accents, CJK,
 * emoji, punctuation runs, long words, control characters and whitespace;
 * the same and random strings against tests/ref/bert_tokenizer_ref.py (an
 * independent Python implementation over Python's unicodedata) under each
 * option set; pairs, truncation, padding, batches, decode; vocab.txt errors;
 * and spot checks of the Unicode tables.
 */
#include "harness.h"
#include "models/tokenizer_wordpiece.h"
#include "models/unicode.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ vocab kit */

/* Growable text buffer. */
typedef struct sbuf {
    char  *s;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}
static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }
static void sb_cp(sbuf *b, uint32_t cp) {
    char u[4];
    sb_put(b, u, uni_utf8_encode(cp, u));
}

/* A token line: prefix ("" or "##") + one code point. */
static void vocab_cp(sbuf *v, const char *prefix, uint32_t cp) {
    sb_str(v, prefix);
    sb_cp(v, cp);
    sb_str(v, "\n");
}

/* Specials first ([PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4), then words,
 * then single characters of several scripts with and without "##", so that
 * most text splits into pieces instead of [UNK]. */
static const char *const WORDS[] = {
    "the", "quick", "brown", "fox", "jump", "##s", "##ed", "##ing", "un", "##aff", "##able", "hello",
    "world", "hi", "abc", "cafe", "Caf", "nan", "##du", "##and", "ang", "##ng", "##str", "##strom",
    "mask", "wait", "over", "lazy", "dog", "istanbul", "12", "##34", "x", "##\xF0\x9D\x85\xA5\xF0\x9D\x85\xAD",
    "\xF0\x9F\x98\x80", "\xED\x95\x9C", "##\xCC\x81", "\xCF\x83", "##\xCF\x82", NULL,
};

static void add_range(sbuf *v, uint32_t lo, uint32_t hi, bool plain, bool cont) {
    for (uint32_t c = lo; c <= hi; c++) {
        if (plain) vocab_cp(v, "", c);
        if (cont) vocab_cp(v, "##", c);
    }
}

static char *make_vocab(size_t *len) {
    sbuf v = {0};
    sb_str(&v, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n");
    for (int i = 0; WORDS[i]; i++) { sb_str(&v, WORDS[i]); sb_str(&v, "\n"); }
    for (uint32_t c = '!'; c <= '~'; c++) {
        bool punct = uni_is_bert_punct(c);
        if (c == 'x') { vocab_cp(&v, "##", c); continue; }   /* "x" is a word above */
        vocab_cp(&v, "", c);
        if (!punct) vocab_cp(&v, "##", c);
    }
    add_range(&v, 0xC0, 0xFF, true, true);        /* Latin-1 letters (and × ÷) */
    add_range(&v, 0x391, 0x3A1, true, true);      /* Greek capitals */
    add_range(&v, 0x3B1, 0x3C9, true, true);      /* Greek small */
    add_range(&v, 0x410, 0x44F, true, true);      /* Cyrillic */
    add_range(&v, 0x4E00, 0x4E40, true, true);    /* CJK */
    vocab_cp(&v, "", 0x4E2D); vocab_cp(&v, "", 0x56FD); vocab_cp(&v, "", 0x4EBA);   /* 中 国 人 */
    vocab_cp(&v, "", 0x8C48);                      /* 豈's canonical form */
    add_range(&v, 0x1100, 0x1112, true, false);   /* jamo: leads, vowels, tails */
    add_range(&v, 0x1161, 0x1175, false, true);
    add_range(&v, 0x11A8, 0x11C2, false, true);
    add_range(&v, 0x3041, 0x3093, true, true);    /* hiragana */
    static const uint32_t punct[] = {0xA1, 0xBF, 0xAB, 0xBB, 0x2014, 0x2013, 0x2026, 0x3001, 0x3002, 0x300C, 0x300D};
    for (size_t i = 0; i < sizeof punct / sizeof *punct; i++) vocab_cp(&v, "", punct[i]);
    /* 中 国 人 may already be in the CJK range above: drop repeats, the
     * tokenizer rejects them. */
    sbuf out = {0};
    char *line = v.s;
    while (*line) {
        char *nl = strchr(line, '\n');
        size_t n = (size_t)(nl - line);
        bool dup = false;
        for (char *p = out.s; p && *p;) {
            char *q = strchr(p, '\n');
            if ((size_t)(q - p) == n && memcmp(p, line, n) == 0) { dup = true; break; }
            p = q + 1;
        }
        if (!dup) sb_put(&out, line, n + 1);
        line = nl + 1;
    }
    free(v.s);
    *len = out.n;
    return out.s;
}

static enc_tokenizer *make_tok(const wp_options *o) {
    size_t n;
    char *v = make_vocab(&n);
    enc_tokenizer *t = NULL;
    rlx_status st = rlx_wordpiece_from_memory(v, n, o, &t);
    if (st) harness_fail(__FILE__, __LINE__, "vocab: %s", rlx_last_error());
    free(v);
    return t;
}

static int32_t id_of(const enc_tokenizer *t, const char *s) { return rlx_enc_find(t, s, strlen(s)); }

/* Checks the tokens of encode(a[, b]) are want: space-separated tokens. */
static bool tokens_are(const enc_tokenizer *t, const char *a, size_t a_len, const char *b, const enc_options *o,
                       const char *want, int line) {
    enc_encoding e;
    rlx_status st = rlx_enc_encode(t, a, a_len, b, b ? strlen(b) : 0, o, &e);
    if (st) { harness_fail(__FILE__, line, "encode: %s", rlx_last_error()); return false; }
    char *w = strdup(want), *save = NULL;
    size_t k = 0;
    bool ok = true;
    for (char *tok = strtok_r(w, " ", &save); tok && ok; tok = strtok_r(NULL, " ", &save), k++) {
        int32_t id = id_of(t, tok);
        if (id == TOK_NONE) { harness_fail(__FILE__, line, "want token '%s' is not in the vocab", tok); ok = false; }
        else if (k >= e.n_tokens || e.ids[k] != id) {
            harness_fail(__FILE__, line, "token %zu: got %d ('%s'), want '%s' (%d)", k, k < e.n_tokens ? e.ids[k] : -1,
                         k < e.n_tokens ? rlx_enc_token_text(t, e.ids[k], NULL) : "(end)", tok, id);
            ok = false;
        }
    }
    if (ok && k != e.n_tokens) { harness_fail(__FILE__, line, "got %zu tokens, want %zu", e.n_tokens, k); ok = false; }
    free(w);
    rlx_enc_encoding_free(&e);
    return ok;
}
#define TOKENS(t, text, want) CHECK(tokens_are(t, text, strlen(text), NULL, NULL, want, __LINE__))

/* ------------------------------------------------------ unicode tables */

TEST(unicode_properties) {
    CHECK(strcmp(RLX_UNICODE_VERSION, "14.0.0") == 0);
    CHECK(uni_category('A') == UNI_Lu && uni_category('a') == UNI_Ll && uni_category(0x301) == UNI_Mn);
    CHECK(uni_category(0x4E2D) == UNI_Lo && uni_category(0xA0) == UNI_Zs && uni_category(0x2028) == UNI_Zl);
    CHECK(uni_category(0x200B) == UNI_Cf && uni_category(0x378) == UNI_Cn && uni_category(0xE000) == UNI_Co);
    CHECK(uni_category(0x1F600) == UNI_So && uni_category('!') == UNI_Po && uni_category('$') == UNI_Sc);
    CHECK(uni_category(0) == UNI_Cc && uni_category(0x10FFFF) == UNI_Cn && uni_category(0x110000) == UNI_Cn);
    CHECK(uni_category(0x903) == UNI_Mc && uni_category(0xD800) == UNI_Cs && uni_category(0x1F3FB) == UNI_Sk);

    CHECK(uni_lower_simple('A') == 'a' && uni_lower_simple('z') == 'z' && uni_lower_simple(0xC5) == 0xE5);
    CHECK(uni_lower_simple(0x100) == 0x101 && uni_lower_simple(0x101) == 0x101 && uni_lower_simple(0x3A3) == 0x3C3);
    CHECK(uni_lower_simple(0x410) == 0x430 && uni_lower_simple(0x1E9E) == 0xDF && uni_lower_simple(0x212B) == 0xE5);
    CHECK(uni_lower_simple(0xFF21) == 0xFF41 && uni_lower_simple(0x10400) == 0x10428 && uni_lower_simple(0xD7) == 0xD7);
    uint32_t d[UNI_NFD_MAX];
    CHECK(uni_lower_full(0x130, d) == 2 && d[0] == 'i' && d[1] == 0x307);
    CHECK(uni_lower_full('Q', d) == 1 && d[0] == 'q');

    CHECK(uni_nfd_char(0xE9, d) == 2 && d[0] == 'e' && d[1] == 0x301);
    CHECK(uni_nfd_char(0x1E69, d) == 3 && d[0] == 's' && d[1] == 0x323 && d[2] == 0x307);
    CHECK(uni_nfd_char(0xAC00, d) == 2 && d[0] == 0x1100 && d[1] == 0x1161);
    CHECK(uni_nfd_char(0xD7A3, d) == 3 && d[0] == 0x1112 && d[1] == 0x1175 && d[2] == 0x11C2);
    CHECK(uni_nfd_char(0xF900, d) == 1 && d[0] == 0x8C48);
    CHECK(uni_nfd_char(0x212B, d) == 2 && d[0] == 'A' && d[1] == 0x30A);
    CHECK(uni_nfd_char(0x1D15F, d) == 2 && d[0] == 0x1D158 && d[1] == 0x1D165);
    CHECK(uni_nfd_char(0x1F82, d) == 4 && d[0] == 0x3B1 && d[1] == 0x313 && d[2] == 0x300 && d[3] == 0x345);
    CHECK(uni_nfd_char('a', d) == 1 && d[0] == 'a');
    CHECK(uni_ccc(0x301) == 230 && uni_ccc(0x323) == 220 && uni_ccc('a') == 0 && uni_ccc(0x1D165) == 216);
    uint32_t s[] = {'e', 0x301, 0x323, 'x', 0x1D16D, 0x1D165};
    uni_canonical_order(s, 6);
    CHECK(s[0] == 'e' && s[1] == 0x323 && s[2] == 0x301 && s[3] == 'x' && s[4] == 0x1D165 && s[5] == 0x1D16D);

    CHECK(uni_is_bert_punct('$') && uni_is_bert_punct('^') && uni_is_bert_punct('`') && uni_is_bert_punct('~'));
    CHECK(!uni_is_bert_punct('a') && !uni_is_bert_punct(' ') && !uni_is_bert_punct('0'));
    CHECK(uni_is_bert_punct(0xBF) && uni_is_bert_punct(0x2026) && uni_is_bert_punct(0xA7) && !uni_is_bert_punct(0xAC));
    CHECK(uni_is_white_space(0x85) && uni_is_white_space(0x3000) && uni_is_white_space('\v') && !uni_is_white_space(0x200B));
    CHECK(uni_is_cjk_ideograph(0x4E2D) && uni_is_cjk_ideograph(0xF900) && uni_is_cjk_ideograph(0x2A6DF));
    CHECK(!uni_is_cjk_ideograph(0xAC00) && !uni_is_cjk_ideograph(0x3042) && !uni_is_cjk_ideograph(0x3002));

    uint32_t cp;
    CHECK(uni_utf8_decode((const uint8_t *)"\xC3\xA9", 2, &cp) == 2 && cp == 0xE9);
    CHECK(uni_utf8_decode((const uint8_t *)"\xF0\x9F\x98\x80", 4, &cp) == 4 && cp == 0x1F600);
    CHECK(uni_utf8_decode((const uint8_t *)"\xC3", 1, &cp) == 1 && cp == UNI_REPLACEMENT);
    CHECK(uni_utf8_decode((const uint8_t *)"\xE0\x80\x80", 3, &cp) == 1 && cp == UNI_REPLACEMENT);   /* overlong */
    CHECK(uni_utf8_decode((const uint8_t *)"\xED\xA0\x80", 3, &cp) == 1 && cp == UNI_REPLACEMENT);   /* surrogate */
    CHECK(uni_utf8_decode((const uint8_t *)"\xF4\x90\x80\x80", 4, &cp) == 1 && cp == UNI_REPLACEMENT);
    CHECK(uni_utf8_decode((const uint8_t *)"\x80", 1, &cp) == 1 && cp == UNI_REPLACEMENT);
    CHECK(uni_utf8_decode((const uint8_t *)"\xEF\xBF\xBD", 3, &cp) == 3 && cp == UNI_REPLACEMENT);
}

/* ------------------------------------------------- hand-checked ids */

TEST(wordpiece_hand_checked) {
    enc_tokenizer *t = make_tok(NULL);
    CHECK(t);
    /* The vocabulary's first ids, so the checks below are not circular. */
    CHECK(id_of(t, "[PAD]") == 0 && id_of(t, "[UNK]") == 1 && id_of(t, "[CLS]") == 2 && id_of(t, "[SEP]") == 3);
    CHECK(id_of(t, "the") == 5 && id_of(t, "un") == 13 && id_of(t, "##aff") == 14 && id_of(t, "##able") == 15);
    enc_encoding e;
    CHECK_OK(rlx_enc_encode(t, "Unaffable", 9, NULL, 0, NULL, &e));
    int32_t want[] = {2, 13, 14, 15, 3};
    CHECK(e.len == 5 && e.n_tokens == 5 && memcmp(e.ids, want, sizeof want) == 0);
    for (int i = 0; i < 5; i++) CHECK(e.type_ids[i] == 0 && e.attention_mask[i] == 1);
    rlx_enc_encoding_free(&e);

    TOKENS(t, "Hello, World!", "[CLS] hello , world ! [SEP]");
    TOKENS(t, "the quick brown fox jumped", "[CLS] the quick brown fox jump ##ed [SEP]");
    /* Accents: lowercased and stripped by default. */
    TOKENS(t, "Café Ñandú ÅNGSTRÖM", "[CLS] cafe nan ##du ang ##strom [SEP]");
    TOKENS(t, "e\xCC\x81", "[CLS] e [SEP]");                          /* decomposed é */
    TOKENS(t, "\xC4\xB0stanbul", "[CLS] istanbul [SEP]");             /* İ -> i + U+0307 -> i */
    /* Hangul decomposes to jamo under accent stripping. */
    TOKENS(t, "\xED\x95\x9C", "[CLS] \xE1\x84\x92 ##\xE1\x85\xA1 ##\xE1\x86\xAB [SEP]");
    /* CJK ideographs are words; kana is not; 豈 (U+F900) strips to U+8C48. */
    TOKENS(t, "中国人abc", "[CLS] 中 国 人 abc [SEP]");
    TOKENS(t, "\xEF\xA4\x80", "[CLS] \xE8\xB1\x88 [SEP]");
    TOKENS(t, "あいう", "[CLS] あ ##い ##う [SEP]");
    /* Emoji: a vocabulary token, and one that is not. */
    TOKENS(t, "hi \xF0\x9F\x98\x80 \xF0\x9F\x91\x8D", "[CLS] hi \xF0\x9F\x98\x80 [UNK] [SEP]");
    /* Punctuation runs split into single characters; ASCII symbols count. */
    TOKENS(t, "wait...!?", "[CLS] wait . . . ! ? [SEP]");
    TOKENS(t, "$12^34`", "[CLS] $ 12 ^ 3 ##4 ` [SEP]");
    TOKENS(t, "\xC2\xBFhi\xE2\x80\xA6\xC2\xBB", "[CLS] \xC2\xBF hi \xE2\x80\xA6 \xC2\xBB [SEP]");
    /* Control and format characters vanish; every kind of space splits. */
    TOKENS(t, "hel\x07lo\xE2\x80\x8B wor\xC2\xAD" "ld\xEF\xBB\xBF", "[CLS] hello world [SEP]");
    TOKENS(t, "the\tquick\xC2\xA0" "brown\xE3\x80\x80" "fox\xE2\x80\xA8over\r\nlazy\xE2\x80\x83" "dog",
           "[CLS] the quick brown fox over lazy dog [SEP]");
    TOKENS(t, "a\vb", "[CLS] a ##b [SEP]");   /* \v is a control character, dropped, not a space */
    /* Invalid UTF-8 reads as U+FFFD, which cleaning drops. */
    TOKENS(t, "ab\xFF" "c", "[CLS] abc [SEP]");
    /* Empty and blank input. */
    TOKENS(t, "", "[CLS] [SEP]");
    TOKENS(t, " \t\n\xE3\x80\x80", "[CLS] [SEP]");
    /* A word with a character the vocabulary cannot spell is one [UNK]. */
    TOKENS(t, "hello\xE2\x98\x83world fox", "[CLS] [UNK] fox [SEP]");
    /* Special tokens in the text, matched case-sensitively before lowercasing. */
    TOKENS(t, "[CLS]hello[MASK]", "[CLS] [CLS] hello [MASK] [SEP]");
    TOKENS(t, "[mask]", "[CLS] [ mask ] [SEP]");
    enc_options o;
    enc_options_init(&o);
    o.parse_special = false;
    o.add_special = false;
    CHECK(tokens_are(t, "[SEP] x", 7, NULL, &o, "[ s ##e ##p ] x", __LINE__));
    rlx_enc_tokenizer_free(t);
}

TEST(wordpiece_case_and_accent_options) {
    wp_options wo;
    wp_options_init(&wo);
    wo.lowercase = false;   /* strip_accents follows: off */
    enc_tokenizer *t = make_tok(&wo);
    CHECK(t);
    TOKENS(t, "Café Ñandú Ångström", "[CLS] Caf ##é Ñ ##and ##ú Å ##ng ##str ##ö ##m [SEP]");
    TOKENS(t, "cafe\xCC\x81", "[CLS] cafe ##\xCC\x81 [SEP]");   /* no NFC: the mark is a piece */
    TOKENS(t, "Hello", "[CLS] H ##e ##l ##l ##o [SEP]");
    rlx_enc_tokenizer_free(t);

    wo.strip_accents = 1;   /* cased, accents stripped */
    t = make_tok(&wo);
    CHECK(t);
    TOKENS(t, "Café", "[CLS] Caf ##e [SEP]");
    TOKENS(t, "\xE2\x84\xAB", "[CLS] A [SEP]");   /* Å (U+212B): NFD is A + ring */
    rlx_enc_tokenizer_free(t);

    wp_options_init(&wo);
    wo.strip_accents = 0;   /* lowercased, accents kept */
    t = make_tok(&wo);
    CHECK(t);
    TOKENS(t, "CAFÉ", "[CLS] c ##a ##f ##é [SEP]");
    TOKENS(t, "ΣΟΣ", "[CLS] σ ##ο ##σ [SEP]");   /* per-character lowercase: no final sigma */
    rlx_enc_tokenizer_free(t);

    wp_options_init(&wo);
    wo.tokenize_cjk = false;
    t = make_tok(&wo);
    CHECK(t);
    TOKENS(t, "一丁七", "[CLS] 一 ##丁 ##七 [SEP]");
    rlx_enc_tokenizer_free(t);

    wp_options_init(&wo);
    wo.clean_text = false;   /* controls stay in their word; whitespace still splits */
    t = make_tok(&wo);
    CHECK(t);
    TOKENS(t, "a\x07" "b c\vd\xC2\x85" "e", "[CLS] [UNK] c d e [SEP]");
    CHECK(tokens_are(t, "ab\0c", 4, NULL, NULL, "[CLS] [UNK] [SEP]", __LINE__));
    rlx_enc_tokenizer_free(t);
}

TEST(wordpiece_long_words) {
    enc_tokenizer *t = make_tok(NULL);
    CHECK(t);
    char w[202];
    memset(w, 'a', sizeof w);
    enc_encoding e;
    CHECK_OK(rlx_enc_encode(t, w, 100, NULL, 0, NULL, &e));   /* 100 characters: pieces */
    CHECK(e.n_tokens == 102 && e.ids[1] == id_of(t, "a"));
    for (size_t i = 2; i < 101; i++) CHECK(e.ids[i] == id_of(t, "##a"));
    rlx_enc_encoding_free(&e);
    CHECK_OK(rlx_enc_encode(t, w, 101, NULL, 0, NULL, &e));   /* 101: one [UNK] */
    CHECK(e.n_tokens == 3 && e.ids[1] == id_of(t, "[UNK]"));
    rlx_enc_encoding_free(&e);
    /* Characters, not bytes, count: 60 two-byte é are within the limit. */
    char ew[120];
    for (int i = 0; i < 60; i++) { ew[2 * i] = (char)0xC3; ew[2 * i + 1] = (char)0xA9; }
    wp_options wo;
    wp_options_init(&wo);
    wo.lowercase = false;
    enc_tokenizer *c = make_tok(&wo);
    CHECK(c);
    CHECK_OK(rlx_enc_encode(c, ew, sizeof ew, NULL, 0, NULL, &e));
    CHECK(e.n_tokens == 62 && e.ids[1] == id_of(c, "é") && e.ids[60] == id_of(c, "##é"));
    rlx_enc_encoding_free(&e);
    rlx_enc_tokenizer_free(c);
    /* max_chars_per_word is an option. */
    wp_options_init(&wo);
    wo.max_chars_per_word = 5;
    c = make_tok(&wo);
    CHECK(c);
    TOKENS(c, "hello jumped", "[CLS] hello [UNK] [SEP]");
    rlx_enc_tokenizer_free(c);
    rlx_enc_tokenizer_free(t);
}

/* ------------------------------------------- pairs, truncation, padding */

TEST(wordpiece_truncate_rule) {
    static const size_t cases[][5] = {   /* a, b, budget -> a_keep, b_keep */
        {3, 3, 10, 3, 3}, {10, 10, 9, 4, 5}, {6, 10, 9, 4, 5}, {10, 6, 9, 5, 4}, {2, 10, 9, 2, 7},
        {10, 2, 9, 7, 2}, {20, 1, 5, 4, 1}, {5, 5, 0, 0, 0}, {4, 4, 8, 4, 4}, {5, 4, 8, 4, 4}, {0, 9, 4, 0, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t ka, kb;
        rlx_enc_truncate_pair(cases[i][0], cases[i][1], cases[i][2], &ka, &kb);
        CHECK_MSG(ka == cases[i][3] && kb == cases[i][4], "(%zu, %zu, budget %zu) -> (%zu, %zu), want (%zu, %zu)",
                  cases[i][0], cases[i][1], cases[i][2], ka, kb, cases[i][3], cases[i][4]);
    }
}

TEST(wordpiece_pairs) {
    enc_tokenizer *t = make_tok(NULL);
    CHECK(t);
    enc_options o;
    enc_options_init(&o);
    CHECK(tokens_are(t, "the quick", 9, "hello world", &o, "[CLS] the quick [SEP] hello world [SEP]", __LINE__));
    enc_encoding e;
    CHECK_OK(rlx_enc_encode(t, "the quick brown fox", 19, "hello world", 11, &o, &e));
    CHECK(e.n_tokens == 9 && e.n_truncated == 0);
    int32_t types[] = {0, 0, 0, 0, 0, 0, 1, 1, 1};
    CHECK(memcmp(e.type_ids, types, sizeof types) == 0);
    rlx_enc_encoding_free(&e);
    /* Budget 4 for 4 + 2 tokens: the shorter keeps its 2. */
    o.max_length = 7;
    CHECK(tokens_are(t, "the quick brown fox", 19, "hello world", &o, "[CLS] the quick [SEP] hello world [SEP]", __LINE__));
    CHECK_OK(rlx_enc_encode(t, "the quick brown fox", 19, "hello world", 11, &o, &e));
    CHECK(e.n_tokens == 7 && e.n_truncated == 2 && e.type_ids[4] == 1);
    rlx_enc_encoding_free(&e);
    /* Budget 3 for 4 + 4: the longer (b, on a tie) gets the odd token. */
    o.max_length = 6;
    CHECK(tokens_are(t, "the quick brown fox", 19, "a b c d", &o, "[CLS] the [SEP] a b [SEP]", __LINE__));
    /* Single text: the tail goes. */
    o.max_length = 4;
    CHECK(tokens_are(t, "the quick brown fox", 19, NULL, &o, "[CLS] the quick [SEP]", __LINE__));
    o.max_length = 2;
    CHECK(tokens_are(t, "the quick", 9, NULL, &o, "[CLS] [SEP]", __LINE__));
    o.max_length = 1;
    CHECK_STATUS(rlx_enc_encode(t, "the", 3, NULL, 0, &o, &e), RLX_STATUS_INVALID_ARGUMENT);
    o.max_length = 2;
    CHECK_STATUS(rlx_enc_encode(t, "the", 3, "fox", 3, &o, &e), RLX_STATUS_INVALID_ARGUMENT);
    /* Without the template: no [CLS]/[SEP], max_length counts tokens only. */
    o.add_special = false;
    o.max_length = 3;
    CHECK(tokens_are(t, "the quick brown fox", 19, "hi", &o, "the quick hi", __LINE__));
    rlx_enc_tokenizer_free(t);
}

TEST(wordpiece_padding_and_batches) {
    enc_tokenizer *t = make_tok(NULL);
    CHECK(t);
    enc_options o;
    enc_options_init(&o);
    o.max_length = 6;
    o.pad_to_max_length = true;
    enc_encoding e;
    CHECK_OK(rlx_enc_encode(t, "hello world", 11, NULL, 0, &o, &e));
    int32_t ids[] = {2, id_of(t, "hello"), id_of(t, "world"), 3, 0, 0}, mask[] = {1, 1, 1, 1, 0, 0};
    CHECK(e.len == 6 && e.n_tokens == 4 && memcmp(e.ids, ids, sizeof ids) == 0 && memcmp(e.attention_mask, mask, sizeof mask) == 0);
    rlx_enc_encoding_free(&e);

    const char *a[] = {"hello world", "hi", "", "the quick brown fox jumps over"};
    const char *b[] = {NULL, "fox", NULL, "dog"};
    enc_options_init(&o);
    enc_batch bt;
    CHECK_OK(rlx_enc_encode_batch(t, 3, a, NULL, NULL, NULL, &o, &bt));
    CHECK(bt.n == 3 && bt.seq_len == 4 && bt.lengths[0] == 4 && bt.lengths[1] == 3 && bt.lengths[2] == 2);
    int32_t want_ids[] = {2, id_of(t, "hello"), id_of(t, "world"), 3,  2, id_of(t, "hi"), 3, 0,  2, 3, 0, 0};
    int32_t want_mask[] = {1, 1, 1, 1,  1, 1, 1, 0,  1, 1, 0, 0};
    CHECK(memcmp(bt.ids, want_ids, sizeof want_ids) == 0 && memcmp(bt.attention_mask, want_mask, sizeof want_mask) == 0);
    for (int i = 0; i < 12; i++) CHECK(bt.type_ids[i] == 0);
    rlx_enc_batch_free(&bt);
    /* Pairs in a batch (a NULL b is a single row), truncated, padded to max_length. */
    o.max_length = 8;
    o.pad_to_max_length = true;
    CHECK_OK(rlx_enc_encode_batch(t, 4, a, NULL, b, NULL, &o, &bt));
    CHECK(bt.seq_len == 8 && bt.lengths[0] == 4 && bt.lengths[1] == 5 && bt.lengths[3] == 8);
    int32_t row3[] = {2, id_of(t, "the"), id_of(t, "quick"), id_of(t, "brown"), id_of(t, "fox"), 3, id_of(t, "dog"), 3};
    int32_t row3_types[] = {0, 0, 0, 0, 0, 0, 1, 1}, row1_types[] = {0, 0, 0, 1, 1, 0, 0, 0};
    CHECK(memcmp(bt.ids + 3 * 8, row3, sizeof row3) == 0 && memcmp(bt.type_ids + 3 * 8, row3_types, sizeof row3_types) == 0);
    CHECK(memcmp(bt.type_ids + 8, row1_types, sizeof row1_types) == 0);
    rlx_enc_batch_free(&bt);
    /* Explicit lengths, and an empty batch. */
    size_t lens[] = {5, 2};
    enc_options_init(&o);
    CHECK_OK(rlx_enc_encode_batch(t, 2, a, lens, NULL, NULL, &o, &bt));
    CHECK(bt.seq_len == 3 && bt.ids[1] == id_of(t, "hello") && bt.ids[4] == id_of(t, "hi"));
    rlx_enc_batch_free(&bt);
    CHECK_OK(rlx_enc_encode_batch(t, 0, NULL, NULL, NULL, NULL, &o, &bt));
    CHECK(bt.n == 0 && bt.seq_len == 0);
    rlx_enc_batch_free(&bt);
    rlx_enc_tokenizer_free(t);
}

TEST(wordpiece_decode) {
    enc_tokenizer *t = make_tok(NULL);
    CHECK(t);
    enc_encoding e;
    CHECK_OK(rlx_enc_encode(t, "Unaffable hello!", 16, NULL, 0, NULL, &e));
    char *s;
    size_t n;
    CHECK_OK(rlx_enc_decode(t, e.ids, e.n_tokens, false, &s, &n));
    CHECK_MSG(strcmp(s, "[CLS] unaffable hello ! [SEP]") == 0 && n == strlen(s), "got '%s'", s);
    free(s);
    CHECK_OK(rlx_enc_decode(t, e.ids, e.n_tokens, true, &s, &n));
    CHECK_MSG(strcmp(s, "unaffable hello !") == 0, "got '%s'", s);
    free(s);
    rlx_enc_encoding_free(&e);
    CHECK_OK(rlx_enc_decode(t, NULL, 0, true, &s, &n));
    CHECK(n == 0 && s[0] == 0);
    free(s);
    int32_t bad[] = {2, 1 << 20};
    CHECK_STATUS(rlx_enc_decode(t, bad, 2, false, &s, &n), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(rlx_last_error(), "position 1"));
    rlx_enc_tokenizer_free(t);
}

/* A RoBERTa-style template on the same model: the interface, not the vocab,
 * decides what surrounds the sequences. */
TEST(enc_tokenizer_template) {
    enc_tokenizer *t = make_tok(NULL);
    CHECK(t);
    enc_template tm;
    enc_template_roberta(&tm, id_of(t, "[CLS]"), id_of(t, "[SEP]"));
    CHECK_OK(rlx_enc_tokenizer_set_template(t, &tm));
    enc_options o;
    enc_options_init(&o);
    o.max_length = 8;
    enc_encoding e;
    CHECK_OK(rlx_enc_encode(t, "the quick brown", 15, "hello world", 11, &o, &e));
    int32_t want[] = {2, id_of(t, "the"), id_of(t, "quick"), 3, 3, id_of(t, "hello"), id_of(t, "world"), 3};
    CHECK(e.n_tokens == 8 && memcmp(e.ids, want, sizeof want) == 0);
    for (int i = 0; i < 8; i++) CHECK(e.type_ids[i] == 0);
    rlx_enc_encoding_free(&e);
    tm.pair[4] = (enc_piece){ENC_SEQ_A, 0};   /* A twice, B gone */
    CHECK_STATUS(rlx_enc_tokenizer_set_template(t, &tm), RLX_STATUS_INVALID_ARGUMENT);
    tm.pair[4] = (enc_piece){1 << 20, 0};
    CHECK_STATUS(rlx_enc_tokenizer_set_template(t, &tm), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_enc_tokenizer_add_special(t, "x", 1, -1), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_enc_tokenizer_add_special(t, "", 0, 1), RLX_STATUS_INVALID_ARGUMENT);
    /* A new special token: matched in the text, longest first. */
    CHECK_OK(rlx_enc_tokenizer_add_special(t, "[CLS]x", 6, id_of(t, "fox")));
    CHECK(rlx_enc_is_special(t, id_of(t, "fox")) && !rlx_enc_is_special(t, id_of(t, "the")));
    CHECK(tokens_are(t, "the[CLS]x[CLS]", 14, NULL, NULL, "[CLS] the fox [CLS] [SEP]", __LINE__));
    rlx_enc_tokenizer_free(t);
}

/* ------------------------------------------------------- vocab errors */

static rlx_status from_str(const char *v, enc_tokenizer **t) { return rlx_wordpiece_from_memory(v, strlen(v), NULL, t); }

TEST(wordpiece_vocab_errors) {
    enc_tokenizer *t = (enc_tokenizer *)1;
    CHECK_STATUS(from_str("", &t), RLX_STATUS_FORMAT);
    CHECK(t == NULL && strstr(rlx_last_error(), "empty"));
    CHECK_STATUS(from_str("\xEF\xBB\xBF", &t), RLX_STATUS_FORMAT);
    CHECK_STATUS(from_str("\n", &t), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "line 1 is empty"));
    CHECK_STATUS(from_str("[UNK]\n\n[CLS]\n[SEP]\n", &t), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "line 2 is empty"));
    CHECK_STATUS(rlx_wordpiece_from_memory("[UNK]\na\0b\n", 10, NULL, &t), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "line 2 has a NUL"));
    CHECK_STATUS(from_str("[UNK]\n[CLS]\nab\xFF\n[SEP]", &t), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "line 3 is not valid UTF-8 (byte 3)"));
    CHECK_STATUS(from_str("[UNK]\n[CLS]\n[SEP]\nfoo\nbar\nfoo\n", &t), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "line 6 repeats the token 'foo' of line 4"));
    CHECK_STATUS(from_str("[CLS]\n[SEP]\na\n", &t), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "'[UNK]'"));
    CHECK_STATUS(from_str("[UNK]\n[SEP]\na\n", &t), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "'[CLS]'"));
    CHECK_STATUS(from_str("[UNK]\n[CLS]\na\n", &t), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "'[SEP]'"));
    CHECK_STATUS(rlx_wordpiece_from_memory(NULL, 3, NULL, &t), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_wordpiece_load("/nonexistent/vocab.txt", NULL, &t), RLX_STATUS_IO);
    CHECK(strstr(rlx_last_error(), "/nonexistent/vocab.txt"));
    wp_options wo;
    wp_options_init(&wo);
    wo.max_chars_per_word = 0;
    CHECK_STATUS(rlx_wordpiece_from_memory("[UNK]\n[CLS]\n[SEP]\n", 18, &wo, &t), RLX_STATUS_INVALID_ARGUMENT);
    wp_options_init(&wo);
    wo.unk_token = NULL;
    CHECK_STATUS(rlx_wordpiece_from_memory("[UNK]\n[CLS]\n[SEP]\n", 18, &wo, &t), RLX_STATUS_INVALID_ARGUMENT);

    /* The smallest valid vocab: no [PAD], so padding is refused, not guessed. */
    CHECK_OK(from_str("[UNK]\n[CLS]\n[SEP]\nhi", &t));
    CHECK(rlx_enc_n_vocab(t) == 4 && id_of(t, "hi") == 3 && id_of(t, "[PAD]") == TOK_NONE);
    enc_options o;
    enc_options_init(&o);
    o.max_length = 8;
    o.pad_to_max_length = true;
    enc_encoding e;
    CHECK_STATUS(rlx_enc_encode(t, "hi", 2, NULL, 0, &o, &e), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(rlx_last_error(), "pad token"));
    const char *a[] = {"hi", "hi hi"};
    enc_batch bt;
    enc_options_init(&o);
    CHECK_STATUS(rlx_enc_encode_batch(t, 2, a, NULL, NULL, NULL, &o, &bt), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_OK(rlx_enc_encode(t, "hi hi", 5, NULL, 0, NULL, &e));   /* unpadded is fine */
    CHECK(e.n_tokens == 4 && e.ids[1] == 3 && e.ids[2] == 3);
    rlx_enc_encoding_free(&e);
    o.pad_to_max_length = true;   /* without max_length */
    CHECK_STATUS(rlx_enc_encode(t, "hi", 2, NULL, 0, &o, &e), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_enc_encode(t, NULL, 4, NULL, 0, NULL, &e), RLX_STATUS_INVALID_ARGUMENT);
    rlx_enc_tokenizer_free(t);
    CHECK_STATUS(rlx_enc_encode(NULL, "hi", 2, NULL, 0, NULL, &e), RLX_STATUS_INVALID_ARGUMENT);
}

TEST(wordpiece_load_file) {
    char path[] = "/tmp/rlx_vocab_XXXXXX";
    CHECK(test_temp_file(path));
    FILE *f = fopen(path, "wb");
    CHECK(f);
    fputs("\xEF\xBB\xBF[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nhello\r\n##s\r\nworld", f);   /* BOM, CRLF, no final newline */
    fclose(f);
    enc_tokenizer *t = NULL;
    rlx_status st = rlx_wordpiece_load(path, NULL, &t);
    remove(path);
    CHECK_OK(st);
    CHECK(rlx_enc_n_vocab(t) == 7 && id_of(t, "[PAD]") == 0 && id_of(t, "world") == 6);
    TOKENS(t, "Hellos WORLD", "[CLS] hello ##s world [SEP]");
    rlx_enc_tokenizer_free(t);
}

/* ----------------------------------------------- against the reference */

static void hex_into(sbuf *b, const char *s, size_t n) {
    static const char hx[] = "0123456789abcdef";
    sb_str(b, "x");
    for (size_t i = 0; i < n; i++) {
        char two[2] = {hx[(uint8_t)s[i] >> 4], hx[(uint8_t)s[i] & 15]};
        sb_put(b, two, 2);
    }
}

/* Strings that exercise every step (sizes from sizeof: some hold NULs). */
#define T(s) {s, sizeof(s) - 1}
static const struct { const char *s; size_t n; } REF_TEXTS[] = {
    T("Hello, World!"), T("Unaffable jumping FOXES"), T("Café Ñandú Ångström"),
    T("e\xCC\x81t\xC3\xA9 na\xC3\xAF" "ve"), T("\xC4\xB0stanbul"), T("\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4"),
    T("中国人abc一丁七"), T("\xEF\xA4\x80\xE8\xB1\x88"), T("あいうカタカナ"),
    T("hi \xF0\x9F\x98\x80 \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD"), T("wait...!?---=="), T("$12^34`~|\\"),
    T("\xC2\xBF" "Qu\xC3\xA9?\xC2\xA1S\xC3\xAD!\xE2\x80\xA6\xC2\xAB\xC2\xBB"),
    T("hel\x07lo\xE2\x80\x8B wor\xC2\xAD" "ld\xEF\xBB\xBF"),
    T("the\tquick\xC2\xA0" "brown\xE3\x80\x80" "fox\xE2\x80\xA8over\r\nlazy\xE2\x80\x83" "dog\xE2\x80\xA9x"),
    T("a\vb\fc\x1c" "d\xC2\x85" "e"), T("ab\xFF" "c\xC3"), T(""), T(" \t\n "), T("hello\xE2\x98\x83world"),
    T("[CLS]hello[MASK] [mask] [SEP][SEP]"), T("[UNK][PAD]x"), T("ΣΟΣ ΟΔΟΣ σας"), T("Привет, МИР!"),
    T("\xF0\x9D\x85\x9F x\xF0\x9D\x85\xAD\xF0\x9D\x85\xA5"), T("\xEE\x80\x80private\xCD\xB8"),
    T("\xEF\xBC\xA1\xEF\xBC\xA2\xEF\xBC\xA3 \xEF\xBD\x81"),
    T("\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87"),
    T("x\xCC\x81\xCC\xA3y\xCC\xA3\xCC\x81"), T("123,456.78 12 1234"), T("\xC3\x9F\xE1\xBA\x9E"), T("\x00zero\x00"),
};
#undef T

/* Random text from pools of code points chosen to hit every class. */
static void random_text(sbuf *b) {
    static const uint32_t pool[] = {
        'a', 'b', 'e', 'h', 'l', 'o', 'x', 'A', 'E', 'Z', '0', '1', '2', '3', '4', ' ', ' ', ' ', '\t', '\n', '\r',
        '.', ',', '!', '$', '^', '`', '[', ']', '#', 0xE9, 0xC5, 0xF1, 0xD1, 0xDF, 0x130, 0x3A3, 0x3C3, 0x3C2, 0x391,
        0x410, 0x44F, 0x301, 0x308, 0x323, 0x30A, 0x4E00, 0x4E2D, 0x9FA5, 0xF900, 0x3042, 0x30AB, 0xAC00, 0xD55C,
        0x1100, 0x1161, 0x11A8, 0xA0, 0x3000, 0x2028, 0x2003, 0x85, 0x0B, 0x0C, 0x01, 0x7F, 0x200B, 0xAD, 0xFEFF,
        0xFFFD, 0x1F600, 0x1F44D, 0x1F3FD, 0x200D, 0xFF21, 0xE000, 0x378, 0x2026, 0xBF, 0x300C, 0x212B, 0x1D15F,
        0x1D165, 0x1D16D, 0x94D, 0x928, 0x1E69, 0x1F82, 0x2F800, 0x20000, 0x2B820,
    };
    static const char *const specials[] = {"[CLS]", "[SEP]", "[MASK]", "[mask]", "[UNK]", "##"};
    int n = (int)test_rand_int(0, 24);
    for (int i = 0; i < n; i++) {
        if (test_rand_int(0, 19) == 0) sb_str(b, specials[test_rand_int(0, 5)]);
        else sb_cp(b, pool[test_rand_int(0, (int64_t)(sizeof pool / sizeof *pool) - 1)]);
    }
    if (test_rand_int(0, 9) == 0) sb_str(b, "\xF0\x9F");   /* a truncated sequence at the end */
}

typedef struct ref_case {
    char  *a, *b;             /* b NULL: single */
    size_t a_len, b_len, max_length;
} ref_case;

/* Parses "ids=1,2 types=0,0" into e-compatible arrays; false if malformed. */
static bool parse_ref_line(const char *line, int32_t *ids, int32_t *types, size_t cap, size_t *n) {
    const char *p = strstr(line, "ids=");
    if (!p) return false;
    p += 4;
    size_t k = 0;
    while (*p && *p != ' ') {
        if (k >= cap) return false;
        char *end;
        ids[k++] = (int32_t)strtol(p, &end, 10);
        p = *end == ',' ? end + 1 : end;
    }
    *n = k;
    if (strncmp(p, " types=", 7)) return false;
    p += 7;
    for (size_t i = 0; i < k; i++) {
        char *end;
        types[i] = (int32_t)strtol(p, &end, 10);
        p = *end == ',' ? end + 1 : end;
    }
    return true;
}

/* Writes vocab and cases, runs the reference, compares every case. */
static bool compare_with_reference(const char *py, const char *script, const wp_options *wo, const ref_case *cases,
                                   size_t n_cases, const char *what) {
    size_t vlen;
    char *vocab = make_vocab(&vlen);
    char vpath[] = "/tmp/rlx_wp_vocab_XXXXXX", cpath[] = "/tmp/rlx_wp_cases_XXXXXX";
    bool ok = test_temp_file(vpath) && test_temp_file(cpath);
    FILE *f = ok ? fopen(vpath, "wb") : NULL;
    if (f) { fwrite(vocab, 1, vlen, f); fclose(f); }
    sbuf c = {0};
    char line[128];
    snprintf(line, sizeof line, "%d %d %d %d %d\n", wo->lowercase, wo->strip_accents, wo->tokenize_cjk, wo->clean_text,
             wo->max_chars_per_word);
    sb_str(&c, line);
    for (size_t i = 0; i < n_cases; i++) {
        snprintf(line, sizeof line, "%zu ", cases[i].max_length);
        sb_str(&c, line);
        hex_into(&c, cases[i].a, cases[i].a_len);
        sb_str(&c, " ");
        if (cases[i].b) hex_into(&c, cases[i].b, cases[i].b_len);
        else sb_str(&c, "-");
        sb_str(&c, "\n");
    }
    f = ok ? fopen(cpath, "wb") : NULL;
    if (f) { fwrite(c.s, 1, c.n, f); fclose(f); }
    ok = ok && f;
    size_t cap = 4u << 20;
    char *out = malloc(cap), cmd[512];
    snprintf(cmd, sizeof cmd, "%s %s %s %s 2>&1", py, script, vpath, cpath);
    int code = ok ? test_run_command(cmd, out, cap) : -1;
    if (code != 0) { printf("    reference exited %d: %.2000s\n", code, out); ok = false; }

    enc_tokenizer *t = NULL;
    if (ok && rlx_wordpiece_from_memory(vocab, vlen, wo, &t) != RLX_OK) { printf("    vocab: %s\n", rlx_last_error()); ok = false; }
    char *save = NULL, *ln = ok ? strtok_r(out, "\n", &save) : NULL;
    int32_t ids[512], types[512];
    size_t bad = 0;
    for (size_t i = 0; ok && i < n_cases; i++, ln = strtok_r(NULL, "\n", &save)) {
        size_t n;
        if (!ln || !parse_ref_line(ln, ids, types, 512, &n)) { printf("    %s case %zu: bad reference line '%s'\n", what, i, ln ? ln : "(none)"); ok = false; break; }
        enc_options o;
        enc_options_init(&o);
        o.max_length = cases[i].max_length;
        enc_encoding e;
        if (rlx_enc_encode(t, cases[i].a, cases[i].a_len, cases[i].b, cases[i].b_len, &o, &e) != RLX_OK) {
            printf("    %s case %zu: %s\n", what, i, rlx_last_error());
            ok = false;
            break;
        }
        bool same = e.n_tokens == n && memcmp(e.ids, ids, n * sizeof *ids) == 0 && memcmp(e.type_ids, types, n * sizeof *types) == 0;
        if (!same && bad++ < 5) {
            printf("    %s case %zu: a='", what, i);
            for (size_t k = 0; k < cases[i].a_len; k++) printf(isprint((unsigned char)cases[i].a[k]) ? "%c" : "\\x%02x", (unsigned char)cases[i].a[k]);
            printf("'%s\n      rlx:", cases[i].b ? " (pair)" : "");
            for (size_t k = 0; k < e.n_tokens; k++) printf(" %s", rlx_enc_token_text(t, e.ids[k], NULL));
            printf("\n      ref:");
            for (size_t k = 0; k < n; k++) printf(" %s", ids[k] >= 0 && ids[k] < rlx_enc_n_vocab(t) ? rlx_enc_token_text(t, ids[k], NULL) : "?");
            printf("\n");
        }
        rlx_enc_encoding_free(&e);
    }
    if (bad) { printf("    %s: %zu of %zu cases differ\n", what, bad, n_cases); ok = false; }
    rlx_enc_tokenizer_free(t);
    free(out);
    free(c.s);
    free(vocab);
    remove(vpath);
    remove(cpath);
    return ok;
}

TEST(wordpiece_matches_reference) {
    const char *py = test_program("RLX_PYTHON", "/usr/bin/python3");
    const char *script = test_program("RLX_BERT_REF", "tests/ref/bert_tokenizer_ref.py");
    if (access(py, X_OK) != 0) SKIP("no %s to run the Python reference", py);
    if (access(script, R_OK) != 0) SKIP("reference %s not found (run from the repo root or set RLX_BERT_REF)", script);
    char probe[256];
    char cmd[300];
    snprintf(cmd, sizeof cmd, "%s -c 'import unicodedata; print(unicodedata.unidata_version)'", py);
    if (test_run_command(cmd, probe, sizeof probe) != 0) SKIP("%s cannot import unicodedata", py);
    /* Category Cn differs between Unicode versions, so the tables must match. */
    if (strncmp(probe, RLX_UNICODE_VERSION, strlen(RLX_UNICODE_VERSION)) != 0)
        printf("    note: %s has Unicode %.*s, the tables %s\n", py, (int)strcspn(probe, "\n"), probe, RLX_UNICODE_VERSION);

    /* Pair lengths around every branch of the truncation rule. */
    static const size_t grid_a[] = {0, 1, 2, 3, 5, 8}, grid_b[] = {0, 1, 2, 4, 7}, grid_max[] = {3, 4, 5, 6, 8, 10, 13};
    enum { N_FIXED = sizeof REF_TEXTS / sizeof *REF_TEXTS, N_RANDOM = 150, N_PAIRS = 40, N_GRID = 6 * 5 * 7,
           N_ALL = N_FIXED + N_RANDOM + N_PAIRS + N_GRID };
    ref_case cases[N_ALL];
    sbuf pool[N_ALL][2];
    memset(pool, 0, sizeof pool);
    size_t nc = 0;
    for (size_t i = 0; i < N_FIXED; i++, nc++) {
        sb_put(&pool[nc][0], REF_TEXTS[i].s, REF_TEXTS[i].n);
        cases[nc] = (ref_case){pool[nc][0].s, NULL, REF_TEXTS[i].n, 0, 0};
    }
    for (size_t i = 0; i < N_RANDOM; i++, nc++) {
        random_text(&pool[nc][0]);
        if (!pool[nc][0].s) sb_put(&pool[nc][0], "", 0);
        cases[nc] = (ref_case){pool[nc][0].s, NULL, pool[nc][0].n, 0, test_rand_int(0, 3) == 0 ? (size_t)test_rand_int(2, 12) : 0};
    }
    for (size_t i = 0; i < N_PAIRS; i++, nc++) {
        random_text(&pool[nc][0]);
        random_text(&pool[nc][1]);
        for (int k = 0; k < 2; k++) if (!pool[nc][k].s) sb_put(&pool[nc][k], "", 0);
        cases[nc] = (ref_case){pool[nc][0].s, pool[nc][1].s, pool[nc][0].n, pool[nc][1].n,
                               i < 30 ? (size_t)test_rand_int(3, 16) : 0};
    }
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 5; j++)
            for (size_t k = 0; k < 7; k++, nc++) {
                sb_put(&pool[nc][0], "", 0);
                sb_put(&pool[nc][1], "", 0);
                for (size_t r = 0; r < grid_a[i]; r++) sb_str(&pool[nc][0], "a ");
                for (size_t r = 0; r < grid_b[j]; r++) sb_str(&pool[nc][1], "b ");
                cases[nc] = (ref_case){pool[nc][0].s, pool[nc][1].s, pool[nc][0].n, pool[nc][1].n, grid_max[k]};
            }
    struct { const char *what; bool lower; int strip; bool cjk, clean; int max_chars; } sets[] = {
        {"uncased", true, -1, true, true, 100},    {"cased", false, -1, true, true, 100},
        {"cased+strip", false, 1, true, true, 100}, {"uncased-nostrip", true, 0, true, true, 100},
        {"no-cjk", true, -1, false, true, 100},    {"max_chars 4", true, -1, true, true, 4},
    };
    bool all_match = true;
    for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
        wp_options wo;
        wp_options_init(&wo);
        wo.lowercase = sets[s].lower;
        wo.strip_accents = sets[s].strip;
        wo.tokenize_cjk = sets[s].cjk;
        wo.clean_text = sets[s].clean;
        wo.max_chars_per_word = sets[s].max_chars;
        all_match &= compare_with_reference(py, script, &wo, cases, nc, sets[s].what);
    }
    for (size_t i = 0; i < nc; i++) { free(pool[i][0].s); free(pool[i][1].s); }
    CHECK(all_match);
}
