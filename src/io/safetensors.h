/*
 * safetensors.h — read and write safetensors files (Hugging Face's tensor
 * format) and sharded models made of several of them.
 *
 * A file is: u64 little-endian N | N bytes of JSON header | data region. The
 * header maps each tensor name to {"dtype", "shape", "data_offsets": [begin,
 * end]} (offsets into the data region) and may hold "__metadata__", a map of
 * strings to strings. The reader maps the file (or borrows a buffer), parses
 * the header with the strict JSON parser (core/json.h) and checks every rule
 * of docs/formats.md before anything is used: a malformed file yields
 * RLX_STATUS_FORMAT with a message naming the tensor, the offsets or the byte
 * of the header at fault, never a crash. Tensor data is not copied:
 * sft_tensor.data points into the mapping.
 *
 * A sharded model is a model.safetensors.index.json whose "weight_map" names,
 * for each tensor, the shard file (in the same directory) that holds it.
 *
 * The writer lays tensors out with no gaps, largest element size first (so
 * each tensor is aligned to its element size when the header is), pads the
 * header with spaces to a multiple of 8 and writes through a temporary file
 * renamed into place.
 */
#ifndef RLX_IO_SAFETENSORS_H
#define RLX_IO_SAFETENSORS_H

#include "core/core.h"
#include "core/json.h"

/* Header lengths above this are rejected (the reference implementation's cap). */
#define SFT_MAX_HEADER ((uint64_t)100000000)

/* The format's dtypes. Sub-byte types (F4, F6_*) are packed; a tensor of them
 * must fill whole bytes. */
typedef enum sft_dtype {
    SFT_BOOL, SFT_U8, SFT_I8, SFT_I16, SFT_U16, SFT_I32, SFT_U32, SFT_I64, SFT_U64,
    SFT_F16, SFT_BF16, SFT_F32, SFT_F64, SFT_C64,
    SFT_F8_E4M3, SFT_F8_E5M2, SFT_F8_E8M0, SFT_F6_E2M3, SFT_F6_E3M2, SFT_F4,
    SFT_DTYPE_COUNT
} sft_dtype;

const char *sft_dtype_name(sft_dtype t);                 /* "F32", ...; "?" */
unsigned    sft_dtype_bits(sft_dtype t);                 /* bits per element; 0 if unknown */
bool        sft_dtype_from_name(const char *s, sft_dtype *out);
/* The rlx dtype with the same layout: RLX_STATUS_UNSUPPORTED (naming the
 * dtype) when rlx has none (unsigned 16..64-bit, C64, the 8/6/4-bit floats). */
rlx_status  sft_dtype_to_rlx(sft_dtype t, rlx_dtype *out);
/* The format's dtype of an rlx dtype: UNSUPPORTED for block-quantized ones. */
rlx_status  sft_dtype_from_rlx(rlx_dtype t, sft_dtype *out);

/* ------------------------------------------------------------------ reader */

typedef struct sft_file sft_file;

typedef struct sft_tensor {
    const char    *name;
    sft_dtype      dtype;
    int            n_dims;
    const int64_t *dims;         /* row-major, outermost first (no rank limit) */
    int64_t        n_elements;
    uint64_t       offset;       /* begin, from the start of the data region */
    uint64_t       size;         /* end - begin, bytes */
    const void    *data;         /* into the mapping; valid until sft_close */
} sft_tensor;

/* Maps path read-only. RLX_STATUS_IO when it cannot be opened or mapped,
 * RLX_STATUS_FORMAT when it is not a valid safetensors file. */
rlx_status sft_open(const char *path, sft_file **out);
/* Parses a buffer the caller keeps alive (and unchanged) until sft_close. */
rlx_status sft_open_memory(const void *data, size_t size, sft_file **out);
void       sft_close(sft_file *f);

const char *sft_name(const sft_file *f);          /* the path, or "<memory>" */
uint64_t    sft_file_size(const sft_file *f);
uint64_t    sft_data_offset(const sft_file *f);   /* 8 + header length */

/* Tensors in header order; lookup by name is a binary search. */
int64_t           sft_tensor_count(const sft_file *f);
const sft_tensor *sft_tensor_at(const sft_file *f, int64_t i);
const sft_tensor *sft_find(const sft_file *f, const char *name);   /* NULL if absent */
/* A tensor for use as rlx data: RLX_STATUS_NOT_FOUND naming it when absent,
 * RLX_STATUS_UNSUPPORTED when its dtype has no rlx type (sft_dtype_to_rlx). */
rlx_status sft_get(const sft_file *f, const char *name, const sft_tensor **out, rlx_dtype *dtype);

/* "__metadata__", in header order; NULL when absent. */
int64_t     sft_metadata_count(const sft_file *f);
const char *sft_metadata_key(const sft_file *f, int64_t i);
const char *sft_metadata_value(const sft_file *f, int64_t i);
const char *sft_metadata_get(const sft_file *f, const char *key);

/* ------------------------------------------------------------ sharded model */

typedef struct sft_model sft_model;

/* Opens a model: a .safetensors file; a model.safetensors.index.json (any
 * path ending in ".json"), whose shards are opened once each from its
 * directory; or a directory holding model.safetensors.index.json or else
 * model.safetensors. An index must be an object with a "weight_map" object
 * of tensor name -> shard file name (a plain name: no '/', not "." or "..");
 * each named tensor must be in its shard (RLX_STATUS_FORMAT naming both). A
 * shard's tensors that the weight_map does not list are not reachable. */
rlx_status sft_model_open(const char *path, sft_model **out);
void       sft_model_close(sft_model *m);

int64_t         sft_model_shard_count(const sft_model *m);
const sft_file *sft_model_shard(const sft_model *m, int64_t i);
/* The index's "metadata" object (e.g. total_size); NULL for a single file. */
const json_value *sft_model_index_metadata(const sft_model *m);

/* Tensors by name across shards (NULL if absent); *shard (may be NULL) gets
 * the file it is in. By index: sorted by name. */
int64_t           sft_model_tensor_count(const sft_model *m);
const sft_tensor *sft_model_tensor_at(const sft_model *m, int64_t i, const sft_file **shard);
const sft_tensor *sft_model_find(const sft_model *m, const char *name, const sft_file **shard);
/* As sft_get, across shards. */
rlx_status sft_model_get(const sft_model *m, const char *name, const sft_tensor **out, rlx_dtype *dtype);

/* ------------------------------------------------------------------ writer */

typedef struct sft_writer sft_writer;

sft_writer *sft_writer_new(void);   /* NULL only if out of memory */
void        sft_writer_free(sft_writer *w);

/* A "__metadata__" entry; a key set again replaces its value in place.
 * Keys and values must be valid UTF-8. */
rlx_status sft_writer_set_metadata(sft_writer *w, const char *key, const char *value);
/* A tensor; the writer BORROWS data (size bytes, which must equal the dtype's
 * size for dims) until the file is written. Names must be unique, valid UTF-8,
 * not empty and not "__metadata__". */
rlx_status sft_writer_add(sft_writer *w, const char *name, sft_dtype dtype, int n_dims, const int64_t *dims,
                          const void *data, uint64_t size);

/* Serializes to a malloc'ed buffer (caller free()s) or to a file (through a
 * temporary renamed over path: a failed write leaves the old file as it was). */
rlx_status sft_write_memory(const sft_writer *w, void **out, size_t *size);
rlx_status sft_write_file(const sft_writer *w, const char *path);

/* ---------------------------------------------------- shared by the above */

/* Bytes of n_dims dims of dtype t into *bytes (and elements into *n_elements,
 * may be NULL). False, with why (a static string), when a dim is negative,
 * the product overflows, or sub-byte elements do not fill whole bytes. */
bool sft_tensor_bytes(sft_dtype t, int n_dims, const int64_t *dims, uint64_t *bytes, int64_t *n_elements,
                      const char **why);
/* sft_get's checks of t, the tensor called name (NULL when absent) in the
 * file called file. */
rlx_status sft_checked_get(const char *file, const char *name, const sft_tensor *t, const sft_tensor **out,
                           rlx_dtype *dtype);

#endif
