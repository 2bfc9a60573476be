/*
 * test_tokenizer.c — the SPM and GPT-2 BPE tokenizers on vocabularies built
 * here: exact ids for known words (scores and merge ranks decide), byte
 * fallback, the llama3/qwen2/gpt2 pre-tokenizer splits, special tokens,
 * BOS/EOS, encode/decode round trips (also on random bytes), the streaming
 * detokenizer's UTF-8 guarantee, and the error paths.
 */
#include "harness.h"
#include "models/tokenizer.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ vocab kit */

typedef struct vkit {
    char   *tok[1024];
    float   score[1024];
    int32_t type[1024];
    int32_t n;
    char   *merge[256];
    int32_t n_merges;
} vkit;

static int32_t vk_add(vkit *v, const char *s, float score, int32_t type) {
    v->tok[v->n] = strdup(s);
    v->score[v->n] = score;
    v->type[v->n] = type;
    return v->n++;
}

static int32_t find_in(const vkit *v, const char *s) {
    for (int32_t i = 0; i < v->n; i++) if (strcmp(v->tok[i], s) == 0) return i;
    return -1;
}

static void vk_merge(vkit *v, const char *m) { v->merge[v->n_merges++] = strdup(m); }

static void vk_free(vkit *v) {
    for (int32_t i = 0; i < v->n; i++) free(v->tok[i]);
    for (int32_t i = 0; i < v->n_merges; i++) free(v->merge[i]);
}

static void vk_desc(const vkit *v, tok_vocab_desc *d, const char *model, const char *pre) {
    tok_vocab_desc_init(d);
    d->model = model;
    d->pre = pre;
    d->n_tokens = v->n;
    d->tokens = (const char *const *)v->tok;
    d->scores = v->score;
    d->token_types = v->type;
    d->n_merges = v->n_merges;
    d->merges = (const char *const *)v->merge;
}

static int32_t find(const tokenizer *t, const char *s) { return rlx_tokenizer_find(t, s, strlen(s)); }

/* Encodes s; returns the count (-1 on error, reported). */
static int encode(const tokenizer *t, const char *s, bool add_special, bool parse_special, int32_t *ids, int cap) {
    size_t n = 0;
    rlx_status st = rlx_tokenizer_encode(t, s, strlen(s), add_special, parse_special, ids, (size_t)cap, &n);
    if (st != RLX_OK) { harness_fail(__FILE__, __LINE__, "encode '%s': %s", s, rlx_last_error()); return -1; }
    return (int)n;
}

/* Checks ids == the tokens named by want (NULL-terminated list). */
static bool ids_are(const tokenizer *t, const int32_t *ids, int n, const char *const *want) {
    int k = 0;
    for (; want[k]; k++) {
        int32_t id = find(t, want[k]);
        if (k >= n || ids[k] != id) {
            harness_fail(__FILE__, __LINE__, "token %d: got id %d ('%s'), want '%s' (id %d)", k,
                         k < n ? ids[k] : -1, k < n ? rlx_tokenizer_token_text(t, ids[k], NULL) : "(end)", want[k], id);
            return false;
        }
    }
    if (k != n) { harness_fail(__FILE__, __LINE__, "got %d tokens, want %d", n, k); return false; }
    return true;
}

static bool valid_utf8(const char *s, size_t n) {
    const uint8_t *p = (const uint8_t *)s;
    for (size_t i = 0; i < n;) {
        uint8_t c = p[i];
        size_t k; uint8_t lo = 0x80, hi = 0xBF;
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) k = 2;
        else if (c >= 0xE0 && c <= 0xEF) { k = 3; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
        else if (c >= 0xF0 && c <= 0xF4) { k = 4; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
        else return false;
        if (i + k > n) return false;
        for (size_t j = 1; j < k; j++) {
            uint8_t b = p[i + j];
            if (j == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return false;
        }
        i += k;
    }
    return true;
}

/* decode(encode(s)) == s, without special tokens in the output. */
static bool round_trips(const tokenizer *t, const char *s, size_t len, bool parse_special) {
    int32_t *ids = NULL;
    size_t n = 0;
    char *out = NULL;
    size_t olen = 0;
    /* With specials rendered, BOS would show: leave it out then. */
    bool ok = rlx_tokenizer_encode_alloc(t, s, len, !parse_special, parse_special, &ids, &n) == RLX_OK &&
              rlx_tokenizer_decode_alloc(t, ids, n, parse_special ? TOK_DECODE_RENDER_SPECIAL : 0, &out, &olen) == RLX_OK;
    if (!ok) harness_fail(__FILE__, __LINE__, "round trip of '%.*s': %s", (int)len, s, rlx_last_error());
    else if (olen != len || memcmp(out, s, len) != 0) {
        harness_fail(__FILE__, __LINE__, "round trip: '%.*s' came back as '%s' (%zu tokens)", (int)len, s, out, n);
        ok = false;
    }
    free(ids);
    free(out);
    return ok;
}

/* --------------------------------------------------------- SPM fixture */

enum { SPM_UNK = 0, SPM_BOS = 1, SPM_EOS = 2 };

/* A llama-style vocabulary: <unk> <s> </s>, 256 byte tokens, then pieces
 * whose scores make "▁hello" and "▁world" win, plus an added and a control
 * token. */
static tokenizer *spm_new(vkit *v, bool swap_abc) {
    memset(v, 0, sizeof *v);
    vk_add(v, "<unk>", 0, TOK_TYPE_UNKNOWN);
    vk_add(v, "<s>", 0, TOK_TYPE_CONTROL);
    vk_add(v, "</s>", 0, TOK_TYPE_CONTROL);
    for (int b = 0; b < 256; b++) {
        char s[8];
        snprintf(s, sizeof s, "<0x%02X>", b);
        vk_add(v, s, 0, TOK_TYPE_BYTE);
    }
    static const struct { const char *s; float score; } pieces[] = {
        {"\xE2\x96\x81", -1}, {"h", -10}, {"e", -10}, {"l", -10}, {"o", -10}, {"w", -10}, {"r", -10},
        {"d", -10}, {"a", -10}, {"b", -10}, {"c", -10}, {"t", -10}, {"s", -10}, {"i", -10}, {"x", -10},
        {"ll", -1}, {"\xE2\x96\x81h", -2}, {"\xE2\x96\x81he", -3}, {"llo", -4}, {"\xE2\x96\x81hello", -5},
        {"\xE2\x96\x81w", -2}, {"or", -2.5f}, {"\xE2\x96\x81wor", -3.5f}, {"ld", -4.5f},
        {"\xE2\x96\x81world", -6}, {"\xE2\x96\x81\xE2\x96\x81", -7}, {"\xC3\xA9t\xC3\xA9", -8},
        {"\xC3\xA9", -9}, {"t\xC3\xA9", -8.5f},
    };
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) vk_add(v, pieces[i].s, pieces[i].score, TOK_TYPE_NORMAL);
    /* "abc": "bc" outranks "ab" unless swapped */
    vk_add(v, "ab", swap_abc ? -0.5f : -1.0f, TOK_TYPE_NORMAL);
    vk_add(v, "bc", swap_abc ? -1.0f : -0.5f, TOK_TYPE_NORMAL);
    vk_add(v, "<|user|>", 0, TOK_TYPE_USER_DEFINED);
    vk_add(v, "<|eot|>", 0, TOK_TYPE_CONTROL);
    vk_add(v, "<unused0>", 0, TOK_TYPE_UNUSED);
    tok_vocab_desc d;
    vk_desc(v, &d, "llama", NULL);
    d.bos_id = SPM_BOS; d.eos_id = SPM_EOS; d.unk_id = SPM_UNK;
    tokenizer *t = NULL;
    if (rlx_tokenizer_new(&d, &t) != RLX_OK) harness_fail(__FILE__, __LINE__, "spm_new: %s", rlx_last_error());
    return t;
}

#define SP "\xE2\x96\x81"

TEST(tokenizer_spm_words) {
    vkit v;
    tokenizer *t = spm_new(&v, false);
    CHECK(t);
    int32_t ids[64];
    CHECK(rlx_tokenizer_model(t) == TOK_MODEL_SPM && rlx_tokenizer_add_bos(t));
    int n = encode(t, "hello world", true, false, ids, 64);
    CHECK(n == 3 && ids[0] == SPM_BOS);
    CHECK(ids_are(t, ids + 1, n - 1, (const char *[]){SP "hello", SP "world", NULL}));
    /* Scores decide between overlapping merges: "bc" (-0.5) beats "ab" (-1). */
    n = encode(t, "abc", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){SP, "a", "bc", NULL}));
    rlx_tokenizer_free(t);
    vk_free(&v);
    t = spm_new(&v, true);
    CHECK(t);
    n = encode(t, "abc", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){SP, "ab", "c", NULL}));
    /* Partial words stop where the vocabulary does. */
    n = encode(t, "hell", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){SP "he", "ll", NULL}));
    /* Multi-byte characters that are in the vocabulary merge like ASCII. */
    n = encode(t, "\xC3\xA9t\xC3\xA9", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){SP, "\xC3\xA9t\xC3\xA9", NULL}));
    rlx_tokenizer_free(t);
    vk_free(&v);
}

TEST(tokenizer_spm_byte_fallback) {
    vkit v;
    tokenizer *t = spm_new(&v, false);
    CHECK(t);
    int32_t ids[64];
    /* 日 = E6 97 A5 is not in the vocabulary: three byte tokens. */
    int n = encode(t, "\xE6\x97\xA5", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){SP, "<0xE6>", "<0x97>", "<0xA5>", NULL}));
    n = encode(t, "a\nb", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){SP, "a", "<0x0A>", "b", NULL}));
    n = encode(t, "\xF0\x9F\x98\x80", false, false, ids, 64);   /* 😀 */
    CHECK(ids_are(t, ids, n, (const char *[]){SP, "<0xF0>", "<0x9F>", "<0x98>", "<0x80>", NULL}));
    /* Runs of spaces use the "▁▁" piece. */
    n = encode(t, "a   b", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){SP, "a", SP SP, SP, "b", NULL}));
    /* Byte pieces decode to the bytes. */
    const char *p;
    size_t len;
    CHECK_OK(rlx_tokenizer_token_to_piece(t, find(t, "<0x0A>"), false, &p, &len));
    CHECK(len == 1 && p[0] == '\n');
    CHECK_OK(rlx_tokenizer_token_to_piece(t, find(t, SP "hello"), false, &p, &len));
    CHECK(len == 6 && memcmp(p, " hello", 6) == 0);
    CHECK_OK(rlx_tokenizer_token_to_piece(t, SPM_BOS, false, &p, &len));
    CHECK(len == 0);
    CHECK_OK(rlx_tokenizer_token_to_piece(t, SPM_BOS, true, &p, &len));
    CHECK(len == 3 && memcmp(p, "<s>", 3) == 0);
    rlx_tokenizer_free(t);
    vk_free(&v);
}

TEST(tokenizer_spm_round_trip) {
    vkit v;
    tokenizer *t = spm_new(&v, false);
    CHECK(t);
    static const char *const texts[] = {
        "hello world", "Hello World!", "caf\xC3\xA9 \xC3\xA9t\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",
        "emoji \xF0\x9F\x98\x80\xF0\x9F\x91\x8D", "  leading and trailing  ", "tabs\tand\nnew\r\nlines\n\n",
        "digits 1234567890", "don't we'll I'm", "", " ", "\n", "a", "x<s>y</s>", "bad \xFF\xFE utf8 \xC3",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        CHECK(round_trips(t, texts[i], strlen(texts[i]), false));
        CHECK(round_trips(t, texts[i], strlen(texts[i]), true));
    }
    /* Decode strips the prefix space after BOS; KEEP_PREFIX keeps it. */
    int32_t ids[64];
    int n = encode(t, "hello", true, false, ids, 64);
    char buf[64];
    size_t len;
    CHECK_OK(rlx_tokenizer_decode(t, ids, (size_t)n, 0, buf, sizeof buf, &len));
    CHECK(len == 5 && strcmp(buf, "hello") == 0);
    CHECK_OK(rlx_tokenizer_decode(t, ids, (size_t)n, TOK_DECODE_KEEP_PREFIX, buf, sizeof buf, &len));
    CHECK(strcmp(buf, " hello") == 0);
    CHECK_OK(rlx_tokenizer_decode(t, ids, (size_t)n, TOK_DECODE_RENDER_SPECIAL, buf, sizeof buf, &len));
    CHECK(strcmp(buf, "<s>hello") == 0);
    /* Random byte strings (every byte has a fallback token) round-trip. */
    char s[200];
    for (int r = 0; r < 200; r++) {
        size_t k = (size_t)test_rand_int(0, (int64_t)sizeof s - 1);
        for (size_t j = 0; j < k; j++) {
            static const char pool[] = "helo wrd abc\n\t";
            int64_t kind = test_rand_int(0, 3);
            s[j] = kind == 0 ? (char)test_rand_int(1, 255) : pool[test_rand_int(0, (int64_t)sizeof pool - 2)];
            /* U+2581 in the input reads back as a space: keep it out. */
            if (j >= 2 && (uint8_t)s[j - 2] == 0xE2 && (uint8_t)s[j - 1] == 0x96 && (uint8_t)s[j] == 0x81) s[j] = 'x';
        }
        CHECK(round_trips(t, s, k, false));
    }
    rlx_tokenizer_free(t);
    vk_free(&v);
}

TEST(tokenizer_spm_special) {
    vkit v;
    tokenizer *t = spm_new(&v, false);
    CHECK(t);
    int32_t ids[64];
    int32_t user = find(t, "<|user|>"), eot = find(t, "<|eot|>");
    /* USER_DEFINED is always matched; CONTROL only with parse_special. */
    int n = encode(t, "<|user|>hello<|eot|>", false, false, ids, 64);
    CHECK(n > 2 && ids[0] == user);
    for (int i = 0; i < n; i++) CHECK(ids[i] != eot);
    n = encode(t, "<|user|>hello<|eot|>", false, true, ids, 64);
    CHECK(n == 3 && ids[0] == user && ids[1] == find(t, SP "hello") && ids[2] == eot);
    /* Raw "<s>" without parse_special is text, never BOS. */
    n = encode(t, "<s>", false, false, ids, 64);
    for (int i = 0; i < n; i++) CHECK(ids[i] != SPM_BOS);
    n = encode(t, "<s>hello", false, true, ids, 64);
    CHECK(n == 2 && ids[0] == SPM_BOS && ids[1] == find(t, SP "hello"));
    /* BOS/EOS per the add flags. */
    n = encode(t, "hello", false, false, ids, 64);
    CHECK(n == 1);
    tok_vocab_desc d;
    vk_desc(&v, &d, "llama", NULL);
    d.bos_id = SPM_BOS; d.eos_id = SPM_EOS; d.unk_id = SPM_UNK;
    d.add_bos = 0; d.add_eos = 1;
    tokenizer *t2;
    CHECK_OK(rlx_tokenizer_new(&d, &t2));
    n = encode(t2, "hello", true, false, ids, 64);
    CHECK(n == 2 && ids[1] == SPM_EOS);
    CHECK(rlx_tokenizer_is_eog(t2, SPM_EOS) && !rlx_tokenizer_is_eog(t2, SPM_BOS));
    n = encode(t2, "", true, false, ids, 64);
    CHECK(n == 1 && ids[0] == SPM_EOS);
    rlx_tokenizer_free(t2);
    /* Empty text: just BOS. */
    n = encode(t, "", true, false, ids, 64);
    CHECK(n == 1 && ids[0] == SPM_BOS);
    /* Unused tokens decode to nothing. */
    int32_t unused = find(t, "<unused0>");
    size_t len;
    char buf[16];
    CHECK_OK(rlx_tokenizer_decode(t, &unused, 1, TOK_DECODE_RENDER_SPECIAL, buf, sizeof buf, &len));
    CHECK(len == 0);
    rlx_tokenizer_free(t);
    vk_free(&v);
}

TEST(tokenizer_spm_long_input) {
    vkit v;
    tokenizer *t = spm_new(&v, false);
    CHECK(t);
    /* 60k characters in one run: the heap keeps this fast. */
    size_t len = 60000;
    char *s = malloc(len + 1);
    CHECK(s);
    for (size_t i = 0; i < len; i++) s[i] = "hello world "[i % 12];
    s[len] = 0;
    double t0 = rlx_now_seconds();
    bool ok = round_trips(t, s, len, false);
    double dt = rlx_now_seconds() - t0;
    free(s);
    CHECK(ok);
    CHECK_MSG(dt < 1.0, "60k chars took %.3f s", dt);
    rlx_tokenizer_free(t);
    vk_free(&v);
}

/* --------------------------------------------------------- BPE fixture */

/* GPT-2 bytes_to_unicode, written independently of the library. */
static void byte_char(int b, char *out) {
    int printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    int cp = b;
    if (!printable) {
        int k = 0;
        for (int x = 0; x < b; x++)
            if (!((x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE)) k++;
        cp = 256 + k;
    }
    if (cp < 0x80) { out[0] = (char)cp; out[1] = 0; }
    else { out[0] = (char)(0xC0 | (cp >> 6)); out[1] = (char)(0x80 | (cp & 0x3F)); out[2] = 0; }
}

/* A byte-level vocabulary: the 256 byte characters (id = byte), merges that
 * build "hello", "Ġworld", "Ġthe", "'s", digit groups, then specials. */
static tokenizer *bpe_new(vkit *v, const char *pre, int32_t *bos, int32_t *eot) {
    memset(v, 0, sizeof *v);
    for (int b = 0; b < 256; b++) {
        char s[4];
        byte_char(b, s);
        vk_add(v, s, 0, TOK_TYPE_NORMAL);
    }
    static const char *const merges[] = {
        "l l", "h e", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "l d", "Ġwor ld", "Ġ t", "Ġt he",
        "' s", "1 2", "12 3", "4 5", "45 6", "Ċ Ċ", "b c", "a b", "Ġ Ġ", "ĠĠ ĠĠ",
    };
    for (size_t i = 0; i < sizeof merges / sizeof merges[0]; i++) {
        vk_merge(v, merges[i]);
        char cat[32];
        const char *sp = strchr(merges[i], ' ');
        snprintf(cat, sizeof cat, "%.*s%s", (int)(sp - merges[i]), merges[i], sp + 1);
        if (find_in(v, cat) < 0) vk_add(v, cat, 0, TOK_TYPE_NORMAL);
    }
    vk_add(v, "xyz", 0, TOK_TYPE_NORMAL);          /* reachable only as a whole word */
    *bos = vk_add(v, "<|begin_of_text|>", 0, TOK_TYPE_CONTROL);
    int32_t eos = vk_add(v, "<|end_of_text|>", 0, TOK_TYPE_CONTROL);
    *eot = vk_add(v, "<|eot_id|>", 0, TOK_TYPE_CONTROL);
    vk_add(v, "<|tool|>", 0, TOK_TYPE_USER_DEFINED);
    tok_vocab_desc d;
    vk_desc(v, &d, "gpt2", pre);
    d.scores = NULL;
    d.bos_id = *bos; d.eos_id = eos; d.eot_id = *eot;
    tokenizer *t = NULL;
    if (rlx_tokenizer_new(&d, &t) != RLX_OK) harness_fail(__FILE__, __LINE__, "bpe_new: %s", rlx_last_error());
    return t;
}

#define G "\xC4\xA0"   /* Ġ, the byte-level space */
#define C "\xC4\x8A"   /* Ċ, the byte-level newline */

TEST(tokenizer_bpe_words) {
    vkit v;
    int32_t bos, eot;
    tokenizer *t = bpe_new(&v, "gpt2", &bos, &eot);
    CHECK(t);
    CHECK(rlx_tokenizer_model(t) == TOK_MODEL_BPE && rlx_tokenizer_pre(t) == TOK_PRE_GPT2);
    CHECK(!rlx_tokenizer_add_bos(t));   /* gpt2 default */
    int32_t ids[64];
    int n = encode(t, "hello world the", true, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){"hello", G "world", G "the", NULL}));
    /* Merge ranks decide: "b c" is listed before "a b". */
    n = encode(t, "abc", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){"a", "bc", NULL}));
    n = encode(t, "hell", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){"hell", NULL}));
    n = encode(t, "helo", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){"he", "l", "o", NULL}));
    /* gpt2 has no ignore_merges: "xyz" is not reachable by merges. */
    n = encode(t, "xyz", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){"x", "y", "z", NULL}));
    /* Contractions, case-sensitive in gpt2. */
    n = encode(t, "hello's", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){"hello", "'s", NULL}));
    /* Multi-byte characters become their byte characters. */
    n = encode(t, "\xC3\xA9", false, false, ids, 64);
    CHECK(n == 2 && ids[0] == 0xC3 && ids[1] == 0xA9);
    /* Space runs: "ĠĠĠĠ" via two merge levels; the last space leads the word. */
    n = encode(t, "     hello", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){G G G G, G, "hello", NULL}));
    rlx_tokenizer_free(t);
    vk_free(&v);
}

TEST(tokenizer_bpe_llama3) {
    vkit v;
    int32_t bos, eot;
    tokenizer *t = bpe_new(&v, "llama-bpe", &bos, &eot);
    CHECK(t);
    CHECK(rlx_tokenizer_pre(t) == TOK_PRE_LLAMA3 && rlx_tokenizer_add_bos(t));
    int32_t ids[64];
    int n = encode(t, "hello world", true, false, ids, 64);
    CHECK(n == 3 && ids[0] == bos);
    CHECK(ids_are(t, ids + 1, n - 1, (const char *[]){"hello", G "world", NULL}));
    /* ignore_merges: a whole word in the vocabulary wins. */
    n = encode(t, "xyz", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){"xyz", NULL}));
    /* Digits in groups of at most three. */
    n = encode(t, "1234567", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){"123", "456", "7", NULL}));
    n = encode(t, "hello\n\nworld", false, false, ids, 64);
    CHECK(ids_are(t, ids, n, (const char *[]){"hello", C C, "w", "or", "ld", NULL}));
    /* Specials. */
    n = encode(t, "<|begin_of_text|>hello<|eot_id|>", false, true, ids, 64);
    CHECK(n == 3 && ids[0] == bos && ids[2] == eot);
    n = encode(t, "<|eot_id|>", false, false, ids, 64);
    CHECK(n > 1);
    for (int i = 0; i < n; i++) CHECK(ids[i] != eot);
    n = encode(t, "a<|tool|>b", false, false, ids, 64);
    CHECK(n == 3 && ids[1] == find(t, "<|tool|>"));
    CHECK(rlx_tokenizer_is_eog(t, eot));
    char buf[128];
    size_t len;
    int32_t seq[4] = {bos, find(t, "hello"), find(t, G "world"), eot};
    CHECK_OK(rlx_tokenizer_decode(t, seq, 4, 0, buf, sizeof buf, &len));
    CHECK(strcmp(buf, "hello world") == 0 && len == 11);
    CHECK_OK(rlx_tokenizer_decode(t, seq, 4, TOK_DECODE_RENDER_SPECIAL, buf, sizeof buf, &len));
    CHECK(strcmp(buf, "<|begin_of_text|>hello world<|eot_id|>") == 0);
    rlx_tokenizer_free(t);
    vk_free(&v);
}

TEST(tokenizer_bpe_qwen2) {
    vkit v;
    int32_t bos, eot;
    tokenizer *t = bpe_new(&v, "qwen2", &bos, &eot);
    CHECK(t);
    CHECK(rlx_tokenizer_pre(t) == TOK_PRE_QWEN2 && !rlx_tokenizer_add_bos(t));
    int32_t ids[64];
    int n = encode(t, "123", false, false, ids, 64);   /* single digits, no merges across them */
    CHECK(ids_are(t, ids, n, (const char *[]){"1", "2", "3", NULL}));
    rlx_tokenizer_free(t);
    vk_free(&v);
}

TEST(tokenizer_bpe_round_trip) {
    static const char *const pres[] = {"gpt2", "llama-bpe", "qwen2"};
    static const char *const texts[] = {
        "hello world", "Hello World! It's 2024.", "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",
        "emoji \xF0\x9F\x98\x80\xF0\x9F\x91\x8D!", "   lots   of   spaces   ", "tabs\tand\nnew\r\nlines\n\n\n",
        "1234567890 12 3", "DON'T we'll I'M", "", " ", "\n", "x<|eot_id|>y", "bad \xFF\xFE utf8 \xC3",
        "\xD9\xA3\xD9\xA4 \xD8\xB3\xD9\x84\xD8\xA7\xD9\x85", "\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87",
    };
    for (size_t p = 0; p < 3; p++) {
        vkit v;
        int32_t bos, eot;
        tokenizer *t = bpe_new(&v, pres[p], &bos, &eot);
        CHECK(t);
        for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
            bool ok = round_trips(t, texts[i], strlen(texts[i]), false) &&
                      round_trips(t, texts[i], strlen(texts[i]), true);
            if (!ok) { rlx_tokenizer_free(t); vk_free(&v); return; }
        }
        char s[160];
        for (int r = 0; r < 150; r++) {
            size_t k = (size_t)test_rand_int(0, (int64_t)sizeof s);
            for (size_t j = 0; j < k; j++) s[j] = (char)test_rand_int(0, 255);
            if (!round_trips(t, s, k, false)) break;
        }
        rlx_tokenizer_free(t);
        vk_free(&v);
        if (harness_failed()) return;
    }
}

/* ------------------------------------------------------- pre-tokenizer */

typedef struct words { const char *text; char out[1024]; size_t n; } words;

static rlx_status collect(void *user, size_t a, size_t b) {
    words *w = user;
    if (w->n) w->out[w->n++] = '|';
    memcpy(w->out + w->n, w->text + a, b - a);
    w->n += b - a;
    w->out[w->n] = 0;
    return RLX_OK;
}

/* Splits text and checks the words joined with '|'. */
static bool splits_to(tok_pre pre, const char *text, const char *want) {
    words w = { text, {0}, 0 };
    if (tok_pretokenize(pre, text, strlen(text), collect, &w) != RLX_OK) return false;
    if (strcmp(w.out, want) != 0) {
        harness_fail(__FILE__, __LINE__, "pre %d: '%s' split as '%s', want '%s'", (int)pre, text, w.out, want);
        return false;
    }
    return true;
}

TEST(tokenizer_pretokenize) {
    const char *s = "Hello world's 12345 cats!!\n\n  ok";
    CHECK(splits_to(TOK_PRE_LLAMA3, s, "Hello| world|'s| |123|45| cats|!!\n\n| | ok"));
    CHECK(splits_to(TOK_PRE_QWEN2,  s, "Hello| world|'s| |1|2|3|4|5| cats|!!\n\n| | ok"));
    CHECK(splits_to(TOK_PRE_GPT2,   s, "Hello| world|'s| 12345| cats|!!|\n\n | ok"));
    /* Contractions: case-insensitive in llama3 only. */
    CHECK(splits_to(TOK_PRE_LLAMA3, "DON'T we'LL", "DON|'T| we|'LL"));
    CHECK(splits_to(TOK_PRE_GPT2,   "DON'T we'll", "DON|'|T| we|'ll"));
    /* A punctuation character leads a letter run in llama3, but " '" cannot:
     * the optional lead is one character. */
    CHECK(splits_to(TOK_PRE_LLAMA3, "(hello) 'quoted'", "(hello|)| '|quoted|'"));
    /* Whitespace: the last space joins the next word; trailing runs stay whole. */
    CHECK(splits_to(TOK_PRE_LLAMA3, "a   b   ", "a|  | b|   "));
    CHECK(splits_to(TOK_PRE_GPT2,   "a   b   ", "a|  | b|   "));
    CHECK(splits_to(TOK_PRE_LLAMA3, "\t\tfoo", "\t|\tfoo"));
    CHECK(splits_to(TOK_PRE_LLAMA3, "a \n \nb", "a| \n \n|b"));
    CHECK(splits_to(TOK_PRE_LLAMA3, "x\r\n", "x|\r\n"));
    CHECK(splits_to(TOK_PRE_LLAMA3, "end.\n", "end|.\n"));
    /* Non-ASCII letters and digits. */
    CHECK(splits_to(TOK_PRE_LLAMA3, "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E caf\xC3\xA9",
                    "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E| caf\xC3\xA9"));
    CHECK(splits_to(TOK_PRE_LLAMA3, "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 \xCE\xB1\xCE\xB2",
                    "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82| \xCE\xB1\xCE\xB2"));   /* Привет αβ */
    CHECK(splits_to(TOK_PRE_LLAMA3, "\xD9\xA3\xD9\xA4\xD9\xA5\xD9\xA6", "\xD9\xA3\xD9\xA4\xD9\xA5|\xD9\xA6")); /* ٣٤٥٦ */
    /* Devanagari combining marks are not letters (नमस्ते). */
    CHECK(splits_to(TOK_PRE_LLAMA3, "\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87",
                    "\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8|\xE0\xA5\x8D\xE0\xA4\xA4|\xE0\xA5\x87"));
    /* Emoji are neither letters nor digits; no-break space is \s. */
    CHECK(splits_to(TOK_PRE_LLAMA3, "hi \xF0\x9F\x98\x80\xF0\x9F\x98\x80!", "hi| \xF0\x9F\x98\x80\xF0\x9F\x98\x80!"));
    CHECK(splits_to(TOK_PRE_GPT2,   "a\xC2\xA0\xC2\xA0" "b", "a|\xC2\xA0|\xC2\xA0|b"));   /* " ?" is U+0020 only */
    CHECK(splits_to(TOK_PRE_LLAMA3, "a\xC2\xA0\xC2\xA0" "b", "a|\xC2\xA0|\xC2\xA0" "b"));
    /* Invalid UTF-8 bytes are "other" and never vanish. */
    CHECK(splits_to(TOK_PRE_LLAMA3, "a\xFF" "b", "a|\xFF" "b"));
    CHECK(tok_uni_is_letter(0x4E2D) && tok_uni_is_letter(0x05D0) && tok_uni_is_letter(0x0627) &&
          tok_uni_is_letter(0xAC00) && tok_uni_is_letter(0x00E9) && !tok_uni_is_letter(0x0301));
    CHECK(tok_uni_is_number(0x0966) && tok_uni_is_number(0xFF10) && tok_uni_is_number(0x00B2) && !tok_uni_is_number('a'));
    CHECK(tok_uni_is_space(0x3000) && tok_uni_is_space('\v') && !tok_uni_is_space(0x200B));
}

/* ------------------------------------------------------------ streaming */

/* Streams ids one by one; every chunk must be valid UTF-8, and the whole
 * must equal decode() when that is valid. */
static bool stream_check(const tokenizer *t, const int32_t *ids, size_t n, unsigned flags) {
    tok_stream *s;
    if (rlx_tok_stream_new(t, flags, &s) != RLX_OK) return false;
    char all[4096];
    size_t total = 0;
    bool ok = true;
    for (size_t i = 0; i <= n && ok; i++) {
        const char *p;
        size_t len;
        rlx_status st = i < n ? rlx_tok_stream_push(s, ids[i], &p, &len) : rlx_tok_stream_flush(s, &p, &len);
        if (st != RLX_OK || !valid_utf8(p, len) || total + len > sizeof all) {
            harness_fail(__FILE__, __LINE__, "stream chunk %zu: status %d, %zu bytes, valid %d", i, (int)st, len, valid_utf8(p, len));
            ok = false;
            break;
        }
        memcpy(all + total, p, len);
        total += len;
    }
    rlx_tok_stream_free(s);
    if (!ok) return false;
    char *dec;
    size_t dlen;
    if (rlx_tokenizer_decode_alloc(t, ids, n, flags, &dec, &dlen) != RLX_OK) return false;
    if (valid_utf8(dec, dlen) && (dlen != total || memcmp(dec, all, total) != 0)) {
        harness_fail(__FILE__, __LINE__, "stream '%.*s' != decode '%s'", (int)total, all, dec);
        ok = false;
    }
    free(dec);
    return ok;
}

TEST(tokenizer_stream_utf8) {
    vkit v;
    tokenizer *t = spm_new(&v, false);
    CHECK(t);
    const char *text = "hello \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80 world\n";
    int32_t *ids;
    size_t n;
    CHECK_OK(rlx_tokenizer_encode_alloc(t, text, strlen(text), true, false, &ids, &n));
    bool ok = stream_check(t, ids, n, 0) && stream_check(t, ids, n, TOK_DECODE_KEEP_PREFIX);
    free(ids);
    CHECK(ok);
    /* Held bytes: the first two bytes of 日 give nothing, the third the character. */
    tok_stream *s;
    CHECK_OK(rlx_tok_stream_new(t, TOK_DECODE_KEEP_PREFIX, &s));
    const char *p;
    size_t len;
    CHECK_OK(rlx_tok_stream_push(s, find(t, "<0xE6>"), &p, &len));
    CHECK(len == 0);
    CHECK_OK(rlx_tok_stream_push(s, find(t, "<0x97>"), &p, &len));
    CHECK(len == 0);
    CHECK_OK(rlx_tok_stream_push(s, find(t, "<0xA5>"), &p, &len));
    CHECK(len == 3 && memcmp(p, "\xE6\x97\xA5", 3) == 0);
    /* An unfinished character at the end becomes U+FFFD. */
    CHECK_OK(rlx_tok_stream_push(s, find(t, "<0xF0>"), &p, &len));
    CHECK(len == 0);
    CHECK_OK(rlx_tok_stream_push(s, find(t, "<0x9F>"), &p, &len));
    CHECK(len == 0);
    CHECK_OK(rlx_tok_stream_flush(s, &p, &len));
    CHECK(len == 3 && memcmp(p, "\xEF\xBF\xBD", 3) == 0);
    /* A broken sequence is replaced at once and the next character survives. */
    CHECK_OK(rlx_tok_stream_push(s, find(t, "<0xE6>"), &p, &len));
    CHECK_OK(rlx_tok_stream_push(s, find(t, "a"), &p, &len));
    CHECK(len == 4 && memcmp(p, "\xEF\xBF\xBD" "a", 4) == 0);
    CHECK_OK(rlx_tok_stream_push(s, find(t, "<0xFF>"), &p, &len));
    CHECK(len == 3 && memcmp(p, "\xEF\xBF\xBD", 3) == 0);
    CHECK_STATUS(rlx_tok_stream_push(s, 99999, &p, &len), RLX_STATUS_INVALID_ARGUMENT);
    rlx_tok_stream_free(s);
    /* Random id sequences never yield broken UTF-8. */
    int32_t rnd[40];
    for (int r = 0; r < 100; r++) {
        for (int i = 0; i < 40; i++) rnd[i] = (int32_t)test_rand_int(0, rlx_tokenizer_n_vocab(t) - 1);
        CHECK(stream_check(t, rnd, 40, 0));
    }
    rlx_tokenizer_free(t);
    vk_free(&v);

    int32_t bos, eot;
    t = bpe_new(&v, "llama3", &bos, &eot);
    CHECK(t);
    text = "emoji \xF0\x9F\x98\x80\xF0\x9F\x91\x8D and \xE6\x97\xA5\xE6\x9C\xAC!";
    CHECK_OK(rlx_tokenizer_encode_alloc(t, text, strlen(text), true, false, &ids, &n));
    ok = stream_check(t, ids, n, 0);
    free(ids);
    CHECK(ok);
    rlx_tokenizer_free(t);
    vk_free(&v);
}

/* --------------------------------------------------------------- errors */

TEST(tokenizer_errors) {
    vkit v;
    tokenizer *t = spm_new(&v, false);
    CHECK(t);
    int32_t ids[4];
    size_t n;
    /* cap too small: the needed count comes back with the error. */
    CHECK_STATUS(rlx_tokenizer_encode(t, "hello world", 11, true, false, ids, 2, &n), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(n == 3 && ids[0] == SPM_BOS);
    CHECK_OK(rlx_tokenizer_encode(t, "hello world", 11, true, false, NULL, 0, &n));
    CHECK(n == 3);
    CHECK_STATUS(rlx_tokenizer_encode(NULL, "x", 1, true, false, ids, 4, &n), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_tokenizer_encode(t, NULL, 1, true, false, ids, 4, &n), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_tokenizer_encode(t, "x", 1, true, false, ids, 4, NULL), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_tokenizer_encode(t, "x", 1, true, false, NULL, 4, &n), RLX_STATUS_INVALID_ARGUMENT);
    int32_t *pid;
    CHECK_STATUS(rlx_tokenizer_encode_alloc(t, "x", 1, true, false, NULL, &n), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_OK(rlx_tokenizer_encode_alloc(t, NULL, 0, true, false, &pid, &n));
    CHECK(n == 1);
    free(pid);
    /* decode: invalid ids, small buffers, NULLs. */
    int32_t bad[3] = {SPM_BOS, -1, 5};
    char buf[8];
    size_t len;
    CHECK_STATUS(rlx_tokenizer_decode(t, bad, 3, 0, buf, sizeof buf, &len), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(rlx_last_error(), "ids[1] = -1") != NULL);
    bad[1] = rlx_tokenizer_n_vocab(t);
    CHECK_STATUS(rlx_tokenizer_decode(t, bad, 3, 0, buf, sizeof buf, &len), RLX_STATUS_INVALID_ARGUMENT);
    char *str;
    CHECK_STATUS(rlx_tokenizer_decode_alloc(t, bad, 3, 0, &str, &len), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(str == NULL);
    int32_t good[2] = {find(t, SP "hello"), find(t, SP "world")};
    CHECK_STATUS(rlx_tokenizer_decode(t, good, 2, 0, buf, 4, &len), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(len == 11);
    CHECK_STATUS(rlx_tokenizer_decode(t, good, 2, 0, buf, 11, &len), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_OK(rlx_tokenizer_decode(t, good, 2, 0, NULL, 0, &len));
    CHECK(len == 11);
    CHECK_STATUS(rlx_tokenizer_decode(NULL, good, 2, 0, buf, 8, &len), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_tokenizer_decode(t, NULL, 2, 0, buf, 8, &len), RLX_STATUS_INVALID_ARGUMENT);
    const char *p;
    CHECK_STATUS(rlx_tokenizer_token_to_piece(t, -3, false, &p, &len), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_tok_stream_new(NULL, 0, NULL), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(rlx_tokenizer_token_text(t, 12345, NULL) == NULL);
    rlx_tokenizer_free(t);

    /* Construction errors. */
    tok_vocab_desc d;
    vk_desc(&v, &d, "llama", NULL);
    tokenizer *t2 = (tokenizer *)&d;
    CHECK_STATUS(rlx_tokenizer_new(NULL, &t2), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(t2 == NULL);
    CHECK_STATUS(rlx_tokenizer_new(&d, NULL), RLX_STATUS_INVALID_ARGUMENT);
    d.model = "bert";
    CHECK_STATUS(rlx_tokenizer_new(&d, &t2), RLX_STATUS_UNSUPPORTED);
    d.model = NULL;
    CHECK_STATUS(rlx_tokenizer_new(&d, &t2), RLX_STATUS_INVALID_ARGUMENT);
    d.model = "llama";
    d.bos_id = d.n_tokens;
    CHECK_STATUS(rlx_tokenizer_new(&d, &t2), RLX_STATUS_INVALID_ARGUMENT);
    d.bos_id = TOK_NONE;
    d.n_tokens = 0;
    CHECK_STATUS(rlx_tokenizer_new(&d, &t2), RLX_STATUS_INVALID_ARGUMENT);
    d.n_tokens = v.n;
    int32_t saved = v.type[5];
    v.type[5] = 42;
    CHECK_STATUS(rlx_tokenizer_new(&d, &t2), RLX_STATUS_FORMAT);
    v.type[5] = saved;
    vk_free(&v);

    /* A merge without a separator; and a vocabulary without a byte token. */
    memset(&v, 0, sizeof v);
    vk_add(&v, "a", 0, TOK_TYPE_NORMAL);
    vk_add(&v, "b", 0, TOK_TYPE_NORMAL);
    vk_merge(&v, "ab");
    vk_desc(&v, &d, "gpt2", NULL);
    CHECK_STATUS(rlx_tokenizer_new(&d, &t2), RLX_STATUS_FORMAT);
    d.n_merges = 0;
    CHECK_OK(rlx_tokenizer_new(&d, &t2));
    CHECK_STATUS(rlx_tokenizer_encode(t2, "abc", 3, false, false, ids, 4, &n), RLX_STATUS_FORMAT);
    rlx_tokenizer_free(t2);
    vk_desc(&v, &d, "llama", NULL);
    d.n_merges = 0;
    CHECK_OK(rlx_tokenizer_new(&d, &t2));
    CHECK_STATUS(rlx_tokenizer_encode(t2, "abc", 3, false, false, ids, 4, &n), RLX_STATUS_FORMAT);
    rlx_tokenizer_free(t2);
    vk_free(&v);
    rlx_tokenizer_free(NULL);
}

/* The loader passes GGUF strings by pointer + length, without NULs, and may
 * leave token_types out. */
TEST(tokenizer_desc_lengths) {
    const char blob[] = "<unk><s></s>" "\xE2\x96\x81" "hi";   /* "▁hi" overlaps "▁" and "hi" */
    const char *tok[6] = {blob, blob + 5, blob + 8, blob + 12, blob + 15, blob + 12};
    const uint32_t lens[6] = {5, 3, 4, 3, 2, 5};
    const float scores[6] = {0, 0, 0, -1, -2, -0.5f};
    tok_vocab_desc d;
    tok_vocab_desc_init(&d);
    d.model = "llama";
    d.n_tokens = 6;
    d.tokens = tok;
    d.token_lens = lens;
    d.scores = scores;
    d.unk_id = 0; d.bos_id = 1; d.eos_id = 2;
    tokenizer *t;
    CHECK_OK(rlx_tokenizer_new(&d, &t));
    int32_t ids[8];
    int n = encode(t, "hi hi", true, true, ids, 8);
    CHECK(n == 3 && ids[0] == 1 && ids[1] == 5 && ids[2] == 5);
    /* "</s>" is inferred CONTROL from eos_id; the text after it gets the
     * prefix space; "x" is not in the vocabulary and there are no byte
     * tokens: one <unk> (not one per byte, for a multi-byte character too). */
    n = encode(t, "</s>x\xE6\x97\xA5", false, true, ids, 8);
    CHECK(n == 4 && ids[0] == 2 && ids[1] == 3 && ids[2] == 0 && ids[3] == 0);
    char buf[32];
    size_t len;
    int32_t seq[3] = {1, 5, 0};
    CHECK_OK(rlx_tokenizer_decode(t, seq, 3, 0, buf, sizeof buf, &len));
    CHECK(strcmp(buf, "hi \xE2\x81\x87 ") == 0);
    rlx_tokenizer_free(t);
}

/* Review regressions. Empty text with a caller buffer (memcpy from a NULL
 * vector was UB, caught by `make sanitize`); a BPE file that sets
 * add_space_prefix (BPE encode never adds the space, so decode must not strip
 * one); end-of-generation tokens found by their text, as llama.cpp does,
 * since converters rarely write eot_token_id. */
TEST(tokenizer_review_edges) {
    vkit v;
    tokenizer *t = spm_new(&v, false);
    CHECK(t);
    int32_t ids[8];
    CHECK(encode(t, "", false, false, ids, 8) == 0);
    CHECK(encode(t, "", false, true, ids, 8) == 0);
    rlx_tokenizer_free(t);
    vk_free(&v);

    int32_t bos, eot;
    t = bpe_new(&v, "llama-bpe", &bos, &eot);
    CHECK(t);
    int32_t eos = rlx_tokenizer_eos(t);
    rlx_tokenizer_free(t);
    int32_t im_end = vk_add(&v, "<|im_end|>", 0, TOK_TYPE_CONTROL);
    int32_t eom = vk_add(&v, "<|eom_id|>", 0, TOK_TYPE_CONTROL);
    tok_vocab_desc d;
    vk_desc(&v, &d, "gpt2", "llama-bpe");
    d.scores = NULL;
    d.bos_id = bos; d.eos_id = eos;   /* no eot_token_id, as most converted files */
    d.add_space_prefix = 1;
    CHECK_OK(rlx_tokenizer_new(&d, &t));
    CHECK(round_trips(t, " hello world", 12, false));
    CHECK(round_trips(t, " hello<|eot_id|> x", 18, true));
    CHECK(stream_check(t, (const int32_t[]){find(t, G "world")}, 1, 0));
    CHECK(rlx_tokenizer_is_eog(t, eos) && rlx_tokenizer_is_eog(t, eot) && rlx_tokenizer_is_eog(t, im_end) &&
          rlx_tokenizer_is_eog(t, eom));
    CHECK(!rlx_tokenizer_is_eog(t, bos) && !rlx_tokenizer_is_eog(t, find(t, "hello")) && !rlx_tokenizer_is_eog(t, -1));
    rlx_tokenizer_free(t);
    vk_free(&v);
}
