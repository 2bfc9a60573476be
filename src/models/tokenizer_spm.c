/*
 * tokenizer_spm.c — SentencePiece-style BPE with scores (tokenizer.ggml.model
 * "llama": llama 1/2, mistral).
 *
 * Encoding, as llama.cpp's SPM tokenizer does it:
 *  1. Spaces become "▁" (U+2581), and one is prefixed when add_space_prefix.
 *  2. The text is split into UTF-8 characters. A byte that does not start a
 *     complete sequence is its own unit, so that invalid input never swallows
 *     the "▁" that follows it (it would then decode as bytes, not a space).
 *  3. Repeatedly merge the adjacent pair whose concatenation is a vocabulary
 *     token with the highest score (ties: leftmost pair). A heap of candidate
 *     pairs keeps this O(n log n) on long prompts, where a rescan per merge
 *     would be quadratic: SPM has no pre-tokenizer, the whole text is one run.
 *  4. A remaining piece that is not a token (a character missing from the
 *     vocabulary) falls back to its bytes as "<0xNN>" tokens, or to the
 *     unknown token when the vocabulary has no byte tokens.
 * Unlike llama.cpp, merges only ever produce NORMAL/USER_DEFINED tokens, as
 * SentencePiece does: raw text "<s>" or "<0x41>" never becomes BOS or a byte
 * token.
 */
#include "models/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SPACE_MARK[] = "\xE2\x96\x81";   /* U+2581 ▁ */

rlx_status tok_spm_init(tokenizer *t) {
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        int32_t id = tok_lookup(t, name, 6);
        if (id >= 0 && t->types[id] == TOK_TYPE_BYTE) t->byte_tok[b] = id;
    }
    return RLX_OK;
}

static int hex_digit(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

size_t tok_spm_piece(const tokenizer *t, int32_t id, char *dst) {
    const char *s = t->text + t->text_off[id];
    size_t n = t->text_len[id];
    if (t->types[id] == TOK_TYPE_BYTE && n == 6 && s[0] == '<' && s[1] == '0' && s[2] == 'x' && s[5] == '>') {
        int hi = hex_digit(s[3]), lo = hex_digit(s[4]);
        if (hi >= 0 && lo >= 0) { dst[0] = (char)(hi * 16 + lo); return 1; }
    }
    if (t->types[id] == TOK_TYPE_UNKNOWN) {   /* SentencePiece's surface for <unk> */
        memcpy(dst, " \xE2\x81\x87 ", 5);
        return 5;
    }
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (i + 3 <= n && memcmp(s + i, SPACE_MARK, 3) == 0) { dst[o++] = ' '; i += 3; }
        else dst[o++] = s[i++];
    }
    return o;
}

typedef struct spm_sym {
    int32_t  prev, next;
    uint32_t start, n;     /* bytes of the escaped text */
    int32_t  id;           /* token, or TOK_NONE */
} spm_sym;

typedef struct spm_work {
    const tokenizer *t;
    const char      *buf;
    spm_sym         *sym;
    tok_heap         heap;
} spm_work;

static bool try_pair(spm_work *w, int32_t l, int32_t r) {
    if (l < 0 || r < 0) return true;
    uint32_t size = w->sym[l].n + w->sym[r].n;
    int32_t id = tok_lookup(w->t, w->buf + w->sym[l].start, size);
    if (!tok_is_text_token(w->t, id)) return true;
    tok_bigram b = { -(double)w->t->scores[id], l, r, size, id };
    return tok_heap_push(&w->heap, b);
}

static rlx_status push_bytes(const tokenizer *t, const char *s, size_t n, tok_ids *out) {
    for (size_t i = 0; i < n; i++) {
        uint8_t b = (uint8_t)s[i];
        int32_t id = t->byte_tok[b] >= 0 ? t->byte_tok[b] : t->unk;
        if (id < 0)
            return rlx_fail(RLX_STATUS_FORMAT, "tokenizer: byte 0x%02X has no token, and the vocabulary has "
                            "neither <0x%02X> nor an unknown token", b, b);
        /* Consecutive unknown bytes of one character collapse into one <unk>. */
        if (id == t->unk && t->byte_tok[b] < 0 && i > 0 && out->n && out->v[out->n - 1] == t->unk) continue;
        if (!tok_ids_push(out, id)) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "tokenizer encode: out of memory");
    }
    return RLX_OK;
}

rlx_status tok_spm_encode(const tokenizer *t, const char *text, size_t len, bool add_prefix, tok_ids *out) {
    size_t cap = 3 * len + 3;
    char *buf = malloc(cap);
    spm_sym *sym = malloc((cap + 1) * sizeof *sym);
    spm_work w = { t, buf, sym, {0} };
    rlx_status st = RLX_OK;
    if (!buf || !sym) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "tokenizer encode: out of memory"); goto done; }

    size_t n = 0;
    if (add_prefix) { memcpy(buf, SPACE_MARK, 3); n = 3; }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') { memcpy(buf + n, SPACE_MARK, 3); n += 3; }
        else buf[n++] = text[i];
    }

    int32_t n_sym = 0;
    for (size_t i = 0; i < n;) {
        size_t k = tok_utf8_unit((const uint8_t *)buf + i, n - i);
        int32_t id = tok_lookup(t, buf + i, k);
        sym[n_sym] = (spm_sym){ n_sym - 1, n_sym + 1, (uint32_t)i, (uint32_t)k,
                                tok_is_text_token(t, id) ? id : TOK_NONE };
        n_sym++;
        i += k;
    }
    if (n_sym == 0) goto done;
    sym[n_sym - 1].next = -1;

    for (int32_t i = 1; i < n_sym; i++)
        if (!try_pair(&w, i - 1, i)) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "tokenizer encode: out of memory"); goto done; }

    tok_bigram b;
    while (tok_heap_pop(&w.heap, &b)) {
        spm_sym *l = &sym[b.left], *r = &sym[b.right];
        /* Stale: one side was merged away or grew since the pair was queued. */
        if (l->n == 0 || r->n == 0 || l->n + r->n != b.size) continue;
        l->n += r->n;
        l->id = b.id;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0) sym[r->next].prev = b.left;
        if (!try_pair(&w, l->prev, b.left) || !try_pair(&w, b.left, l->next)) {
            st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "tokenizer encode: out of memory");
            goto done;
        }
    }

    for (int32_t i = 0; i >= 0; i = sym[i].next) {
        if (sym[i].id >= 0) {
            if (!tok_ids_push(out, sym[i].id)) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "tokenizer encode: out of memory"); goto done; }
        } else if ((st = push_bytes(t, buf + sym[i].start, sym[i].n, out))) {
            goto done;
        }
    }
done:
    free(w.heap.v);
    free(sym);
    free(buf);
    return st;
}
