/*
 * quant_k.c — codecs of the K-quants: 256-element super-blocks split into
 * 16- or 32-element sub-blocks, each with its own small scale (and min) that
 * is itself quantized against one f16 super-block scale.
 *
 * Layouts (byte offsets within a block; element i of 256):
 *   Q2_K  84 B: scales[16] @0 (lo nibble scale, hi nibble min) | qs[64] @16 | d @80 | dmin @82
 *         2-bit q of i = h*128 + j*32 + l is bits 2j of qs[h*32 + l]; sub-block i/16
 *         x = d * sc * q - dmin * m
 *   Q3_K 110 B: hmask[32] @0 | qs[64] @32 | scales[12] @96 | d @108
 *         low 2 bits as Q2_K; high bit is bit (h*4 + j) of hmask[l]; q = low + 4*high - 4
 *         16 six-bit scales (stored +32): low nibble in scales[i] (i<8) or high nibble of
 *         scales[i-8]; top 2 bits at bit 2*(i/4) of scales[8 + i%4]. x = d * (sc - 32) * q
 *   Q4_K 144 B: d @0 | dmin @2 | scales[12] @4 | qs[128] @16
 *         sub-block s = i/32; q is the low (s even) or high (s odd) nibble of qs[(s/2)*32 + i%32]
 *         6-bit scale/min of s: s<4: scales[s], scales[s+4] (low 6 bits); s>=4: low nibbles
 *         of scales[s+4] (scale) and its high nibble (min), top 2 bits from the top bits of
 *         scales[s-4] (scale) and scales[s] (min).  x = d * sc * q - dmin * m
 *   Q5_K 176 B: as Q4_K with qh[32] @16 and qs[128] @48; bit s of qh[i%32] adds 16 to q
 *   Q6_K 210 B: ql[128] @0 | qh[64] @128 | scales[16] (int8) @192 | d @208
 *         i = h*128 + g*32 + l: low 4 bits are the low (g<2) or high nibble of
 *         ql[h*64 + (g&1)*32 + l]; top 2 bits are bits 2g of qh[h*32 + l];
 *         x = d * scales[i/16] * (q - 32)
 *   Q8_K 292 B: d (f32) @0 | qs[256] (int8) @4 | bsums[16] (int16, sums of 16 qs) @260
 *
 * Quantization chooses each sub-block's scale (and min) by a small search that
 * minimizes the squared error, then quantizes those scales against the
 * super-block scale (rounded to f16 first, since that is what the decoder
 * sees), and finally re-rounds every element against its final scale.
 */
#include "quant/quant_internal.h"

/* --------------------------------------------------------- scale fitting */

/* Symmetric fit x ~ s * l with integer l in [-nmax, nmax-1]. Tries scales
 * around the one that maps the extreme element to -nmax and keeps the one with
 * the least squared error (the best s for a fixed l is the least-squares one). */
static float fit_sym(int n, int nmax, const float *x) {
    float amax = 0, max = 0;
    for (int i = 0; i < n; i++)
        if (fabsf(x[i]) > amax) { amax = fabsf(x[i]); max = x[i]; }
    if (!(amax > 1e-30f) || !isfinite(amax)) return 0;
    float best_s = -max / (float)nmax, best_gain = -1;
    for (int k = -9; k <= 9; k++) {
        float iscale = -((float)nmax + 0.1f * (float)k) / max;
        double slx = 0, sll = 0;
        for (int i = 0; i < n; i++) {
            int l = q_round(iscale * x[i], -nmax, nmax - 1);
            slx += (double)x[i] * l;
            sll += (double)l * l;
        }
        /* error = sum x^2 - slx^2 / sll, so maximize slx^2 / sll */
        if (sll > 0 && slx * slx / sll > best_gain) {
            best_gain = (float)(slx * slx / sll);
            best_s = (float)(slx / sll);
        }
    }
    return best_s;
}

/* Asymmetric fit x ~ s * l - m with l in [0, nmax], s >= 0 and m >= 0 (the
 * formats store the min as an unsigned offset). For each trial grid the pair
 * (s, m) is the least-squares solution for the rounded l. */
static float fit_asym(int n, int nmax, const float *x, float *m_out) {
    float mn = x[0], mx = x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < mn) mn = x[i];
        if (x[i] > mx) mx = x[i];
    }
    if (mn > 0) mn = 0;
    if (!(mx > mn) || !isfinite(mx - mn)) { *m_out = isfinite(mn) ? -mn : 0; return 0; }
    float best_s = (mx - mn) / (float)nmax, best_o = mn;
    double best_err = 0;
    for (int i = 0; i < n; i++) {
        double e = best_s * q_round((x[i] - mn) / best_s, 0, nmax) + mn - x[i];
        best_err += e * e;
    }
    for (int k = -10; k <= 10; k++) {
        float iscale = ((float)nmax + 0.1f * (float)k) / (mx - mn);
        double sl = 0, sll = 0, sx = 0, slx = 0;
        int L[32];
        for (int i = 0; i < n; i++) {
            L[i] = q_round(iscale * (x[i] - mn), 0, nmax);
            sl += L[i]; sll += (double)L[i] * L[i]; sx += x[i]; slx += (double)L[i] * x[i];
        }
        double det = n * sll - sl * sl;
        if (det <= 0) continue;
        double s = (n * slx - sl * sx) / det, o = (sll * sx - sl * slx) / det;
        if (o > 0) { o = 0; s = slx / sll; }
        if (s <= 0) continue;
        double err = 0;
        for (int i = 0; i < n; i++) {
            double e = s * L[i] + o - x[i];
            err += e * e;
        }
        if (err < best_err) { best_err = err; best_s = (float)s; best_o = (float)o; }
    }
    *m_out = -best_o;
    return best_s;
}

/* ------------------------------------------------------------------- Q2_K */

void q2_K_to_f32(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t blk = 0; blk < n / QK_K; blk++, b += 84, dst += QK_K) {
        float d = q_ld_f16(b + 80), dmin = q_ld_f16(b + 82);
        for (int h = 0; h < 2; h++)
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 32; l++) {
                    int i = h * 128 + j * 32 + l, sc = b[i / 16];
                    int q = (b[16 + h * 32 + l] >> (2 * j)) & 3;
                    dst[i] = d * (float)(sc & 15) * (float)q - dmin * (float)(sc >> 4);
                }
    }
}

void q2_K_from_f32(const float *src, void *dst, int64_t n) {
    uint8_t *b = dst;
    for (int64_t blk = 0; blk < n / QK_K; blk++, b += 84, src += QK_K) {
        float s[16], m[16], max_s = 0, max_m = 0;
        for (int g = 0; g < 16; g++) {
            s[g] = fit_asym(16, 3, src + 16 * g, &m[g]);
            if (s[g] > max_s) max_s = s[g];
            if (m[g] > max_m) max_m = m[g];
        }
        float d = q_f16_round(max_s / 15), dmin = q_f16_round(max_m / 15);
        memset(b, 0, 84);
        q_st_f16(b + 80, d);
        q_st_f16(b + 82, dmin);
        for (int g = 0; g < 16; g++) {
            int ls = d > 0 ? q_round(s[g] / d, 0, 15) : 0, lm = dmin > 0 ? q_round(m[g] / dmin, 0, 15) : 0;
            b[g] = (uint8_t)(ls | lm << 4);
        }
        for (int i = 0; i < QK_K; i++) {
            int h = i / 128, j = (i % 128) / 32, l = i % 32, sc = b[i / 16];
            float ds = d * (float)(sc & 15), dm = dmin * (float)(sc >> 4);
            int q = ds > 0 ? q_round((src[i] + dm) / ds, 0, 3) : 0;
            b[16 + h * 32 + l] |= (uint8_t)(q << (2 * j));
        }
    }
}

/* ------------------------------------------------------------------- Q3_K */

static int q3_scale(const uint8_t *s, int i) {
    int lo = i < 8 ? s[i] & 15 : s[i - 8] >> 4;
    int hi = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
    return (lo | hi << 4) - 32;
}

void q3_K_to_f32(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t blk = 0; blk < n / QK_K; blk++, b += 110, dst += QK_K) {
        float d = q_ld_f16(b + 108);
        int sc[16];
        for (int g = 0; g < 16; g++) sc[g] = q3_scale(b + 96, g);
        for (int h = 0; h < 2; h++)
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 32; l++) {
                    int i = h * 128 + j * 32 + l;
                    int q = ((b[32 + h * 32 + l] >> (2 * j)) & 3) + 4 * ((b[l] >> (h * 4 + j)) & 1) - 4;
                    dst[i] = d * (float)sc[i / 16] * (float)q;
                }
    }
}

void q3_K_from_f32(const float *src, void *dst, int64_t n) {
    uint8_t *b = dst;
    for (int64_t blk = 0; blk < n / QK_K; blk++, b += 110, src += QK_K) {
        float s[16], amax = 0, max = 0;
        for (int g = 0; g < 16; g++) {
            s[g] = fit_sym(16, 4, src + 16 * g);
            if (fabsf(s[g]) > amax) { amax = fabsf(s[g]); max = s[g]; }
        }
        float d = q_f16_round(max / -32);
        memset(b, 0, 110);
        q_st_f16(b + 108, d);
        int sc[16];
        for (int g = 0; g < 16; g++) {
            sc[g] = d != 0 ? q_round(s[g] / d, -32, 31) : 0;
            int u = sc[g] + 32;
            if (g < 8) b[96 + g] |= (uint8_t)(u & 15);
            else b[96 + g - 8] |= (uint8_t)((u & 15) << 4);
            b[96 + 8 + g % 4] |= (uint8_t)((u >> 4) << (2 * (g / 4)));
        }
        for (int i = 0; i < QK_K; i++) {
            int h = i / 128, j = (i % 128) / 32, l = i % 32;
            float ds = d * (float)sc[i / 16];
            int q = ds != 0 ? q_round(src[i] / ds, -4, 3) + 4 : 4;
            b[32 + h * 32 + l] |= (uint8_t)((q & 3) << (2 * j));
            b[l] |= (uint8_t)((q >> 2) << (h * 4 + j));
        }
    }
}

/* ------------------------------------------------------------ Q4_K / Q5_K */

static void k4_scale_min(const uint8_t *s, int j, int *sc, int *m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 15) | (s[j - 4] >> 6) << 4;
        *m = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
    }
}

static void k4_pack_scale_min(uint8_t *s, int j, int sc, int m) {
    if (j < 4) {
        s[j] |= (uint8_t)sc;
        s[j + 4] |= (uint8_t)m;
    } else {
        s[j + 4] = (uint8_t)((sc & 15) | (m & 15) << 4);
        s[j - 4] |= (uint8_t)((sc >> 4) << 6);
        s[j] |= (uint8_t)((m >> 4) << 6);
    }
}

/* Shared by Q4_K (bits 4) and Q5_K (bits 5): qh is NULL for Q4_K. */
static void k45_to_f32(const uint8_t *b, const uint8_t *qh, const uint8_t *qs, float *dst) {
    float d = q_ld_f16(b), dmin = q_ld_f16(b + 2);
    for (int s = 0; s < 8; s++) {
        int sc, m;
        k4_scale_min(b + 4, s, &sc, &m);
        float ds = d * (float)sc, dm = dmin * (float)m;
        for (int l = 0; l < 32; l++) {
            int q = (qs[(s / 2) * 32 + l] >> (4 * (s & 1))) & 15;
            if (qh) q += 16 * ((qh[l] >> s) & 1);
            dst[s * 32 + l] = ds * (float)q - dm;
        }
    }
}

static void k45_from_f32(const float *x, uint8_t *b, uint8_t *qh, uint8_t *qs, int nmax) {
    float s[8], m[8], max_s = 0, max_m = 0;
    for (int j = 0; j < 8; j++) {
        s[j] = fit_asym(32, nmax, x + 32 * j, &m[j]);
        if (s[j] > max_s) max_s = s[j];
        if (m[j] > max_m) max_m = m[j];
    }
    float d = q_f16_round(max_s / 63), dmin = q_f16_round(max_m / 63);
    q_st_f16(b, d);
    q_st_f16(b + 2, dmin);
    memset(b + 4, 0, 12);
    for (int j = 0; j < 8; j++)
        k4_pack_scale_min(b + 4, j, d > 0 ? q_round(s[j] / d, 0, 63) : 0, dmin > 0 ? q_round(m[j] / dmin, 0, 63) : 0);
    memset(qs, 0, 128);
    if (qh) memset(qh, 0, 32);
    for (int j = 0; j < 8; j++) {
        int sc, mq;
        k4_scale_min(b + 4, j, &sc, &mq);
        float ds = d * (float)sc, dm = dmin * (float)mq;
        for (int l = 0; l < 32; l++) {
            int q = ds > 0 ? q_round((x[32 * j + l] + dm) / ds, 0, nmax) : 0;
            qs[(j / 2) * 32 + l] |= (uint8_t)((q & 15) << (4 * (j & 1)));
            if (qh) qh[l] |= (uint8_t)((q >> 4) << j);
        }
    }
}

void q4_K_to_f32(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t blk = 0; blk < n / QK_K; blk++, b += 144, dst += QK_K) k45_to_f32(b, NULL, b + 16, dst);
}
void q4_K_from_f32(const float *src, void *dst, int64_t n) {
    uint8_t *b = dst;
    for (int64_t blk = 0; blk < n / QK_K; blk++, b += 144, src += QK_K) k45_from_f32(src, b, NULL, b + 16, 15);
}
void q5_K_to_f32(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t blk = 0; blk < n / QK_K; blk++, b += 176, dst += QK_K) k45_to_f32(b, b + 16, b + 48, dst);
}
void q5_K_from_f32(const float *src, void *dst, int64_t n) {
    uint8_t *b = dst;
    for (int64_t blk = 0; blk < n / QK_K; blk++, b += 176, src += QK_K) k45_from_f32(src, b, b + 16, b + 48, 31);
}

/* ------------------------------------------------------------------- Q6_K */

void q6_K_to_f32(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t blk = 0; blk < n / QK_K; blk++, b += 210, dst += QK_K) {
        float d = q_ld_f16(b + 208);
        const int8_t *sc = (const int8_t *)(b + 192);
        for (int h = 0; h < 2; h++)
            for (int g = 0; g < 4; g++)
                for (int l = 0; l < 32; l++) {
                    int i = h * 128 + g * 32 + l;
                    int lo = (b[h * 64 + (g & 1) * 32 + l] >> (4 * (g >> 1))) & 15;
                    int hi = (b[128 + h * 32 + l] >> (2 * g)) & 3;
                    dst[i] = d * (float)sc[i / 16] * (float)((lo | hi << 4) - 32);
                }
    }
}

void q6_K_from_f32(const float *src, void *dst, int64_t n) {
    uint8_t *b = dst;
    for (int64_t blk = 0; blk < n / QK_K; blk++, b += 210, src += QK_K) {
        float s[16], amax = 0, max = 0;
        for (int g = 0; g < 16; g++) {
            s[g] = fit_sym(16, 32, src + 16 * g);
            if (fabsf(s[g]) > amax) { amax = fabsf(s[g]); max = s[g]; }
        }
        float d = q_f16_round(max / -128);
        memset(b, 0, 210);
        q_st_f16(b + 208, d);
        for (int g = 0; g < 16; g++) b[192 + g] = (uint8_t)(int8_t)(d != 0 ? q_round(s[g] / d, -128, 127) : 0);
        for (int i = 0; i < QK_K; i++) {
            int h = i / 128, g = (i % 128) / 32, l = i % 32;
            float ds = d * (float)(int8_t)b[192 + i / 16];
            int q = ds != 0 ? q_round(src[i] / ds, -32, 31) + 32 : 32;
            b[h * 64 + (g & 1) * 32 + l] |= (uint8_t)((q & 15) << (4 * (g >> 1)));
            b[128 + h * 32 + l] |= (uint8_t)((q >> 4) << (2 * g));
        }
    }
}

/* ------------------------------------------------------------------- Q8_K */

void q8_K_to_f32(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t blk = 0; blk < n / QK_K; blk++, b += 292, dst += QK_K) {
        float d;
        memcpy(&d, b, 4);
        for (int i = 0; i < QK_K; i++) dst[i] = d * (float)(int8_t)b[4 + i];
    }
}

void q8_K_from_f32(const float *src, void *dst, int64_t n) {
    uint8_t *b = dst;
    for (int64_t blk = 0; blk < n / QK_K; blk++, b += 292, src += QK_K) {
        float amax = 0, max = 0;
        for (int i = 0; i < QK_K; i++)
            if (fabsf(src[i]) > amax) { amax = fabsf(src[i]); max = src[i]; }
        /* the extreme maps to -128, the one code with no positive twin */
        float d = amax > 0 && isfinite(amax) ? max / -128.0f : 0, id = d != 0 ? 1.0f / d : 0;
        memcpy(b, &d, 4);
        for (int g = 0; g < 16; g++) {
            int16_t sum = 0;
            for (int l = 0; l < 16; l++) {
                int q = q_round(src[16 * g + l] * id, -128, 127);
                b[4 + 16 * g + l] = (uint8_t)(int8_t)q;
                sum = (int16_t)(sum + q);
            }
            memcpy(b + 260 + 2 * g, &sum, 2);
        }
    }
}
