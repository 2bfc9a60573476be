/*
 * test_tokenizer_json.c — Hugging Face tokenizer.json files written here:
 * a BERT-like WordPiece, a RoBERTa-like byte-level BPE and an XLM-R-like
 * Unigram with Metaspace, with ids checked by hand on small vocabularies
 * (accents, CJK, emoji, punctuation runs, long words, spaces, empty text,
 * pairs and truncation); the same and random strings against
 * tests/ref/tokenizer_json_ref.py (an independent Python implementation of
 * the three models); the WordPiece file against the vocab.txt tokenizer;
 * each pre-tokenizer and normalizer on its own; and the errors: unsupported
 * types named, malformed files with the byte offset, truncated files.
 */
#include "harness.h"
#include "core/json.h"
#include "models/tj_internal.h"
#include "models/tokenizer_wordpiece.h"
#include "models/unicode.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------- json kit */

typedef struct sb {
    char  *s;
    size_t n, cap;
} sb;

static void sb_put(sb *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}
static void sb_f(sb *b, const char *fmt, ...) {
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    sb_put(b, tmp, (size_t)n);
}
/* A JSON string literal of s. */
static void sb_q(sb *b, const char *s, size_t n) {
    char *q = malloc(json_quoted_len(s, n) + 1);
    char *e = json_quote(q, s, n);
    sb_put(b, q, (size_t)(e - q));
    free(q);
}

static enc_tokenizer *load_json(const char *json, int line) {
    enc_tokenizer *t = NULL;
    rlx_status st = rlx_tokenizer_json_from_memory(json, strlen(json), NULL, &t);
    if (st) harness_fail(__FILE__, line, "load: %s", rlx_last_error());
    return t;
}

/* encode(a[, b]) with max_length gives ids want[0..n) (and types, if given). */
static bool ids_are(const enc_tokenizer *t, const char *a, const char *b, size_t max_len, bool add_special,
                    const int32_t *want, size_t n, const int32_t *types, int line) {
    enc_options o;
    enc_options_init(&o);
    o.max_length = max_len;
    o.add_special = add_special;
    enc_encoding e;
    rlx_status st = rlx_enc_encode(t, a, strlen(a), b, b ? strlen(b) : 0, &o, &e);
    if (st) { harness_fail(__FILE__, line, "encode '%s': %s", a, rlx_last_error()); return false; }
    bool ok = e.n_tokens == n && (n == 0 || memcmp(e.ids, want, n * sizeof *want) == 0);
    if (ok && types) ok = memcmp(e.type_ids, types, n * sizeof *types) == 0;
    if (!ok) {
        char got[1024] = "", exp[1024] = "";
        for (size_t i = 0, k = 0; i < e.n_tokens && k < 1000; i++) k += (size_t)snprintf(got + k, sizeof got - k, " %d/%d", e.ids[i], e.type_ids[i]);
        for (size_t i = 0, k = 0; i < n && k < 1000; i++) k += (size_t)snprintf(exp + k, sizeof exp - k, " %d/%d", want[i], types ? types[i] : 0);
        harness_fail(__FILE__, line, "'%s'%s: got%s, want%s", a, b ? " (pair)" : "", got, exp);
    }
    rlx_enc_encoding_free(&e);
    return ok;
}
#define IDS(t, a, ...) do { static const int32_t w_[] = {__VA_ARGS__}; \
    CHECK(ids_are(t, a, NULL, 0, true, w_, sizeof w_ / sizeof *w_, NULL, __LINE__)); } while (0)
#define IDS_PLAIN(t, a, ...) do { static const int32_t w_[] = {__VA_ARGS__}; \
    CHECK(ids_are(t, a, NULL, 0, false, w_, sizeof w_ / sizeof *w_, NULL, __LINE__)); } while (0)

/* ------------------------------------------------------ BERT WordPiece */

static const char *const WP_VOCAB[] = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "quick", "brown", "fox", "##es", "un", "##aff",
    "##able", ".", "!", "cafe", "\xE4\xB8\xAD", ",", "a", "##a", "\xF0\x9F\x98\x80", "naive", NULL,
};

static char *bert_json(const char *normalizer, const char *post) {
    sb b = {0};
    sb_f(&b, "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, \"added_tokens\": [");
    for (int i = 0; i < 5; i++)
        sb_f(&b, "%s{\"id\": %d, \"content\": \"%s\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, "
                 "\"normalized\": false, \"special\": true}", i ? ", " : "", i, WP_VOCAB[i]);
    sb_f(&b, "], \"normalizer\": %s, \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}, \"post_processor\": %s, "
             "\"decoder\": {\"type\": \"WordPiece\", \"prefix\": \"##\", \"cleanup\": true}, "
             "\"model\": {\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\", \"continuing_subword_prefix\": \"##\", "
             "\"max_input_chars_per_word\": 100, \"vocab\": {", normalizer, post);
    for (int i = 0; WP_VOCAB[i]; i++) {
        sb_f(&b, "%s", i ? ", " : "");
        sb_q(&b, WP_VOCAB[i], strlen(WP_VOCAB[i]));
        sb_f(&b, ": %d", i);
    }
    sb_f(&b, "}}}");
    return b.s;
}

static const char BERT_NORM[] = "{\"type\": \"BertNormalizer\", \"clean_text\": true, \"handle_chinese_chars\": true, "
                                "\"strip_accents\": null, \"lowercase\": true}";
static const char BERT_POST[] = "{\"type\": \"TemplateProcessing\", "
    "\"single\": [{\"SpecialToken\": {\"id\": \"[CLS]\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, "
    "{\"SpecialToken\": {\"id\": \"[SEP]\", \"type_id\": 0}}], "
    "\"pair\": [{\"SpecialToken\": {\"id\": \"[CLS]\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, "
    "{\"SpecialToken\": {\"id\": \"[SEP]\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"B\", \"type_id\": 1}}, "
    "{\"SpecialToken\": {\"id\": \"[SEP]\", \"type_id\": 1}}], "
    "\"special_tokens\": {\"[CLS]\": {\"id\": \"[CLS]\", \"ids\": [2], \"tokens\": [\"[CLS]\"]}, "
    "\"[SEP]\": {\"id\": \"[SEP]\", \"ids\": [3], \"tokens\": [\"[SEP]\"]}}}";

TEST(tokenizer_json_bert_wordpiece) {
    char *j = bert_json(BERT_NORM, BERT_POST);
    enc_tokenizer *t = load_json(j, __LINE__);
    free(j);
    CHECK(t);
    IDS(t, "The quick brown foxes!", 2, 5, 6, 7, 8, 9, 14, 3);
    IDS(t, "unaffable", 2, 10, 11, 12, 3);
    IDS(t, "Caf\xC3\xA9 NA\xC3\x8FVE", 2, 15, 21, 3);            /* accents stripped, lower-cased */
    IDS(t, "\xE4\xB8\xAD,\xE4\xB8\xAD", 2, 16, 17, 16, 3);      /* CJK split out */
    IDS(t, "a\xE4\xB8\xAD" "a", 2, 18, 16, 18, 3);
    IDS(t, "hello", 2, 1, 3);                                   /* unknown word */
    IDS(t, "!!!...", 2, 14, 14, 14, 13, 13, 13, 3);             /* punctuation runs */
    IDS(t, "  \t the\n", 2, 5, 3);                              /* spaces around */
    IDS(t, "", 2, 3);
    IDS(t, "\xF0\x9F\x98\x80!", 2, 20, 14, 3);                  /* emoji */
    IDS(t, "the[MASK]fox", 2, 5, 4, 8, 3);                      /* special matched before normalizing */
    IDS(t, "a\xE2\x80\x8B" "a\x01", 2, 18, 19, 3);                /* ZWSP, control dropped */
    char longw[160];
    memset(longw, 'a', 150);
    longw[150] = 0;
    IDS(t, longw, 2, 1, 3);                                     /* over max_input_chars_per_word */
    longw[5] = 0;
    IDS(t, longw, 2, 18, 19, 19, 19, 19, 3);
    /* pairs, truncation (budget 3: the shorter B keeps 1, A takes 2) */
    static const int32_t pw[] = {2, 5, 6, 3, 8, 3}, pt[] = {0, 0, 0, 0, 1, 1};
    CHECK(ids_are(t, "the quick brown", "fox", 6, true, pw, 6, pt, __LINE__));
    static const int32_t pf[] = {2, 5, 6, 7, 3, 8, 3}, ptf[] = {0, 0, 0, 0, 0, 1, 1};
    CHECK(ids_are(t, "the quick brown", "fox", 0, true, pf, 7, ptf, __LINE__));
    static const int32_t sw[] = {2, 5, 3};
    CHECK(ids_are(t, "the quick brown", NULL, 3, true, sw, 3, NULL, __LINE__));
    CHECK(t->pad_id == 0);
    /* batch padding with [PAD] */
    const char *texts[2] = {"the", "the quick fox"};
    enc_batch bt;
    CHECK_OK(rlx_enc_encode_batch(t, 2, texts, NULL, NULL, NULL, NULL, &bt));
    CHECK(bt.seq_len == 5 && bt.ids[3] == 0 && bt.attention_mask[3] == 0 && bt.attention_mask[2] == 1);
    rlx_enc_batch_free(&bt);
    int32_t dec[] = {2, 10, 11, 12, 5, 3};
    char *s;
    size_t n;
    CHECK_OK(rlx_enc_decode(t, dec, 6, true, &s, &n));
    CHECK_MSG(strcmp(s, "unaffable the") == 0, "decode: '%s'", s);
    free(s);
    rlx_enc_tokenizer_free(t);

    /* BertProcessing and a cased normalizer keep accents and case */
    j = bert_json("{\"type\": \"BertNormalizer\", \"lowercase\": false}",
                  "{\"type\": \"BertProcessing\", \"sep\": [\"[SEP]\", 3], \"cls\": [\"[CLS]\", 2]}");
    t = load_json(j, __LINE__);
    free(j);
    CHECK(t);
    IDS(t, "The the", 2, 1, 5, 3);
    IDS(t, "caf\xC3\xA9", 2, 1, 3);
    static const int32_t bp[] = {2, 5, 3, 8, 3}, bpt[] = {0, 0, 0, 1, 1};
    CHECK(ids_are(t, "the", "fox", 0, true, bp, 5, bpt, __LINE__));
    rlx_enc_tokenizer_free(t);
}

/* The tokenizer.json WordPiece and the vocab.txt one (bert_normalize.c)
 * are separate code paths: they must agree on every string. */
TEST(tokenizer_json_wordpiece_agrees_with_vocab_txt) {
    char *j = bert_json(BERT_NORM, BERT_POST);
    enc_tokenizer *t = load_json(j, __LINE__);
    free(j);
    CHECK(t);
    sb v = {0};
    for (int i = 0; WP_VOCAB[i]; i++) sb_f(&v, "%s\n", WP_VOCAB[i]);
    enc_tokenizer *w = NULL;
    CHECK_OK(rlx_wordpiece_from_memory(v.s, v.n, NULL, &w));
    free(v.s);
    static const char *const alpha[] = {"the", "a", "fox", "es", " ", "  ", ".", "!", ",", "\xC3\xA9", "\xC3\x89", "\xE4\xB8\xAD",
                                        "\xF0\x9F\x98\x80", "\t", "\n", "\xE2\x80\x8B", "\x01", "un", "aff", "able", "[SEP]",
                                        "\xCC\x81", "\xEF\xBF\xBD", "\xC2\xA0", "Q", "\xE3\x80\x80", "\xff"};
    int bad = 0;
    for (int r = 0; r < 400; r++) {
        sb s = {0};
        sb_put(&s, "", 0);
        int k = (int)test_rand_int(0, 12);
        for (int i = 0; i < k; i++) {
            const char *p = alpha[test_rand_int(0, (int64_t)(sizeof alpha / sizeof *alpha) - 1)];
            sb_put(&s, p, strlen(p));
        }
        enc_encoding a, b;
        CHECK_OK(rlx_enc_encode(t, s.s, s.n, NULL, 0, NULL, &a));
        CHECK_OK(rlx_enc_encode(w, s.s, s.n, NULL, 0, NULL, &b));
        if (a.n_tokens != b.n_tokens || memcmp(a.ids, b.ids, a.n_tokens * sizeof *a.ids) != 0) {
            if (bad++ < 3) printf("    differ on '%s' (%zu vs %zu tokens)\n", s.s, a.n_tokens, b.n_tokens);
        }
        rlx_enc_encoding_free(&a);
        rlx_enc_encoding_free(&b);
        free(s.s);
    }
    rlx_enc_tokenizer_free(t);
    rlx_enc_tokenizer_free(w);
    CHECK(bad == 0);
}

/* ----------------------------------------------- RoBERTa byte-level BPE */

/* <s> 0, <pad> 1, </s> 2, <unk> 3, byte b's character 4 + b, then one
 * token per merge (260 + rank). */
static const char *const MERGES[][2] = {
    {"h", "e"}, {"l", "l"}, {"\xC4\xA0", "t"}, {"\xC4\xA0t", "he"}, {"he", "ll"}, {"hell", "o"},
    {"\xC4\xA0", "w"}, {"o", "r"}, {"\xC4\xA0w", "or"}, {"l", "d"}, {"\xC4\xA0wor", "ld"},
};
#define N_MERGES (int)(sizeof MERGES / sizeof *MERGES)

static char *roberta_json(bool array_merges, bool prefix_space, const char *extra_model) {
    sb b = {0};
    static const char *const sp[4] = {"<s>", "<pad>", "</s>", "<unk>"};
    sb_f(&b, "{\"added_tokens\": [");
    for (int i = 0; i < 4; i++)
        sb_f(&b, "%s{\"id\": %d, \"content\": \"%s\", \"special\": true, \"normalized\": %s}", i ? ", " : "", i, sp[i],
             i == 3 ? "true" : "false");
    sb_f(&b, "], \"normalizer\": null, \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": %s, "
             "\"trim_offsets\": true, \"use_regex\": true}, "
             "\"post_processor\": {\"type\": \"RobertaProcessing\", \"sep\": [\"</s>\", 2], \"cls\": [\"<s>\", 0], "
             "\"trim_offsets\": true, \"add_prefix_space\": %s}, "
             "\"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true}, "
             "\"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, \"continuing_subword_prefix\": \"\", "
             "\"end_of_word_suffix\": \"\", \"fuse_unk\": false%s, \"vocab\": {",
         prefix_space ? "true" : "false", prefix_space ? "true" : "false", extra_model);
    for (int i = 0; i < 4; i++) sb_f(&b, "\"%s\": %d, ", sp[i], i);
    for (int c = 0; c < 256; c++) {
        char u[4];
        size_t n = uni_utf8_encode(tok_byte_to_cp((uint8_t)c), u);
        sb_q(&b, u, n);
        sb_f(&b, ": %d, ", 4 + c);
    }
    for (int m = 0; m < N_MERGES; m++) {
        char cat[32];
        snprintf(cat, sizeof cat, "%s%s", MERGES[m][0], MERGES[m][1]);
        sb_q(&b, cat, strlen(cat));
        sb_f(&b, ": %d%s", 260 + m, m + 1 < N_MERGES ? ", " : "");
    }
    sb_f(&b, "}, \"merges\": [");
    for (int m = 0; m < N_MERGES; m++) {
        if (array_merges) {
            sb_f(&b, "%s[", m ? ", " : "");
            sb_q(&b, MERGES[m][0], strlen(MERGES[m][0]));
            sb_f(&b, ", ");
            sb_q(&b, MERGES[m][1], strlen(MERGES[m][1]));
            sb_f(&b, "]");
        } else {
            char s[32];
            snprintf(s, sizeof s, "%s %s", MERGES[m][0], MERGES[m][1]);
            sb_f(&b, "%s", m ? ", " : "");
            sb_q(&b, s, strlen(s));
        }
    }
    sb_f(&b, "]}}");
    return b.s;
}

#define B(c) (4 + (c))
enum { HE = 260, LL, GT, GTHE, HELL, HELLO, GW, OR, GWOR, LD, GWORLD };

TEST(tokenizer_json_roberta_bpe) {
    for (int form = 0; form < 2; form++) {
        char *j = roberta_json(form == 1, false, "");
        enc_tokenizer *t = load_json(j, __LINE__);
        free(j);
        CHECK(t);
        IDS(t, "hello world", 0, HELLO, GWORLD, 2);
        IDS(t, "hello the world", 0, HELLO, GTHE, GWORLD, 2);
        IDS(t, "the", 0, B('t'), HE, 2);                           /* no space: "t" + "he" */
        IDS(t, "Hello", 0, B('H'), B('e'), LL, B('o'), 2);       /* "h e" is lower-case only */
        IDS(t, "\xF0\x9F\x98\x80", 0, B(0xF0), B(0x9F), B(0x98), B(0x80), 2);   /* emoji: its bytes */
        IDS(t, "caf\xC3\xA9", 0, B('c'), B('a'), B('f'), B(0xC3), B(0xA9), 2);
        IDS(t, "hi  ", 0, B('h'), B('i'), B(' '), B(' '), 2);      /* trailing spaces: one run */
        IDS(t, "  hello", 0, B(' '), B(' '), HELLO, 2);   /* " " then " hello" (no "Ġ hello" merge) */
        IDS(t, "!!?", 0, B('!'), B('!'), B('?'), 2);
        IDS(t, "<s>hello</s>", 0, 0, HELLO, 2, 2);
        IDS(t, "", 0, 2);
        static const int32_t pw[] = {0, HELLO, 2, 2, B('t'), HE, 2};
        CHECK(ids_are(t, "hello", "the", 0, true, pw, 7, NULL, __LINE__));
        static const int32_t tw[] = {0, HELLO, 2};
        CHECK(ids_are(t, "hello world", NULL, 3, true, tw, 3, NULL, __LINE__));
        CHECK(t->pad_id == 1);
        int32_t ids[] = {0, HELLO, GWORLD, B(0xC3), B(0xA9), 2};
        char *s;
        size_t n;
        CHECK_OK(rlx_enc_decode(t, ids, 6, true, &s, &n));
        CHECK_MSG(strcmp(s, "hello world\xC3\xA9") == 0, "decode: '%s'", s);
        free(s);
        rlx_enc_tokenizer_free(t);
    }
    char *j = roberta_json(false, true, "");
    enc_tokenizer *t = load_json(j, __LINE__);
    free(j);
    CHECK(t);
    IDS(t, "hello world", 0, B(' '), HELLO, GWORLD, 2);   /* " hello": no "Ġ he" merge */
    IDS(t, "the", 0, GTHE, 2);
    IDS(t, " the", 0, GTHE, 2);                              /* no second space added */
    rlx_enc_tokenizer_free(t);
    /* ignore_merges: a word in the vocabulary is taken whole */
    j = roberta_json(false, false, ", \"ignore_merges\": true");
    t = load_json(j, __LINE__);
    free(j);
    CHECK(t);
    IDS(t, "hell", 0, HELL, 2);
    rlx_enc_tokenizer_free(t);
}

/* BPE without byte-level: unk (fused or not), byte fallback, prefix / suffix. */
TEST(tokenizer_json_bpe_unk_fallback_suffix) {
    const char *base =
        "{\"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"fuse_unk\": %s, \"byte_fallback\": %s, "
        "\"end_of_word_suffix\": \"</w>\", \"vocab\": {\"<unk>\": 0, \"a\": 1, \"b\": 2, \"a</w>\": 3, \"b</w>\": 4, "
        "\"ab\": 5, \"ab</w>\": 6, \"<0xC3>\": 7, \"<0xA9>\": 8}, \"merges\": [\"a b</w>\", \"a b\"]}, "
        "\"pre_tokenizer\": {\"type\": \"WhitespaceSplit\"}}";
    char j[1024];
    snprintf(j, sizeof j, base, "false", "false");
    enc_tokenizer *t = load_json(j, __LINE__);
    CHECK(t);
    IDS(t, "ab ab ba", 6, 6, 2, 3);
    IDS(t, "abab", 5, 6);
    IDS(t, "axxb", 1, 0, 0, 4);
    rlx_enc_tokenizer_free(t);
    snprintf(j, sizeof j, base, "true", "false");
    t = load_json(j, __LINE__);
    CHECK(t);
    IDS(t, "axxb", 1, 0, 4);
    IDS(t, "\xC3\xA9", 0);
    rlx_enc_tokenizer_free(t);
    snprintf(j, sizeof j, base, "true", "true");
    t = load_json(j, __LINE__);
    CHECK(t);
    IDS(t, "a\xC3\xA9" "b", 1, 7, 8, 4);
    IDS(t, "x", 0);                                      /* no <0x78>: unk */
    rlx_enc_tokenizer_free(t);
    /* continuing_subword_prefix: merges join "a" and "##b" into "ab" */
    const char *pre = "{\"model\": {\"type\": \"BPE\", \"unk_token\": \"[UNK]\", \"continuing_subword_prefix\": \"##\", "
                      "\"vocab\": {\"[UNK]\": 0, \"a\": 1, \"##b\": 2, \"ab\": 3, \"##a\": 4, \"b\": 5}, \"merges\": [\"a ##b\"]}}";
    t = load_json(pre, __LINE__);
    CHECK(t);
    IDS(t, "ab", 3);
    IDS(t, "aab", 1, 4, 2);
    IDS(t, "ba", 5, 4);
    rlx_enc_tokenizer_free(t);
}

/* ----------------------------------------------------- XLM-R Unigram */

static const char UNIGRAM[] =
    "{\"added_tokens\": [{\"id\": 0, \"content\": \"<s>\", \"special\": true}, {\"id\": 1, \"content\": \"<pad>\", \"special\": true}, "
    "{\"id\": 2, \"content\": \"</s>\", \"special\": true}, {\"id\": 3, \"content\": \"<unk>\", \"special\": true}, "
    "{\"id\": 20, \"content\": \"<mask>\", \"special\": true, \"lstrip\": true}], "
    "\"normalizer\": %s, "
    "\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"WhitespaceSplit\"}, "
    "{\"type\": \"Metaspace\", \"replacement\": \"\\u2581\", \"prepend_scheme\": \"always\", \"split\": true}]}, "
    "\"post_processor\": {\"type\": \"TemplateProcessing\", "
    "\"single\": [{\"SpecialToken\": {\"id\": \"<s>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, "
    "{\"SpecialToken\": {\"id\": \"</s>\", \"type_id\": 0}}], "
    "\"pair\": [{\"SpecialToken\": {\"id\": \"<s>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, "
    "{\"SpecialToken\": {\"id\": \"</s>\", \"type_id\": 0}}, {\"SpecialToken\": {\"id\": \"</s>\", \"type_id\": 0}}, "
    "{\"Sequence\": {\"id\": \"B\", \"type_id\": 0}}, {\"SpecialToken\": {\"id\": \"</s>\", \"type_id\": 0}}], "
    "\"special_tokens\": {\"<s>\": {\"id\": \"<s>\", \"ids\": [0], \"tokens\": [\"<s>\"]}, "
    "\"</s>\": {\"id\": \"</s>\", \"ids\": [2], \"tokens\": [\"</s>\"]}}}, "
    "\"decoder\": {\"type\": \"Metaspace\", \"replacement\": \"\\u2581\", \"prepend_scheme\": \"always\", \"split\": true}, "
    "\"model\": {\"type\": \"Unigram\", \"unk_id\": 3, \"byte_fallback\": %s, \"vocab\": ["
    "[\"<s>\", 0.0], [\"<pad>\", 0.0], [\"</s>\", 0.0], [\"<unk>\", 0.0], [\"\\u2581\", -2.0], [\"\\u2581he\", -3.0], "
    "[\"llo\", -3.0], [\"\\u2581hello\", -4.5], [\"h\", -5.0], [\"e\", -5.0], [\"l\", -5.0], [\"o\", -5.0], [\"\\u2581w\", -4.0], "
    "[\"or\", -4.0], [\"ld\", -4.0], [\"\\u2581world\", -5.0], [\"w\", -6.0], [\"r\", -6.0], [\"d\", -6.0], "
    "[\"\\u2581wor\", -4.2], [\"<mask>\", 0.0], [\"<0xC3>\", -7.0], [\"<0xA9>\", -7.0], [\"\\u4e2d\", -3.0]]}}";

TEST(tokenizer_json_xlmr_unigram) {
    char j[8192];
    snprintf(j, sizeof j, UNIGRAM, "null", "false");
    enc_tokenizer *t = load_json(j, __LINE__);
    CHECK(t);
    IDS(t, "hello world", 0, 7, 15, 2);     /* whole pieces beat ▁he + llo and ▁wor + ld */
    IDS(t, "hellx", 0, 5, 10, 10, 3, 2);    /* ▁he l l, then x: unk */
    IDS(t, "xy", 0, 4, 3, 2);               /* ▁ then one fused unk */
    IDS(t, "  hello  ", 0, 7, 2);
    IDS(t, "", 0, 2);
    IDS(t, "\xE4\xB8\xAD", 0, 4, 23, 2);
    IDS(t, "caf\xC3\xA9", 0, 4, 3, 2);      /* no byte_fallback: one unk */
    IDS(t, "hello<mask>", 0, 7, 20, 2);
    static const int32_t pw[] = {0, 7, 2, 2, 15, 2}, pt[] = {0, 0, 0, 0, 0, 0};
    CHECK(ids_are(t, "hello", "world", 0, true, pw, 6, pt, __LINE__));
    CHECK(t->pad_id == 1);
    int32_t ids[] = {0, 7, 15, 2};
    char *s;
    size_t n;
    CHECK_OK(rlx_enc_decode(t, ids, 4, true, &s, &n));
    CHECK_MSG(strcmp(s, "hello world") == 0, "decode: '%s'", s);
    free(s);
    rlx_enc_tokenizer_free(t);
    snprintf(j, sizeof j, UNIGRAM, "null", "true");
    t = load_json(j, __LINE__);
    CHECK(t);
    IDS(t, "\xC3\xA9", 0, 4, 21, 22, 2);    /* byte_fallback: é as <0xC3> <0xA9> */
    IDS(t, "x", 0, 4, 3, 2);                /* no byte token for 'x': unk */
    rlx_enc_tokenizer_free(t);
    /* normalizers in a Sequence: Replace, Lowercase, Strip, Prepend */
    snprintf(j, sizeof j, UNIGRAM,
             "{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Replace\", \"pattern\": {\"String\": \"W\"}, "
             "\"content\": \"w\"}, {\"type\": \"Lowercase\"}, {\"type\": \"Strip\", \"strip_left\": true, \"strip_right\": true}, "
             "{\"type\": \"NFD\"}, {\"type\": \"StripAccents\"}]}", "false");
    t = load_json(j, __LINE__);
    CHECK(t);
    IDS(t, "  HELL\xC3\x93  WORLD ", 0, 7, 15, 2);
    rlx_enc_tokenizer_free(t);
}

/* ------------------------------------------- pre-tokenizers one by one */

/* Pieces of text under the pre_tokenizer JSON pre, joined by '|'. */
static bool pieces_are(const char *pre, const char *text, const char *want, int line) {
    char j[2048];
    snprintf(j, sizeof j, "{\"pre_tokenizer\": %s, \"model\": {\"type\": \"WordPiece\", \"unk_token\": \"u\", \"vocab\": {\"u\": 0}}}", pre);
    enc_tokenizer *t = NULL;
    if (rlx_tokenizer_json_from_memory(j, strlen(j), NULL, &t)) { harness_fail(__FILE__, line, "%s", rlx_last_error()); return false; }
    const tj_model *m = t->model;
    tj_pieces p = {0};
    bool ok = tj_pretokenize(m->pres, m->n_pres, text, strlen(text), &p) == RLX_OK;
    sb got = {0};
    sb_put(&got, "", 0);
    for (size_t i = 0; ok && i < p.n; i++) {
        if (i) sb_put(&got, "|", 1);
        sb_put(&got, p.buf.s + p.off[i], p.len[i]);
    }
    if (ok && strcmp(got.s, want) != 0) { harness_fail(__FILE__, line, "'%s': got '%s', want '%s'", text, got.s, want); ok = false; }
    free(got.s);
    tj_pieces_free(&p);
    rlx_enc_tokenizer_free(t);
    return ok;
}
#define PIECES(pre, text, want) CHECK(pieces_are(pre, text, want, __LINE__))

TEST(tokenizer_json_pre_tokenizers) {
    PIECES("{\"type\": \"Whitespace\"}", "Hey friend!  How's it_going?", "Hey|friend|!|How|'|s|it_going|?");
    PIECES("{\"type\": \"WhitespaceSplit\"}", "  a\tb!\n c ", "a|b!|c");
    PIECES("{\"type\": \"BertPreTokenizer\"}", "Hey, you... ok", "Hey|,|you|.|.|.|ok");
    PIECES("{\"type\": \"Punctuation\"}", "a--b", "a|-|-|b");
    PIECES("{\"type\": \"Punctuation\", \"behavior\": \"Removed\"}", "a--b", "a|b");
    PIECES("{\"type\": \"Punctuation\", \"behavior\": \"MergedWithPrevious\"}", "a--b", "a-|-|b");
    PIECES("{\"type\": \"Punctuation\", \"behavior\": \"MergedWithNext\"}", "a--b", "a|-|-b");
    PIECES("{\"type\": \"Punctuation\", \"behavior\": \"Contiguous\"}", "a--b", "a|--|b");
    PIECES("{\"type\": \"Digits\", \"individual_digits\": true}", "Call 123 please", "Call |1|2|3| please");
    PIECES("{\"type\": \"Digits\", \"individual_digits\": false}", "Call 123 please", "Call |123| please");
    PIECES("{\"type\": \"Split\", \"pattern\": {\"String\": \"ab\"}, \"behavior\": \"Removed\", \"invert\": false}", "xabyabab", "x|y");
    PIECES("{\"type\": \"Split\", \"pattern\": {\"String\": \" \"}, \"behavior\": \"MergedWithNext\", \"invert\": false}", "a b  c", "a| b| | c");
    PIECES("{\"type\": \"CharDelimiterSplit\", \"delimiter\": \"_\"}", "a_b__c", "a|b|c");
    PIECES("{\"type\": \"Metaspace\", \"replacement\": \"_\", \"prepend_scheme\": \"always\", \"split\": true}", "hi  you", "_hi|_|_you");
    PIECES("{\"type\": \"Metaspace\", \"replacement\": \"_\", \"prepend_scheme\": \"never\", \"split\": false}", "hi you", "hi_you");
    PIECES("{\"type\": \"Metaspace\", \"replacement\": \"_\", \"add_prefix_space\": true}", "hi you", "_hi|_you");
    PIECES("{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"WhitespaceSplit\"}, {\"type\": \"Metaspace\", "
           "\"replacement\": \"_\", \"prepend_scheme\": \"first\"}]}", "hi you", "_hi|you");
    PIECES("{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true}", "Hi you's  42!!",
           "Hi|\xC4\xA0you|'s|\xC4\xA0|\xC4\xA0" "42|!!");
    PIECES("{\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"use_regex\": false}", "a b", "\xC4\xA0" "a\xC4\xA0" "b");
    PIECES("{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|"
           "\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": \"Isolated\", "
           "\"invert\": false}", "I'M 12345 ok", "I|'M| |123|45| ok");
    PIECES("null", "a b", "a b");
}

TEST(tokenizer_json_normalizers) {
    static const struct { const char *norm, *in, *out; } c[] = {
        {"{\"type\": \"Lowercase\"}", "AbC \xC3\x89", "abc \xC3\xA9"},
        {"{\"type\": \"NFD\"}", "\xC3\xA9", "e\xCC\x81"},
        {"{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFD\"}, {\"type\": \"StripAccents\"}]}", "\xC3\xA9t\xC3\xA9", "ete"},
        {"{\"type\": \"Strip\", \"strip_left\": true, \"strip_right\": false}", "  a  ", "a  "},
        {"{\"type\": \"Replace\", \"pattern\": {\"String\": \"  \"}, \"content\": \" \"}", "a     b", "a   b"},
        {"{\"type\": \"Prepend\", \"prepend\": \"\\u2581\"}", "hi", "\xE2\x96\x81hi"},
        {"{\"type\": \"Prepend\", \"prepend\": \"_\"}", "", ""},
        {"{\"type\": \"BertNormalizer\", \"clean_text\": true, \"handle_chinese_chars\": true, \"strip_accents\": null, "
         "\"lowercase\": false}", "A\x01\t\xE4\xB8\xAD\xC3\xA9", "A  \xE4\xB8\xAD \xC3\xA9"},
        {"{\"type\": \"BertNormalizer\", \"strip_accents\": true, \"lowercase\": false}", "\xC3\x89", "E"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char j[2048];
        snprintf(j, sizeof j, "{\"normalizer\": %s, \"model\": {\"type\": \"WordPiece\", \"unk_token\": \"u\", \"vocab\": {\"u\": 0}}}", c[i].norm);
        enc_tokenizer *t = load_json(j, __LINE__);
        CHECK(t);
        const tj_model *m = t->model;
        tj_buf out = {0};
        CHECK_OK(tj_normalize(m->norms, m->n_norms, c[i].in, strlen(c[i].in), &out));
        CHECK_MSG(strcmp(out.s, c[i].out) == 0, "%s on '%s': got '%s', want '%s'", c[i].norm, c[i].in, out.s, c[i].out);
        free(out.s);
        rlx_enc_tokenizer_free(t);
    }
}

/* --------------------------------------------------------------- errors */

static rlx_status load_status(const char *json) {
    enc_tokenizer *t = NULL;
    rlx_status st = rlx_tokenizer_json_from_memory(json, strlen(json), NULL, &t);
    rlx_enc_tokenizer_free(t);
    return st;
}

#define WP_MODEL "\"model\": {\"type\": \"WordPiece\", \"unk_token\": \"u\", \"vocab\": {\"u\": 0, \"a\": 1}}"

TEST(tokenizer_json_unsupported_and_malformed) {
    static const struct { const char *json, *msg; rlx_status st; } c[] = {
        {"{\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Lowercase\"}, {\"type\": \"Nmt\"}]}, " WP_MODEL "}", "'Nmt'", RLX_STATUS_UNSUPPORTED},
        {"{\"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"Regex\": \"\\\\w+\"}, \"content\": \" \"}, " WP_MODEL "}", "Regex '\\w+'", RLX_STATUS_UNSUPPORTED},
        {"{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"\\\\d+\"}, \"behavior\": \"Isolated\"}, " WP_MODEL "}", "Regex '\\d+'", RLX_STATUS_UNSUPPORTED},
        {"{\"pre_tokenizer\": {\"type\": \"UnicodeScripts\"}, " WP_MODEL "}", "pre_tokenizer type 'UnicodeScripts'", RLX_STATUS_UNSUPPORTED},
        {"{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"a\": 0}}}", "model type 'WordLevel'", RLX_STATUS_UNSUPPORTED},
        {"{\"model\": {\"type\": \"BPE\", \"dropout\": 0.1, \"vocab\": {\"a\": 0}, \"merges\": []}}", "dropout", RLX_STATUS_UNSUPPORTED},
        {"{\"post_processor\": {\"type\": \"Frobnicate\"}, " WP_MODEL "}", "post_processor type 'Frobnicate'", RLX_STATUS_UNSUPPORTED},
        {"{\"model\": {\"type\": \"WordPiece\", \"vocab\": [1]}}", "byte 41: model.vocab is array", RLX_STATUS_FORMAT},
        {"{\"model\": {\"type\": \"WordPiece\", \"unk_token\": \"u\", \"vocab\": {\"u\": 0, \"a\": 0}}}", "id 0", RLX_STATUS_FORMAT},
        {"{\"model\": {\"type\": \"WordPiece\", \"unk_token\": \"u\", \"vocab\": {\"u\": -1}}}", "model.vocab entry", RLX_STATUS_FORMAT},
        {"{\"model\": {\"type\": \"WordPiece\", \"unk_token\": \"zz\", \"vocab\": {\"u\": 0}}}", "unk_token", RLX_STATUS_FORMAT},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"a b\"]}}", "merge 0 ('ab')", RLX_STATUS_FORMAT},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"ab\"]}}", "model.merges entry", RLX_STATUS_FORMAT},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [[\"a\"]]}}", "model.merges entry", RLX_STATUS_FORMAT},
        {"{\"model\": {\"type\": \"Unigram\", \"unk_id\": 5, \"vocab\": [[\"a\", -1.0]]}}", "unk_id", RLX_STATUS_FORMAT},
        {"{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"a\"]]}}", "[piece, score]", RLX_STATUS_FORMAT},
        {"{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}", "non-empty", RLX_STATUS_FORMAT},
        {"{\"added_tokens\": [{\"id\": 9, \"content\": \"a\"}], " WP_MODEL "}", "two ids", RLX_STATUS_FORMAT},
        {"{\"added_tokens\": [{\"content\": \"x\"}], " WP_MODEL "}", "added_tokens id", RLX_STATUS_FORMAT},
        {"{\"post_processor\": {\"type\": \"BertProcessing\", \"sep\": [\"a\", 7], \"cls\": [\"u\", 0]}, " WP_MODEL "}", "sep", RLX_STATUS_FORMAT},
        {"{\"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"X\", \"type_id\": 0}}], "
         "\"pair\": [], \"special_tokens\": {}}, " WP_MODEL "}", "special token", RLX_STATUS_FORMAT},
        {"{\"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [], \"pair\": [], \"special_tokens\": {}}, " WP_MODEL "}",
         "post_processor", RLX_STATUS_FORMAT},
        {"{\"model\": {\"type\": \"WordPiece\", \"unk_token\": \"u\", \"vocab\": {\"u\": 0, \"v\": 99999999}}}", "nearly dense", RLX_STATUS_FORMAT},
        {"{\"pre_tokenizer\": {\"type\": \"Punctuation\", \"behavior\": \"Sideways\"}, " WP_MODEL "}", "behavior", RLX_STATUS_FORMAT},
        {"{\"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\": \"ab\"}, " WP_MODEL "}", "one character", RLX_STATUS_FORMAT},
        {"{\"normalizer\": 5, " WP_MODEL "}", "normalizer", RLX_STATUS_FORMAT},
        {"{\"normalizer\": {\"kind\": \"NFD\"}, " WP_MODEL "}", "\"type\"", RLX_STATUS_FORMAT},
        {"[]", "the document", RLX_STATUS_FORMAT},
        {"{}", "model", RLX_STATUS_FORMAT},
        {"{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}} ", "byte", RLX_STATUS_FORMAT},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        rlx_status st = load_status(c[i].json);
        CHECK_MSG(st == c[i].st && strstr(rlx_last_error(), c[i].msg), "case %zu: %s '%s' (want %s with '%s')", i,
                  rlx_status_name(st), rlx_last_error(), rlx_status_name(c[i].st), c[i].msg);
        CHECK_MSG(strstr(rlx_last_error(), "tokenizer.json"), "case %zu: '%s' does not name the file", i, rlx_last_error());
    }
    enc_tokenizer *t = (enc_tokenizer *)1;
    CHECK_STATUS(rlx_tokenizer_json_from_memory(NULL, 3, NULL, &t), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(t == NULL);
    CHECK_STATUS(rlx_tokenizer_json_load("/nonexistent/tokenizer.json", &t), RLX_STATUS_IO);
}

/* Every prefix of valid files fails cleanly (FORMAT), never crashes. */
TEST(tokenizer_json_truncated_files) {
    char *j[3];
    j[0] = bert_json(BERT_NORM, BERT_POST);
    j[1] = roberta_json(true, true, "");
    char u[8192];
    snprintf(u, sizeof u, UNIGRAM, "null", "true");
    j[2] = strdup(u);
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(j[k]);
        for (size_t cut = 0; cut < n; cut += (k == 1 ? 7 : 1)) {
            enc_tokenizer *t = NULL;
            rlx_status st = rlx_tokenizer_json_from_memory(j[k], cut, NULL, &t);
            CHECK_MSG(st == RLX_STATUS_FORMAT && !t, "file %d cut at %zu: %s", k, cut, rlx_status_name(st));
        }
        enc_tokenizer *t = NULL;
        CHECK_OK(rlx_tokenizer_json_from_memory(j[k], n, NULL, &t));
        rlx_enc_tokenizer_free(t);
        free(j[k]);
    }
}

/* ------------------------------------------------- against the reference */

static void hex_into(sb *b, const char *s, size_t n) {
    sb_put(b, "x", 1);
    for (size_t i = 0; i < n; i++) sb_f(b, "%02x", (unsigned char)s[i]);
}

/* Random text from pieces that exercise each model: words of the small
 * vocabularies, case, accents, CJK, emoji, digits, punctuation runs,
 * spaces of several kinds, special tokens. Always valid UTF-8. */
static void random_text(sb *s) {
    static const char *const alpha[] = {
        "hello", "world", "the", "he", "ll", "o", "w", "or", "ld", "quick", "fox", "es", "un", "aff", "able", "a", "x",
        " ", " ", " ", "  ", "\t", "\n", "\xC2\xA0", "\xE3\x80\x80", "!", "...", "?!", "'s", "'ll", "-", "12", "345",
        "\xC3\xA9", "\xC3\x89", "e\xCC\x81", "\xC3\xB1", "\xE4\xB8\xAD", "\xE5\x9B\xBD", "\xF0\x9F\x98\x80",
        "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD", "\xD0\x96", "\xCE\xA3", "\xE2\x80\x8B", "\x01", "HELLO", "World", "[SEP]",
        "<s>", "</s>", "<mask>", "caf\xC3\xA9", "na\xC3\xAFve", "W",
    };
    s->n = 0;
    sb_put(s, "", 0);
    int k = (int)test_rand_int(0, 14);
    for (int i = 0; i < k; i++) {
        const char *p = alpha[test_rand_int(0, (int64_t)(sizeof alpha / sizeof *alpha) - 1)];
        sb_put(s, p, strlen(p));
    }
    if (test_rand_int(0, 20) == 0)
        for (int i = 0; i < 120; i++) sb_put(s, "a", 1);   /* a very long word */
}

typedef struct rcase { sb a, b; bool pair; size_t max_len; } rcase;

static bool matches_reference(const char *py, const char *script, const char *json, const rcase *c, size_t n, const char *what) {
    char jpath[] = "/tmp/rlx_tj_json_XXXXXX", cpath[] = "/tmp/rlx_tj_cases_XXXXXX";
    bool ok = test_temp_file(jpath) && test_temp_file(cpath);
    FILE *f = ok ? fopen(jpath, "wb") : NULL;
    if (f) { fputs(json, f); fclose(f); }
    sb cs = {0};
    for (size_t i = 0; i < n; i++) {
        sb_f(&cs, "%zu ", c[i].max_len);
        hex_into(&cs, c[i].a.s, c[i].a.n);
        sb_put(&cs, " ", 1);
        if (c[i].pair) hex_into(&cs, c[i].b.s, c[i].b.n);
        else sb_put(&cs, "-", 1);
        sb_put(&cs, "\n", 1);
    }
    f = ok ? fopen(cpath, "wb") : NULL;
    if (f) { fwrite(cs.s, 1, cs.n, f); fclose(f); }
    ok = ok && f;
    size_t cap = 4u << 20;
    char *out = malloc(cap), cmd[512];
    snprintf(cmd, sizeof cmd, "%s %s %s %s 2>&1", py, script, jpath, cpath);
    int code = ok ? test_run_command(cmd, out, cap) : -1;
    if (code != 0) { printf("    %s: reference exited %d: %.2000s\n", what, code, out); ok = false; }
    enc_tokenizer *t = NULL;
    if (ok && rlx_tokenizer_json_from_memory(json, strlen(json), NULL, &t) != RLX_OK) { printf("    %s: %s\n", what, rlx_last_error()); ok = false; }
    char *save = NULL, *ln = ok ? strtok_r(out, "\n", &save) : NULL;
    size_t bad = 0;
    for (size_t i = 0; ok && i < n; i++, ln = strtok_r(NULL, "\n", &save)) {
        if (!ln) { printf("    %s: reference stopped at case %zu\n", what, i); ok = false; break; }
        enc_options o;
        enc_options_init(&o);
        o.max_length = c[i].max_len;
        enc_encoding e;
        if (rlx_enc_encode(t, c[i].a.s, c[i].a.n, c[i].pair ? c[i].b.s : NULL, c[i].b.n, &o, &e) != RLX_OK) {
            printf("    %s case %zu: %s\n", what, i, rlx_last_error());
            ok = false;
            break;
        }
        sb got = {0};
        sb_f(&got, "ids=");
        for (size_t k = 0; k < e.n_tokens; k++) sb_f(&got, "%s%d", k ? "," : "", e.ids[k]);
        sb_f(&got, " types=");
        for (size_t k = 0; k < e.n_tokens; k++) sb_f(&got, "%s%d", k ? "," : "", e.type_ids[k]);
        if (strcmp(got.s, ln) != 0 && bad++ < 5)
            printf("    %s case %zu '%s'%s:\n      rlx %s\n      ref %s\n", what, i, c[i].a.s, c[i].pair ? " (pair)" : "", got.s, ln);
        free(got.s);
        rlx_enc_encoding_free(&e);
    }
    if (bad) { printf("    %s: %zu of %zu cases differ\n", what, bad, n); ok = false; }
    rlx_enc_tokenizer_free(t);
    free(out);
    free(cs.s);
    remove(jpath);
    remove(cpath);
    return ok;
}

TEST(tokenizer_json_matches_reference) {
    const char *py = test_program("RLX_PYTHON", "/usr/bin/python3");
    const char *script = test_program("RLX_TJ_REF", "tests/ref/tokenizer_json_ref.py");
    if (access(py, X_OK) != 0) SKIP("no %s to run the Python reference", py);
    if (access(script, R_OK) != 0) SKIP("reference %s not found (run from the repo root or set RLX_TJ_REF)", script);
    enum { N = 300 };
    rcase *c = calloc(N, sizeof *c);
    for (size_t i = 0; i < N; i++) {
        random_text(&c[i].a);
        c[i].pair = i % 4 == 3;
        if (c[i].pair) random_text(&c[i].b);
        c[i].max_len = test_rand_int(0, 3) == 0 ? (size_t)test_rand_int(4, 14) : 0;
    }
    char *j[5];
    j[0] = bert_json(BERT_NORM, BERT_POST);
    j[1] = bert_json("{\"type\": \"BertNormalizer\", \"lowercase\": false}",
                     "{\"type\": \"BertProcessing\", \"sep\": [\"[SEP]\", 3], \"cls\": [\"[CLS]\", 2]}");
    j[2] = roberta_json(false, true, "");
    char u[8192];
    snprintf(u, sizeof u, UNIGRAM, "null", "false");
    j[3] = strdup(u);
    snprintf(u, sizeof u, UNIGRAM,
             "{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Replace\", \"pattern\": {\"String\": \"W\"}, "
             "\"content\": \"w\"}, {\"type\": \"Lowercase\"}, {\"type\": \"Strip\", \"strip_left\": true, \"strip_right\": true}, "
             "{\"type\": \"NFD\"}, {\"type\": \"StripAccents\"}]}", "false");
    j[4] = strdup(u);
    static const char *const what[5] = {"bert uncased", "bert cased", "roberta bpe", "xlmr unigram", "unigram normalizers"};
    bool all = true;
    for (int k = 0; k < 5; k++) {
        all &= matches_reference(py, script, j[k], c, N, what[k]);
        free(j[k]);
    }
    for (size_t i = 0; i < N; i++) { free(c[i].a.s); free(c[i].b.s); }
    free(c);
    CHECK(all);
}
