/*
 * core.h — shared plumbing with nothing ML-specific: error reporting, logging,
 * allocation helpers, small utilities and timing. Every other layer uses it.
 */
#ifndef RLX_CORE_H
#define RLX_CORE_H

#include "rlx.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define RLX_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define RLX_PRINTF(a, b)
#endif

/* Sets the per-thread error message and returns status, so call sites read
 *   return rlx_fail(RLX_STATUS_SHAPE, "matmul '%s': ...", name);          */
rlx_status rlx_fail(rlx_status status, const char *fmt, ...) RLX_PRINTF(2, 3);
void       rlx_clear_error(void);

void rlx_log_msg(rlx_log_level level, const char *fmt, ...) RLX_PRINTF(2, 3);

/* Allocation: NULL on failure (callers turn that into RLX_STATUS_OUT_OF_MEMORY).
 * rlx_aligned_alloc rounds the size up and aligns to 64 bytes. */
void *rlx_aligned_alloc(size_t bytes);
void  rlx_aligned_free(void *p);
/* Zero-filled, 64-byte-aligned memory whose pages are not touched until used:
 * large blocks come straight from the OS (anonymous mappings are zero), so a
 * param that is then replaced, or a KV cache that is filled gradually, does
 * not pay a pass over all of it. Free only with rlx_zeroed_free. */
void *rlx_zeroed_alloc(size_t bytes);
void  rlx_zeroed_free(void *p);
char *rlx_strdup(const char *s);

/* 64-bit FNV-1a of n bytes / of a NUL-terminated string: hash tables keyed
 * by names and tokens, and seeds derived from names (tests, benchmarks), so
 * one definition keeps every user's values the same. */
uint64_t rlx_hash_bytes(const void *p, size_t n);
uint64_t rlx_hash_str(const char *s);

/* a * b with overflow check: false on overflow. */
bool rlx_mul_overflow_u64(uint64_t a, uint64_t b, uint64_t *out);

/* Monotonic time in seconds. */
double rlx_now_seconds(void);

/* Environment helpers: value of env var as int, or fallback when unset/invalid. */
int rlx_env_int(const char *name, int fallback);
/* Whether `name` is one of the comma-separated entries of list (whole
 * entries: "q4_K" is not in "q4_K_M"). */
bool rlx_list_has(const char *list, const char *name);

/* Fault injection, for the tests of error paths that real devices and hosts
 * rarely take (an allocation or a submit failing): true when the setting
 * rlx_fault_set installed, a comma-separated list, names `site` ("site": every call fails; "site@n":
 * only the n-th call since the setting was installed; counted for
 * the list's first 8 entries). Called only
 * where the failure is then handled as a real one, never on a per-run hot
 * path. Sites: "vk_buf" (a Vulkan buffer cannot be created),
 * "vk_upload_submit" (an upload's submit fails), "cpu_param_alloc" (a CPU
 * param cannot be allocated). */
bool rlx_fault(const char *site);
/* Installs the fault setting (the syntax above; NULL or "" for none, the
 * default). Only tests call it: a library user has no way to inject faults. */
void rlx_fault_set(const char *spec);

/* f16 / bf16 <-> f32 conversion (round to nearest even). */
float    rlx_f16_to_f32(uint16_t h);
uint16_t rlx_f32_to_f16(float f);
float    rlx_bf16_to_f32(uint16_t h);
uint16_t rlx_f32_to_bf16(float f);

/* Integer loads/stores through int64 (i64 does not fit a double): stores wrap
 * to the dtype's width, bool stores x != 0; floats load truncated. */
int64_t rlx_load_as_i64(const void *data, rlx_dtype dt, int64_t i);
void    rlx_store_from_i64(void *data, rlx_dtype dt, int64_t i, int64_t v);
bool    rlx_dtype_is_int_like(rlx_dtype dt);   /* i32 i64 u8 i8 bool */

/* Loads element i of a typed buffer as double / stores a double with the
 * dtype's conversion (integers round toward zero, bool is x != 0). */
double rlx_load_as_f64(const void *data, rlx_dtype dt, int64_t i);
void   rlx_store_from_f64(void *data, rlx_dtype dt, int64_t i, double v);

#define RLX_MIN(a, b) ((a) < (b) ? (a) : (b))
#define RLX_MAX(a, b) ((a) > (b) ? (a) : (b))
#define RLX_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
