/*
 * util.c — allocation, overflow-checked arithmetic, time and environment
 * helpers used across layers.
 */
#include "core/core.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

void *rlx_aligned_alloc(size_t bytes) {
    void *p = NULL;
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (rounded < bytes) return NULL;
    if (rounded == 0) rounded = 64;
    if (posix_memalign(&p, 64, rounded) != 0) return NULL;
    return p;
}

void rlx_aligned_free(void *p) { free(p); }

/* Blocks from 1 MiB are mappings of their own; smaller ones come from the
 * heap and are cleared. The 64 bytes before the pointer say which, and the
 * mapping's length. */
#define ZEROED_MAP_MIN ((size_t)1 << 20)
#define ZEROED_HEADER 64

void *rlx_zeroed_alloc(size_t bytes) {
    size_t total = bytes + ZEROED_HEADER;
    if (total < bytes) return NULL;
    uint8_t *base;
    if (total >= ZEROED_MAP_MIN) {
        void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        base = m;
    } else {
        if (posix_memalign((void **)&base, 64, total) != 0) return NULL;
        memset(base, 0, total);
    }
    size_t mapped = total >= ZEROED_MAP_MIN ? total : 0;
    memcpy(base, &mapped, sizeof mapped);
    return base + ZEROED_HEADER;
}

void rlx_zeroed_free(void *p) {
    if (!p) return;
    uint8_t *base = (uint8_t *)p - ZEROED_HEADER;
    size_t mapped;
    memcpy(&mapped, base, sizeof mapped);
    if (mapped) munmap(base, mapped);
    else free(base);
}

char *rlx_strdup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

uint64_t rlx_hash_bytes(const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

uint64_t rlx_hash_str(const char *s) { return rlx_hash_bytes(s, strlen(s)); }

bool rlx_mul_overflow_u64(uint64_t a, uint64_t b, uint64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}

double rlx_now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The fault-injection setting rlx_fault_set installs (tests; none by
 * default). hits[k]: calls of the setting's k-th entry since it was
 * installed. */
static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;
static char fault_setting[256];
static long fault_hits[8];

void rlx_fault_set(const char *spec) {
    pthread_mutex_lock(&fault_lock);
    snprintf(fault_setting, sizeof fault_setting, "%s", spec ? spec : "");
    memset(fault_hits, 0, sizeof fault_hits);
    pthread_mutex_unlock(&fault_lock);
}

bool rlx_fault(const char *site) {
    size_t n = strlen(site);
    bool fail = false;
    pthread_mutex_lock(&fault_lock);
    int k = 0;
    for (const char *p = fault_setting; *p && !fail; k++) {   /* k: index of the entry at p */
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len >= n && strncmp(p, site, n) == 0 && (len == n || p[n] == '@')) {
            if (len == n) fail = true;
            else if (k < 8) fail = ++fault_hits[k] == strtol(p + n + 1, NULL, 10);
        }
        p += len + (end ? 1 : 0);
    }
    pthread_mutex_unlock(&fault_lock);
    return fail;
}

bool rlx_list_has(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *s = list; *s;) {
        size_t len = strcspn(s, ",");
        if (len == n && strncmp(s, name, n) == 0) return true;
        s += len + (s[len] == ',');
    }
    return false;
}

int rlx_env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < -1000000 || x > 1000000) {
        rlx_log_msg(RLX_LOG_WARN, "ignoring %s='%s': not an integer", name, v);
        return fallback;
    }
    return (int)x;
}
