/*
 * test_sampler.c — the token sampler: greedy is argmax (lowest id on ties),
 * top-k=1 is greedy, a seed fixes the token sequence, top-k/top-p/min-p drop
 * exactly the tokens they should (counted over many fixed-seed draws), the
 * drawn frequencies follow softmax(logits / T), repetition penalties follow
 * llama.cpp's sign rule over a window, non-finite logits, bad arguments, and
 * ties at the top-k cut on both of its selection paths.
 */
#include "harness.h"
#include "models/sampler.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Params with every filter off at temperature temp. */
static sampler_params plain(float temp, uint64_t seed) {
    sampler_params p;
    rlx_sampler_params_init(&p);
    p.temperature = temp;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.seed = seed;
    return p;
}

/* Draws n tokens, counting them in counts[0..nv). */
static bool draw(const sampler_params *p, const float *logits, int32_t nv, int n, int *counts) {
    sampler *s;
    if (rlx_sampler_new(p, &s) != RLX_OK) return false;
    memset(counts, 0, (size_t)nv * sizeof *counts);
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        int32_t tok;
        ok = rlx_sampler_sample(s, logits, nv, &tok) == RLX_OK && tok >= 0 && tok < nv;
        if (ok) counts[tok]++;
    }
    rlx_sampler_free(s);
    return ok;
}

/* Logits whose softmax is probs. */
static void logits_of(const double *probs, int n, float *out) {
    for (int i = 0; i < n; i++) out[i] = (float)log(probs[i]);
}

TEST(sampler_greedy_is_argmax) {
    float logits[1000];
    for (int r = 0; r < 20; r++) {
        test_fill_uniform_f32(logits, 1000, -5, 5);
        int32_t want = 0;
        for (int i = 1; i < 1000; i++) if (logits[i] > logits[want]) want = i;
        sampler_params p = plain(0.0f, (uint64_t)r);
        sampler *s;
        CHECK_OK(rlx_sampler_new(&p, &s));
        int32_t tok;
        CHECK_OK(rlx_sampler_sample(s, logits, 1000, &tok));
        rlx_sampler_free(s);
        CHECK_MSG(tok == want, "greedy %d, argmax %d", tok, want);
        /* top-k = 1 at any temperature is the same token. */
        p = plain(1.5f, (uint64_t)r);
        p.top_k = 1;
        CHECK_OK(rlx_sampler_new(&p, &s));
        CHECK_OK(rlx_sampler_sample(s, logits, 1000, &tok));
        rlx_sampler_free(s);
        CHECK(tok == want);
    }
    /* Ties: the lowest id. */
    float tie[5] = {1, 3, 2, 3, 3};
    sampler_params p = plain(0.0f, 1);
    sampler *s;
    CHECK_OK(rlx_sampler_new(&p, &s));
    int32_t tok;
    CHECK_OK(rlx_sampler_sample(s, tie, 5, &tok));
    CHECK(tok == 1);
    /* Negative temperature is greedy too; logits are not modified. */
    rlx_sampler_free(s);
    p.temperature = -1;
    p.top_k = 1;
    CHECK_OK(rlx_sampler_new(&p, &s));
    CHECK_OK(rlx_sampler_sample(s, tie, 5, &tok));
    CHECK(tok == 1 && tie[1] == 3 && tie[0] == 1);
    p = plain(1.0f, 9);
    p.top_k = 1;
    rlx_sampler_free(s);
    CHECK_OK(rlx_sampler_new(&p, &s));
    for (int i = 0; i < 20; i++) {
        CHECK_OK(rlx_sampler_sample(s, tie, 5, &tok));
        CHECK(tok == 1);
    }
    rlx_sampler_free(s);
}

TEST(sampler_seed_determinism) {
    float logits[300];
    test_fill_uniform_f32(logits, 300, -2, 2);
    int32_t a[200], b[200], c[200];
    sampler_params p;
    rlx_sampler_params_init(&p);   /* defaults: top-k 40, top-p 0.95, min-p 0.05, T 0.8 */
    p.seed = 1234;
    sampler *s1, *s2;
    CHECK_OK(rlx_sampler_new(&p, &s1));
    CHECK_OK(rlx_sampler_new(&p, &s2));
    for (int i = 0; i < 200; i++) {
        CHECK_OK(rlx_sampler_sample(s1, logits, 300, &a[i]));
        CHECK_OK(rlx_sampler_sample(s2, logits, 300, &b[i]));
    }
    CHECK(memcmp(a, b, sizeof a) == 0);
    /* reset replays the same sequence */
    rlx_sampler_reset(s1);
    for (int i = 0; i < 200; i++) CHECK_OK(rlx_sampler_sample(s1, logits, 300, &c[i]));
    CHECK(memcmp(a, c, sizeof a) == 0);
    rlx_sampler_free(s1);
    rlx_sampler_free(s2);
    /* another seed gives another sequence */
    p.seed = 1235;
    CHECK_OK(rlx_sampler_new(&p, &s1));
    for (int i = 0; i < 200; i++) CHECK_OK(rlx_sampler_sample(s1, logits, 300, &c[i]));
    rlx_sampler_free(s1);
    CHECK(memcmp(a, c, sizeof a) != 0);
    /* and the draws are not all one token */
    int distinct = 0;
    for (int i = 0; i < 200; i++) {
        bool seen = false;
        for (int j = 0; j < i; j++) if (a[j] == a[i]) seen = true;
        distinct += !seen;
    }
    CHECK_MSG(distinct > 10, "only %d distinct tokens", distinct);
}

TEST(sampler_distribution) {
    /* T = 1, no filters: frequencies follow softmax(logits). */
    const double probs[4] = {0.5, 0.3, 0.15, 0.05};
    float logits[4];
    logits_of(probs, 4, logits);
    int counts[4];
    const int n = 20000;
    sampler_params p = plain(1.0f, 42);
    CHECK(draw(&p, logits, 4, n, counts));
    for (int i = 0; i < 4; i++)
        CHECK_MSG(fabs(counts[i] / (double)n - probs[i]) < 0.015, "token %d: %.4f, want %.2f", i, counts[i] / (double)n, probs[i]);
    /* T = 2 flattens: p ~ sqrt(probs); T = 0.5 sharpens: p ~ probs^2. */
    double flat[4], sharp[4], zf = 0, zs = 0;
    for (int i = 0; i < 4; i++) { flat[i] = sqrt(probs[i]); zf += flat[i]; sharp[i] = probs[i] * probs[i]; zs += sharp[i]; }
    p = plain(2.0f, 43);
    CHECK(draw(&p, logits, 4, n, counts));
    for (int i = 0; i < 4; i++) CHECK(fabs(counts[i] / (double)n - flat[i] / zf) < 0.015);
    p = plain(0.5f, 44);
    CHECK(draw(&p, logits, 4, n, counts));
    for (int i = 0; i < 4; i++) CHECK(fabs(counts[i] / (double)n - sharp[i] / zs) < 0.015);
}

TEST(sampler_filters) {
    const double probs[6] = {0.40, 0.25, 0.15, 0.10, 0.06, 0.04};
    float logits[6];
    logits_of(probs, 6, logits);
    int counts[6];
    const int n = 20000;
    /* top-k = 2: only the two best, in ratio 0.40 : 0.25. */
    sampler_params p = plain(1.0f, 7);
    p.top_k = 2;
    CHECK(draw(&p, logits, 6, n, counts));
    CHECK(counts[2] + counts[3] + counts[4] + counts[5] == 0);
    CHECK(fabs(counts[0] / (double)n - 0.40 / 0.65) < 0.015);
    /* top-p = 0.7: 0.40 + 0.25 = 0.65 < 0.7, so the third token (crossing
     * 0.7) is kept too, and nothing after it. */
    p = plain(1.0f, 8);
    p.top_p = 0.7f;
    CHECK(draw(&p, logits, 6, n, counts));
    CHECK(counts[3] + counts[4] + counts[5] == 0);
    CHECK(counts[2] > 0);
    CHECK(fabs(counts[2] / (double)n - 0.15 / 0.80) < 0.015);
    /* top-p = 0.3: the first token alone. */
    p.top_p = 0.3f;
    CHECK(draw(&p, logits, 6, 2000, counts));
    CHECK(counts[0] == 2000);
    /* min-p = 0.2: keep p >= 0.08 (ids 0..3). */
    p = plain(1.0f, 9);
    p.min_p = 0.2f;
    CHECK(draw(&p, logits, 6, n, counts));
    CHECK(counts[4] + counts[5] == 0 && counts[3] > 0);
    CHECK(fabs(counts[3] / (double)n - 0.10 / 0.90) < 0.015);
    /* min-p is judged at temperature 1: a hot temperature does not widen it. */
    p.temperature = 5.0f;
    CHECK(draw(&p, logits, 6, n, counts));
    CHECK(counts[4] + counts[5] == 0 && counts[3] > 0);
    /* Combined: top-k 5, then top-p 0.9 (of the renormalized 5), then min-p. */
    p = plain(1.0f, 10);
    p.top_k = 5;
    p.top_p = 0.9f;
    p.min_p = 0.3f;   /* p >= 0.12 of the max: ids 0..2 */
    CHECK(draw(&p, logits, 6, n, counts));
    CHECK(counts[3] + counts[4] + counts[5] == 0 && counts[2] > 0);
    /* A big vocabulary with top-k: only the k best ever appear. */
    float big[5000];
    test_fill_uniform_f32(big, 5000, -3, 3);
    int *bc = calloc(5000, sizeof *bc);
    CHECK(bc);
    p = plain(1.0f, 11);
    p.top_k = 40;
    bool ok = draw(&p, big, 5000, 4000, bc);
    int kept = 0, outside = 0;
    for (int i = 0; i < 5000 && ok; i++) {
        int above = 0;   /* rank of i */
        for (int j = 0; j < 5000; j++) above += big[j] > big[i] || (big[j] == big[i] && j < i);
        if (bc[i]) { kept++; if (above >= 40) outside++; }
    }
    free(bc);
    CHECK(ok);
    CHECK_MSG(outside == 0 && kept > 20, "kept %d, outside top-40 %d", kept, outside);
}

TEST(sampler_repetition_penalty) {
    sampler_params p = plain(0.0f, 1);
    p.repeat_penalty = 1.5f;
    p.repeat_last_n = 3;
    sampler *s;
    CHECK_OK(rlx_sampler_new(&p, &s));
    int32_t tok;
    /* Positive logit: divided. 2.0 / 1.5 = 1.33 < 1.9. */
    float pos[4] = {2.0f, 1.9f, -1.0f, -1.1f};
    CHECK_OK(rlx_sampler_sample(s, pos, 4, &tok));
    CHECK(tok == 0);
    rlx_sampler_accept(s, 0);
    CHECK_OK(rlx_sampler_sample(s, pos, 4, &tok));
    CHECK(tok == 1);
    /* Negative logit: multiplied. -1.0 * 1.5 = -1.5 < -1.2. */
    float neg[3] = {-1.0f, -1.2f, -9.0f};
    CHECK_OK(rlx_sampler_sample(s, neg, 3, &tok));
    CHECK(tok == 1);
    /* Repeats in the window count once: 0 three times is still / 1.5 once. */
    rlx_sampler_accept(s, 0);
    rlx_sampler_accept(s, 0);
    float close[2] = {1.5f, 0.99f};   /* 1.5 / 1.5 = 1.0 > 0.99 */
    CHECK_OK(rlx_sampler_sample(s, close, 2, &tok));
    CHECK(tok == 0);
    /* Out of the window (last 3), no penalty. */
    rlx_sampler_accept(s, 2);
    rlx_sampler_accept(s, 3);
    rlx_sampler_accept(s, 3);
    CHECK_OK(rlx_sampler_sample(s, pos, 4, &tok));
    CHECK(tok == 0);
    /* History ids beyond n_vocab are ignored, not a crash. */
    rlx_sampler_accept(s, 100000);
    rlx_sampler_accept(s, -5);
    CHECK_OK(rlx_sampler_sample(s, pos, 4, &tok));
    CHECK(tok == 0);
    rlx_sampler_free(s);
    /* Frequency and presence penalties subtract count * f + presence. */
    p = plain(0.0f, 1);
    p.frequency_penalty = 0.3f;
    p.presence_penalty = 0.05f;
    CHECK_OK(rlx_sampler_new(&p, &s));
    rlx_sampler_accept(s, 0);
    rlx_sampler_accept(s, 0);
    float f[2] = {1.0f, 0.4f};   /* 1.0 - 0.6 - 0.05 = 0.35 < 0.4 */
    CHECK_OK(rlx_sampler_sample(s, f, 2, &tok));
    CHECK(tok == 1);
    f[1] = 0.3f;
    CHECK_OK(rlx_sampler_sample(s, f, 2, &tok));
    CHECK(tok == 0);
    rlx_sampler_free(s);
    /* repeat_last_n = 0 disables the history. */
    p = plain(0.0f, 1);
    p.repeat_penalty = 10.0f;
    p.repeat_last_n = 0;
    CHECK_OK(rlx_sampler_new(&p, &s));
    rlx_sampler_accept(s, 0);
    CHECK_OK(rlx_sampler_sample(s, pos, 4, &tok));
    CHECK(tok == 0);
    rlx_sampler_free(s);
}

TEST(sampler_nonfinite) {
    const float nan = NAN, inf = INFINITY;
    float a[5] = {nan, 1.0f, nan, 0.5f, -inf};
    int counts[5];
    sampler_params p = plain(1.0f, 3);
    CHECK(draw(&p, a, 5, 2000, counts));
    CHECK(counts[0] == 0 && counts[2] == 0 && counts[4] == 0 && counts[1] > counts[3] && counts[3] > 0);
    p = plain(0.0f, 3);
    CHECK(draw(&p, a, 5, 10, counts));
    CHECK(counts[1] == 10);
    /* +inf takes all the mass, shared between the +inf tokens. */
    float b[4] = {1e30f, inf, 3.0f, inf};
    p = plain(1.0f, 4);
    p.repeat_penalty = 0.5f;   /* inf / 0.5 must not turn into NaN */
    sampler *s;
    CHECK_OK(rlx_sampler_new(&p, &s));
    rlx_sampler_accept(s, 1);
    memset(counts, 0, sizeof counts);
    for (int i = 0; i < 2000; i++) {
        int32_t tok;
        CHECK_OK(rlx_sampler_sample(s, b, 4, &tok));
        counts[tok]++;
    }
    rlx_sampler_free(s);
    CHECK(counts[0] == 0 && counts[2] == 0 && counts[1] > 800 && counts[3] > 800);
    /* Nothing sampleable: an error, not a crash. */
    float c[3] = {nan, -inf, nan};
    p = plain(1.0f, 5);
    CHECK_OK(rlx_sampler_new(&p, &s));
    int32_t tok;
    CHECK_STATUS(rlx_sampler_sample(s, c, 3, &tok), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(tok == -1);
    /* Extreme temperatures stay finite. */
    rlx_sampler_free(s);
    float d[3] = {1.0f, 2.0f, 3.0f};
    p = plain(1e-20f, 5);
    CHECK(draw(&p, d, 3, 100, counts));
    CHECK(counts[2] == 100);
    p = plain(1e20f, 5);
    CHECK(draw(&p, d, 3, 3000, counts));
    CHECK(counts[0] > 800 && counts[1] > 800 && counts[2] > 800);
}

TEST(sampler_errors) {
    sampler_params p;
    rlx_sampler_params_init(&p);
    sampler *s = (sampler *)&p;
    CHECK_STATUS(rlx_sampler_new(NULL, &s), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(s == NULL);
    CHECK_STATUS(rlx_sampler_new(&p, NULL), RLX_STATUS_INVALID_ARGUMENT);
    sampler_params bad = p;
    bad.repeat_penalty = 0;
    CHECK_STATUS(rlx_sampler_new(&bad, &s), RLX_STATUS_INVALID_ARGUMENT);
    bad = p;
    bad.temperature = NAN;
    CHECK_STATUS(rlx_sampler_new(&bad, &s), RLX_STATUS_INVALID_ARGUMENT);
    bad = p;
    bad.min_p = 1.5f;
    CHECK_STATUS(rlx_sampler_new(&bad, &s), RLX_STATUS_INVALID_ARGUMENT);
    bad = p;
    bad.repeat_last_n = -1;
    CHECK_STATUS(rlx_sampler_new(&bad, &s), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_OK(rlx_sampler_new(&p, &s));
    float l[2] = {0, 1};
    int32_t tok;
    CHECK_STATUS(rlx_sampler_sample(NULL, l, 2, &tok), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_sampler_sample(s, NULL, 2, &tok), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_sampler_sample(s, l, 0, &tok), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_sampler_sample(s, l, 2, NULL), RLX_STATUS_INVALID_ARGUMENT);
    /* The vocabulary may change size between calls. */
    float big[100] = {0};
    big[77] = 5;
    CHECK_OK(rlx_sampler_sample(s, big, 100, &tok));
    CHECK_OK(rlx_sampler_sample(s, l, 2, &tok));
    CHECK(tok == 0 || tok == 1);
    rlx_sampler_free(s);
    rlx_sampler_free(NULL);
    rlx_sampler_accept(NULL, 1);
    rlx_sampler_reset(NULL);
}

static int cmp_desc_f32(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x > y ? -1 : x < y;
}

/* A Qwen-sized vocabulary with top-k off: top-p keeps exactly the smallest
 * prefix reaching the mass (~350 of 400 plausible tokens: more than one
 * selection round) and the same set as the sorted top-k path; min-p and plain
 * temperature work without it. (Speed is not asserted here: bench_sampler
 * measures it against a full-sort sampler.) */
TEST(sampler_large_vocab_top_k_off) {
    const int32_t nv = 152064, hot = 400;
    float *l = malloc((size_t)nv * sizeof *l), *sorted = malloc((size_t)nv * sizeof *sorted);
    int *counts = malloc((size_t)nv * sizeof *counts);
    CHECK(l && sorted && counts);
    /* The cold tokens hold ~1e-6 of the mass, so a top-k of 5000 normalizes
     * over nearly the same mass as no top-k at all. */
    test_fill_uniform_f32(l, (size_t)nv, -0.5f, 0.5f);
    for (int32_t i = 0; i < nv; i++) l[i] += i % 251 == 0 && i / 251 < hot ? 5.0f : -15.0f;
    /* Reference top-p = 0.9 cut: the smallest logit still kept. */
    memcpy(sorted, l, (size_t)nv * sizeof *l);
    qsort(sorted, (size_t)nv, sizeof *sorted, cmp_desc_f32);
    double sum = 0, cum = 0;
    for (int32_t i = 0; i < nv; i++) sum += exp((double)sorted[i] - sorted[0]);
    int32_t keep = 0;
    while (keep < nv && cum < 0.9) cum += exp((double)sorted[keep++] - sorted[0]) / sum;
    float cut = sorted[keep - 1];
    CHECK_MSG(keep > 256 && keep < hot, "top-p keeps %d", keep);

    const int n = 150;
    sampler_params p = plain(1.0f, 21);
    p.top_p = 0.9f;
    for (int path = 0; path < 2; path++) {
        p.top_k = path ? 5000 : 0;   /* 5000: the sorted top-k path */
        bool ok = draw(&p, l, nv, n, counts);
        int32_t distinct = 0, outside = 0, past_first_round = 0;
        for (int32_t i = 0; i < nv; i++) {
            distinct += counts[i] > 0;
            outside += counts[i] > 0 && l[i] < cut;
            past_first_round += counts[i] > 0 && l[i] < sorted[255];   /* a top-p that stopped at 256 never draws these */
        }
        CHECK(ok);
        CHECK_MSG(outside == 0 && distinct > keep / 4 && past_first_round > 0,
                  "top-k %d: top-p kept %d distinct, %d outside the cut (%d kept), %d past rank 256", p.top_k, distinct,
                  outside, keep, past_first_round);
    }
    /* min-p alone and plain temperature. */
    p = plain(1.0f, 22);
    p.min_p = 0.5f;   /* within log(2) of the best: a few hot tokens */
    CHECK(draw(&p, l, nv, n, counts));
    for (int32_t i = 0; i < nv; i++) CHECK(!counts[i] || l[i] >= sorted[0] + (float)log(0.5) - 1e-5f);
    p = plain(1.0f, 23);
    CHECK(draw(&p, l, nv, n, counts));
    int32_t cold = 0;
    for (int32_t i = 0; i < nv; i++) cold += counts[i] && l[i] < 0;
    CHECK(cold == 0);
    free(l);
    free(sorted);
    free(counts);
}

/* Ties at the top-k cut go to the lower ids, +0 and -0 tie, on both
 * selection paths (a heap for k <= 1024, one radix sort above). Logits take
 * six close levels, so the cut falls inside a tied group and every kept
 * token is drawn often; a token drawn outside the reference set (rank by
 * logit, then id) fails. */
TEST(sampler_top_k_ties) {
    enum { NV = 6000, N = 10000 };
    static const float level[6] = {0.0f, -0.0f, -0.05f, -0.1f, -0.15f, -0.2f};
    float *l = malloc(NV * sizeof *l);
    int *counts = malloc(NV * sizeof *counts), *rank = malloc(NV * sizeof *rank);
    CHECK(l && counts && rank);
    for (int i = 0; i < NV && l; i++) l[i] = level[(7 * i + i / 13) % 6];
    for (int i = 0; i < NV && rank; i++) {
        rank[i] = 0;
        for (int j = 0; j < NV; j++) rank[i] += l[j] > l[i] || (l[j] == l[i] && j < i);
    }
    /* inside the +-0 group (2000 tokens) on each path; 500 into the next level */
    static const int ks[3] = {700, 1500, 2500};
    for (int t = 0; t < 3 && l && counts && rank; t++) {
        sampler_params p = plain(1.0f, 30 + (uint64_t)t);
        p.top_k = ks[t];
        CHECK(draw(&p, l, NV, N, counts));
        int outside = 0, kept_drawn = 0, cut_level_drawn = 0;
        for (int i = 0; i < NV; i++) {
            if (!counts[i]) continue;
            if (rank[i] >= ks[t]) outside++;
            else kept_drawn++;
            cut_level_drawn += rank[i] < ks[t] && l[i] == (ks[t] > 2000 ? level[2] : 0.0f);
        }
        CHECK_MSG(outside == 0 && kept_drawn > ks[t] * 9 / 10 && cut_level_drawn > 0,
                  "top-k %d: %d drawn outside, %d of the kept drawn, %d at the cut's level", ks[t], outside, kept_drawn,
                  cut_level_drawn);
    }
    free(l);
    free(counts);
    free(rank);
}

/* Non-finite logits on the paths that read the caller's row in place (greedy,
 * the top-k heap over 16-logit blocks): NaN is never taken, +inf ties with
 * FLT_MAX (the lower id first), also with a penalty (which copies the row). */
TEST(sampler_nonfinite_in_place) {
    enum { NV = 100 };
    float l[NV];
    for (int i = 0; i < NV; i++) l[i] = i % 3 == 0 ? NAN : (float)(i % 7) - 3.0f;
    l[10] = FLT_MAX;
    l[40] = INFINITY;
    l[77] = INFINITY;
    l[5] = -INFINITY;
    int counts[NV];
    for (int pen = 0; pen < 2; pen++) {
        sampler_params p = plain(0.0f, 40);
        if (pen) p.repeat_penalty = 1.5f;   /* on id 3 only: the max stays where it is */
        sampler *s;
        CHECK_OK(rlx_sampler_new(&p, &s));
        rlx_sampler_accept(s, 3);
        int32_t tok = -1;
        CHECK_OK(rlx_sampler_sample(s, l, NV, &tok));
        CHECK_MSG(tok == 10, "greedy (penalty %d) took %d", pen, tok);
        rlx_sampler_free(s);
        /* top-k 2: FLT_MAX at 10 and +inf at 40 (77 ties with them, later id) share the mass */
        p.temperature = 1.0f;
        p.top_k = 2;
        CHECK_OK(rlx_sampler_new(&p, &s));
        rlx_sampler_accept(s, 3);
        memset(counts, 0, sizeof counts);
        for (int i = 0; i < 2000; i++) {
            CHECK_OK(rlx_sampler_sample(s, l, NV, &tok));
            if (tok >= 0 && tok < NV) counts[tok]++;
        }
        rlx_sampler_free(s);
        CHECK_MSG(counts[10] > 800 && counts[40] > 800 && counts[10] + counts[40] == 2000,
                  "top-k 2 (penalty %d): %d / %d of 2000", pen, counts[10], counts[40]);
    }
    float bad[40];
    for (int i = 0; i < 40; i++) bad[i] = i % 2 ? NAN : -INFINITY;
    for (int greedy = 0; greedy < 2; greedy++) {
        sampler_params p = plain(greedy ? 0.0f : 1.0f, 41);
        p.top_k = 5;
        sampler *s;
        CHECK_OK(rlx_sampler_new(&p, &s));
        int32_t tok;
        CHECK_STATUS(rlx_sampler_sample(s, bad, 40, &tok), RLX_STATUS_INVALID_ARGUMENT);
        CHECK(tok == -1);
        rlx_sampler_free(s);
    }
}
