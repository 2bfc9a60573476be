/*
 * inspect_safetensors.c — `rlx inspect` for safetensors: a file's header
 * size, "__metadata__" and tensor table (dtype, row-major shape, bytes,
 * offset in the data region); for an index (or a model directory) its shards,
 * its "metadata" and the tensors of all shards with the shard holding each.
 */
#include "io_cmds.h"
#include "io/safetensors.h"
#include <stdio.h>
#include <string.h>

static void print_tensor(const sft_tensor *t, const char *where) {
    char dims[64];
    inspect_format_dims(dims, sizeof dims, t->n_dims, t->dims);
    printf("  ");
    inspect_print_name(t->name, 40);
    printf(" %-8s %-24s %12llu %s\n", sft_dtype_name(t->dtype), dims, (unsigned long long)t->size, where);
}

static double mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

static void print_file(const sft_file *f) {
    printf("%s: safetensors, %llu bytes, header %llu bytes, data at byte %llu\n", sft_name(f),
           (unsigned long long)sft_file_size(f), (unsigned long long)(sft_data_offset(f) - 8),
           (unsigned long long)sft_data_offset(f));
    printf("\nmetadata (%lld keys)\n", (long long)sft_metadata_count(f));
    for (int64_t i = 0; i < sft_metadata_count(f); i++) {
        printf("  ");
        inspect_print_name(sft_metadata_key(f, i), 40);
        putchar(' ');
        const char *v = sft_metadata_value(f, i);
        inspect_print_str(v, strlen(v));
        putchar('\n');
    }
    uint64_t total = 0;
    for (int64_t i = 0; i < sft_tensor_count(f); i++) total += sft_tensor_at(f, i)->size;
    printf("\ntensors (%lld, %.2f MiB)\n", (long long)sft_tensor_count(f), mib(total));
    printf("  %-40s %-8s %-24s %12s %s\n", "name", "dtype", "shape", "bytes", "offset");
    for (int64_t i = 0; i < sft_tensor_count(f); i++) {
        const sft_tensor *t = sft_tensor_at(f, i);
        char at[24];
        snprintf(at, sizeof at, "%llu", (unsigned long long)t->offset);
        print_tensor(t, at);
    }
}

/* A value of the index's "metadata" object: scalars as they are, containers by size. */
static void print_json(const json_value *v) {
    if (v->type == JSON_STRING) inspect_print_str(v->u.str.s, v->u.str.len);
    else if (v->type == JSON_NUMBER && v->u.num.is_int) printf("%lld", (long long)v->u.num.i);
    else if (v->type == JSON_NUMBER) printf("%.17g", v->u.num.d);
    else if (v->type == JSON_BOOL) printf("%s", v->u.b ? "true" : "false");
    else if (v->type == JSON_NULL) printf("null");
    else printf("%s of %zu", json_type_name(v->type), json_len(v));
}

static void print_model(const sft_model *m, const char *path) {
    printf("%s: safetensors index, %lld shards, %lld tensors\n", path, (long long)sft_model_shard_count(m),
           (long long)sft_model_tensor_count(m));
    for (int64_t i = 0; i < sft_model_shard_count(m); i++) {
        const sft_file *f = sft_model_shard(m, i);
        printf("  shard %lld: %s (%llu bytes)\n", (long long)i, sft_name(f), (unsigned long long)sft_file_size(f));
    }
    const json_value *meta = sft_model_index_metadata(m);
    printf("\nmetadata (%zu keys)\n", json_len(meta));
    for (size_t i = 0; i < json_len(meta); i++) {
        const json_member *e = json_member_at(meta, i);
        printf("  ");
        inspect_print_name(e->key, 40);
        putchar(' ');
        print_json(&e->value);
        putchar('\n');
    }
    uint64_t total = 0;
    for (int64_t i = 0; i < sft_model_tensor_count(m); i++) total += sft_model_tensor_at(m, i, NULL)->size;
    printf("\ntensors (%lld, %.2f MiB)\n", (long long)sft_model_tensor_count(m), mib(total));
    printf("  %-40s %-8s %-24s %12s %s\n", "name", "dtype", "shape", "bytes", "shard");
    for (int64_t i = 0; i < sft_model_tensor_count(m); i++) {
        const sft_file *shard;
        const sft_tensor *t = sft_model_tensor_at(m, i, &shard);
        int64_t s = 0;
        while (sft_model_shard(m, s) != shard) s++;
        char at[24];
        snprintf(at, sizeof at, "%lld", (long long)s);
        print_tensor(t, at);
    }
}

int inspect_safetensors(const char *path) {
    sft_model *m;
    if (sft_model_open(path, &m) != RLX_OK) {
        fprintf(stderr, "rlx inspect: %s\n", rlx_last_error());
        return 1;
    }
    if (sft_model_index_metadata(m) || sft_model_shard_count(m) != 1) print_model(m, path);
    else print_file(sft_model_shard(m, 0));
    sft_model_close(m);
    return 0;
}
