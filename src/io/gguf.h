/*
 * gguf.h — read and write GGUF files (v2 and v3), the single-file model format
 * of the ggml ecosystem: a header, typed key/value metadata, tensor infos, and
 * an aligned blob of tensor data.
 *
 * The reader maps the file (or borrows a buffer) and validates every count,
 * length and offset against the bytes actually present before using it, so a
 * truncated or corrupted file yields RLX_STATUS_FORMAT with a message naming
 * the byte offset and the key or tensor, never a crash or a huge allocation.
 * Tensor data is not copied: gguf_tensor.data points into the mapping.
 *
 * The writer builds a v3 file in memory or on disk; tests, `rlx quantize` and
 * `llm_bench --write-gguf` use it. Tensor bytes are borrowed, or produced by
 * a callback when the write reaches the tensor, so a tool can write a model
 * larger than it could hold twice.
 */
#ifndef RLX_IO_GGUF_H
#define RLX_IO_GGUF_H

#include "core/core.h"

#define GGUF_MAX_DIMS          4     /* ggml's limit; more is a format error */
#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_ARRAY_DEPTH   16    /* levels of arrays of arrays; deeper is a format error */

/* Metadata value types, as stored in the file. */
typedef enum gguf_vtype {
    GGUF_VT_U8 = 0, GGUF_VT_I8 = 1, GGUF_VT_U16 = 2, GGUF_VT_I16 = 3,
    GGUF_VT_U32 = 4, GGUF_VT_I32 = 5, GGUF_VT_F32 = 6, GGUF_VT_BOOL = 7,
    GGUF_VT_STRING = 8, GGUF_VT_ARRAY = 9, GGUF_VT_U64 = 10, GGUF_VT_I64 = 11,
    GGUF_VT_F64 = 12,
    GGUF_VT_COUNT
} gguf_vtype;

const char *gguf_vtype_name(gguf_vtype t);   /* "u32", "string", ...; "?" */
size_t      gguf_vtype_size(gguf_vtype t);   /* bytes of a fixed-size value; 0 for string/array */

/* ------------------------------------------------------------------ reader */

typedef struct gguf_file gguf_file;

typedef struct gguf_tensor {
    const char *name;
    uint32_t    type;                   /* ggml type id (qtype in io/quant.h) */
    uint32_t    n_dims;
    int64_t     dims[GGUF_MAX_DIMS];    /* ggml order: dims[0] is the contiguous row
                                           length; dims past n_dims are 1 */
    int64_t     n_elements;
    uint64_t    offset;                 /* from the start of the data section */
    uint64_t    size;                   /* bytes */
    const void *data;                   /* into the mapping; valid until gguf_close */
} gguf_tensor;

/* Maps path read-only. RLX_STATUS_IO when it cannot be opened or mapped,
 * RLX_STATUS_FORMAT when it is not a valid GGUF file. */
rlx_status gguf_open(const char *path, gguf_file **out);
/* Parses a buffer the caller keeps alive (and unchanged) until gguf_close. */
rlx_status gguf_open_memory(const void *data, size_t size, gguf_file **out);
void       gguf_close(gguf_file *f);

uint32_t gguf_version(const gguf_file *f);
uint32_t gguf_alignment(const gguf_file *f);
uint64_t gguf_data_offset(const gguf_file *f);   /* file offset of the data section */
uint64_t gguf_file_size(const gguf_file *f);

/* Metadata, by index (0 .. count-1, in file order) or key. */
int64_t     gguf_kv_count(const gguf_file *f);
int64_t     gguf_find_key(const gguf_file *f, const char *key);   /* -1 if absent */
const char *gguf_kv_key(const gguf_file *f, int64_t kv);
gguf_vtype  gguf_kv_type(const gguf_file *f, int64_t kv);
gguf_vtype  gguf_kv_arr_type(const gguf_file *f, int64_t kv);   /* element type of an array */
uint64_t    gguf_kv_arr_len(const gguf_file *f, int64_t kv);    /* 0 unless an array */

/* Scalar values by index, converted where lossless: an integer of any width
 * (and bool) to int64/uint64 when it fits, f32/f64/integers to double.
 * False when the value is not of a convertible type or does not fit. */
bool gguf_kv_int(const gguf_file *f, int64_t kv, int64_t *out);
bool gguf_kv_uint(const gguf_file *f, int64_t kv, uint64_t *out);
bool gguf_kv_float(const gguf_file *f, int64_t kv, double *out);
/* A string value: NUL-terminated (the value may itself hold NULs; len is exact). */
const char *gguf_kv_str(const gguf_file *f, int64_t kv, size_t *len);

/* Array elements by index (i < gguf_kv_arr_len). Numeric arrays convert as the
 * scalar getters do; strings are NUL-terminated with exact len. */
bool        gguf_kv_arr_int(const gguf_file *f, int64_t kv, uint64_t i, int64_t *out);
bool        gguf_kv_arr_float(const gguf_file *f, int64_t kv, uint64_t i, double *out);
const char *gguf_kv_arr_str(const gguf_file *f, int64_t kv, uint64_t i, size_t *len);
/* Raw little-endian bytes of a numeric array (unaligned: copy with memcpy). */
const void *gguf_kv_arr_data(const gguf_file *f, int64_t kv);
/* Any value as stored after its type tag, already validated, *bytes long: a
 * scalar's bytes; a string's u64 length and bytes; an array's u32 element
 * type, u64 count and elements. The only way into an array of arrays (each
 * element again u32 type, u64 count, elements), which the getters above decline. */
const void *gguf_kv_raw(const gguf_file *f, int64_t kv, uint64_t *bytes);

/* Typed lookups by key for loaders: RLX_STATUS_NOT_FOUND when the key is
 * absent, RLX_STATUS_FORMAT (naming the key) when the type does not fit. */
rlx_status gguf_get_u32(const gguf_file *f, const char *key, uint32_t *out);  /* any integer in range */
rlx_status gguf_get_i64(const gguf_file *f, const char *key, int64_t *out);
rlx_status gguf_get_f32(const gguf_file *f, const char *key, float *out);     /* f32, f64 or integer */
rlx_status gguf_get_bool(const gguf_file *f, const char *key, bool *out);
rlx_status gguf_get_str(const gguf_file *f, const char *key, const char **out);
/* An array of the given element type (GGUF_VT_COUNT: any); returns its index. */
rlx_status gguf_get_arr(const gguf_file *f, const char *key, gguf_vtype elem, int64_t *kv, uint64_t *n);

/* Tensors. */
int64_t            gguf_tensor_count(const gguf_file *f);
const gguf_tensor *gguf_tensor_at(const gguf_file *f, int64_t i);
const gguf_tensor *gguf_find_tensor(const gguf_file *f, const char *name);   /* NULL if absent */

/* ------------------------------------------------------------------ writer */

typedef struct gguf_writer gguf_writer;

gguf_writer *gguf_writer_new(void);   /* NULL only if out of memory */
void         gguf_writer_free(gguf_writer *w);

/* Metadata. Setting a key that exists replaces its value in place (order is
 * kept). "general.alignment" (u32, a power of two) sets the data alignment. */
rlx_status gguf_set_u8  (gguf_writer *w, const char *key, uint8_t v);
rlx_status gguf_set_i8  (gguf_writer *w, const char *key, int8_t v);
rlx_status gguf_set_u16 (gguf_writer *w, const char *key, uint16_t v);
rlx_status gguf_set_i16 (gguf_writer *w, const char *key, int16_t v);
rlx_status gguf_set_u32 (gguf_writer *w, const char *key, uint32_t v);
rlx_status gguf_set_i32 (gguf_writer *w, const char *key, int32_t v);
rlx_status gguf_set_u64 (gguf_writer *w, const char *key, uint64_t v);
rlx_status gguf_set_i64 (gguf_writer *w, const char *key, int64_t v);
rlx_status gguf_set_f32 (gguf_writer *w, const char *key, float v);
rlx_status gguf_set_f64 (gguf_writer *w, const char *key, double v);
rlx_status gguf_set_bool(gguf_writer *w, const char *key, bool v);
rlx_status gguf_set_str (gguf_writer *w, const char *key, const char *v);
rlx_status gguf_set_str_n(gguf_writer *w, const char *key, const char *v, size_t len);
/* Array of fixed-size elements (bool: one byte, 0 or 1), little-endian data. */
rlx_status gguf_set_arr (gguf_writer *w, const char *key, gguf_vtype elem, const void *data, uint64_t n);
rlx_status gguf_set_arr_str(gguf_writer *w, const char *key, const char *const *v, uint64_t n);
/* Copies metadata entry kv of a file that was read. */
rlx_status gguf_set_from(gguf_writer *w, const gguf_file *f, int64_t kv);
bool       gguf_writer_has_key(const gguf_writer *w, const char *key);

/* A tensor; dims in ggml order (dims[0] = row length). The writer BORROWS data:
 * it must stay valid until the file is written. size must equal the type's
 * byte size for dims. */
rlx_status gguf_add_tensor(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                           const int64_t *dims, const void *data, uint64_t size);

/* Produces a tensor's size bytes into dst (aligned for any C type, its
 * contents undefined on entry). Returns RLX_OK, or a status with a message
 * (rlx_fail), which fails the write. It must not change the writer. */
typedef rlx_status (*gguf_fill_fn)(void *ctx, void *dst, uint64_t size);

/* A tensor whose bytes come from fill(ctx, dst, size), called at most once
 * per tensor and per gguf_write_file / gguf_write_memory (once each when the
 * write succeeds; a failed fill or write stops it), in tensor order, when the
 * write reaches that tensor; ctx must stay valid until then. The error state
 * is cleared before each fill (so a fill that fails without a message is not
 * blamed for an older one). Checks
 * as gguf_add_tensor (fill must not be NULL).
 *
 * Memory: gguf_write_memory fills in place in its output; gguf_write_file
 * fills into one scratch buffer, reused and grown to the largest filled
 * tensor, so the peak is one tensor beyond what the caller holds. The fill
 * gets the whole tensor rather than chunks because producers work on whole
 * rows and whole tensors (quantize runs a tensor's rows in parallel; a
 * benchmark repeats one row), which arbitrary byte ranges would split, and
 * the largest tensor of a model is a small part of it.
 *
 * A failing fill fails the write with the fill's status and message, prefixed
 * by the tensor's name; gguf_write_file then removes its temporary file, so
 * a regular file that was at the path (or behind a link there) is left as it
 * was (devices and FIFOs are written in place: see gguf_write_file). */
rlx_status gguf_add_tensor_fill(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                                const int64_t *dims, uint64_t size, gguf_fill_fn fill, void *ctx);

/* Serializes to a malloc'ed buffer (caller free()s) or to a file. A new
 * path or a regular file is written to a temporary next to it and renamed
 * over it (a failure leaves the old file as it was; tensors may borrow a
 * mapping of the file being replaced), through a symbolic link too; a
 * device or FIFO (or a link to one) is written in place. */
rlx_status gguf_write_memory(const gguf_writer *w, void **out, size_t *size);
rlx_status gguf_write_file(const gguf_writer *w, const char *path);

#endif
