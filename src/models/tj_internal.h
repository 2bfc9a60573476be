/*
 * tj_internal.h — the pieces of the tokenizer.json tokenizer shared by its
 * three files: tokenizer_json.c (reading the JSON into these structs, the
 * enc_tokenizer wiring), tj_text.c (normalizers and pre-tokenizers on UTF-8
 * text) and tj_models.c (the vocabulary and the WordPiece / BPE / Unigram
 * models). Nothing outside those files includes it.
 */
#ifndef RLX_MODELS_TJ_INTERNAL_H
#define RLX_MODELS_TJ_INTERNAL_H

#include "models/tokenizer_json.h"

/* ------------------------------------------------------------ text kit */

typedef struct tj_buf {            /* growable byte string */
    char  *s;
    size_t n, cap;
} tj_buf;
bool tj_put(tj_buf *b, const char *s, size_t n);   /* false: out of memory */
bool tj_put_cp(tj_buf *b, uint32_t cp);

typedef struct tj_pieces {         /* pre-tokens: piece i is buf.s[off[i] .. off[i] + len[i]) */
    tj_buf  buf;
    size_t *off, *len;
    size_t  n, cap;
} tj_pieces;
bool tj_pieces_add(tj_pieces *p, const char *s, size_t n);   /* an empty piece is skipped */
void tj_pieces_free(tj_pieces *p);

typedef struct tj_cps {            /* growable code point string */
    uint32_t *v;
    size_t    n, cap;
} tj_cps;
bool tj_cps_push(tj_cps *c, uint32_t cp);          /* false: out of memory */

/* ---------------------------------------------------- normalizers */

/* SentencePiece's precompiled_charsmap (tj_precompiled.c). */
typedef struct tj_charsmap tj_charsmap;
/* Decodes and checks the base64 map; FORMAT names where (the section) and what. */
rlx_status tj_charsmap_read(const char *where, const char *b64, size_t n, tj_charsmap **out);
/* Appends the normalization of a[0..n) to out; false: out of memory. */
bool       tj_charsmap_apply(const tj_charsmap *m, const uint32_t *a, size_t n, tj_cps *out);
void       tj_charsmap_free(tj_charsmap *m);

/* A Replace pattern in rlx's regex subset (tj_regex.c). */
typedef struct tj_regex tj_regex;
/* UNSUPPORTED, naming where and the pattern, for anything outside the subset. */
rlx_status tj_regex_compile(const char *where, const char *pat, size_t n, tj_regex **out);
/* Appends a[0..n) with every leftmost-first match replaced by con to out; false: out of memory. */
bool       tj_regex_replace(const tj_regex *re, const uint32_t *a, size_t n, const uint32_t *con, size_t ncon, tj_cps *out);
void       tj_regex_free(tj_regex *re);

typedef enum tj_norm_kind {
    TJN_BERT, TJN_LOWERCASE, TJN_NFD, TJN_STRIP_ACCENTS, TJN_STRIP, TJN_REPLACE, TJN_PREPEND,
    TJN_NFC, TJN_NFKC, TJN_NFKD, TJN_PRECOMPILED,
} tj_norm_kind;

typedef struct tj_norm {
    tj_norm_kind kind;
    bool  clean_text, cjk, strip_accents, lowercase;   /* TJN_BERT */
    bool  left, right;                                 /* TJN_STRIP */
    char *pattern, *content;                           /* TJN_REPLACE (pattern, content), TJN_PREPEND (content) */
    size_t pattern_len, content_len;
    tj_regex    *regex;                                /* TJN_REPLACE with a Regex pattern (pattern NULL) */
    tj_charsmap *charsmap;                             /* TJN_PRECOMPILED */
} tj_norm;

/* Applies norms[0..n) in order to text; the result replaces *out's content. */
rlx_status tj_normalize(const tj_norm *norms, int n, const char *text, size_t len, tj_buf *out);

/* ------------------------------------------------ pre-tokenizers */

typedef enum tj_split_how {        /* Hugging Face's SplitDelimiterBehavior */
    TJ_REMOVED, TJ_ISOLATED, TJ_MERGED_PREV, TJ_MERGED_NEXT, TJ_CONTIGUOUS,
} tj_split_how;

typedef enum tj_pre_kind {
    TJP_BERT, TJP_WHITESPACE, TJP_WHITESPACE_SPLIT, TJP_PUNCT, TJP_BYTE_LEVEL, TJP_METASPACE,
    TJP_DIGITS, TJP_SPLIT_STRING, TJP_SPLIT_REGEX, TJP_CHAR_SPLIT,
} tj_pre_kind;

typedef struct tj_pre {
    tj_pre_kind  kind;
    tj_split_how how;              /* PUNCT, SPLIT_* */
    bool         invert;           /* SPLIT_* */
    char        *pattern;          /* SPLIT_STRING */
    size_t       pattern_len;
    int          regex;            /* SPLIT_REGEX: a tok_pre value */
    bool         add_prefix_space, use_regex;   /* BYTE_LEVEL */
    uint32_t     replacement;      /* METASPACE */
    int          prepend;          /* METASPACE: 0 never, 1 always, 2 first */
    bool         split;            /* METASPACE */
    bool         individual;       /* DIGITS */
    uint32_t     delim;            /* CHAR_SPLIT */
} tj_pre;

/* Applies pres[0..n) in order to one normalized text; pieces out (emptied first). */
rlx_status tj_pretokenize(const tj_pre *pres, int n, const char *text, size_t len, tj_pieces *out);

/* --------------------------------------------------------- models */

typedef enum tj_model_kind { TJM_WORDPIECE, TJM_BPE, TJM_UNIGRAM } tj_model_kind;

typedef struct tj_merge {          /* (left id, right id) -> rank, merged id */
    uint64_t key;                  /* UINT64_MAX = empty */
    int32_t  rank, merged;
} tj_merge;

typedef struct tj_model {
    tj_model_kind kind;
    int32_t   n;                   /* ids [0, n): model vocabulary and added tokens */
    int32_t   n_model;             /* ids the model itself may produce: [0, n_model) */
    char     *text;                /* all strings, NUL-separated */
    size_t    text_n, text_cap;
    uint32_t *off, *len;           /* per id; len UINT32_MAX: no string has this id */
    uint32_t *map;                 /* open addressing: string -> id + 1 */
    uint32_t  map_mask;
    uint32_t  max_len;             /* bytes of the longest string */
    double   *scores;              /* Unigram */
    double    unk_score;
    int32_t   unk;                 /* TOK_NONE when none */
    char     *prefix, *suffix;     /* continuing_subword_prefix, end_of_word_suffix ("" none) */
    size_t    prefix_len, suffix_len;
    int32_t   max_chars;           /* WordPiece */
    bool      byte_fallback, fuse_unk, ignore_merges;
    int32_t   byte_tok[256];       /* "<0xNN>" ids for byte_fallback */
    tj_merge *merges;
    uint32_t  merge_mask;
    bool      decode_bytes;        /* ByteLevel decoder */
    uint32_t  decode_space;        /* Metaspace replacement to turn back into ' ' (0 none) */

    tj_norm  *norms;
    int       n_norms;
    tj_pre   *pres;
    int       n_pres;
} tj_model;

/* Vocabulary: sized for n ids, then strings set per id. */
rlx_status tj_vocab_init(tj_model *m, int32_t n);
/* Sets id's string; a repeated string or id is FORMAT (what names it). */
rlx_status tj_vocab_set(tj_model *m, int32_t id, const char *s, size_t n, const char *what);
int32_t    tj_find(const tj_model *m, const char *s, size_t n);
/* Adds merge (l, r) -> merged with the given rank (first rank of a repeat wins). */
rlx_status tj_merges_init(tj_model *m, size_t n);
void       tj_merge_add(tj_model *m, int32_t l, int32_t r, int32_t merged, int32_t rank);
/* Fills byte_tok from the "<0xNN>" strings. */
void       tj_find_byte_tokens(tj_model *m);

/* One pre-token to ids with the model; scratch is the caller's (reused
 * across calls, freed by the caller), so one model serves many threads. */
rlx_status tj_model_word(const tj_model *m, const char *w, size_t n, tj_buf *scratch, tok_ids *out);
void       tj_model_free(tj_model *m);

/* ------------------------------------------------------ reading the file */

typedef struct json_value json_value;

typedef struct tj_rd {             /* what the readers share */
    const char *name;              /* "tokenizer.json" or the path: first in messages */
    tj_model   *m;
} tj_rd;

/* FORMAT: "NAME: byte N: what is TYPE, expected want". */
rlx_status tj_bad(const tj_rd *r, const json_value *v, const char *what, const char *want);
/* UNSUPPORTED: "NAME: section type 'type' is not supported[: why]". */
rlx_status tj_unsupported(const tj_rd *r, const char *section, const char *type, const char *why);
rlx_status tj_oom(void);
/* obj's "type" string; FORMAT when obj is no object or has none. */
rlx_status tj_type_of(const tj_rd *r, const json_value *obj, const char *section, const char **type);
/* Optional keys: absent or null give the default (bool) / NULL (string). */
rlx_status tj_opt_bool(const tj_rd *r, const json_value *obj, const char *key, bool def, bool *out);
rlx_status tj_opt_str(const tj_rd *r, const json_value *obj, const char *key, const char **s, size_t *n);
/* A string key that must be one code point (def when absent). */
rlx_status tj_one_char(const tj_rd *r, const json_value *obj, const char *key, uint32_t def, uint32_t *cp);
/* obj.pattern: {"String": s} into *s, or {"Regex": re} into *regex. */
rlx_status tj_pattern_of(const tj_rd *r, const json_value *obj, const char *section, const char *type,
                         const char **s, size_t *n, const char **regex);
char      *tj_dup_n(const char *s, size_t n);   /* NUL-terminated copy; NULL: out of memory */

/* The sections (tj_read_text.c); appended to r->m's lists. */
rlx_status tj_read_normalizer(tj_rd *r, const json_value *v, int depth);
rlx_status tj_read_pre(tj_rd *r, const json_value *v, int depth);

#endif
