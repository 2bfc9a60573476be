/*
 * sampler.c — token sampling (semantics and order in sampler.h).
 *
 * The RNG is xoshiro256** seeded through splitmix64: small, fast, and owned by
 * the sampler, so no global state and no dependence on the C library's rand().
 * Candidates are (logit, id) pairs, in id order or sorted by logit
 * descending, id ascending, which makes every step deterministic despite
 * qsort's instability. A step reads the vocabulary a few times at most
 * (a 128k-token row is 0.5 MB, and a GPU decode step of a 1B model is
 * ~0.75 ms, so a sampler pass matters):
 * - greedy is a max and a search for its first position;
 * - top-k (k <= SELECT_HEAP_MAX) keeps a k-element min-heap fed straight from
 *   the logits, skipping 16-logit blocks that cannot beat the heap's worst;
 * - top-p without top-k takes the best 256 the same way and, if their mass
 *   falls short, sorts all candidates once with a radix sort (stable, so ties
 *   keep id order), as does a large top-k;
 * min-p and the draw need no order.
 */
#include "models/sampler.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct cand { float logit; int32_t id; } cand;

struct sampler {
    sampler_params p;
    uint64_t  rng[4];
    int32_t  *hist;          /* ring buffer of the last repeat_last_n accepted ids */
    int32_t   hist_n, hist_pos;
    cand     *c;             /* scratch, grown to n_vocab */
    cand     *tmp;           /* the radix sort's second buffer */
    float    *pen;           /* penalized logits */
    uint32_t *stamp;         /* per-id marks for counting distinct history ids */
    int32_t  *count;
    double   *prob;
    uint32_t  stamp_now;
    int32_t   cap;
};

/* ------------------------------------------------------------------ rng */

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t xoshiro_next(uint64_t s[4]) {
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

static double rng_uniform(sampler *s) {   /* [0, 1) with 53 random bits */
    return (double)(xoshiro_next(s->rng) >> 11) * (1.0 / 9007199254740992.0);
}

static void rng_seed(sampler *s) {
    uint64_t x = s->p.seed;
    for (int i = 0; i < 4; i++) s->rng[i] = splitmix64(&x);
}

/* ------------------------------------------------------------ lifecycle */

void rlx_sampler_params_init(sampler_params *p) {
    if (!p) return;
    p->temperature = 0.8f;
    p->top_k = 40;
    p->top_p = 0.95f;
    p->min_p = 0.05f;
    p->repeat_penalty = 1.0f;
    p->repeat_last_n = 64;
    p->frequency_penalty = 0.0f;
    p->presence_penalty = 0.0f;
    p->seed = 0x5EED;
}

rlx_status rlx_sampler_new(const sampler_params *p, sampler **out) {
    if (out) *out = NULL;
    if (!p || !out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_sampler_new: %s is NULL", !p ? "params" : "out");
    if (isnan(p->temperature) || isnan(p->top_p) || isnan(p->min_p) || isnan(p->repeat_penalty) ||
        isnan(p->frequency_penalty) || isnan(p->presence_penalty))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_sampler_new: a parameter is NaN");
    if (!(p->repeat_penalty > 0) || isinf(p->repeat_penalty))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_sampler_new: repeat_penalty %g must be finite and > 0",
                        (double)p->repeat_penalty);
    if (p->top_p < 0 || p->min_p < 0 || p->min_p > 1)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_sampler_new: top_p %g / min_p %g outside [0, 1]",
                        (double)p->top_p, (double)p->min_p);
    if (p->repeat_last_n < 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_sampler_new: repeat_last_n %d is negative", p->repeat_last_n);
    sampler *s = calloc(1, sizeof *s);
    if (!s) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_sampler_new: out of memory");
    s->p = *p;
    if (p->repeat_last_n > 0) {
        s->hist = malloc((size_t)p->repeat_last_n * sizeof *s->hist);
        if (!s->hist) { free(s); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_sampler_new: out of memory"); }
    }
    rng_seed(s);
    *out = s;
    return RLX_OK;
}

void rlx_sampler_free(sampler *s) {
    if (!s) return;
    free(s->hist);
    free(s->c);
    free(s->tmp);
    free(s->pen);
    free(s->stamp);
    free(s->count);
    free(s->prob);
    free(s);
}

void rlx_sampler_accept(sampler *s, int32_t id) {
    if (!s || s->p.repeat_last_n == 0) return;
    s->hist[s->hist_pos] = id;
    s->hist_pos = (s->hist_pos + 1) % s->p.repeat_last_n;
    if (s->hist_n < s->p.repeat_last_n) s->hist_n++;
}

void rlx_sampler_reset(sampler *s) {
    if (!s) return;
    s->hist_n = s->hist_pos = 0;
    rng_seed(s);
}

static bool grow(sampler *s, int32_t n) {
    if (n <= s->cap) return true;
    cand *c = realloc(s->c, (size_t)n * sizeof *c);
    if (c) s->c = c;
    cand *tmp = realloc(s->tmp, (size_t)n * sizeof *tmp);
    if (tmp) s->tmp = tmp;
    float *pen = realloc(s->pen, (size_t)n * sizeof *pen);
    if (pen) s->pen = pen;
    int32_t *count = realloc(s->count, (size_t)n * sizeof *count);
    if (count) s->count = count;
    uint32_t *stamp = realloc(s->stamp, (size_t)n * sizeof *stamp);
    if (stamp) {
        s->stamp = stamp;
        memset(stamp + s->cap, 0, (size_t)(n - s->cap) * sizeof *stamp);
    }
    double *prob = realloc(s->prob, (size_t)n * sizeof *prob);
    if (prob) s->prob = prob;
    if (!c || !tmp || !pen || !count || !stamp || !prob) return false;
    s->cap = n;
    return true;
}

/* ---------------------------------------------------------------- steps */

/* NaN never wins; +inf is clamped so that softmax stays finite and all +inf
 * tokens tie for the whole mass. */
static float sanitize(float x) {
    x = x == x ? x : -INFINITY;
    return x > FLT_MAX ? FLT_MAX : x;
}

static bool penalties_on(const sampler *s) {
    const sampler_params *p = &s->p;
    return s->hist_n > 0 && (p->repeat_penalty != 1.0f || p->frequency_penalty != 0 || p->presence_penalty != 0);
}

/* Penalizes the history's ids in pen (a copy of the row: every reader
 * sanitizes what it takes, so only these entries are sanitized here, before
 * the arithmetic, as a sanitized row would have them). */
static void apply_penalties(sampler *s, int32_t n_vocab) {
    const sampler_params *p = &s->p;
    if (++s->stamp_now == 0) {   /* wrapped: clear the marks once every 2^32 calls */
        memset(s->stamp, 0, (size_t)s->cap * sizeof *s->stamp);
        s->stamp_now = 1;
    }
    for (int32_t k = 0; k < s->hist_n; k++) {
        int32_t id = s->hist[k];
        if (id < 0 || id >= n_vocab) continue;
        if (s->stamp[id] != s->stamp_now) { s->stamp[id] = s->stamp_now; s->count[id] = 0; }
        s->count[id]++;
    }
    for (int32_t k = 0; k < s->hist_n; k++) {
        int32_t id = s->hist[k];
        if (id < 0 || id >= n_vocab || s->count[id] == 0) continue;
        float *x = &s->pen[id];
        *x = sanitize(*x);
        if (*x > 0) *x /= p->repeat_penalty;
        else        *x *= p->repeat_penalty;
        *x -= (float)s->count[id] * p->frequency_penalty + p->presence_penalty;
        *x = sanitize(*x);   /* dividing FLT_MAX by a penalty < 1 overflows */
        s->count[id] = 0;   /* once per distinct id */
    }
}

/* Sorted-before: larger logit first, lower id on ties. */
static bool cand_before(const cand *a, const cand *b) {
    return a->logit > b->logit || (a->logit == b->logit && a->id < b->id);
}

static int cand_cmp(const void *a, const void *b) {
    const cand *x = a, *y = b;
    return cand_before(x, y) ? -1 : cand_before(y, x) ? 1 : 0;
}

/* Heap of the k best candidates seen so far, its root the worst of them
 * (the one every other candidate is sorted before). */
static void heap_push(cand *c, int32_t m, cand x) {   /* m: size before x */
    int32_t j = m;
    while (j > 0 && cand_before(&c[(j - 1) / 2], &x)) { c[j] = c[(j - 1) / 2]; j = (j - 1) / 2; }
    c[j] = x;
}
static void heap_replace_root(cand *c, int32_t k, cand x) {
    int32_t j = 0;
    for (;;) {
        int32_t ch = 2 * j + 1;
        if (ch >= k) break;
        if (ch + 1 < k && cand_before(&c[ch], &c[ch + 1])) ch++;
        if (!cand_before(&x, &c[ch])) break;
        c[j] = c[ch];
        j = ch;
    }
    c[j] = x;
}

/* The sampleable candidates (logit > -inf; NaN fails the test) of row
 * into c, sanitized, in id order. */
static int32_t collect(sampler *s, const float *row, int32_t n_vocab) {
    int32_t n = 0;
    for (int32_t i = 0; i < n_vocab; i++)
        if (row[i] > -INFINITY) s->c[n++] = (cand){ sanitize(row[i]), i };
    return n;
}

/* Descending-order radix key: unsigned ascending order of the key is the
 * logit's descending order (-0 as +0, as cand_before compares them). */
static uint32_t desc_key(float x) {
    if (x == 0) x = 0.0f;
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return ~u;
}

/* Sorts c[0..n) into cand_before order: an LSD radix sort over the key's 4
 * bytes, stable, so candidates collected in id order keep it on ties. */
static void radix_sort(sampler *s, cand *c, int32_t n) {
    cand *src = c, *dst = s->tmp;
    for (int shift = 0; shift < 32; shift += 8) {   /* 4 passes: the result ends in c */
        int32_t start[257] = {0};
        for (int32_t i = 0; i < n; i++) start[((desc_key(src[i].logit) >> shift) & 0xffu) + 1]++;
        for (int b = 0; b < 256; b++) start[b + 1] += start[b];
        for (int32_t i = 0; i < n; i++) dst[start[(desc_key(src[i].logit) >> shift) & 0xffu]++] = src[i];
        cand *t = src;
        src = dst;
        dst = t;
    }
}

/* Up to this k a heap selects; above it one radix sort of all candidates is
 * cheaper than a large heap and its qsort. */
enum { SELECT_HEAP_MAX = 1024 };

/* Logit x of id i into a full heap of k if it beats the worst kept: a later
 * id never wins a tie, so only a larger sanitized logit does (+inf ties with
 * FLT_MAX; NaN fails). */
static void offer(cand *c, int32_t k, float x, int32_t i) {
    x = sanitize(x);
    if (x > c[0].logit) heap_replace_root(c, k, (cand){ x, i });
}

/* The k best sampleable candidates of row into c[0..k), sorted; returns
 * how many it kept (min(k, sampleable)), and the count of sampleable
 * candidates in *total. The block test reads the raw row (a +inf passing it
 * only costs the block's offers). */
static int32_t select_best(sampler *s, const float *row, int32_t n_vocab, int32_t k, int32_t *total) {
    cand *c = s->c;
    if (k > SELECT_HEAP_MAX) {
        *total = collect(s, row, n_vocab);
        radix_sort(s, c, *total);
        return RLX_MIN(k, *total);
    }
    /* fill the heap with the first k candidates, then only a logit above the
     * root's can enter (a later id never wins a tie); 16-logit blocks with
     * none above it are skipped after one vectorizable test */
    int32_t m = 0, i = 0;
    for (; i < n_vocab && m < k; i++)
        if (row[i] > -INFINITY) heap_push(c, m++, (cand){ sanitize(row[i]), i });
    int32_t n = m;
    /* the loops below run only with the heap full: the fill loop ends with
     * m == k or at the row's end */
    enum { BLOCK = 16 };
    for (; i <= n_vocab - BLOCK; i += BLOCK) {
        float worst = c[0].logit;
        int any = 0, live = 0;
        for (int j = 0; j < BLOCK; j++) {
            any |= row[i + j] > worst;
            live += row[i + j] > -INFINITY;
        }
        n += live;
        if (!any) continue;
        for (int j = 0; j < BLOCK; j++) offer(c, k, row[i + j], i + j);
    }
    for (; i < n_vocab; i++) {
        n += row[i] > -INFINITY;
        offer(c, k, row[i], i);
    }
    *total = n;
    qsort(c, (size_t)m, sizeof *c, cand_cmp);
    return m;
}

/* The length of the shortest prefix of the sorted c[0..m) whose mass
 * (exp(logit - mx) / sum) reaches top_p, or 0 if all m fall short. */
static int32_t mass_prefix(const cand *c, int32_t m, double mx, double sum, double top_p) {
    double cum = 0;
    for (int32_t i = 0; i < m; i++) {
        cum += exp((double)c[i].logit - mx) / sum;
        if (cum >= top_p) return i + 1;
    }
    return 0;
}

/* top-p over the n candidates in c: the length of the smallest best-first
 * prefix whose softmax mass (temperature 1, over all n) reaches top_p, left
 * sorted in c. Unsorted candidates (no top-k) are the whole vocabulary, while
 * the prefix is usually a few hundred tokens: the best 256 first, and only
 * if their mass falls short one sort of all n. */
static int32_t top_p_keep(sampler *s, const float *row, int32_t n_vocab, int32_t n, bool sorted, double top_p) {
    cand *c = s->c;
    double mx = -INFINITY, sum = 0;
    for (int32_t i = 0; i < n; i++) if (c[i].logit > mx) mx = c[i].logit;
    for (int32_t i = 0; i < n; i++) sum += exp((double)c[i].logit - mx);
    if (!sorted) {
        int32_t total, m = select_best(s, row, n_vocab, RLX_MIN(n, 256), &total);
        int32_t cut = mass_prefix(c, m, mx, sum, top_p);
        if (cut || m == n) return cut ? cut : n;
        select_best(s, row, n_vocab, n, &total);
    }
    int32_t cut = mass_prefix(c, n, mx, sum, top_p);
    return cut ? cut : n;
}

/* The first position of the largest of pen[0..n) as sanitize sees it (NaN
 * never wins, +inf ties with FLT_MAX), or -1 when it is -inf. Eight running
 * maxima, so the loop is not one long chain. */
static int32_t first_argmax(const float *pen, int32_t n) {
    float m[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    int32_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) m[j] = pen[i + j] > m[j] ? pen[i + j] : m[j];
    float best = -INFINITY;
    for (; i < n; i++) best = pen[i] > best ? pen[i] : best;
    for (int j = 0; j < 8; j++) best = m[j] > best ? m[j] : best;
    if (best == -INFINITY) return -1;
    if (best > FLT_MAX) best = FLT_MAX;
    for (i = 0; i < n && !(pen[i] >= best); i++) {}
    return i < n ? i : -1;   /* -1 only if the row changed under the call */
}

rlx_status rlx_sampler_sample(sampler *s, const float *logits, int32_t n_vocab, int32_t *token) {
    if (token) *token = -1;
    if (!s || !logits || !token)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_sampler_sample: %s is NULL",
                        !s ? "sampler" : !logits ? "logits" : "token");
    if (n_vocab <= 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_sampler_sample: n_vocab %d", n_vocab);
    if (!grow(s, n_vocab)) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_sampler_sample: out of memory for %d logits", n_vocab);
    const sampler_params *p = &s->p;

    const float *row = logits;   /* without penalties every pass reads the caller's row */
    if (penalties_on(s)) {
        memcpy(s->pen, logits, sizeof(float) * (size_t)n_vocab);
        apply_penalties(s, n_vocab);
        row = s->pen;
    }

    if (!(p->temperature > 0)) {   /* greedy: first maximum */
        *token = first_argmax(row, n_vocab);
        if (*token < 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_sampler_sample: all %d logits are NaN or -inf", n_vocab);
        return RLX_OK;
    }
    /* top-k keeps the k best, sorted. Without it (or with k >= the
     * candidates) they stay in id order (min-p and the draw need no order;
     * top-p sorts only its prefix). */
    bool sorted = false;
    int32_t n = 0;
    if (p->top_k > 0 && p->top_k < n_vocab) {   /* k >= n_vocab keeps every candidate: top-k off */
        int32_t kept = select_best(s, row, n_vocab, p->top_k, &n);
        if (n > p->top_k) {
            n = kept;
            sorted = true;
        }
    }
    if (!sorted) n = collect(s, row, n_vocab);
    if (n == 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_sampler_sample: all %d logits are NaN or -inf", n_vocab);
    if (p->top_p < 1.0f && n > 1) { n = top_p_keep(s, row, n_vocab, n, sorted, p->top_p); sorted = true; }
    double mx = s->c[0].logit;
    if (!sorted) for (int32_t i = 1; i < n; i++) if (s->c[i].logit > mx) mx = s->c[i].logit;
    if (p->min_p > 0.0f && n > 1) {
        /* p_i >= min_p * p_max  <=>  logit_i >= logit_max + log(min_p); the max always stays */
        double floor_logit = mx + log((double)p->min_p);
        int32_t keep = 0;
        for (int32_t i = 0; i < n; i++) if ((double)s->c[i].logit >= floor_logit) s->c[keep++] = s->c[i];
        n = keep;
    }

    double *prob = s->prob, sum = 0;
    for (int32_t i = 0; i < n; i++) {
        prob[i] = exp(((double)s->c[i].logit - mx) / (double)p->temperature);
        sum += prob[i];
    }
    double u = rng_uniform(s) * sum, acc = 0;
    int32_t pick = n - 1;   /* rounding can leave u just above the last sum */
    for (int32_t i = 0; i < n; i++) {
        acc += prob[i];
        if (u < acc) { pick = i; break; }
    }
    *token = s->c[pick].id;
    return RLX_OK;
}
