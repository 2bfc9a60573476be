/*
 * inspect.c — `rlx inspect FILE`: tells a GGUF file from a safetensors one
 * (inspect_safetensors.c prints those) and prints a GGUF file's header, its
 * metadata (long arrays abbreviated; arrays of arrays by element type and
 * length) and its tensor table. An invalid file prints the reader's message
 * (what is wrong, and at which byte) and exits 1.
 */
#include "io_cmds.h"
#include "io/gguf.h"
#include "quant/quant.h"
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

enum { SHOW_ELEMS = 6, SHOW_CHARS = 64 };

/* s[0..len) with control bytes escaped (\n, \xNN; quote and backslash too
 * when quoted): a file's strings must not drive the terminal. Returns the
 * columns printed. */
static int print_escaped(const char *s, size_t len, bool quoted) {
    int n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (quoted && (c == '"' || c == '\\')) n += printf("\\%c", c);
        else if (quoted && c == '\n') n += printf("\\n");
        else if (c < 0x20 || c == 0x7f) n += printf("\\x%02x", c);
        else n += (putchar(c), 1);
    }
    return n;
}

void inspect_print_str(const char *s, size_t len) {
    putchar('"');
    print_escaped(s, len < SHOW_CHARS ? len : SHOW_CHARS, true);
    putchar('"');
    if (len > SHOW_CHARS) printf("...(%zu bytes)", len);
}

void inspect_print_name(const char *s, int width) {
    for (int n = print_escaped(s, strlen(s), false); n < width; n++) putchar(' ');
}

void inspect_format_dims(char *buf, size_t cap, int n, const int64_t *dims) {
    int k = snprintf(buf, cap, "[");
    for (int d = 0; d < n && k < (int)cap; d++) k += snprintf(buf + k, cap - (size_t)k, "%s%lld", d ? ", " : "", (long long)dims[d]);
    if (k < (int)cap) snprintf(buf + k, cap - (size_t)k, "]");
}

static void print_scalar(const gguf_file *f, int64_t kv, gguf_vtype t, uint64_t i, bool arr) {
    int64_t iv;
    uint64_t uv;
    double dv;
    size_t len;
    if (t == GGUF_VT_STRING) {
        const char *s = arr ? gguf_kv_arr_str(f, kv, i, &len) : gguf_kv_str(f, kv, &len);
        inspect_print_str(s, len);
    } else if (t == GGUF_VT_BOOL) {
        arr ? gguf_kv_arr_int(f, kv, i, &iv) : gguf_kv_int(f, kv, &iv);
        printf("%s", iv ? "true" : "false");
    } else if (t == GGUF_VT_F32 || t == GGUF_VT_F64) {
        arr ? gguf_kv_arr_float(f, kv, i, &dv) : gguf_kv_float(f, kv, &dv);
        printf("%.9g", dv);
    } else if (t == GGUF_VT_U64) {
        if (arr) {
            const unsigned char *p = (const unsigned char *)gguf_kv_arr_data(f, kv) + 8 * i;
            memcpy(&uv, p, 8);
        } else {
            gguf_kv_uint(f, kv, &uv);
        }
        printf("%llu", (unsigned long long)uv);
    } else {
        arr ? gguf_kv_arr_int(f, kv, i, &iv) : gguf_kv_int(f, kv, &iv);
        printf("%lld", (long long)iv);
    }
}

/* Steps over the n serialized elements of type t at p (an array of arrays'
 * bytes, which the reader validated) and returns their end; with show, prints
 * the first few as TYPE[N]. */
static const unsigned char *nested(const unsigned char *p, gguf_vtype t, uint64_t n, bool show) {
    if (t != GGUF_VT_STRING && t != GGUF_VT_ARRAY) return p + n * gguf_vtype_size(t);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t m;
        if (t == GGUF_VT_STRING) {
            memcpy(&m, p, 8);
            p += 8 + m;
            continue;
        }
        uint32_t et;
        memcpy(&et, p, 4);
        memcpy(&m, p + 4, 8);
        if (show && i < SHOW_ELEMS) printf("%s%s[%llu]", i ? ", " : "", gguf_vtype_name(et), (unsigned long long)m);
        p = nested(p + 12, et, m, false);
    }
    if (show && n > SHOW_ELEMS) printf(", ...");
    return p;
}

static int inspect_gguf(const char *path) {
    gguf_file *f;
    if (gguf_open(path, &f) != RLX_OK) {
        fprintf(stderr, "rlx inspect: %s\n", rlx_last_error());
        return 1;
    }
    printf("%s: GGUF v%u, %llu bytes, alignment %u, data at byte %llu\n", path, gguf_version(f),
           (unsigned long long)gguf_file_size(f), gguf_alignment(f), (unsigned long long)gguf_data_offset(f));

    printf("\nmetadata (%lld keys)\n", (long long)gguf_kv_count(f));
    for (int64_t kv = 0; kv < gguf_kv_count(f); kv++) {
        gguf_vtype t = gguf_kv_type(f, kv);
        printf("  ");
        inspect_print_name(gguf_kv_key(f, kv), 40);
        putchar(' ');
        if (t != GGUF_VT_ARRAY) {
            printf("%-8s ", gguf_vtype_name(t));
            print_scalar(f, kv, t, 0, false);
        } else {
            gguf_vtype et = gguf_kv_arr_type(f, kv);
            uint64_t n = gguf_kv_arr_len(f, kv);
            char ty[40];
            snprintf(ty, sizeof ty, "%s[%llu]", gguf_vtype_name(et), (unsigned long long)n);
            printf("%-8s [", ty);
            if (et == GGUF_VT_ARRAY) {   /* elements shown by type and length */
                nested((const unsigned char *)gguf_kv_raw(f, kv, NULL) + 12, et, n, true);
                printf("]");
            } else {
                for (uint64_t i = 0; i < n && i < SHOW_ELEMS; i++) {
                    if (i) printf(", ");
                    print_scalar(f, kv, et, i, true);
                }
                printf("%s]", n > SHOW_ELEMS ? ", ..." : "");
            }
        }
        putchar('\n');
    }

    uint64_t total = 0;
    for (int64_t i = 0; i < gguf_tensor_count(f); i++) total += gguf_tensor_at(f, i)->size;
    printf("\ntensors (%lld, %.2f MiB)\n", (long long)gguf_tensor_count(f), (double)total / (1024.0 * 1024.0));
    printf("  %-40s %-7s %-24s %12s %12s\n", "name", "type", "dims", "bytes", "offset");
    for (int64_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        char dims[64];
        inspect_format_dims(dims, sizeof dims, (int)t->n_dims, t->dims);
        printf("  ");
        inspect_print_name(t->name, 40);
        printf(" %-7s %-24s %12llu %12llu\n", qtype_name(t->type), dims, (unsigned long long)t->size,
               (unsigned long long)t->offset);
    }
    gguf_close(f);
    return 0;
}

/* Whether path looks like safetensors rather than GGUF: a directory or a
 * .json index (a model), a .safetensors name, or a header length followed by
 * '{'. Anything else goes to the GGUF reader, whose message says why not. */
static bool is_safetensors(const char *path) {
    struct stat sb;
    size_t n = strlen(path);
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) return true;
    if ((n >= 5 && strcmp(path + n - 5, ".json") == 0) || (n >= 12 && strcmp(path + n - 12, ".safetensors") == 0))
        return true;
    unsigned char head[9];
    FILE *fp = fopen(path, "rb");
    size_t got = fp ? fread(head, 1, sizeof head, fp) : 0;
    if (fp) fclose(fp);
    return got == sizeof head && memcmp(head, "GGUF", 4) != 0 && head[8] == '{';
}

int cmd_inspect(int argc, char **argv) {
    if (argc != 1 || argv[0][0] == '-') {
        fprintf(stderr, "usage: rlx inspect FILE\n");
        return 2;
    }
    if (is_onnx_path(argv[0])) return inspect_onnx(argv[0]);
    return is_safetensors(argv[0]) ? inspect_safetensors(argv[0]) : inspect_gguf(argv[0]);
}
