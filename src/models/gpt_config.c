/*
 * gpt_config.c — the GPT trainer's config.json in an output folder: written
 * by `rlx train` beside its checkpoint, read back by `rlx train --resume` and
 * `rlx generate -m DIR`.
 */
#include "models/gpt.h"
#include "core/core.h"
#include "core/json.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rlx_status gpt_save_config(const char *dir, const gpt_config *c, const char *extra) {
    rlx_status st = gpt_config_check(c);
    if (st != RLX_OK) return st;
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/config.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return rlx_fail(RLX_STATUS_IO, "gpt: cannot write %s", tmp);
    fprintf(f, "{\n  \"model_type\": \"rlx-gpt\",\n  \"vocab\": %d,\n  \"layers\": %d,\n  \"d_model\": %d,\n  \"heads\": %d,\n"
               "  \"d_ff\": %d,\n  \"max_seq\": %d,\n  \"rope\": %s%s%s\n}\n",
            c->vocab, c->layers, c->d_model, c->heads, c->d_ff > 0 ? c->d_ff : 4 * c->d_model, c->max_seq,
            c->rope ? "true" : "false", extra ? ",\n  " : "", extra ? extra : "");
    bool ok = !ferror(f);
    if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) {
        remove(tmp);
        return rlx_fail(RLX_STATUS_IO, "gpt: cannot write %s", path);
    }
    return RLX_OK;
}

rlx_status gpt_load_config(const char *dir, gpt_config *c) {
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return rlx_fail(RLX_STATUS_IO, "gpt: cannot open %s", path);
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            char *nt = cap < (1 << 20) ? realloc(text, cap = cap ? 2 * cap : 4096) : NULL;
            if (!nt) { free(text); fclose(f); return rlx_fail(RLX_STATUS_FORMAT, "gpt: %s is too large for a config", path); }
            text = nt;
        }
        size_t r = fread(text + len, 1, cap - len, f);
        if (r == 0) break;
        len += r;
    }
    fclose(f);
    json_options o;
    json_options_init(&o);
    o.name = path;
    json_doc *d;
    rlx_status st = json_parse(text, len, &o, &d);
    free(text);
    if (st != RLX_OK) return st;
    const json_value *r = json_root(d);
    const char *type;
    size_t tl;
    memset(c, 0, sizeof *c);
    if ((st = json_get_str(r, "model_type", &type, &tl)) == RLX_OK && (tl != 7 || memcmp(type, "rlx-gpt", 7)))
        st = rlx_fail(RLX_STATUS_FORMAT, "gpt: %s is not an rlx-gpt config (model_type '%.*s')", path, (int)tl, type);
    int64_t v[6] = {0};
    const char *keys[6] = {"vocab", "layers", "d_model", "heads", "d_ff", "max_seq"};
    for (int i = 0; i < 6 && st == RLX_OK; i++) {
        st = json_get_i64(r, keys[i], &v[i]);
        if (st == RLX_OK && (v[i] < 0 || v[i] > (1 << 20)))
            st = rlx_fail(RLX_STATUS_FORMAT, "gpt: %s: %s = %lld is out of range", path, keys[i], (long long)v[i]);
    }
    bool rope = false;
    if (st == RLX_OK) st = json_get_bool(r, "rope", &rope);
    json_free(d);
    if (st != RLX_OK) return st;
    c->vocab = (int)v[0], c->layers = (int)v[1], c->d_model = (int)v[2], c->heads = (int)v[3], c->d_ff = (int)v[4];
    c->max_seq = (int)v[5], c->rope = rope;
    return gpt_config_check(c);
}
