/*
 * test_tj_norm.c — the tokenizer.json normalizers beyond the basic ones:
 * NFC / NFKC / NFKD against Python's unicodedata on tricky and random
 * strings; Replace with a Regex, by hand and its errors; Precompiled on a
 * real SentencePiece charsmap (tests/ref/spm_tokenizer_ref.py trains a tiny
 * model and writes an XLM-R-shaped file) with token ids compared against
 * tests/ref/tokenizer_json_ref.py on accents, fullwidth, ligatures, CJK,
 * emoji sequences, flags, controls, space runs and long words; and hostile
 * charsmaps (truncated, bad offsets, no NUL, bad UTF-8, bad base64, random
 * corruption), which must fail with FORMAT or load and run, never crash.
 */
#include "harness.h"
#include "models/tj_internal.h"
#include "models/unicode.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ kit */

typedef struct sbuf { char *s; size_t n, cap; } sbuf;

static void put(sbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}
static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }
static void put_cp(sbuf *b, uint32_t cp) { char u[4]; put(b, u, uni_utf8_encode(cp, u)); }
static void put_hex(sbuf *b, const char *s, size_t n) {
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) { char h[2] = {d[(unsigned char)s[i] >> 4], d[s[i] & 15]}; put(b, h, 2); }
}

#define WP_TAIL ", \"model\": {\"type\": \"WordPiece\", \"unk_token\": \"u\", \"vocab\": {\"u\": 0}}}"

/* The normalizer JSON norm applied to in; false (and a failure) on an error. */
static bool normalized(const char *norm, const char *in, size_t n, sbuf *out, int line) {
    sbuf j = {0};
    puts_(&j, "{\"normalizer\": ");
    puts_(&j, norm);
    puts_(&j, WP_TAIL);
    enc_tokenizer *t = NULL;
    rlx_status st = rlx_tokenizer_json_from_memory(j.s, j.n, NULL, &t);
    free(j.s);
    if (st) { harness_fail(__FILE__, line, "load %s: %s", norm, rlx_last_error()); return false; }
    const tj_model *m = t->model;
    tj_buf o = {0};
    st = tj_normalize(m->norms, m->n_norms, in, n, &o);
    if (st) harness_fail(__FILE__, line, "normalize: %s", rlx_last_error());
    out->n = 0;
    put(out, o.s ? o.s : "", o.n);
    free(o.s);
    rlx_enc_tokenizer_free(t);
    return st == RLX_OK;
}

/* Runs "py script args..." and returns its stdout (malloc'd) or NULL with a failure. */
static char *run_ref(const char *cmd, int line) {
    size_t cap = 8u << 20;
    char *out = malloc(cap);
    int code = test_run_command(cmd, out, cap);
    if (code != 0) { harness_fail(__FILE__, line, "%s exited %d: %.1500s", cmd, code, out); free(out); return NULL; }
    return out;
}

static const char *python(void) { return test_program("RLX_PYTHON", "/usr/bin/python3"); }

/* ------------------------------------------------------ NFC / NFKC / NFKD */

/* Code points from every class the forms treat differently. */
static uint32_t tricky_cp(void) {
    static const uint32_t pick[] = {
        'a', 'A', 'e', 'o', 'u', ' ', 0x300, 0x301, 0x302, 0x308, 0x316, 0x323, 0x327, 0x328, 0x345, 0x31B, 0x1DCE,
        0x00C5, 0x212B, 0x2126, 0x00E9, 0x1E0B, 0x1E9B, 0x01D5, 0x0344, 0x0958, 0x0F73, 0x0F71, 0x0F72, 0x0F80,
        0x1100, 0x1161, 0x11A8, 0x11C2, 0x1175, 0xAC00, 0xAC01, 0xD7A3, 0x3131, 0xFFA1,   /* Hangul and jamo */
        0xFB01, 0xFB03, 0xFB06, 0x0132, 0x01C4, 0x2160, 0x2474, 0x3231, 0x33FF, 0xFDFA, 0xFE35, 0x00BD, 0x2075,
        0xFF21, 0xFF41, 0xFF10, 0xFF61, 0xFFE5, 0x3000, 0x00A0, 0x2002, 0x1D400, 0x1D7CE, 0x1F130, 0x2F800, 0xF900,
        0x3046, 0x3099, 0x304C, 0x30AB, 0x309A, 0x0915, 0x093C, 0x0929, 0x05D1, 0x05BC, 0xFB31, 0x0627, 0x0653, 0xFEF5,
        0x4E2D, 0x1F600, 0x1F44D, 0x1F3FD, 0x200D, 0x1F1EB, 0x1F1F7, 0x0301, 0x0340, 0x0343, 0x1F82, 0x03D3, 0x2000,
    };
    int64_t r = test_rand_int(0, 9);
    if (r == 0) return (uint32_t)test_rand_int(0x80, 0xFFFF);
    if (r == 1) return (uint32_t)test_rand_int(0x10000, 0x10FFFF);
    return pick[test_rand_int(0, (int64_t)(sizeof pick / sizeof *pick) - 1)];
}

TEST(tokenizer_json_norm_nfc_nfkc_nfkd_match_python) {
    const char *py = python();
    if (access(py, X_OK) != 0) SKIP("no %s to run the Python reference", py);
    enum { N = 600 };
    sbuf *in = calloc(N, sizeof *in), cases = {0};
    static const char *const fixed[] = {
        "e\xCC\x81", "\xC3\xA9", "a\xCC\xA3\xCC\x81", "a\xCC\x81\xCC\xA3", "\xEF\xAC\x81", "\xEF\xBC\xA1\xEF\xBD\x82",
        "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8", "\xEA\xB0\x80\xE1\x86\xA8", "\xE2\x84\xAB", "\xE2\x84\xA6", "\xCD\x84",
        "\xE0\xA5\x98", "\xEF\xB7\xBA", "q\xCC\x87\xCC\xA3", "\xE1\xBA\x9B\xCC\xA3", "\xE3\x88\xB1", "",
    };
    for (size_t i = 0; i < N; i++) {
        put(&in[i], "", 0);
        if (i < sizeof fixed / sizeof *fixed) {
            puts_(&in[i], fixed[i]);
        } else {
            int k = (int)test_rand_int(1, 12);
            for (int c = 0; c < k; c++) {
                uint32_t cp = tricky_cp();
                if (cp >= 0xD800 && cp <= 0xDFFF) cp = 'x';
                put_cp(&in[i], cp);
            }
        }
        put_hex(&cases, in[i].s, in[i].n);
        put(&cases, "\n", 1);
    }
    char path[] = "/tmp/rlx_unorm_XXXXXX";
    CHECK(test_temp_file(path));
    FILE *f = fopen(path, "wb");
    CHECK(f);
    fwrite(cases.s, 1, cases.n, f);
    fclose(f);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s %s %s", py, test_program("RLX_UNORM_REF", "tests/ref/unicode_norm_ref.py"), path);
    char *out = run_ref(cmd, __LINE__);
    remove(path);
    CHECK(out);
    static const char *const form[3] = {"{\"type\": \"NFC\"}", "{\"type\": \"NFKC\"}", "{\"type\": \"NFKD\"}"};
    char *save = NULL, *ln = strtok_r(out, "\n", &save);
    size_t bad = 0;
    sbuf got = {0}, hex = {0};
    for (size_t i = 0; i < N && ln; i++, ln = strtok_r(NULL, "\n", &save)) {
        char *fs = NULL, *w = strtok_r(ln, " ", &fs);
        for (int k = 0; k < 3 && w; k++, w = strtok_r(NULL, " ", &fs)) {
            if (!normalized(form[k], in[i].s, in[i].n, &got, __LINE__)) { bad++; continue; }
            hex.n = 0;
            put(&hex, "", 0);
            put_hex(&hex, got.s, got.n);
            if (strcmp(hex.s, strcmp(w, "-") == 0 ? "" : w) != 0 && bad++ < 8)
                printf("    case %zu %s of '%s': rlx %s, python %s\n", i, form[k], in[i].s, hex.s, w);
        }
    }
    CHECK_MSG(ln == NULL || bad == 0, "reference output too long");
    for (size_t i = 0; i < N; i++) free(in[i].s);
    free(in); free(cases.s); free(out); free(got.s); free(hex.s);
    CHECK_MSG(bad == 0, "%zu normalizations differ from unicodedata", bad);
}

/* --------------------------------------------------------- Replace regex */

static bool replaced_is(const char *re_json, const char *content, const char *in, const char *want, int line) {
    char norm[512];
    snprintf(norm, sizeof norm, "{\"type\": \"Replace\", \"pattern\": {\"Regex\": \"%s\"}, \"content\": \"%s\"}", re_json, content);
    sbuf got = {0};
    bool ok = normalized(norm, in, strlen(in), &got, line);
    if (ok && strcmp(got.s, want) != 0) { harness_fail(__FILE__, line, "%s on '%s': got '%s', want '%s'", re_json, in, got.s, want); ok = false; }
    free(got.s);
    return ok;
}
#define REPLACED(re, content, in, want) CHECK(replaced_is(re, content, in, want, __LINE__))

TEST(tokenizer_json_norm_replace_regex) {
    REPLACED(" {2,}", " ", "a  b     c d  ", "a b c d ");
    REPLACED("\\\\s+", "_", "a \t\n b\xE3\x80\x80" "c\xC2\xA0", "a_b_c_");
    REPLACED("\\\\d+", "#", "ab12c\xD9\xA3\xD9\xA4" "d\xC2\xB2", "ab#c#d\xC2\xB2");   /* Arabic-Indic digits are Nd; superscript 2 is No */
    REPLACED("[a-c]+|x", "-", "abcxdcab", "--d-");
    REPLACED("[^a-c ]", "", "a1b c!", "ab c");
    REPLACED("ab|abc", "X", "abc", "Xc");              /* leftmost-first: the first alternative wins */
    REPLACED("abc|ab", "X", "abc", "X");
    REPLACED("a{2}", "X", "aaaaa", "XXa");
    REPLACED("a{2,3}", "X", "aaaaaaa", "XXa");
    REPLACED("(?:ab)+c?", "X", "abababcab", "XX");
    REPLACED("\\\\.\\\\*", "!", "a.*b.c", "a!b.c");
    REPLACED("\\\\x{2581}", " ", "a\xE2\x96\x81" "b", "a b");
    REPLACED(".", "x", "a\nb", "x\nx");
    REPLACED("[\\\\s,]{2,}", ",", "a , b,c,, d", "a,b,c,d");
    REPLACED("\xC3\xA9+", "e", "caf\xC3\xA9\xC3\xA9", "cafe");
    /* long text, pattern with many states: linear, no backtracking blow-up */
    sbuf big = {0}, got = {0};
    for (int i = 0; i < 20000; i++) put(&big, "a", 1);
    CHECK(normalized("{\"type\": \"Replace\", \"pattern\": {\"Regex\": \"(a|aa)+b\"}, \"content\": \"X\"}", big.s, big.n, &got, __LINE__));
    CHECK(got.n == big.n);
    free(big.s); free(got.s);
    /* outside the subset: UNSUPPORTED naming the pattern */
    static const char *const bad[] = {"\\\\w+", "^a", "a$", "a*?", "(?i)a", "(?=a)", "a*", "(a|)", "[[a]]", "\\\\p{L}", "a{2000}",
                                      "(a", "a)", "[a", "\\\\b", "x{3,1}", "a**"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char j[512];
        snprintf(j, sizeof j, "{\"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"Regex\": \"%s\"}, \"content\": \"\"}" WP_TAIL, bad[i]);
        enc_tokenizer *t = NULL;
        rlx_status st = rlx_tokenizer_json_from_memory(j, strlen(j), NULL, &t);
        CHECK_MSG(st == RLX_STATUS_UNSUPPORTED && !t && strstr(rlx_last_error(), "Regex '") && strstr(rlx_last_error(), "tokenizer.json"),
                  "'%s': %s %s", bad[i], rlx_status_name(st), rlx_last_error());
    }
}

/* ------------------------------------------------------ grapheme clusters */

/* Cluster ends of s (UTF-8), as code point counts joined by ','. */
static void clusters_of(const char *s, char *out, size_t cap) {
    uint32_t cps[64];
    size_t n = 0, len = strlen(s);
    for (size_t i = 0; i < len && n < 64;) i += uni_utf8_decode((const uint8_t *)s + i, len - i, &cps[n++]);
    size_t k = 0;
    out[0] = 0;
    for (size_t i = 0; i < n;) {
        size_t e = uni_grapheme_end(cps, n, i);
        k += (size_t)snprintf(out + k, cap - k, "%s%zu", i ? "," : "", e - i);
        i = e;
    }
}

TEST(tokenizer_json_norm_grapheme_clusters) {
    static const struct { const char *s, *want; } c[] = {
        {"ab", "1,1"},
        {"\r\n\n", "2,1"},
        {"e\xCC\x81\xCC\xA3x", "3,1"},                                                       /* GB9 */
        {"\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8\xEA\xB0\x80", "3,1"},                         /* GB6-8 */
        {"\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7", "5"},   /* GB11 ZWJ sequence */
        {"\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD", "2"},                                           /* skin tone (Extend) */
        {"\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7\xF0\x9F\x87\xA9", "2,1"},                         /* GB12/13 */
        {"a\xE2\x80\x8D\xF0\x9F\x98\x80", "2,1"},                                            /* ZWJ not after ExtPict */
        {"\xE0\xA4\x95\xE0\xA4\xBF", "2"},                                                   /* SpacingMark (GB9a) */
        {"\xD8\x80" "a", "2"},                                                               /* Prepend (GB9b) */
        {"\x01\xCC\x81", "1,1"},                                                             /* GB4 */
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char got[128];
        clusters_of(c[i].s, got, sizeof got);
        CHECK_MSG(strcmp(got, c[i].want) == 0, "case %zu: clusters %s, want %s", i, got, c[i].want);
    }
}

/* ------------------------------------------------------------ Precompiled */

/* The XLM-R-shaped file of tests/ref/spm_tokenizer_ref.py, or NULL (with a failure). */
static char *spm_json(int line) {
    const char *py = python();
    char path[] = "/tmp/rlx_spm_XXXXXX", cmd[512];
    if (!test_temp_file(path)) { harness_fail(__FILE__, line, "no temp file"); return NULL; }
    snprintf(cmd, sizeof cmd, "%s %s %s 2>&1", py, test_program("RLX_SPM_REF", "tests/ref/spm_tokenizer_ref.py"), path);
    char *out = run_ref(cmd, line);
    free(out);
    FILE *f = out ? fopen(path, "rb") : NULL;
    char *s = NULL;
    if (f) {
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        s = malloc((size_t)n + 1);
        s[fread(s, 1, (size_t)n, f)] = 0;
        fclose(f);
    }
    remove(path);
    return s;
}

static const char *const SPM_TEXT[] = {
    "hello world", "Hello   World", "caf\xC3\xA9", "cafe\xCC\x81", "na\xC3\xAFve", "nai\xCC\x88ve",
    "\xEF\xBD\x86\xEF\xBD\x95\xEF\xBD\x8C\xEF\xBD\x8C", "\xEF\xBC\xA8\xEF\xBD\x85\xEF\xBD\x8C\xEF\xBD\x8C\xEF\xBD\x8F",
    "\xEF\xAC\x81ne \xEF\xAC\x83" "ce", "\xE4\xB8\xAD\xE6\x96\x87\xE5\xAD\x97", "\xE3\x80\x80\xE3\x80\x80x",
    "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7", "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD",
    "\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7\xF0\x9F\x87\xA9\xF0\x9F\x87\xAA", "\xE2\x91\xA0\xCC\x81", "\xEF\xAC\x81\xCC\x81",
    "\xEF\xBD\x81\xCC\x88", "a\x01" "b\x7F" "c\xC2\x85" "d", "tab\there", "\xE2\x80\x8B\xE2\x80\x8C", "\xC2\xA0x\xE2\x80\x83y",
    "\xE3\x88\xB1\xE3\x8E\x8F", "\xE1\x84\x80\xE1\x85\xA1\xEA\xB0\x80", "\xEF\xBE\x8A\xEF\xBE\x9F", "  leading and trailing  ",
    "x\xCC\xA3\xCC\x87", "\xC3\x85ngstr\xC3\xB6m \xE2\x84\xAB", "e\xCC\x81\xCC\x81\xCC\x81\xCC\x81", "\xEF\xBF\xBD", "",
};

static void spm_random(sbuf *s) {
    s->n = 0;
    put(s, "", 0);
    int k = (int)test_rand_int(1, 8);
    for (int i = 0; i < k; i++) {
        if (test_rand_int(0, 3) == 0) put_cp(s, tricky_cp() == 0xD800 ? 'x' : tricky_cp());
        else puts_(s, SPM_TEXT[test_rand_int(0, (int64_t)(sizeof SPM_TEXT / sizeof *SPM_TEXT) - 2)]);
        if (test_rand_int(0, 2) == 0) puts_(s, test_rand_int(0, 1) ? " " : "   ");
    }
    if (test_rand_int(0, 15) == 0)
        for (int i = 0; i < 300; i++) puts_(s, i % 7 ? "o" : "\xC3\xB6");   /* a very long word */
}

TEST(tokenizer_json_norm_precompiled_matches_reference) {
    const char *py = python();
    if (access(py, X_OK) != 0) SKIP("no %s to run the Python reference", py);
    char *json = spm_json(__LINE__);
    CHECK(json);
    enc_tokenizer *t = NULL;
    CHECK_OK(rlx_tokenizer_json_from_memory(json, strlen(json), NULL, &t));
    enum { N = 400 };
    size_t nfixed = sizeof SPM_TEXT / sizeof *SPM_TEXT;
    sbuf *in = calloc(N, sizeof *in), cases = {0};
    for (size_t i = 0; i < N; i++) {
        if (i < nfixed) { put(&in[i], "", 0); puts_(&in[i], SPM_TEXT[i]); }
        else spm_random(&in[i]);
        puts_(&cases, "0 x");
        put_hex(&cases, in[i].s, in[i].n);
        puts_(&cases, " -\n");
    }
    char jpath[] = "/tmp/rlx_spmj_XXXXXX", cpath[] = "/tmp/rlx_spmc_XXXXXX", cmd[512];
    CHECK(test_temp_file(jpath) && test_temp_file(cpath));
    FILE *f = fopen(jpath, "wb");
    fputs(json, f);
    fclose(f);
    f = fopen(cpath, "wb");
    fwrite(cases.s, 1, cases.n, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s %s %s %s 2>&1", py, test_program("RLX_TJ_REF", "tests/ref/tokenizer_json_ref.py"), jpath, cpath);
    char *out = run_ref(cmd, __LINE__);
    remove(jpath);
    remove(cpath);
    CHECK(out);
    char *save = NULL, *ln = strtok_r(out, "\n", &save);
    size_t bad = 0, i = 0;
    sbuf got = {0};
    for (; i < N && ln; i++, ln = strtok_r(NULL, "\n", &save)) {
        enc_options o;
        enc_options_init(&o);
        o.add_special = false;
        enc_encoding e;
        CHECK_OK(rlx_enc_encode(t, in[i].s, in[i].n, NULL, 0, &o, &e));
        got.n = 0;
        puts_(&got, "ids=");
        for (size_t k = 0; k < e.n_tokens; k++) { char d[16]; snprintf(d, sizeof d, "%s%d", k ? "," : "", e.ids[k]); puts_(&got, d); }
        puts_(&got, " types=");
        for (size_t k = 0; k < e.n_tokens; k++) puts_(&got, k ? ",0" : "0");
        if (strcmp(got.s, ln) != 0 && bad++ < 6) printf("    case %zu '%s':\n      rlx %s\n      ref %s\n", i, in[i].s, got.s, ln);
        rlx_enc_encoding_free(&e);
    }
    CHECK_MSG(i == N, "the reference stopped at case %zu", i);
    CHECK_MSG(bad == 0, "%zu of %d texts differ from the reference", bad, N);
    /* the normalizer by itself on a few known mappings of nmt_nfkc */
    const tj_model *m = t->model;
    tj_buf nb = {0};
    CHECK_OK(tj_normalize(m->norms, m->n_norms, "\xEF\xAC\x81  \xEF\xBC\xA1\x01", 9, &nb));
    CHECK_MSG(strcmp(nb.s, "fi A") == 0, "normalized '%s'", nb.s);
    free(nb.s);
    for (size_t k = 0; k < N; k++) free(in[k].s);
    free(in); free(cases.s); free(out); free(got.s); free(json);
    rlx_enc_tokenizer_free(t);
}

/* ------------------------------------------------------- hostile charsmaps */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_put(sbuf *b, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        char q[4] = {B64[v >> 18], B64[v >> 12 & 63], i + 1 < n ? B64[v >> 6 & 63] : '=', i + 2 < n ? B64[v & 63] : '='};
        put(b, q, 4);
    }
}

static size_t b64_get(const char *s, size_t n, uint8_t *out) {
    size_t k = 0;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        uint32_t v = 0;
        int pad = 0;
        for (int j = 0; j < 4; j++) {
            const char *c = strchr(B64, s[i + j]);
            if (s[i + j] == '=' || !c) { pad++; v <<= 6; } else v = v << 6 | (uint32_t)(c - B64);
        }
        out[k++] = (uint8_t)(v >> 16);
        if (pad < 2) out[k++] = (uint8_t)(v >> 8);
        if (pad < 1) out[k++] = (uint8_t)v;
    }
    return k;
}

/* Loads a Precompiled normalizer of the given base64 text; on success also
 * normalizes a sample, which must not crash. */
static rlx_status load_charsmap(const char *b64, size_t n) {
    sbuf j = {0};
    puts_(&j, "{\"normalizer\": {\"type\": \"Precompiled\", \"precompiled_charsmap\": \"");
    put(&j, b64, n);
    puts_(&j, "\"}" WP_TAIL);
    enc_tokenizer *t = NULL;
    rlx_status st = rlx_tokenizer_json_from_memory(j.s, j.n, NULL, &t);
    free(j.s);
    if (st == RLX_OK) {
        const tj_model *m = t->model;
        tj_buf o = {0};
        static const char sample[] = "\xEF\xAC\x81 a\xCC\x81 \xEF\xBC\xA1 \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD \xE4\xB8\xAD\x01 x";
        st = tj_normalize(m->norms, m->n_norms, sample, sizeof sample - 1, &o);
        free(o.s);
        rlx_enc_tokenizer_free(t);
    }
    return st;
}

static bool bytes_rejected(const uint8_t *raw, size_t n, const char *msg, int line) {
    sbuf b = {0};
    b64_put(&b, raw, n);
    rlx_status st = load_charsmap(b.s ? b.s : "", b.n);
    free(b.s);
    if (st != RLX_STATUS_FORMAT || !strstr(rlx_last_error(), msg) || !strstr(rlx_last_error(), "precompiled_charsmap")) {
        harness_fail(__FILE__, line, "want FORMAT with '%s', got %s: %s", msg, rlx_status_name(st), rlx_last_error());
        return false;
    }
    return true;
}
#define REJECTED(raw, n, msg) CHECK(bytes_rejected(raw, n, msg, __LINE__))

TEST(tokenizer_json_norm_precompiled_hostile) {
    const char *py = python();
    if (access(py, X_OK) != 0) SKIP("no %s to run the Python reference", py);
    char *json = spm_json(__LINE__);
    CHECK(json);
    const char *key = strstr(json, "\"precompiled_charsmap\": \"");
    CHECK(key);
    key += strlen("\"precompiled_charsmap\": \"");
    size_t n64 = (size_t)(strchr(key, '"') - key);
    uint8_t *raw = malloc(n64), *bad = malloc(n64 + 8);
    size_t n = b64_get(key, n64, raw);
    uint32_t trie = (uint32_t)raw[0] | (uint32_t)raw[1] << 8 | (uint32_t)raw[2] << 16 | (uint32_t)raw[3] << 24;
    CHECK(trie % 1024 == 0 && trie + 4 < n);
    CHECK_OK(load_charsmap(key, n64));
    /* base64 */
    CHECK(load_charsmap("AAA", 3) == RLX_STATUS_FORMAT && strstr(rlx_last_error(), "base64"));
    CHECK(load_charsmap("AA*A", 4) == RLX_STATUS_FORMAT && strstr(rlx_last_error(), "character 2"));
    CHECK(load_charsmap("A=AA", 4) == RLX_STATUS_FORMAT && strstr(rlx_last_error(), "base64"));
    CHECK(load_charsmap("", 0) == RLX_STATUS_FORMAT && strstr(rlx_last_error(), "too short"));
    /* sizes */
    REJECTED(raw, 3, "too short");
    REJECTED(raw, trie, "more than the data");
    memcpy(bad, raw, n);
    bad[0] ^= 2;
    REJECTED(bad, n, "not a multiple of 4");
    memset(bad, 0, 4);
    REJECTED(bad, n, "zero");
    /* the root's offset points past the array */
    memcpy(bad, raw, n);
    bad[4 + 3] = 0x7F;
    REJECTED(bad, n, "past the");
    /* the last string without its NUL, then a bad UTF-8 byte in the strings */
    REJECTED(raw, n - 1, "no NUL");
    memcpy(bad, raw, n);
    bad[n - 2] = 0xFF;
    REJECTED(bad, n, "not UTF-8");
    /* the trie cut to its first 256 units, the strings kept: nodes point past the end */
    memcpy(bad, raw, 4 + 1024);
    memcpy(bad + 4 + 1024, raw + 4 + trie, n - 4 - trie);
    bad[0] = 0; bad[1] = 4; bad[2] = 0; bad[3] = 0;
    REJECTED(bad, 4 + 1024 + (n - 4 - trie), "past the");
    /* random corruption of the trie: FORMAT or a map that runs, never a crash */
    size_t loaded = 0;
    for (int k = 0; k < 100; k++) {
        memcpy(bad, raw, n);
        int flips = (int)test_rand_int(1, 8);
        for (int f = 0; f < flips; f++) bad[test_rand_int(4, (int64_t)trie + 3)] ^= (uint8_t)(1u << test_rand_int(0, 7));
        sbuf b = {0};
        b64_put(&b, bad, n);
        rlx_status st = load_charsmap(b.s, b.n);
        free(b.s);
        CHECK_MSG(st == RLX_OK || st == RLX_STATUS_FORMAT, "corruption %d: %s %s", k, rlx_status_name(st), rlx_last_error());
        loaded += st == RLX_OK;
    }
    CHECK_MSG(loaded > 0, "every corrupted map was refused: the checks are too strict");
    free(raw); free(bad); free(json);
}
