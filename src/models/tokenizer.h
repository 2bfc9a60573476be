/*
 * tokenizer.h — text <-> token ids for Llama-family models: SentencePiece-style
 * BPE with scores and byte fallback (llama, mistral) and GPT-2 byte-level BPE
 * with ranked merges and a hand-written pre-tokenizer (llama3, qwen2, gpt2).
 *
 * The vocabulary arrives through a plain struct (tok_vocab_desc) so that this
 * module does not depend on the GGUF reader; rlx_tokenizer_new() copies all it
 * keeps, so the desc may point straight into a mmapped file.
 *
 * GGUF metadata -> tok_vocab_desc (what the model loader fills):
 *
 *   tokenizer.ggml.model            string      -> model ("llama" = SPM, "gpt2" = BPE)
 *   tokenizer.ggml.pre              string      -> pre   (NULL/absent = "default")
 *   tokenizer.ggml.tokens           [string]    -> tokens[n_tokens] (+ token_lens, since
 *                                                  GGUF strings are length-prefixed)
 *   tokenizer.ggml.scores           [f32]       -> scores   (SPM merge priority; may be NULL)
 *   tokenizer.ggml.token_type       [i32]       -> token_types (tok_type values; may be NULL)
 *   tokenizer.ggml.merges           [string]    -> merges[n_merges] (+ merge_lens) ("a b", BPE)
 *   tokenizer.ggml.bos_token_id     u32         -> bos_id
 *   tokenizer.ggml.eos_token_id     u32         -> eos_id
 *   tokenizer.ggml.eot_token_id     u32         -> eot_id  (end of turn, e.g. <|eot_id|>)
 *   tokenizer.ggml.unknown_token_id u32         -> unk_id
 *   tokenizer.ggml.padding_token_id u32         -> pad_id
 *   tokenizer.ggml.add_bos_token    bool        -> add_bos
 *   tokenizer.ggml.add_eos_token    bool        -> add_eos
 *   tokenizer.ggml.add_space_prefix bool        -> add_space_prefix
 *
 * An absent id key stays TOK_NONE; an absent bool key stays TOK_DEFAULT, which
 * resolves per model: SPM add_bos=1 add_space_prefix=1, BPE add_bos=1 only for
 * the llama3 pre-tokenizer, add_eos=0 everywhere (llama.cpp's defaults).
 * add_space_prefix is an SPM option: BPE ignores it in encode and decode.
 *
 * tokenizer.ggml.pre -> pre-tokenizer regex (implemented by hand, see
 * tokenizer_bpe.c):
 *   "llama-bpe", "llama3", "llama-v3", "falcon3"      -> TOK_PRE_LLAMA3 (digits in groups of <= 3;
 *                                                       a word found whole in the vocab skips merges)
 *   "qwen2", "deepseek-r1-qwen"                       -> TOK_PRE_QWEN2  (single digits)
 *   NULL, "default", "gpt2"                           -> TOK_PRE_GPT2
 *   anything else                                     -> TOK_PRE_GPT2 with a logged warning
 */
#ifndef RLX_MODELS_TOKENIZER_H
#define RLX_MODELS_TOKENIZER_H

#include "core/core.h"

#define TOK_NONE    (-1)   /* no such special token            */
#define TOK_DEFAULT (-1)   /* boolean option: use model default */

/* tokenizer.ggml.token_type values (llama.cpp's llama_token_type). */
typedef enum tok_type {
    TOK_TYPE_UNDEFINED    = 0,   /* treated as NORMAL */
    TOK_TYPE_NORMAL       = 1,
    TOK_TYPE_UNKNOWN      = 2,
    TOK_TYPE_CONTROL      = 3,   /* <s>, </s>, <|eot_id|>: matched only with parse_special */
    TOK_TYPE_USER_DEFINED = 4,   /* added tokens: always matched literally in the input   */
    TOK_TYPE_UNUSED       = 5,   /* never produced by encode, decodes to nothing          */
    TOK_TYPE_BYTE         = 6,   /* SPM "<0xNN>" byte fallback                             */
} tok_type;

typedef enum tok_model { TOK_MODEL_SPM = 1, TOK_MODEL_BPE = 2 } tok_model;
typedef enum tok_pre   { TOK_PRE_GPT2 = 0, TOK_PRE_LLAMA3 = 1, TOK_PRE_QWEN2 = 2 } tok_pre;

typedef struct tok_vocab_desc {
    const char        *model;        /* "llama" | "gpt2" (required)                       */
    const char        *pre;          /* tokenizer.ggml.pre, or NULL                        */
    int32_t            n_tokens;
    const char *const *tokens;       /* n_tokens strings                                   */
    const uint32_t    *token_lens;   /* byte lengths, or NULL: tokens are NUL-terminated   */
    const float       *scores;       /* n_tokens, or NULL (all 0)                          */
    const int32_t     *token_types;  /* n_tokens tok_type values, or NULL (inferred: ids
                                        bos/eos/eot/pad CONTROL, unk UNKNOWN, SPM "<0xNN>"
                                        BYTE, the rest NORMAL)                             */
    int32_t            n_merges;     /* BPE: merges "left right", rank = index             */
    const char *const *merges;
    const uint32_t    *merge_lens;   /* or NULL: NUL-terminated                            */
    int32_t bos_id, eos_id, eot_id, unk_id, pad_id;  /* TOK_NONE when absent               */
    int     add_bos, add_eos, add_space_prefix;      /* 0, 1 or TOK_DEFAULT                */
} tok_vocab_desc;

/* Fills d with "nothing given": NULL arrays, ids TOK_NONE, options TOK_DEFAULT. */
void tok_vocab_desc_init(tok_vocab_desc *d);

typedef struct tokenizer tokenizer;

/* Builds a tokenizer from desc, copying everything it keeps. Errors:
 * INVALID_ARGUMENT (NULL, counts, ids out of range), UNSUPPORTED (model other
 * than "llama"/"gpt2"), FORMAT (a token or merge that cannot be used),
 * OUT_OF_MEMORY. */
rlx_status rlx_tokenizer_new(const tok_vocab_desc *desc, tokenizer **out);
void       rlx_tokenizer_free(tokenizer *t);

tok_model  rlx_tokenizer_model(const tokenizer *t);
tok_pre    rlx_tokenizer_pre(const tokenizer *t);
int32_t    rlx_tokenizer_n_vocab(const tokenizer *t);
int32_t    rlx_tokenizer_bos(const tokenizer *t);       /* TOK_NONE if none */
int32_t    rlx_tokenizer_eos(const tokenizer *t);
int32_t    rlx_tokenizer_eot(const tokenizer *t);
bool       rlx_tokenizer_add_bos(const tokenizer *t);
/* True for the ids that end generation: eos, eot, and (as llama.cpp does,
 * since converters rarely write eot_token_id) any token whose text is one of
 * <|eot_id|> <|eom_id|> <|im_end|> <|end|> <end_of_turn> <|endoftext|> <EOT>. */
bool       rlx_tokenizer_is_eog(const tokenizer *t, int32_t id);
/* The raw vocabulary string of id ("▁Hello", "Ġworld", "<0x0A>"), or NULL. */
const char *rlx_tokenizer_token_text(const tokenizer *t, int32_t id, size_t *len);
/* Exact-string lookup of a vocabulary entry; TOK_NONE if absent. */
int32_t    rlx_tokenizer_find(const tokenizer *t, const char *text, size_t len);

/* Encodes len bytes of text (any bytes; invalid UTF-8 falls back to bytes).
 *  add_special:   prepend BOS / append EOS as the vocab's add_bos/add_eos say.
 *  parse_special: CONTROL (and UNKNOWN) token strings in the text become those
 *                 tokens; without it they are tokenized as plain text.
 *                 USER_DEFINED tokens are always matched (as llama.cpp and
 *                 Hugging Face tokenizers do with added tokens).
 * *n_out is always set to the number of ids the text needs. ids == NULL with
 * cap == 0 is a size query and returns RLX_OK. Otherwise, when cap < *n_out,
 * the first cap ids are written and INVALID_ARGUMENT is returned. */
rlx_status rlx_tokenizer_encode(const tokenizer *t, const char *text, size_t len,
                                bool add_special, bool parse_special,
                                int32_t *ids, size_t cap, size_t *n_out);
/* Same, into a malloc'ed array the caller free()s (*ids NULL when *n == 0). */
rlx_status rlx_tokenizer_encode_alloc(const tokenizer *t, const char *text, size_t len,
                                      bool add_special, bool parse_special,
                                      int32_t **ids, size_t *n);

/* Decode flags. */
#define TOK_DECODE_RENDER_SPECIAL 1u  /* CONTROL tokens appear as their text (default: dropped) */
#define TOK_DECODE_KEEP_PREFIX    2u  /* SPM: keep the space that encode prefixed              */

/* Decodes ids to bytes: the inverse of encode. SPM "▁" becomes a space, byte
 * tokens become their byte, and (unless TOK_DECODE_KEEP_PREFIX) one leading
 * space is removed from the first piece of text at the start and after each
 * special token, where encode added it. The bytes are exactly what the tokens
 * spell, which may be invalid UTF-8 for arbitrary id sequences (use tok_stream
 * for text that must be valid). An id outside [0, n_vocab) is INVALID_ARGUMENT.
 * buf receives the bytes and a NUL; *len_out (always set on success or when
 * buf is too small) is the length without the NUL. buf == NULL with cap == 0
 * is a size query; cap <= *len_out otherwise is INVALID_ARGUMENT. */
rlx_status rlx_tokenizer_decode(const tokenizer *t, const int32_t *ids, size_t n, unsigned flags,
                                char *buf, size_t cap, size_t *len_out);
/* Same, into a malloc'ed NUL-terminated string the caller free()s. */
rlx_status rlx_tokenizer_decode_alloc(const tokenizer *t, const int32_t *ids, size_t n,
                                      unsigned flags, char **out, size_t *len_out);

/* The bytes one token decodes to, borrowed from t (valid until it is freed):
 * no prefix-space stripping, CONTROL tokens empty unless render_special. */
rlx_status rlx_tokenizer_token_to_piece(const tokenizer *t, int32_t id, bool render_special,
                                        const char **piece, size_t *len);

/* ------------------------------------------------------------ streaming */

/* A streaming detokenizer for generation: push ids one at a time, print what
 * comes back. It never returns broken UTF-8: a multi-byte character split
 * across tokens (SPM byte fallback, GPT-2 byte pieces) is held until it is
 * complete, and bytes that can never form a valid character become U+FFFD.
 * The concatenated output equals decode() of all ids whenever that is valid
 * UTF-8. Flags are TOK_DECODE_*; the SPM prefix space is stripped from the
 * first text piece as in decode(), so either push the prompt ids first or
 * pass TOK_DECODE_KEEP_PREFIX when streaming only a continuation. */
typedef struct tok_stream tok_stream;

rlx_status rlx_tok_stream_new(const tokenizer *t, unsigned flags, tok_stream **out);
void       rlx_tok_stream_free(tok_stream *s);
/* *text (borrowed, valid until the next call on s) gets the bytes that are
 * ready, possibly none (*len == 0). */
rlx_status rlx_tok_stream_push(tok_stream *s, int32_t id, const char **text, size_t *len);
/* End of stream: held bytes of an unfinished character come out as U+FFFD. */
rlx_status rlx_tok_stream_flush(tok_stream *s, const char **text, size_t *len);

/* ============================================================ internal
 * Shared by tokenizer.c, tokenizer_spm.c and tokenizer_bpe.c only. */

typedef struct tok_ids {           /* growable id vector */
    int32_t *v;
    size_t   n, cap;
} tok_ids;
bool tok_ids_push(tok_ids *ids, int32_t id);   /* false: out of memory */

typedef struct tok_merge_slot {    /* BPE (left id, right id) -> rank, merged id */
    uint64_t key;                  /* UINT64_MAX = empty */
    int32_t  rank, merged;
} tok_merge_slot;

struct tokenizer {
    tok_model model;
    tok_pre   pre;
    int32_t   n_tokens;
    char     *text;                /* all token strings, each NUL-terminated */
    uint32_t *text_off, *text_len;
    float    *scores;
    uint8_t  *types;               /* tok_type per id */
    char     *piece;               /* decoded bytes of each token */
    uint32_t *piece_off, *piece_len;
    uint32_t  max_piece_len;
    uint32_t *map;                 /* open addressing: string -> id + 1, 0 = empty */
    uint32_t  map_mask;
    int32_t   byte_tok[256];       /* SPM: "<0xNN>" id; BPE: id of byte b's one-char token */
    tok_merge_slot *merges;        /* BPE */
    uint32_t  merge_mask;
    bool      ignore_merges;       /* BPE llama3: a word in the vocab is taken whole */
    int32_t  *special;             /* ids matched literally in the input, longest first */
    int32_t   n_special;
    uint8_t   special_first[32];   /* bitset of their first bytes */
    int32_t   bos, eos, eot, unk, pad;
    int32_t   eog[8];              /* end-of-turn tokens found by their text */
    int32_t   n_eog;
    bool      add_bos, add_eos, add_space_prefix;
};

/* Vocabulary lookup of an exact string: id or TOK_NONE. */
int32_t tok_lookup(const tokenizer *t, const char *s, size_t n);
/* True when a raw-text merge/lookup may produce id (NORMAL, UNDEFINED, USER_DEFINED). */
bool    tok_is_text_token(const tokenizer *t, int32_t id);

/* A binary min-heap of candidate merges, shared by both BPE flavours: key is
 * -score (SPM) or rank (BPE); ties pop the leftmost pair first. */
typedef struct tok_bigram {
    double   key;
    int32_t  left, right;
    uint32_t size;                 /* bytes of left + right when pushed: staleness check */
    int32_t  id;                   /* merged token */
} tok_bigram;
typedef struct tok_heap {
    tok_bigram *v;
    size_t      n, cap;
} tok_heap;
bool tok_heap_push(tok_heap *h, tok_bigram b);   /* false: out of memory */
bool tok_heap_pop(tok_heap *h, tok_bigram *out); /* false: empty */

/* Byte length of the UTF-8 sequence a lead byte starts (1 for invalid bytes). */
size_t tok_utf8_len(uint8_t lead);
/* Length of the character at p[0..n): tok_utf8_len when that many bytes are
 * there and the trailing ones are continuation bytes, else 1. */
size_t tok_utf8_unit(const uint8_t *p, size_t n);

/* Model-specific encoders of one run of plain text (no special tokens). */
rlx_status tok_spm_encode(const tokenizer *t, const char *text, size_t len, bool add_prefix,
                          tok_ids *out);
rlx_status tok_bpe_encode(const tokenizer *t, const char *text, size_t len, tok_ids *out);
/* Builder hooks: SPM byte tokens / BPE byte map, merges. */
rlx_status tok_spm_init(tokenizer *t);
rlx_status tok_bpe_init(tokenizer *t, const tok_vocab_desc *d);
/* The decoded bytes of token id's text into dst (capacity >= text_len + 8);
 * returns the byte count. */
size_t     tok_spm_piece(const tokenizer *t, int32_t id, char *dst);
size_t     tok_bpe_piece(const tokenizer *t, int32_t id, char *dst);

/* BPE pre-tokenizer, exposed for tests: splits text into words, calling fn
 * with each word's byte range; stops at fn's first non-OK status. */
typedef rlx_status (*tok_word_fn)(void *user, size_t start, size_t end);
rlx_status tok_pretokenize(tok_pre pre, const char *text, size_t len, tok_word_fn fn, void *user);
/* GPT-2's bytes_to_unicode (byte -> printable code point) and its inverse
 * (-1 for a code point that is no mapped byte); tokenizer.json's ByteLevel
 * uses them too. */
uint32_t tok_byte_to_cp(uint8_t b);
int      tok_cp_to_byte(uint32_t cp);
/* Unicode classes used by the pre-tokenizer (exposed for tests). */
bool tok_uni_is_letter(uint32_t cp);
bool tok_uni_is_number(uint32_t cp);
bool tok_uni_is_space(uint32_t cp);

#endif
