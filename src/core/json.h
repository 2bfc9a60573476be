/*
 * json.h — rlx's JSON reader (RFC 8259, strict) and the string escaping its
 * writers use. Every place rlx reads JSON goes through it: safetensors
 * headers and index files, and Hugging Face config.json / tokenizer.json.
 * docs/formats.md says why rlx has its own parser rather than a library.
 *
 * The parser validates the whole text first, then builds a read-only DOM in
 * one allocation sized exactly from that pass, so memory is proportional to
 * the input and a json_doc is freed with one call. Objects keep their members
 * in file order; a duplicate key is an error. Strings are unescaped to UTF-8
 * (NUL-terminated; a \u0000 escape makes an embedded NUL, so use the length).
 * A malformed text yields RLX_STATUS_FORMAT with the byte offset and what was
 * expected there, never a crash.
 */
#ifndef RLX_CORE_JSON_H
#define RLX_CORE_JSON_H

#include "core/core.h"

#define JSON_DEFAULT_MAX_DEPTH 128    /* nesting of arrays and objects */
#define JSON_MAX_NUMBER_CHARS  512    /* a longer number token is rejected */

typedef enum json_type {
    JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT
} json_type;

typedef struct json_value  json_value;
typedef struct json_member json_member;

struct json_value {
    json_type type;
    uint64_t  offset;          /* byte where the value starts (plus json_options.base_offset) */
    union {
        bool b;                                  /* JSON_BOOL */
        struct {
            double  d;                           /* the nearest double */
            int64_t i;                           /* exact value, when is_int */
            bool    is_int;                      /* an integer token that fits int64, or a
                                                    fraction/exponent whose double is integral
                                                    and below 2^53 in magnitude */
        } num;                                   /* JSON_NUMBER */
        struct { const char *s; size_t len; } str;                   /* JSON_STRING */
        struct { const json_value *items; size_t n; } arr;           /* JSON_ARRAY */
        struct { const json_member *members; size_t n; } obj;        /* JSON_OBJECT, file order */
    } u;
};

struct json_member {
    const char *key;           /* unescaped, NUL-terminated */
    size_t      key_len;
    uint64_t    key_offset;    /* byte of the key's opening quote (plus base_offset) */
    json_value  value;
};

typedef struct json_options {
    int         max_depth;     /* deepest nesting accepted; default JSON_DEFAULT_MAX_DEPTH */
    const char *name;          /* what the text is, first in every message; default "json" */
    uint64_t    base_offset;   /* added to every reported offset: the text's place in its file */
} json_options;

void json_options_init(json_options *o);

typedef struct json_doc json_doc;

/* Parses text[0..len) (no NUL needed; the caller may free text afterwards).
 * opt may be NULL for the defaults. RLX_STATUS_FORMAT with
 * "NAME: byte N: expected X, got Y" on malformed input (invalid UTF-8, a
 * lone surrogate escape, a control character in a string, trailing content,
 * nesting deeper than max_depth, a duplicate key, ...). */
rlx_status json_parse(const char *text, size_t len, const json_options *opt, json_doc **out);
void       json_free(json_doc *d);
const json_value *json_root(const json_doc *d);

const char *json_type_name(json_type t);   /* "null", "bool", ..., "object" */

/* Lookups; NULL when v is not of the kind asked for, or the key / index is
 * absent. json_get compares whole keys (a key with an embedded NUL never
 * matches) and scans the members: fine for configs; index a large object
 * yourself. */
const json_value  *json_get(const json_value *obj, const char *key);
const json_value  *json_at(const json_value *arr, size_t i);
const json_member *json_member_at(const json_value *obj, size_t i);
size_t             json_len(const json_value *v);   /* items, members or string bytes; else 0 */

/* Typed reads of a value; what names it in the message ("config.json key
 * 'hidden_size'"). RLX_STATUS_FORMAT naming what, the byte, the type found
 * and the type wanted (or, for integers, why the number does not fit). */
rlx_status json_as_i64 (const json_value *v, const char *what, int64_t *out);
rlx_status json_as_f64 (const json_value *v, const char *what, double *out);
rlx_status json_as_bool(const json_value *v, const char *what, bool *out);
rlx_status json_as_str (const json_value *v, const char *what, const char **out, size_t *len);  /* len may be NULL */
rlx_status json_as_type(const json_value *v, const char *what, json_type want);

/* Typed reads of obj[key]: RLX_STATUS_NOT_FOUND naming the key when it is
 * absent (or obj is not an object), else as json_as_*. */
rlx_status json_get_i64 (const json_value *obj, const char *key, int64_t *out);
rlx_status json_get_f64 (const json_value *obj, const char *key, double *out);
rlx_status json_get_bool(const json_value *obj, const char *key, bool *out);
rlx_status json_get_str (const json_value *obj, const char *key, const char **out, size_t *len);
/* obj[key] of the given type (JSON_ARRAY, JSON_OBJECT, ...). */
rlx_status json_get_typed(const json_value *obj, const char *key, json_type want, const json_value **out);

/* ------------------------------------------------------- UTF-8 and output */

/* s[0..len) made fit for an error message into dst (cap bytes, NUL-terminated):
 * control bytes become '?', and a long text is cut (at a character) with "...". */
void json_printable(char *dst, size_t cap, const char *s, size_t len);

/* Whether s[0..len) is valid UTF-8 (no overlong forms, no surrogates, nothing
 * above U+10FFFF); on false, *bad_at (if not NULL) gets the first bad byte. */
bool json_utf8_valid(const char *s, size_t len, size_t *bad_at);

/* s[0..len) as a quoted JSON string: '"', the bytes with '"', '\\' and the
 * control characters escaped, '"'. json_quoted_len is its length; json_quote
 * writes it to dst (no NUL) and returns the end. The bytes are copied as
 * they are: validate them with json_utf8_valid first. */
size_t json_quoted_len(const char *s, size_t len);
char  *json_quote(char *dst, const char *s, size_t len);

#endif
