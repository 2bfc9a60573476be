/*
 * tokenizer_wordpiece.h — BERT's tokenizer: the basic tokenizer (text
 * cleanup, CJK characters as words, whitespace and punctuation splitting,
 * optional lower-casing and accent stripping) followed by greedy
 * longest-match-first WordPiece over a vocab.txt vocabulary.
 *
 * The result is an enc_tokenizer (enc_tokenizer.h) with BERT's template
 * ([CLS] A [SEP] / [CLS] A [SEP] B [SEP], type ids 0 / 1), [PAD] for padding,
 * and [CLS] [SEP] [PAD] [MASK] [UNK] matched literally in the input.
 *
 * vocab.txt: one token per line, the line number (from 0) is the id. Lines
 * end in "\n" or "\r\n"; the last may lack it; a UTF-8 byte-order mark at
 * the start is skipped. An empty line, a NUL byte, invalid UTF-8, a repeated
 * token, or a missing unk/cls/sep token is RLX_STATUS_FORMAT naming the line
 * (or the token). pad and mask are optional.
 */
#ifndef RLX_MODELS_TOKENIZER_WORDPIECE_H
#define RLX_MODELS_TOKENIZER_WORDPIECE_H

#include "models/enc_tokenizer.h"

typedef struct wp_options {
    bool        lowercase;          /* do_lower_case (default true)                            */
    int         strip_accents;      /* NFD, then drop Mn: 1 / 0, or -1 (default): as lowercase */
    bool        tokenize_cjk;       /* CJK ideographs become words of their own (true)         */
    bool        clean_text;         /* drop NUL, U+FFFD and other (C*) characters, whitespace
                                       to space (true)                                          */
    int32_t     max_chars_per_word; /* a longer word is one unk token (100)                    */
    const char *prefix;             /* continuing-subword prefix ("##")                        */
    const char *unk_token, *cls_token, *sep_token;   /* required in the vocab                  */
    const char *pad_token, *mask_token;              /* optional (NULL: none)                  */
} wp_options;
void wp_options_init(wp_options *o);

/* Builds the tokenizer from vocab.txt bytes (copied) / a file path. o ==
 * NULL: wp_options_init's defaults. Errors: FORMAT (see above), IO (the
 * file), INVALID_ARGUMENT (options), OUT_OF_MEMORY. */
rlx_status rlx_wordpiece_from_memory(const char *data, size_t len, const wp_options *o, enc_tokenizer **out);
rlx_status rlx_wordpiece_load(const char *path, const wp_options *o, enc_tokenizer **out);

/* ============================================================ internal
 * The basic tokenizer, shared with tests and future tokenizer.json
 * normalizers (bert_normalize.c). */

typedef struct bert_norm {
    bool clean_text, tokenize_cjk, lowercase, strip_accents;
} bert_norm;

/* One pre-token: n bytes of UTF-8 holding n_chars code points. */
typedef rlx_status (*bert_word_fn)(void *user, const char *word, size_t n, size_t n_chars);

/* Splits len bytes of text into BERT's pre-tokens, in order, calling fn for
 * each; stops at fn's first non-OK status. Invalid UTF-8 reads as U+FFFD. */
rlx_status bert_pretokenize(const bert_norm *o, const char *text, size_t len, bert_word_fn fn, void *user);

#endif
