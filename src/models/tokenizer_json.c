/*
 * tokenizer_json.c — reads a Hugging Face tokenizer.json (through core/json.h)
 * into the structs of tj_internal.h, and wires the result into an
 * enc_tokenizer: tokenize = normalize, pre-tokenize, model per piece;
 * template from the post-processor; added tokens as specials; decode.
 *
 * Every section is checked as it is read, so that a file rlx cannot run
 * exactly fails at load time with the section and type named, rather than
 * giving different ids later. The normalizer and pre-tokenizer sections
 * are read in tj_read_text.c with the helpers defined first here.
 */
#include "models/tj_internal.h"
#include "core/json.h"
#include "models/unicode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

rlx_status tj_oom(void) { return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "tokenizer.json: out of memory"); }

rlx_status tj_bad(const tj_rd *r, const json_value *v, const char *what, const char *want) {
    return rlx_fail(RLX_STATUS_FORMAT, "%s: byte %llu: %s is %s, expected %s", r->name,
                    (unsigned long long)(v ? v->offset : 0), what, v ? json_type_name(v->type) : "missing", want);
}

rlx_status tj_unsupported(const tj_rd *r, const char *section, const char *type, const char *why) {
    return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %s type '%s' is not supported%s%s", r->name, section, type,
                    why ? ": " : "", why ? why : "");
}

rlx_status tj_type_of(const tj_rd *r, const json_value *obj, const char *section, const char **type) {
    if (!obj || obj->type != JSON_OBJECT) return tj_bad(r, obj, section, "an object or null");
    const json_value *t = json_get(obj, "type");
    if (!t || t->type != JSON_STRING) return tj_bad(r, t ? t : obj, section, "an object with a \"type\" string");
    *type = t->u.str.s;
    return RLX_OK;
}

/* Optional bool key (absent or null: def). */
rlx_status tj_opt_bool(const tj_rd *r, const json_value *obj, const char *key, bool def, bool *out) {
    const json_value *v = json_get(obj, key);
    *out = def;
    if (!v || v->type == JSON_NULL) return RLX_OK;
    if (v->type != JSON_BOOL) return tj_bad(r, v, key, "a bool");
    *out = v->u.b;
    return RLX_OK;
}

/* Optional string key: *s NULL when absent or null. */
rlx_status tj_opt_str(const tj_rd *r, const json_value *obj, const char *key, const char **s, size_t *n) {
    const json_value *v = json_get(obj, key);
    *s = NULL;
    *n = 0;
    if (!v || v->type == JSON_NULL) return RLX_OK;
    if (v->type != JSON_STRING) return tj_bad(r, v, key, "a string");
    *s = v->u.str.s;
    *n = v->u.str.len;
    return RLX_OK;
}

char *tj_dup_n(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) { if (n) memcpy(d, s, n); d[n] = 0; }
    return d;
}

/* A string that must be exactly one code point. */
rlx_status tj_one_char(const tj_rd *r, const json_value *obj, const char *key, uint32_t def, uint32_t *cp) {
    const char *s;
    size_t n;
    rlx_status st = tj_opt_str(r, obj, key, &s, &n);
    *cp = def;
    if (st || !s) return st;
    size_t k = n ? uni_utf8_decode((const uint8_t *)s, n, cp) : 0;
    if (n == 0 || k != n) return tj_bad(r, json_get(obj, key), key, "a string of one character");
    return RLX_OK;
}

/* A {"String": s} pattern into *s, or UNSUPPORTED for {"Regex": ...}. */
rlx_status tj_pattern_of(const tj_rd *r, const json_value *obj, const char *section, const char *type,
                             const char **s, size_t *n, const char **regex) {
    const json_value *p = json_get(obj, "pattern");
    *s = NULL;
    *regex = NULL;
    if (!p || p->type != JSON_OBJECT) return tj_bad(r, p ? p : obj, "pattern", "an object {\"String\": ...} or {\"Regex\": ...}");
    const json_value *v = json_get(p, "String");
    if (v && v->type == JSON_STRING) { *s = v->u.str.s; *n = v->u.str.len; return RLX_OK; }
    v = json_get(p, "Regex");
    if (v && v->type == JSON_STRING) { *regex = v->u.str.s; *n = v->u.str.len; return RLX_OK; }
    (void)section; (void)type;
    return tj_bad(r, p, "pattern", "an object {\"String\": ...} or {\"Regex\": ...}");
}

/* ---------------------------------------------------------------- model */

static rlx_status id_of_value(const tj_rd *r, const json_value *v, const char *what, int32_t *id) {
    int64_t x;
    *id = 0;
    if (!v || v->type != JSON_NUMBER || !v->u.num.is_int || (x = v->u.num.i) < 0 || x >= (1 << 28))
        return tj_bad(r, v, what, "an id in [0, 2^28)");
    *id = (int32_t)x;
    return RLX_OK;
}

/* Highest id + 1 of the vocab object and the added tokens. */
static rlx_status count_ids(const tj_rd *r, const json_value *vocab, bool is_array, const json_value *added, int32_t *n_model, int32_t *n) {
    int32_t hi = 0;
    rlx_status st = RLX_OK;
    if (is_array) hi = (int32_t)vocab->u.arr.n;
    else
        for (size_t i = 0; i < vocab->u.obj.n && !st; i++) {
            int32_t id;
            st = id_of_value(r, &vocab->u.obj.members[i].value, "model.vocab entry", &id);
            if (!st && id + 1 > hi) hi = id + 1;
        }
    *n_model = hi;
    for (size_t i = 0; added && i < added->u.arr.n && !st; i++) {
        int32_t id;
        st = id_of_value(r, json_get(&added->u.arr.items[i], "id"), "added_tokens id", &id);
        if (!st && id + 1 > hi) hi = id + 1;
    }
    *n = hi;
    if (!st && hi == 0) return tj_bad(r, vocab, "model.vocab", "a non-empty vocabulary");
    /* Ids index arrays: a few gaps are fine, an id far beyond the count of
     * strings would only allocate memory for nothing. */
    size_t strings = (is_array ? vocab->u.arr.n : vocab->u.obj.n) + (added ? added->u.arr.n : 0);
    if (!st && (size_t)hi > 2 * strings + 1024)
        return rlx_fail(RLX_STATUS_FORMAT, "%s: ids reach %d for %zu strings (the vocabulary's ids must be nearly dense)",
                        r->name, hi - 1, strings);
    return st;
}

static rlx_status set_prefix(tj_rd *r, const json_value *model, const char *key, const char *def, char **out, size_t *len) {
    const char *s;
    size_t n;
    rlx_status st = tj_opt_str(r, model, key, &s, &n);
    if (st) return st;
    if (!s) { s = def; n = strlen(def); }
    if (!(*out = tj_dup_n(s, n))) return tj_oom();
    *len = n;
    return RLX_OK;
}

static rlx_status read_merges(tj_rd *r, const json_value *a) {
    tj_model *m = r->m;
    rlx_status st = tj_merges_init(m, a->u.arr.n);
    tj_buf cat = {0};
    for (size_t i = 0; i < a->u.arr.n && !st; i++) {
        const json_value *e = &a->u.arr.items[i];
        const char *ls, *rs;
        size_t ln, rn;
        if (e->type == JSON_STRING) {
            const char *sp = e->u.str.len > 1 ? memchr(e->u.str.s + 1, ' ', e->u.str.len - 1) : NULL;
            if (!sp) { st = tj_bad(r, e, "model.merges entry", "\"left right\" with a space"); break; }
            ls = e->u.str.s;
            ln = (size_t)(sp - ls);
            rs = sp + 1;
            rn = e->u.str.len - ln - 1;
        } else if (e->type == JSON_ARRAY && e->u.arr.n == 2 && e->u.arr.items[0].type == JSON_STRING &&
                   e->u.arr.items[1].type == JSON_STRING) {
            ls = e->u.arr.items[0].u.str.s, ln = e->u.arr.items[0].u.str.len;
            rs = e->u.arr.items[1].u.str.s, rn = e->u.arr.items[1].u.str.len;
        } else {
            st = tj_bad(r, e, "model.merges entry", "a string \"a b\" or an array [\"a\", \"b\"]");
            break;
        }
        int32_t l = tj_find(m, ls, ln), rr = tj_find(m, rs, rn);
        size_t skip = m->prefix_len && rn >= m->prefix_len && memcmp(rs, m->prefix, m->prefix_len) == 0 ? m->prefix_len : 0;
        cat.n = 0;
        if (!tj_put(&cat, ls, ln) || !tj_put(&cat, rs + skip, rn - skip)) { st = tj_oom(); break; }
        int32_t merged = tj_find(m, cat.s, cat.n);
        if (l < 0 || rr < 0 || merged < 0) {
            char shown[120];
            json_printable(shown, sizeof shown, cat.s, cat.n);
            st = rlx_fail(RLX_STATUS_FORMAT, "%s: byte %llu: merge %zu ('%s') names a token that is not in model.vocab",
                          r->name, (unsigned long long)e->offset, i, shown);
            break;
        }
        tj_merge_add(m, l, rr, merged, (int32_t)i);
    }
    free(cat.s);
    return st;
}

static rlx_status read_model(tj_rd *r, const json_value *model, const json_value *added) {
    tj_model *m = r->m;
    if (!model || model->type != JSON_OBJECT) return tj_bad(r, model, "model", "an object");
    const json_value *t = json_get(model, "type"), *vocab = json_get(model, "vocab");
    const char *type = t && t->type == JSON_STRING ? t->u.str.s : NULL;
    if (t && !type) return tj_bad(r, t, "model.type", "a string");
    if (!type) type = json_get(model, "merges") ? "BPE" : vocab && vocab->type == JSON_ARRAY ? "Unigram" : "WordPiece";
    if (strcmp(type, "WordPiece") == 0) m->kind = TJM_WORDPIECE;
    else if (strcmp(type, "BPE") == 0) m->kind = TJM_BPE;
    else if (strcmp(type, "Unigram") == 0) m->kind = TJM_UNIGRAM;
    else return tj_unsupported(r, "model", type, NULL);
    bool uni = m->kind == TJM_UNIGRAM;
    if (!vocab || vocab->type != (uni ? JSON_ARRAY : JSON_OBJECT))
        return tj_bad(r, vocab ? vocab : model, "model.vocab", uni ? "an array of [piece, score]" : "an object {token: id}");
    int32_t n_model, n;
    rlx_status st = count_ids(r, vocab, uni, added, &n_model, &n);
    if (!st) st = tj_vocab_init(m, n);
    if (st) return st;
    m->n_model = n_model;
    if (uni) {
        m->scores = malloc((size_t)n_model * sizeof *m->scores);
        if (!m->scores) return tj_oom();
        double lo = 0;
        for (size_t i = 0; i < vocab->u.arr.n && !st; i++) {
            const json_value *e = &vocab->u.arr.items[i];
            if (e->type != JSON_ARRAY || e->u.arr.n != 2 || e->u.arr.items[0].type != JSON_STRING ||
                e->u.arr.items[1].type != JSON_NUMBER)
                return tj_bad(r, e, "model.vocab entry", "[piece, score]");
            st = tj_vocab_set(m, (int32_t)i, e->u.arr.items[0].u.str.s, e->u.arr.items[0].u.str.len, r->name);
            m->scores[i] = e->u.arr.items[1].u.num.d;
            if (i == 0 || m->scores[i] < lo) lo = m->scores[i];
        }
        m->unk_score = lo - 10.0;
        const json_value *u = json_get(model, "unk_id");
        if (!st && u && u->type != JSON_NULL) {
            if ((st = id_of_value(r, u, "model.unk_id", &m->unk))) return st;
            if (m->unk >= n_model) return tj_bad(r, u, "model.unk_id", "an id of model.vocab");
        }
        m->fuse_unk = true;
        if (!st) st = tj_opt_bool(r, model, "byte_fallback", false, &m->byte_fallback);
    } else {
        for (size_t i = 0; i < vocab->u.obj.n && !st; i++) {
            const json_member *e = &vocab->u.obj.members[i];
            st = tj_vocab_set(m, (int32_t)e->value.u.num.i, e->key, e->key_len, r->name);
        }
        const char *u;
        size_t un;
        if (!st) st = tj_opt_str(r, model, "unk_token", &u, &un);
        if (!st && u) {
            m->unk = tj_find(m, u, un);
            if (m->unk == TOK_NONE && m->kind == TJM_WORDPIECE)
                return tj_bad(r, json_get(model, "unk_token"), "model.unk_token", "a token of model.vocab");
        }
    }
    if (st) return st;
    if (m->kind == TJM_WORDPIECE) {
        int64_t mc = 100;
        const json_value *v = json_get(model, "max_input_chars_per_word");
        if (v && (json_as_i64(v, "model.max_input_chars_per_word", &mc) || mc < 1 || mc > INT32_MAX))
            return tj_bad(r, v, "model.max_input_chars_per_word", "a positive integer");
        m->max_chars = (int32_t)mc;
        if ((st = set_prefix(r, model, "continuing_subword_prefix", "##", &m->prefix, &m->prefix_len))) return st;
        if (!(m->suffix = tj_dup_n("", 0))) return tj_oom();
    }
    if (m->kind == TJM_BPE) {
        const json_value *d = json_get(model, "dropout");
        if (d && d->type != JSON_NULL) return tj_unsupported(r, "model", "BPE", "dropout must be null (rlx tokenizes deterministically)");
        if ((st = set_prefix(r, model, "continuing_subword_prefix", "", &m->prefix, &m->prefix_len)) ||
            (st = set_prefix(r, model, "end_of_word_suffix", "", &m->suffix, &m->suffix_len)) ||
            (st = tj_opt_bool(r, model, "fuse_unk", false, &m->fuse_unk)) ||
            (st = tj_opt_bool(r, model, "byte_fallback", false, &m->byte_fallback)) ||
            (st = tj_opt_bool(r, model, "ignore_merges", false, &m->ignore_merges)))
            return st;
        const json_value *mg = json_get(model, "merges");
        if (!mg || mg->type != JSON_ARRAY) return tj_bad(r, mg ? mg : model, "model.merges", "an array");
        if ((st = read_merges(r, mg))) return st;
    }
    if (m->byte_fallback) tj_find_byte_tokens(m);
    return RLX_OK;
}

/* Added tokens beyond the model's vocabulary get their strings here. */
static rlx_status read_added(tj_rd *r, const json_value *added) {
    tj_model *m = r->m;
    for (size_t i = 0; added && i < added->u.arr.n; i++) {
        const json_value *a = &added->u.arr.items[i], *c = json_get(a, "content");
        if (!c || c->type != JSON_STRING || c->u.str.len == 0) return tj_bad(r, c ? c : a, "added_tokens content", "a non-empty string");
        int32_t id = (int32_t)json_get(a, "id")->u.num.i;
        int32_t have = tj_find(m, c->u.str.s, c->u.str.len);
        if (have == id) continue;
        rlx_status st = tj_vocab_set(m, id, c->u.str.s, c->u.str.len, r->name);
        if (st) return st;
    }
    return RLX_OK;
}

/* ---------------------------------------------------- post-processor */

static rlx_status piece_push(const tj_rd *r, const json_value *at, enc_piece *v, int *n, int32_t id, int32_t type) {
    if (*n >= ENC_TEMPLATE_MAX) return tj_bad(r, at, "post_processor template", "at most 8 tokens");
    v[(*n)++] = (enc_piece){id, type};
    return RLX_OK;
}

/* ["[CLS]", 101] of BertProcessing / RobertaProcessing. */
static rlx_status token_pair(const tj_rd *r, const json_value *pp, const char *key, int32_t *id) {
    const json_value *v = json_get(pp, key);
    if (!v || v->type != JSON_ARRAY || v->u.arr.n != 2) return tj_bad(r, v ? v : pp, key, "[token, id]");
    rlx_status st = id_of_value(r, &v->u.arr.items[1], key, id);
    if (!st && *id >= r->m->n) return tj_bad(r, &v->u.arr.items[1], key, "an id of the vocabulary");
    return st;
}

static rlx_status template_seq(const tj_rd *r, const json_value *items, const json_value *specials, enc_piece *v, int *n) {
    if (!items || items->type != JSON_ARRAY) return tj_bad(r, items, "TemplateProcessing single/pair", "an array");
    rlx_status st = RLX_OK;
    for (size_t i = 0; i < items->u.arr.n && !st; i++) {
        const json_value *it = &items->u.arr.items[i], *sq = json_get(it, "Sequence"), *sp = json_get(it, "SpecialToken");
        const json_value *body = sq ? sq : sp;
        int64_t type = 0;
        const char *name;
        if (!body || body->type != JSON_OBJECT || json_get_str(body, "id", &name, NULL))
            return tj_bad(r, it, "TemplateProcessing item", "{\"Sequence\": {...}} or {\"SpecialToken\": {...}}");
        const json_value *tv = json_get(body, "type_id");
        if (tv && (json_as_i64(tv, "type_id", &type) || type < 0 || type > 255)) return tj_bad(r, tv, "type_id", "an integer in [0, 255]");
        if (sq) {
            if (strcmp(name, "A") != 0 && strcmp(name, "B") != 0) return tj_bad(r, body, "Sequence id", "\"A\" or \"B\"");
            st = piece_push(r, it, v, n, name[0] == 'A' ? ENC_SEQ_A : ENC_SEQ_B, (int32_t)type);
            continue;
        }
        const json_value *tok = json_get(specials, name), *ids = tok ? json_get(tok, "ids") : NULL;
        if (!ids || ids->type != JSON_ARRAY || ids->u.arr.n == 0)
            return tj_bad(r, tok ? tok : it, "TemplateProcessing special token", "an entry of special_tokens with ids");
        for (size_t k = 0; k < ids->u.arr.n && !st; k++) {
            int32_t id;
            st = id_of_value(r, &ids->u.arr.items[k], "special_tokens ids", &id);
            if (!st && id >= r->m->n) st = tj_bad(r, &ids->u.arr.items[k], "special_tokens ids", "an id of the vocabulary");
            if (!st) st = piece_push(r, it, v, n, id, (int32_t)type);
        }
    }
    return st;
}

static rlx_status read_post(tj_rd *r, const json_value *v, enc_template *t, bool *have, int depth) {
    if (!v || v->type == JSON_NULL) return RLX_OK;
    const char *type;
    rlx_status st = tj_type_of(r, v, "post_processor", &type);
    if (st) return st;
    if (depth > 8) return tj_bad(r, v, "post_processor", "Sequences nested at most 8 deep");
    if (strcmp(type, "Sequence") == 0) {
        const json_value *a = json_get(v, "processors");
        if (!a || a->type != JSON_ARRAY) return tj_bad(r, a ? a : v, "post_processor Sequence's processors", "an array");
        for (size_t i = 0; i < a->u.arr.n && !st; i++) st = read_post(r, &a->u.arr.items[i], t, have, depth + 1);
        return st;
    }
    if (strcmp(type, "ByteLevel") == 0) return RLX_OK;   /* offsets only: no ids change */
    if (*have && strcmp(type, "ByteLevel") != 0)
        return tj_unsupported(r, "post_processor", type, "a Sequence with two processors that add tokens");
    int32_t cls, sep;
    if (strcmp(type, "BertProcessing") == 0 || strcmp(type, "RobertaProcessing") == 0) {
        if ((st = token_pair(r, v, "cls", &cls)) || (st = token_pair(r, v, "sep", &sep))) return st;
        if (type[0] == 'B') enc_template_bert(t, cls, sep);
        else enc_template_roberta(t, cls, sep);
    } else if (strcmp(type, "TemplateProcessing") == 0) {
        const json_value *sp = json_get(v, "special_tokens");
        if (sp && sp->type != JSON_OBJECT) return tj_bad(r, sp, "special_tokens", "an object");
        memset(t, 0, sizeof *t);
        if ((st = template_seq(r, json_get(v, "single"), sp, t->single, &t->n_single)) ||
            (st = template_seq(r, json_get(v, "pair"), sp, t->pair, &t->n_pair)))
            return st;
    } else {
        return tj_unsupported(r, "post_processor", type, NULL);
    }
    *have = true;
    return RLX_OK;
}

/* Decoders only matter for rlx_enc_decode: unknown ones are ignored. */
static void read_decoder(tj_rd *r, const json_value *v, int depth) {
    const json_value *t = v ? json_get(v, "type") : NULL;
    if (!t || t->type != JSON_STRING || depth > 8) return;
    if (strcmp(t->u.str.s, "ByteLevel") == 0) r->m->decode_bytes = true;
    else if (strcmp(t->u.str.s, "Metaspace") == 0) tj_one_char(r, v, "replacement", 0x2581, &r->m->decode_space);
    else if (strcmp(t->u.str.s, "Sequence") == 0) {
        const json_value *a = json_get(v, "decoders");
        for (size_t i = 0; a && a->type == JSON_ARRAY && i < a->u.arr.n; i++) read_decoder(r, &a->u.arr.items[i], depth + 1);
    }
}

/* ----------------------------------------------------------------- ops */

static rlx_status tj_tokenize(const void *p, const char *text, size_t len, tok_ids *out) {
    const tj_model *m = p;
    tj_buf norm = {0}, scratch = {0};
    tj_pieces pcs = {0};
    rlx_status st = tj_normalize(m->norms, m->n_norms, text, len, &norm);
    if (!st) st = tj_pretokenize(m->pres, m->n_pres, norm.s, norm.n, &pcs);
    for (size_t i = 0; i < pcs.n && !st; i++) st = tj_model_word(m, pcs.buf.s + pcs.off[i], pcs.len[i], &scratch, out);
    free(norm.s);
    free(scratch.s);
    tj_pieces_free(&pcs);
    return st;
}

static int32_t ops_find(const void *p, const char *s, size_t n) { return tj_find(p, s, n); }

static const char *ops_text(const void *p, int32_t id, size_t *len) {
    const tj_model *m = p;
    if (m->len[id] == UINT32_MAX) { if (len) *len = 0; return ""; }
    if (len) *len = m->len[id];
    return m->text + m->off[id];
}

static rlx_status ops_decode(const void *p, const int32_t *ids, size_t n, char **out, size_t *len) {
    const tj_model *m = p;
    tj_buf b = {0}, o = {0};
    bool ok = tj_put(&b, "", 0);
    for (size_t i = 0; i < n && ok; i++) {
        size_t tl;
        const char *t = ops_text(m, ids[i], &tl);
        unsigned byte;
        if (m->byte_fallback && tl == 6 && sscanf(t, "<0x%2X>", &byte) == 1) { char c = (char)byte; ok = tj_put(&b, &c, 1); continue; }
        if (m->kind == TJM_WORDPIECE && i > 0) {
            if (m->prefix_len && tl >= m->prefix_len && memcmp(t, m->prefix, m->prefix_len) == 0) t += m->prefix_len, tl -= m->prefix_len;
            else ok = tj_put(&b, " ", 1);
        }
        ok = ok && tj_put(&b, t, tl);
    }
    ok = ok && tj_put(&o, "", 0);
    for (size_t i = 0; i < b.n && ok;) {
        uint32_t cp;
        size_t k = uni_utf8_decode((const uint8_t *)b.s + i, b.n - i, &cp);
        int byte = m->decode_bytes ? tok_cp_to_byte(cp) : -1;
        if (byte >= 0) { char c = (char)byte; ok = tj_put(&o, &c, 1); }
        else if (m->decode_space && cp == m->decode_space) ok = o.n == 0 || tj_put(&o, " ", 1);   /* the prefix space goes */
        else ok = tj_put(&o, b.s + i, k);
        i += k;
    }
    free(b.s);
    if (!ok) { free(o.s); return tj_oom(); }
    *out = o.s;
    if (len) *len = o.n;
    return RLX_OK;
}

static void ops_free(void *p) { tj_model_free(p); }

static const enc_tokenizer_ops tj_ops = {
    .name = "tokenizer.json", .tokenize = tj_tokenize, .find = ops_find, .token_text = ops_text,
    .decode = ops_decode, .free = ops_free,
};

/* ---------------------------------------------------------------- build */

static rlx_status build(const char *name, const char *data, size_t len, enc_tokenizer **out) {
    json_options jo;
    json_options_init(&jo);
    jo.name = name;
    json_doc *doc = NULL;
    rlx_status st = json_parse(data, len, &jo, &doc);
    if (st) return st;
    tj_model *m = calloc(1, sizeof *m);
    tj_rd r = {name, m};
    const json_value *root = json_root(doc);
    const json_value *added = json_get(root, "added_tokens");
    if (!m) st = tj_oom();
    else if (root->type != JSON_OBJECT) st = tj_bad(&r, root, "the document", "an object");
    else if (added && added->type != JSON_NULL && added->type != JSON_ARRAY) st = tj_bad(&r, added, "added_tokens", "an array");
    if (added && added->type == JSON_NULL) added = NULL;
    for (size_t i = 0; !st && added && i < added->u.arr.n; i++)
        if (added->u.arr.items[i].type != JSON_OBJECT) st = tj_bad(&r, &added->u.arr.items[i], "added_tokens entry", "an object");
    if (!st) st = read_model(&r, json_get(root, "model"), added);
    if (!st) st = read_added(&r, added);
    if (!st) st = tj_read_normalizer(&r, json_get(root, "normalizer"), 0);
    if (!st) st = tj_read_pre(&r, json_get(root, "pre_tokenizer"), 0);
    enc_template tmpl;
    bool have_tmpl = false;
    if (!st) st = read_post(&r, json_get(root, "post_processor"), &tmpl, &have_tmpl, 0);
    if (!st) read_decoder(&r, json_get(root, "decoder"), 0);
    int32_t pad = TOK_NONE;
    const json_value *padding = json_get(root, "padding");
    if (!st && padding && padding->type == JSON_OBJECT && json_get(padding, "pad_id"))
        st = id_of_value(&r, json_get(padding, "pad_id"), "padding.pad_id", &pad);
    if (!st && pad >= m->n) st = tj_bad(&r, json_get(padding, "pad_id"), "padding.pad_id", "an id of the vocabulary");
    if (st) {
        tj_model_free(m);
        json_free(doc);
        return st;
    }
    if (pad == TOK_NONE) pad = tj_find(m, "[PAD]", 5);
    if (pad == TOK_NONE) pad = tj_find(m, "<pad>", 5);
    enc_tokenizer *t;
    if ((st = rlx_enc_tokenizer_new(&tj_ops, m, m->n, &t))) { json_free(doc); return st; }
    t->pad_id = pad;
    if (have_tmpl && (st = rlx_enc_tokenizer_set_template(t, &tmpl)))
        st = rlx_fail(RLX_STATUS_FORMAT, "%s: post_processor: %s", name, rlx_last_error());
    for (size_t i = 0; !st && added && i < added->u.arr.n; i++) {
        const json_value *a = &added->u.arr.items[i], *c = json_get(a, "content");
        st = rlx_enc_tokenizer_add_special(t, c->u.str.s, c->u.str.len, (int32_t)json_get(a, "id")->u.num.i);
    }
    json_free(doc);
    if (st) { rlx_enc_tokenizer_free(t); return st; }
    *out = t;
    return RLX_OK;
}

rlx_status rlx_tokenizer_json_from_memory(const char *data, size_t len, const char *name, enc_tokenizer **out) {
    if (out) *out = NULL;
    if (!out || (!data && len)) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_json_from_memory: NULL argument");
    return build(name ? name : "tokenizer.json", data ? data : "", len, out);
}

rlx_status rlx_tokenizer_json_load(const char *path, enc_tokenizer **out) {
    if (out) *out = NULL;
    if (!path || !out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_json_load: NULL argument");
    FILE *f = fopen(path, "rb");
    if (!f) return rlx_fail(RLX_STATUS_IO, "tokenizer.json '%s': cannot open: %s", path, strerror(errno));
    tj_buf b = {0};
    char chunk[65536];
    size_t got;
    bool ok = true;
    while (ok && (got = fread(chunk, 1, sizeof chunk, f)) > 0) ok = tj_put(&b, chunk, got);
    bool err = ferror(f);
    fclose(f);
    rlx_status st;
    if (!ok) st = tj_oom();
    else if (err) st = rlx_fail(RLX_STATUS_IO, "tokenizer.json '%s': read error", path);
    else st = build(path, b.s ? b.s : "", b.n, out);
    free(b.s);
    return st;
}
