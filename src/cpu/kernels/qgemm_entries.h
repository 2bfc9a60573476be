/*
 * qgemm_entries.h — the part of a qgemm ISA file that does not depend on the
 * ISA: the tile dispatch (legacy vs K-quant tile), the x-row grouping of
 * gemm (MR rows, then the 1..3 left), one gemm and one dot entry per type,
 * and the two tables qdot.c picks from. Include at the end of qgemm_avx2.c /
 * qgemm_avx512.c, after their leg_tile / k_tile, with QGEMM_TABLE and
 * QGEMM_DOTS naming the tables (declared in qdot_internal.h) and MR set.
 */

INLINE void tile(int T, int mr, int64_t K, const uint8_t *w, size_t ws, int64_t nw, const uint8_t *xq, size_t xs,
                 float *out, int64_t ldo) {
    if (T >= QD_FIRST_K) k_tile(T, mr, K, w, ws, nw, xq, xs, out, ldo);
    else leg_tile(T, mr, K, w, ws, nw, xq, xs, out, ldo);
}

/* x rows in groups of MR (m outer: the group's rows stay in L1 while the nw
 * weight rows stream past), then the 1..3 left. */
INLINE void gemm(int T, int64_t K, const uint8_t *w, size_t ws, int64_t nw, const uint8_t *xq, size_t xs, int64_t nx,
                 float *out, int64_t ldo) {
    int64_t m = 0;
    for (; m + MR <= nx; m += MR) tile(T, MR, K, w, ws, nw, xq + (size_t)m * xs, xs, out + m * ldo, ldo);
    switch (nx - m) {
    case 3: tile(T, 3, K, w, ws, nw, xq + (size_t)m * xs, xs, out + m * ldo, ldo); break;
    case 2: tile(T, 2, K, w, ws, nw, xq + (size_t)m * xs, xs, out + m * ldo, ldo); break;
    case 1: tile(T, 1, K, w, ws, nw, xq + (size_t)m * xs, xs, out + m * ldo, ldo); break;
    default: break;
    }
}

#define ENTRIES(T, name)                                                                                           \
    static void gemm_##name(int64_t K, const uint8_t *w, size_t ws, int64_t nw, const uint8_t *xq, size_t xs,       \
                            int64_t nx, float *out, int64_t ldo) {                                                \
        gemm(T, K, w, ws, nw, xq, xs, nx, out, ldo);                                                               \
    }                                                                                                              \
    static float dot_##name(int64_t K, const uint8_t *w, const void *xq) {                                         \
        float o;                                                                                                   \
        tile(T, 1, K, w, 0, 1, xq, 0, &o, 1);                                                                      \
        return o;                                                                                                  \
    }
ENTRIES(QD_Q8_0, q8_0)
ENTRIES(QD_Q4_0, q4_0)
ENTRIES(QD_Q4_1, q4_1)
ENTRIES(QD_Q5_0, q5_0)
ENTRIES(QD_Q5_1, q5_1)
ENTRIES(QD_Q2_K, q2_K)
ENTRIES(QD_Q3_K, q3_K)
ENTRIES(QD_Q4_K, q4_K)
ENTRIES(QD_Q5_K, q5_K)
ENTRIES(QD_Q6_K, q6_K)
#undef ENTRIES

const qdot_gemm_fn QGEMM_TABLE[QD_NTYPES] = {
    gemm_q8_0, gemm_q4_0, gemm_q4_1, gemm_q5_0, gemm_q5_1, gemm_q2_K, gemm_q3_K, gemm_q4_K, gemm_q5_K, gemm_q6_K,
};
const qdot_dot_fn QGEMM_DOTS[QD_NTYPES] = {
    dot_q8_0, dot_q4_0, dot_q4_1, dot_q5_0, dot_q5_1, dot_q2_K, dot_q3_K, dot_q4_K, dot_q5_K, dot_q6_K,
};
