/*
 * test_gemm.c — rlx_sgemm against a float64 reference: odd sizes that leave
 * partial tiles in every direction, both B layouts, accumulate, bias and every
 * activation, padded leading dimensions, every available micro-kernel, and
 * 1 and 2 threads. Also the thread pool's coverage and worker-index contract.
 */
#include "harness.h"
#include "core/threadpool.h"
#include "cpu/kernels/gemm.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const kernels[] = { "avx512", "avx2", "portable" };

static double ref_act(double x, int act) {
    switch (act) {
    case RLX_ACT_RELU:       return x > 0 ? x : 0;
    case RLX_ACT_GELU:       return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case RLX_ACT_GELU_TANH:  return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case RLX_ACT_SILU:       return x / (1.0 + exp(-x));
    case RLX_ACT_SIGMOID:    return 1.0 / (1.0 + exp(-x));
    case RLX_ACT_TANH:       return tanh(x);
    default:                 return x;
    }
}

typedef struct gemm_case {
    int64_t M, N, K;
    int transpose_b, accumulate, act, use_bias;
    int64_t pad;            /* extra leading-dimension elements */
    int transpose_a;        /* A stored [K, M] (rlx_sgemm_ex) */
    int packed;             /* bit 0: A, bit 1: B pre-packed (rlx_sgemm_packed) */
} gemm_case;

/* A 64-byte aligned copy of A (side 0) or B (side 1) in rlx_sgemm_packed's layout. */
static float *packed_copy(int side, int64_t rows, int64_t K, const float *src, int64_t ld, int transposed) {
    size_t bytes = (rlx_sgemm_packed_floats(rows, K, side) * sizeof(float) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes ? bytes : 64);
    if (!p) return NULL;
    if (side) rlx_sgemm_pack_b(p, rows, K, src, ld, transposed);
    else rlx_sgemm_pack_a(p, rows, K, src, ld, transposed);
    return p;
}

/* Runs one case; returns false (after printing) on mismatch. */
static bool run_case(rlx_threadpool *pool, const gemm_case *tc, const char *kname) {
    int64_t M = tc->M, N = tc->N, K = tc->K;
    int64_t lda = (tc->transpose_a ? M : K) + tc->pad, ldc = N + tc->pad;
    int64_t arows = tc->transpose_a ? K : M;
    int64_t ldb = (tc->transpose_b ? K : N) + tc->pad;
    int64_t brows = tc->transpose_b ? N : K;
    float *A = malloc(sizeof(float) * (size_t)(arows * lda + 1));
    float *B = malloc(sizeof(float) * (size_t)(brows * ldb + 1));
    float *C = malloc(sizeof(float) * (size_t)(M * ldc + 1));
    float *bias = malloc(sizeof(float) * (size_t)(N + 1));
    double *want = malloc(sizeof(double) * (size_t)(M * N + 1));
    float *got = malloc(sizeof(float) * (size_t)(M * N + 1));
    bool ok = false;
    if (!A || !B || !C || !bias || !want || !got) goto done;
    test_fill_uniform_f32(A, arows * lda, -1, 1);
    test_fill_uniform_f32(B, brows * ldb, -1, 1);
    test_fill_uniform_f32(C, M * ldc, -1, 1);
    test_fill_uniform_f32(bias, N, -1, 1);
    if (!tc->accumulate) /* poison: an unwritten element must show */
        for (int64_t i = 0; i < M * ldc; i++) C[i] = NAN;

    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = tc->accumulate ? C[i * ldc + j] : 0.0;
            for (int64_t k = 0; k < K; k++) {
                double b = tc->transpose_b ? B[j * ldb + k] : B[k * ldb + j];
                s += (double)(tc->transpose_a ? A[k * lda + i] : A[i * lda + k]) * b;
            }
            if (tc->use_bias) s += bias[j];
            want[i * N + j] = ref_act(s, tc->act);
        }
    /* padding past each row's width must survive untouched */
    float sentinel = 12345.0f;
    if (tc->pad) for (int64_t i = 0; i < M; i++) C[i * ldc + N] = sentinel;

    gemm_epilogue epi = { tc->use_bias ? bias : NULL, tc->act, tc->accumulate, NULL };
    int rc;
    if (tc->packed) {
        float *pa = tc->packed & 1 ? packed_copy(0, M, K, A, lda, tc->transpose_a) : NULL;
        float *pb = tc->packed & 2 ? packed_copy(1, N, K, B, ldb, tc->transpose_b) : NULL;
        /* the packed operand's source is not read: pass NULL */
        rc = rlx_sgemm_packed(pool, M, N, K, pa ? NULL : A, lda, tc->transpose_a, pa, pb ? NULL : B, ldb, tc->transpose_b, pb, C,
                              ldc, &epi);
        free(pa), free(pb);
    } else
        rc = tc->transpose_a ? rlx_sgemm_ex(pool, M, N, K, A, lda, 1, B, ldb, tc->transpose_b, C, ldc, &epi)
                             : rlx_sgemm(pool, M, N, K, A, lda, B, ldb, tc->transpose_b, C, ldc, &epi);
    if (rc != 0) {
        printf("    rlx_sgemm failed\n");
        goto done;
    }
    for (int64_t i = 0; i < M; i++) {
        memcpy(got + i * N, C + i * ldc, sizeof(float) * (size_t)N);
        if (tc->pad && C[i * ldc + N] != sentinel) {
            printf("    padding overwritten at row %lld\n", (long long)i);
            goto done;
        }
    }
    /* f32 accumulation error grows ~sqrt(K); 1e-5 at K <= 64, scaled above. */
    double tol = 1e-5 * (K > 64 ? sqrt((double)K / 64.0) : 1.0);
    char what[160];
    snprintf(what, sizeof what, "%s M=%lld N=%lld K=%lld ta=%d tb=%d acc=%d act=%d bias=%d pad=%lld packed=%d",
             kname, (long long)M, (long long)N, (long long)K, tc->transpose_a, tc->transpose_b, tc->accumulate,
             tc->act, tc->use_bias, (long long)tc->pad, tc->packed);
    ok = test_close_f32_f64(what, got, want, M * N, tol);
done:
    free(A); free(B); free(C); free(bias); free(want); free(got);
    return ok;
}

static gemm_case random_case(int64_t max_dim) {
    gemm_case tc = {
        .M = test_rand_int(1, max_dim), .N = test_rand_int(1, max_dim), .K = test_rand_int(1, max_dim),
        .transpose_b = (int)test_rand_int(0, 1), .accumulate = (int)test_rand_int(0, 1),
        .act = (int)test_rand_int(0, RLX_ACT_TANH), .use_bias = (int)test_rand_int(0, 1),
        .pad = test_rand_int(0, 1) ? test_rand_int(1, 9) : 0,
        .transpose_a = (int)test_rand_int(0, 1),
    };
    return tc;
}

TEST(gemm_small_odd_sizes_all_kernels) {
    for (size_t kk = 0; kk < sizeof kernels / sizeof kernels[0]; kk++) {
        if (rlx_sgemm_force_kernel(kernels[kk]) != 0) continue; /* not on this CPU */
        for (int it = 0; it < 150; it++) {
            gemm_case tc = random_case(70);
            if (!run_case(NULL, &tc, kernels[kk])) { rlx_sgemm_force_kernel(NULL); CHECK(0); }
        }
    }
    rlx_sgemm_force_kernel(NULL);
}

TEST(gemm_every_edge_of_one_tile) {
    /* Every M, N in 1..20 at a fixed odd K crosses each MR/NR remainder. */
    for (size_t kk = 0; kk < sizeof kernels / sizeof kernels[0]; kk++) {
        if (rlx_sgemm_force_kernel(kernels[kk]) != 0) continue;
        for (int64_t m = 1; m <= 20; m++)
            for (int64_t n = 1; n <= 20; n += 1) {
                gemm_case tc = { m, n + 40 * (m % 2), 7, (int)(n % 2), (int)(m % 3 == 0),
                                 (int)(n % 3), (int)(m % 2), 0, (int)((m + n) % 3 == 0), 0 };
                if (!run_case(NULL, &tc, kernels[kk])) { rlx_sgemm_force_kernel(NULL); CHECK(0); }
            }
    }
    rlx_sgemm_force_kernel(NULL);
}

TEST(gemm_large_blocks_threads) {
    /* Sizes past the KC/NC/MC blocks, with 1 and 2 threads. */
    rlx_threadpool *pool = rlx_threadpool_new(2);
    CHECK(pool != NULL);
    const gemm_case cases[] = {
        { 300, 530, 600, 0, 0, RLX_ACT_NONE, 0, 0, 0, 0 },
        { 300, 530, 600, 1, 1, RLX_ACT_GELU, 1, 3, 0, 0 },
        { 129, 771, 257, 0, 1, RLX_ACT_SILU, 1, 5, 0, 0 },
        { 128, 768, 768, 1, 0, RLX_ACT_GELU_TANH, 1, 0, 0, 0 },
        { 513, 97, 1030, 1, 0, RLX_ACT_RELU, 0, 1, 0, 0 },
        { 1, 1000, 300, 1, 0, RLX_ACT_NONE, 1, 0, 0, 0 },
        { 1000, 1, 300, 0, 1, RLX_ACT_TANH, 0, 2, 0, 0 },
        { 300, 530, 600, 0, 0, RLX_ACT_NONE, 0, 0, 1, 0 },     /* A stored [K, M] */
        { 129, 771, 257, 1, 1, RLX_ACT_SILU, 1, 5, 1, 0 },
        { 513, 97, 1030, 0, 0, RLX_ACT_RELU, 0, 1, 1, 0 },
    };
    for (size_t kk = 0; kk < sizeof kernels / sizeof kernels[0]; kk++) {
        if (rlx_sgemm_force_kernel(kernels[kk]) != 0) continue;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            for (int threads = 1; threads <= 2; threads++)
                if (!run_case(threads == 2 ? pool : NULL, &cases[i], kernels[kk])) {
                    rlx_sgemm_force_kernel(NULL);
                    rlx_threadpool_free(pool);
                    CHECK(0);
                }
    }
    rlx_sgemm_force_kernel(NULL);
    rlx_threadpool_free(pool);
}

/* Pre-packed A, B or both (a convolution's weights packed once per call):
 * sizes past the K block (several packed K blocks) and partial panels, every
 * kernel, 1 and 2 threads. */
TEST(gemm_prepacked_operands) {
    rlx_threadpool *pool = rlx_threadpool_new(2);
    CHECK(pool != NULL);
    for (size_t kk = 0; kk < sizeof kernels / sizeof kernels[0]; kk++) {
        if (rlx_sgemm_force_kernel(kernels[kk]) != 0) continue;
        for (int it = 0; it < 24; it++) {
            gemm_case tc = random_case(it % 2 ? 70 : 600);
            tc.packed = 1 + it % 3;
            if (!run_case(it % 4 < 2 ? NULL : pool, &tc, kernels[kk])) {
                rlx_sgemm_force_kernel(NULL);
                rlx_threadpool_free(pool);
                CHECK(0);
            }
        }
    }
    rlx_sgemm_force_kernel(NULL);
    rlx_threadpool_free(pool);
}

TEST(gemm_random_threaded) {
    rlx_threadpool *pool = rlx_threadpool_new(2);
    CHECK(pool != NULL);
    for (int it = 0; it < 40; it++) {
        gemm_case tc = random_case(200);
        if (!run_case(pool, &tc, rlx_sgemm_kernel_name())) { rlx_threadpool_free(pool); CHECK(0); }
    }
    rlx_threadpool_free(pool);
}

TEST(gemm_zero_k_and_empty) {
    float C[6] = { 1, 2, 3, 4, 5, 6 }, bias[3] = { 1, 1, 1 };
    gemm_epilogue epi = { bias, RLX_ACT_NONE, 1, NULL };
    CHECK(rlx_sgemm(NULL, 2, 3, 0, NULL, 0, NULL, 3, 0, C, 3, &epi) == 0);
    CHECK(C[0] == 2 && C[5] == 7);
    epi.accumulate = 0;
    CHECK(rlx_sgemm(NULL, 2, 3, 0, NULL, 0, NULL, 3, 0, C, 3, &epi) == 0);
    CHECK(C[0] == 1 && C[5] == 1);
    CHECK(rlx_sgemm(NULL, 0, 3, 4, NULL, 4, NULL, 3, 0, C, 3, NULL) == 0);
    CHECK(rlx_sgemm(NULL, -1, 3, 4, NULL, 4, NULL, 3, 0, C, 3, NULL) != 0);
    float A[8] = { 0 }, B[12] = { 0 };
    CHECK(rlx_sgemm(NULL, 2, 3, 4, A, 3, B, 3, 0, C, 3, NULL) != 0);  /* lda < K */
    CHECK(rlx_sgemm(NULL, 2, 3, 4, A, 4, B, 3, 1, C, 3, NULL) != 0);  /* ldb < K (transposed) */
    CHECK(rlx_sgemm(NULL, 2, 3, 4, A, 4, B, 3, 0, C, 2, NULL) != 0);  /* ldc < N */
    CHECK(rlx_sgemm_ex(NULL, 2, 3, 4, A, 1, 1, B, 3, 0, C, 3, NULL) != 0);  /* lda < M (A transposed) */
    CHECK(rlx_sgemm_ex(NULL, 2, 3, 4, A, 2, 1, B, 3, 0, C, 3, NULL) == 0);
    CHECK(rlx_sgemm(NULL, 2, 3, 4, A, 4, B, 3, 0, C, 3, NULL) == 0);
    CHECK(C[0] == 0 && C[5] == 0);
    CHECK(rlx_sgemm_force_kernel("no-such-kernel") != 0);
    CHECK(rlx_sgemm_force_kernel("portable") == 0);
    CHECK(strcmp(rlx_sgemm_kernel_name(), "portable") == 0);
    CHECK(rlx_sgemm_force_kernel(NULL) == 0);
}

/* ---------------------------------------------------------- thread pool */

typedef struct pool_probe {
    _Atomic int hits[1000];
    _Atomic int bad_worker;
    _Atomic int in_use[8];
    int size;
} pool_probe;

static void probe_fn(void *ctx, int64_t b, int64_t e, int worker) {
    pool_probe *p = ctx;
    if (worker < 0 || worker >= p->size) { atomic_store(&p->bad_worker, 1); return; }
    if (atomic_fetch_add(&p->in_use[worker], 1) != 0) atomic_store(&p->bad_worker, 1);
    for (int64_t i = b; i < e; i++) atomic_fetch_add(&p->hits[i], 1);
    atomic_fetch_sub(&p->in_use[worker], 1);
}

TEST(threadpool_covers_range_once) {
    CHECK(rlx_cpu_count() >= 1);
    CHECK(rlx_threadpool_size(NULL) == 1);
    for (int threads = 1; threads <= 4; threads++) {
        rlx_threadpool *pool = rlx_threadpool_new(threads);
        CHECK(pool != NULL);
        CHECK(rlx_threadpool_size(pool) == threads);
        for (int rep = 0; rep < 200; rep++) {
            static pool_probe p;
            memset(&p, 0, sizeof p);
            p.size = threads;
            int64_t n = 1 + rep * 5 % 1000;
            if (rep % 50 == 49) { /* let workers fall asleep: the wake path must work too */
                struct timespec ts = { 0, 3000000 };
                nanosleep(&ts, NULL);
            }
            rlx_parallel_for(pool, n, 1 + rep % 7, probe_fn, &p);
            CHECK(!atomic_load(&p.bad_worker));
            for (int64_t i = 0; i < 1000; i++)
                CHECK_MSG(atomic_load(&p.hits[i]) == (i < n), "threads=%d n=%lld item %lld hit %d",
                          threads, (long long)n, (long long)i, atomic_load(&p.hits[i]));
        }
        rlx_threadpool_free(pool);
    }
    rlx_threadpool_free(NULL);
}
