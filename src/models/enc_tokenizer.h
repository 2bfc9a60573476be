/*
 * enc_tokenizer.h — the tokenizer interface of encoder models (BERT, RoBERTa,
 * XLM-R): text or a sentence pair -> ids, token type ids and attention mask,
 * with the model's template ([CLS] A [SEP] B [SEP], <s> A </s></s> B </s>),
 * truncation to a maximum length, padding, and batches.
 *
 * The model-specific part is small and sits behind enc_tokenizer_ops: turn a
 * run of plain text (no special tokens in it) into ids, and ids back into
 * text. Everything else is shared here: the special tokens matched literally
 * in the input (Hugging Face's added tokens), the template, truncation and
 * padding. WordPiece from vocab.txt (tokenizer_wordpiece.h) is the first
 * model; tokenizer.json's WordPiece / BPE / Unigram models plug into the same
 * struct by providing ops, specials and a template.
 */
#ifndef RLX_MODELS_ENC_TOKENIZER_H
#define RLX_MODELS_ENC_TOKENIZER_H

#include "models/tokenizer.h"

/* ------------------------------------------------------------ template */

#define ENC_SEQ_A (-2)   /* enc_piece.id: the first sequence goes here  */
#define ENC_SEQ_B (-3)   /* enc_piece.id: the second sequence goes here */
#define ENC_TEMPLATE_MAX 8

/* One element of a template: a special token id, or ENC_SEQ_A / ENC_SEQ_B;
 * every token it yields gets type_id. */
typedef struct enc_piece {
    int32_t id;
    int32_t type_id;
} enc_piece;

/* Hugging Face's TemplateProcessing: what surrounds one sequence, and a pair.
 * single must hold ENC_SEQ_A once; pair ENC_SEQ_A and ENC_SEQ_B once each. */
typedef struct enc_template {
    enc_piece single[ENC_TEMPLATE_MAX];
    int       n_single;
    enc_piece pair[ENC_TEMPLATE_MAX];
    int       n_pair;
} enc_template;

/* [CLS] A [SEP] / [CLS] A [SEP] B [SEP], B and its [SEP] with type id 1. */
void enc_template_bert(enc_template *t, int32_t cls, int32_t sep);
/* <s> A </s> / <s> A </s> </s> B </s>, all type id 0 (RoBERTa, XLM-R). */
void enc_template_roberta(enc_template *t, int32_t bos, int32_t eos);

/* ----------------------------------------------------------- interface */

typedef struct enc_tokenizer_ops {
    const char *name;   /* "wordpiece", ... : in messages */
    /* Appends the ids of len bytes of plain text to out (no template tokens;
     * the caller has already cut out the special tokens). */
    rlx_status (*tokenize)(const void *model, const char *text, size_t len, tok_ids *out);
    /* Exact-string vocabulary lookup: id or TOK_NONE. */
    int32_t (*find)(const void *model, const char *text, size_t len);
    /* The vocabulary string of a valid id (borrowed). */
    const char *(*token_text)(const void *model, int32_t id, size_t *len);
    /* Readable text of n valid ids into a malloc'ed NUL-terminated string. */
    rlx_status (*decode)(const void *model, const int32_t *ids, size_t n, char **out, size_t *len);
    void (*free)(void *model);
} enc_tokenizer_ops;

/* A special token matched literally (case-sensitive, before normalization)
 * in the input when parse_special is on. */
typedef struct enc_special {
    char    *text;
    uint32_t len;
    int32_t  id;
} enc_special;

typedef struct enc_tokenizer {
    const enc_tokenizer_ops *ops;
    void        *model;
    int32_t      n_vocab;
    enc_template tmpl;
    int32_t      pad_id;        /* TOK_NONE: padding is an error */
    int32_t      pad_type_id;   /* type id of padding positions (0) */
    enc_special *specials;      /* longest first */
    int32_t      n_specials;
} enc_tokenizer;

/* Wraps model (owned from here on: freed by ops->free, also when this
 * fails). The template starts empty (no added tokens), pad_id TOK_NONE. */
rlx_status rlx_enc_tokenizer_new(const enc_tokenizer_ops *ops, void *model, int32_t n_vocab,
                                 enc_tokenizer **out);
void       rlx_enc_tokenizer_free(enc_tokenizer *t);
/* Adds a special token (copied); an id outside the vocabulary or empty text
 * is INVALID_ARGUMENT; adding the same text twice keeps the first. */
rlx_status rlx_enc_tokenizer_add_special(enc_tokenizer *t, const char *text, size_t len, int32_t id);
/* Installs a template after checking it (ids in range, sequences present). */
rlx_status rlx_enc_tokenizer_set_template(enc_tokenizer *t, const enc_template *tmpl);

int32_t     rlx_enc_n_vocab(const enc_tokenizer *t);
int32_t     rlx_enc_find(const enc_tokenizer *t, const char *text, size_t len);   /* TOK_NONE if absent */
const char *rlx_enc_token_text(const enc_tokenizer *t, int32_t id, size_t *len);  /* NULL if out of range */
bool        rlx_enc_is_special(const enc_tokenizer *t, int32_t id);

/* ------------------------------------------------------------- encode */

typedef struct enc_options {
    bool   add_special;       /* surround with the template's tokens (default true)          */
    bool   parse_special;     /* special-token strings in the text become their ids (true)   */
    size_t max_length;        /* 0: no limit. Otherwise the result, template tokens included,
                                 is cut to it: a single text loses its tail; a pair loses
                                 tokens longest-first (see rlx_enc_truncate_pair)             */
    bool   pad_to_max_length; /* pad to max_length (default false: a single text is not
                                 padded, a batch is padded to its longest row)               */
} enc_options;
void enc_options_init(enc_options *o);

/* One encoded text or pair. ids, type_ids and attention_mask have len
 * entries (one allocation: free with rlx_enc_encoding_free). */
typedef struct enc_encoding {
    int32_t *ids, *type_ids, *attention_mask;
    size_t   len;           /* with padding */
    size_t   n_tokens;      /* real tokens: mask 1 */
    size_t   n_truncated;   /* tokens max_length removed (both sequences) */
} enc_encoding;
void rlx_enc_encoding_free(enc_encoding *e);

/* Encodes a (a_len bytes) or the pair a, b (b == NULL: single). o == NULL
 * uses enc_options_init's defaults. Errors: INVALID_ARGUMENT (NULL text with
 * a length, a max_length shorter than the template's tokens, padding without
 * a pad token), OUT_OF_MEMORY, or the model's. */
rlx_status rlx_enc_encode(const enc_tokenizer *t, const char *a, size_t a_len, const char *b,
                          size_t b_len, const enc_options *o, enc_encoding *out);

/* n texts (pairs when b != NULL; b[i] == NULL makes row i single), all
 * padded to one seq_len: the longest row, or max_length with
 * pad_to_max_length. Lengths: a_lens / b_lens, or NULL for NUL-terminated
 * strings. Arrays are row-major n * seq_len (one allocation). */
typedef struct enc_batch {
    size_t   n, seq_len;
    int32_t *ids, *type_ids, *attention_mask;
    size_t  *lengths;       /* real tokens of each row */
} enc_batch;
rlx_status rlx_enc_encode_batch(const enc_tokenizer *t, size_t n, const char *const *a,
                                const size_t *a_lens, const char *const *b, const size_t *b_lens,
                                const enc_options *o, enc_batch *out);
void       rlx_enc_batch_free(enc_batch *b);

/* The ids of plain text without the template (parse_special as in the
 * options), into a malloc'ed array (*ids NULL when *n == 0). */
rlx_status rlx_enc_tokenize(const enc_tokenizer *t, const char *text, size_t len, bool parse_special,
                            int32_t **ids, size_t *n);

/* Lengths a pair keeps under longest-first truncation to budget tokens
 * (Hugging Face tokenizers' rule): nothing changes when a + b <= budget;
 * otherwise the shorter keeps its length when that is at most half the
 * budget and the longer takes the rest, else both get budget / 2 and the
 * longer (b on a tie) takes the odd token. */
void rlx_enc_truncate_pair(size_t a, size_t b, size_t budget, size_t *a_keep, size_t *b_keep);

/* Readable text of ids (for debugging, not an exact inverse): the model's
 * decode; skip_special drops the special tokens. Out-of-range ids are
 * INVALID_ARGUMENT. A malloc'ed NUL-terminated string. */
rlx_status rlx_enc_decode(const enc_tokenizer *t, const int32_t *ids, size_t n, bool skip_special,
                          char **out, size_t *len);

#endif
