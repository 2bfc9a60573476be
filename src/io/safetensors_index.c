/*
 * safetensors_index.c — sharded safetensors models (sft_model in
 * safetensors.h): a model.safetensors.index.json's weight_map joined with
 * the shards it names, each opened once, into one name-sorted table, so a
 * loader looks tensors up by name without caring which file holds them. A
 * single .safetensors file is a model of one shard.
 */
#include "io/safetensors.h"
#include "core/file_map.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct entry {
    const sft_tensor *t;
    int64_t shard;
} entry;

struct sft_model {
    char *path;                    /* as opened, for messages */
    sft_file **shards;
    int64_t n_shards;
    json_doc *index;               /* NULL for a single file */
    const json_value *index_meta;
    entry *entries;                /* sorted by name */
    int64_t n;
};

void sft_model_close(sft_model *m) {
    if (!m) return;
    for (int64_t i = 0; i < m->n_shards; i++) sft_close(m->shards[i]);
    free(m->shards);
    json_free(m->index);
    free(m->entries);
    free(m->path);
    free(m);
}

static int cmp_entry(const void *a, const void *b) {
    return strcmp(((const entry *)a)->t->name, ((const entry *)b)->t->name);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static char *join(const char *dir, size_t dir_len, const char *name) {
    size_t n = strlen(name);
    char *p = malloc(dir_len + 1 + n + 1);
    if (!p) return NULL;
    memcpy(p, dir, dir_len);
    p[dir_len] = '/';
    memcpy(p + dir_len + 1, name, n + 1);
    return p;
}

static rlx_status model_single(sft_model *m, const char *path) {
    if (!(m->shards = calloc(1, sizeof *m->shards))) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors: out of memory");
    rlx_status st = sft_open(path, &m->shards[0]);
    if (st) return st;
    m->n_shards = 1;
    m->n = sft_tensor_count(m->shards[0]);
    if (!(m->entries = calloc((size_t)(m->n ? m->n : 1), sizeof *m->entries)))
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors: out of memory");
    for (int64_t i = 0; i < m->n; i++) m->entries[i] = (entry){sft_tensor_at(m->shards[0], i), 0};
    qsort(m->entries, (size_t)m->n, sizeof *m->entries, cmp_entry);
    return RLX_OK;
}

/* A shard file name from the weight_map: a plain name in the index's directory. */
static bool plain_name(const char *s, size_t len) {
    return len > 0 && !memchr(s, '/', len) && !memchr(s, '\\', len) && !memchr(s, 0, len) && strcmp(s, ".") != 0 &&
           strcmp(s, "..") != 0;
}

/* Opens each distinct shard of the weight_map wm once, in name order. */
static rlx_status open_shards(sft_model *m, const char *path, const json_value *wm, const char ***names_out) {
    size_t n = wm->u.obj.n;
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (!names) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors: out of memory");
    *names_out = names;
    for (size_t i = 0; i < n; i++) names[i] = wm->u.obj.members[i].value.u.str.s;
    qsort(names, n, sizeof *names, cmp_str);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || strcmp(names[u - 1], names[i]) != 0) names[u++] = names[i];
    if (!(m->shards = calloc(u ? u : 1, sizeof *m->shards))) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors: out of memory");
    const char *slash = strrchr(path, '/');
    const char *dir = slash ? path : ".";
    size_t dir_len = slash ? (size_t)(slash - path) : 1;
    if (slash == path) dir_len = 1;   /* "/model.safetensors.index.json": the root */
    for (size_t i = 0; i < u; i++) {
        char *sp = join(dir, dir_len, names[i]);
        if (!sp) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors: out of memory");
        rlx_status st = sft_open(sp, &m->shards[i]);
        free(sp);
        if (st) return st;
        m->n_shards++;
    }
    return RLX_OK;
}

static rlx_status model_index(sft_model *m, const char *path) {
    rlx_file_map map;
    rlx_status st = rlx_file_map_open(&map, path, "safetensors index");
    if (st) return st;
    char what[300];
    snprintf(what, sizeof what, "safetensors index '%s'", path);
    json_options o;
    json_options_init(&o);
    o.name = what;
    st = json_parse((const char *)map.data, (size_t)map.size, &o, &m->index);
    rlx_file_map_close(&map);
    if (st) return st;
    const json_value *root = json_root(m->index), *wm = json_get(root, "weight_map");
    if (root->type != JSON_OBJECT) return rlx_fail(RLX_STATUS_FORMAT, "%s: the file is %s, not an object", what, json_type_name(root->type));
    if (!wm || wm->type != JSON_OBJECT)
        return rlx_fail(RLX_STATUS_FORMAT, "%s: no \"weight_map\" object of tensor name -> shard file", what);
    m->index_meta = json_get(root, "metadata");
    if (m->index_meta && m->index_meta->type != JSON_OBJECT)
        return rlx_fail(RLX_STATUS_FORMAT, "%s: \"metadata\" (byte %llu) is %s, not an object", what,
                        (unsigned long long)m->index_meta->offset, json_type_name(m->index_meta->type));
    for (size_t i = 0; i < wm->u.obj.n; i++) {
        const json_member *e = &wm->u.obj.members[i];
        char k[100];
        json_printable(k, sizeof k, e->key, e->key_len);
        if (memchr(e->key, 0, e->key_len))
            return rlx_fail(RLX_STATUS_FORMAT, "%s: weight_map key '%s' (byte %llu) contains a NUL character", what, k,
                            (unsigned long long)e->key_offset);
        if (e->value.type != JSON_STRING || !plain_name(e->value.u.str.s, e->value.u.str.len))
            return rlx_fail(RLX_STATUS_FORMAT,
                            "%s: weight_map['%s'] (byte %llu) is not a shard file name (a string without '/', "
                            "not \".\" or \"..\")",
                            what, k, (unsigned long long)e->value.offset);
    }
    const char **names = NULL;
    st = open_shards(m, path, wm, &names);
    m->n = (int64_t)wm->u.obj.n;
    if (!st && !(m->entries = calloc((size_t)(m->n ? m->n : 1), sizeof *m->entries)))
        st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors: out of memory");
    for (int64_t i = 0; !st && i < m->n; i++) {
        const json_member *e = &wm->u.obj.members[i];
        const char **at = bsearch(&e->value.u.str.s, names, (size_t)m->n_shards, sizeof *names, cmp_str);
        int64_t s = at - names;
        const sft_tensor *t = sft_find(m->shards[s], e->key);
        if (!t) {
            char k[100], f[100];
            json_printable(k, sizeof k, e->key, e->key_len);
            json_printable(f, sizeof f, e->value.u.str.s, e->value.u.str.len);
            st = rlx_fail(RLX_STATUS_FORMAT, "%s: weight_map puts tensor '%s' (byte %llu) in '%s', which has no such tensor",
                          what, k, (unsigned long long)e->key_offset, f);
            break;
        }
        m->entries[i] = (entry){t, s};
    }
    free(names);
    if (!st) qsort(m->entries, (size_t)m->n, sizeof *m->entries, cmp_entry);
    return st;
}

rlx_status sft_model_open(const char *path, sft_model **out) {
    if (!path || !out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "sft_model_open: NULL argument");
    *out = NULL;
    sft_model *m = calloc(1, sizeof *m);
    if (!m || !(m->path = rlx_strdup(path))) {
        free(m);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors: out of memory");
    }
    struct stat sb;
    rlx_status st;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        char *idx = join(path, strlen(path), "model.safetensors.index.json");
        char *one = join(path, strlen(path), "model.safetensors");
        if (!idx || !one) st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors: out of memory");
        else if (stat(idx, &sb) == 0) st = model_index(m, idx);
        else if (stat(one, &sb) == 0) st = model_single(m, one);
        else st = rlx_fail(RLX_STATUS_IO, "safetensors: '%s' holds neither model.safetensors.index.json nor model.safetensors", path);
        free(idx);
        free(one);
    } else if (ends_with(path, ".json")) {
        st = model_index(m, path);
    } else {
        st = model_single(m, path);
    }
    if (st) {
        sft_model_close(m);
        return st;
    }
    *out = m;
    return RLX_OK;
}

int64_t sft_model_shard_count(const sft_model *m) { return m ? m->n_shards : 0; }

const sft_file *sft_model_shard(const sft_model *m, int64_t i) {
    return m && i >= 0 && i < m->n_shards ? m->shards[i] : NULL;
}

const json_value *sft_model_index_metadata(const sft_model *m) { return m ? m->index_meta : NULL; }

int64_t sft_model_tensor_count(const sft_model *m) { return m ? m->n : 0; }

const sft_tensor *sft_model_tensor_at(const sft_model *m, int64_t i, const sft_file **shard) {
    if (!m || i < 0 || i >= m->n) return NULL;
    if (shard) *shard = m->shards[m->entries[i].shard];
    return m->entries[i].t;
}

static int cmp_name_entry(const void *key, const void *e) {
    return strcmp(*(const char *const *)key, ((const entry *)e)->t->name);
}

const sft_tensor *sft_model_find(const sft_model *m, const char *name, const sft_file **shard) {
    if (!m || !name) return NULL;
    const entry *e = bsearch(&name, m->entries, (size_t)m->n, sizeof *m->entries, cmp_name_entry);
    return e ? sft_model_tensor_at(m, e - m->entries, shard) : NULL;
}

rlx_status sft_model_get(const sft_model *m, const char *name, const sft_tensor **out, rlx_dtype *dtype) {
    if (!m || !name) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "sft_model_get: NULL argument");
    const sft_file *shard = NULL;
    const sft_tensor *t = sft_model_find(m, name, &shard);
    return sft_checked_get(shard ? sft_name(shard) : m->path, name, t, out, dtype);
}
