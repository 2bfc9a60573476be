/*
 * tj_read_text.c — tokenizer.json's "normalizer" and "pre_tokenizer"
 * sections read into tj_norm / tj_pre lists (tj_text.c runs them). Each
 * type is checked here, so an unknown one or an option rlx cannot honour
 * fails at load time with the section and type named.
 */
#include "models/tj_internal.h"
#include "core/json.h"
#include "models/unicode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------- normalizers */

static rlx_status add_norm(tj_rd *r, tj_norm z) {
    tj_model *m = r->m;
    tj_norm *v = realloc(m->norms, (size_t)(m->n_norms + 1) * sizeof *v);
    if (!v) { free(z.pattern); free(z.content); tj_regex_free(z.regex); tj_charsmap_free(z.charsmap); return tj_oom(); }
    m->norms = v;
    v[m->n_norms++] = z;
    return RLX_OK;
}

rlx_status tj_read_normalizer(tj_rd *r, const json_value *v, int depth) {
    if (!v || v->type == JSON_NULL) return RLX_OK;
    const char *type;
    rlx_status st = tj_type_of(r, v, "normalizer", &type);
    if (st) return st;
    if (depth > 8) return tj_bad(r, v, "normalizer", "Sequences nested at most 8 deep");
    tj_norm z = {0};
    if (strcmp(type, "Sequence") == 0) {
        const json_value *a = json_get(v, "normalizers");
        if (!a || a->type != JSON_ARRAY) return tj_bad(r, a ? a : v, "normalizer Sequence's normalizers", "an array");
        for (size_t i = 0; i < a->u.arr.n && !st; i++) st = tj_read_normalizer(r, &a->u.arr.items[i], depth + 1);
        return st;
    } else if (strcmp(type, "BertNormalizer") == 0) {
        z.kind = TJN_BERT;
        if ((st = tj_opt_bool(r, v, "clean_text", true, &z.clean_text)) || (st = tj_opt_bool(r, v, "handle_chinese_chars", true, &z.cjk)) ||
            (st = tj_opt_bool(r, v, "lowercase", true, &z.lowercase)) ||
            (st = tj_opt_bool(r, v, "strip_accents", z.lowercase, &z.strip_accents)))
            return st;
    } else if (strcmp(type, "Lowercase") == 0) {
        z.kind = TJN_LOWERCASE;
    } else if (strcmp(type, "NFD") == 0) {
        z.kind = TJN_NFD;
    } else if (strcmp(type, "StripAccents") == 0) {
        z.kind = TJN_STRIP_ACCENTS;
    } else if (strcmp(type, "Strip") == 0) {
        z.kind = TJN_STRIP;
        if ((st = tj_opt_bool(r, v, "strip_left", true, &z.left)) || (st = tj_opt_bool(r, v, "strip_right", true, &z.right))) return st;
    } else if (strcmp(type, "Replace") == 0 || strcmp(type, "Prepend") == 0) {
        bool rep = type[0] == 'R';
        z.kind = rep ? TJN_REPLACE : TJN_PREPEND;
        const char *p = NULL, *re = NULL, *c;
        size_t pn = 0, cn;
        if (rep && (st = tj_pattern_of(r, v, "normalizer", type, &p, &pn, &re))) return st;
        if (rep && !re && pn == 0) return tj_bad(r, json_get(v, "pattern"), "normalizer Replace's pattern", "a non-empty string");
        if ((st = tj_opt_str(r, v, rep ? "content" : "prepend", &c, &cn))) return st;
        if (!c) return tj_bad(r, json_get(v, rep ? "content" : "prepend"), rep ? "normalizer Replace's content" : "normalizer Prepend's prepend", "a string");
        if (re) {
            char where[256];
            snprintf(where, sizeof where, "%s: byte %llu: normalizer Replace", r->name,
                     (unsigned long long)json_get(v, "pattern")->offset);
            if ((st = tj_regex_compile(where, re, pn, &z.regex))) return st;
        }
        z.pattern = rep && !re ? tj_dup_n(p, pn) : NULL;
        z.pattern_len = pn;
        z.content = tj_dup_n(c, cn);
        z.content_len = cn;
        if ((rep && !re && !z.pattern) || !z.content) { free(z.pattern); free(z.content); tj_regex_free(z.regex); return tj_oom(); }
    } else if (strcmp(type, "NFC") == 0) {
        z.kind = TJN_NFC;
    } else if (strcmp(type, "NFKC") == 0) {
        z.kind = TJN_NFKC;
    } else if (strcmp(type, "NFKD") == 0) {
        z.kind = TJN_NFKD;
    } else if (strcmp(type, "Precompiled") == 0) {
        z.kind = TJN_PRECOMPILED;
        const json_value *cm = json_get(v, "precompiled_charsmap");
        if (!cm || cm->type != JSON_STRING) return tj_bad(r, cm ? cm : v, "normalizer Precompiled's precompiled_charsmap", "a base64 string");
        char where[256];
        snprintf(where, sizeof where, "%s: byte %llu: normalizer Precompiled's precompiled_charsmap", r->name,
                 (unsigned long long)cm->offset);
        if ((st = tj_charsmap_read(where, cm->u.str.s, cm->u.str.len, &z.charsmap))) return st;
    } else {
        return tj_unsupported(r, "normalizer", type, NULL);
    }
    return add_norm(r, z);
}

/* ------------------------------------------------------ pre-tokenizers */

static rlx_status add_pre(tj_rd *r, tj_pre p) {
    tj_model *m = r->m;
    tj_pre *v = realloc(m->pres, (size_t)(m->n_pres + 1) * sizeof *v);
    if (!v) { free(p.pattern); return tj_oom(); }
    m->pres = v;
    v[m->n_pres++] = p;
    return RLX_OK;
}

static rlx_status behavior(const tj_rd *r, const json_value *obj, tj_split_how def, tj_split_how *how) {
    static const char *const names[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    const json_value *v = json_get(obj, "behavior");
    *how = def;
    if (!v || v->type == JSON_NULL) return RLX_OK;
    if (v->type == JSON_STRING)
        for (int i = 0; i < 5; i++)
            if (strcmp(v->u.str.s, names[i]) == 0) { *how = (tj_split_how)i; return RLX_OK; }
    return tj_bad(r, v, "behavior", "one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
}

/* The split regexes rlx has hand-written matchers for (tokenizer_bpe.c). */
static int known_regex(const char *re) {
    static const char gpt2[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
    static const char llama3[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    static const char qwen2[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    if (strcmp(re, gpt2) == 0) return TOK_PRE_GPT2;
    if (strcmp(re, llama3) == 0) return TOK_PRE_LLAMA3;
    if (strcmp(re, qwen2) == 0) return TOK_PRE_QWEN2;
    return -1;
}

rlx_status tj_read_pre(tj_rd *r, const json_value *v, int depth) {
    if (!v || v->type == JSON_NULL) return RLX_OK;
    const char *type;
    rlx_status st = tj_type_of(r, v, "pre_tokenizer", &type);
    if (st) return st;
    if (depth > 8) return tj_bad(r, v, "pre_tokenizer", "Sequences nested at most 8 deep");
    tj_pre p = {0};
    if (strcmp(type, "Sequence") == 0) {
        const json_value *a = json_get(v, "pretokenizers");
        if (!a || a->type != JSON_ARRAY) return tj_bad(r, a ? a : v, "pre_tokenizer Sequence's pretokenizers", "an array");
        for (size_t i = 0; i < a->u.arr.n && !st; i++) st = tj_read_pre(r, &a->u.arr.items[i], depth + 1);
        return st;
    } else if (strcmp(type, "BertPreTokenizer") == 0) {
        p.kind = TJP_BERT;
    } else if (strcmp(type, "Whitespace") == 0) {
        p.kind = TJP_WHITESPACE;
    } else if (strcmp(type, "WhitespaceSplit") == 0) {
        p.kind = TJP_WHITESPACE_SPLIT;
    } else if (strcmp(type, "Punctuation") == 0) {
        p.kind = TJP_PUNCT;
        if ((st = behavior(r, v, TJ_ISOLATED, &p.how))) return st;
    } else if (strcmp(type, "Digits") == 0) {
        p.kind = TJP_DIGITS;
        if ((st = tj_opt_bool(r, v, "individual_digits", false, &p.individual))) return st;
    } else if (strcmp(type, "CharDelimiterSplit") == 0) {
        p.kind = TJP_CHAR_SPLIT;
        if (!json_get(v, "delimiter")) return tj_bad(r, v, "pre_tokenizer CharDelimiterSplit's delimiter", "a string");
        if ((st = tj_one_char(r, v, "delimiter", 0, &p.delim))) return st;
    } else if (strcmp(type, "ByteLevel") == 0) {
        p.kind = TJP_BYTE_LEVEL;
        if ((st = tj_opt_bool(r, v, "add_prefix_space", true, &p.add_prefix_space)) ||
            (st = tj_opt_bool(r, v, "use_regex", true, &p.use_regex)))
            return st;
    } else if (strcmp(type, "Metaspace") == 0) {
        p.kind = TJP_METASPACE;
        if ((st = tj_one_char(r, v, "replacement", 0x2581, &p.replacement)) || (st = tj_opt_bool(r, v, "split", true, &p.split))) return st;
        const char *ps;
        size_t pn;
        if ((st = tj_opt_str(r, v, "prepend_scheme", &ps, &pn))) return st;
        if (ps) {
            if (strcmp(ps, "always") == 0) p.prepend = 1;
            else if (strcmp(ps, "first") == 0) p.prepend = 2;
            else if (strcmp(ps, "never") == 0) p.prepend = 0;
            else return tj_bad(r, json_get(v, "prepend_scheme"), "prepend_scheme", "\"always\", \"first\" or \"never\"");
        } else {
            bool aps;
            if ((st = tj_opt_bool(r, v, "add_prefix_space", true, &aps))) return st;
            p.prepend = aps ? 1 : 0;
        }
    } else if (strcmp(type, "Split") == 0) {
        const char *s, *re;
        size_t n;
        if ((st = tj_pattern_of(r, v, "pre_tokenizer", type, &s, &n, &re)) || (st = behavior(r, v, TJ_ISOLATED, &p.how)) ||
            (st = tj_opt_bool(r, v, "invert", false, &p.invert)))
            return st;
        if (re) {
            p.kind = TJP_SPLIT_REGEX;
            p.regex = known_regex(re);
            if (p.regex < 0) {
                char shown[80];
                json_printable(shown, sizeof shown, re, n);
                return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: pre_tokenizer Split with the Regex '%s' is not supported "
                                "(only the GPT-2, llama3 and qwen2 patterns and String patterns are)", r->name, shown);
            }
        } else {
            if (n == 0) return tj_bad(r, json_get(v, "pattern"), "pre_tokenizer Split's pattern", "a non-empty string");
            p.kind = TJP_SPLIT_STRING;
            if (!(p.pattern = tj_dup_n(s, n))) return tj_oom();
            p.pattern_len = n;
        }
    } else {
        return tj_unsupported(r, "pre_tokenizer", type, NULL);
    }
    return add_pre(r, p);
}

