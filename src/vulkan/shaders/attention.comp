// attention.comp — fused scaled dot-product attention (flash-style): f32
// math over f32, f16 or bf16 storage (DT: q, k, v, mask and out alike).
//
//   out = softmax(q k^T * scale + mask) v;  q [B,H,Sq,D], k/v [B,Hkv,Skv,D].
//
// One workgroup (128 invocations, 8 x 16) handles BQ consecutive "rows" of one
// kv head: the rows of the H/Hkv query heads that share kv head hk are
// contiguous in q and out, so row r is head hk*group + r/Sq, query r%Sq. GQA
// decode (Sq = 1) thus fills a block with the group's heads instead of
// wasting it. The workgroup walks the keys in tiles of BK staged in shared
// memory with an online softmax (running max m, running sum l, rescaled
// accumulator) in the log2 domain; the [Sq,Skv] scores never reach memory.
//
// Invocation (ty, tx) owns rows ty + 8r (r < BQ/8): their scores for keys
// tx + 16c (c < BK/16) and their output columns 4*(tx + 16c') .. +3. Row
// maxima and sums are reduced over the 16 tx lanes with subgroup shuffles when
// subgroups have >= 16 lanes (SG16), else through shared memory. Each lane
// keeps a partial l (every lane of a row applies the same rescaling), so only
// the max needs a reduction per tile.
//
// Masks: causal (query i sees keys j <= Skv - Sq + i), additive (mask element
// strides over [B,H,Sq,Skv], 0 on broadcast dims). Keys past a causal block's
// last visible key are never loaded. A row with no finite score outputs zeros.
//
// Split keys (NSPLIT > 1, decode and other launches with few workgroups): the
// z dimension is (b, split); split s handles keys [s*chunk, (s+1)*chunk) and
// writes its unnormalized accumulator and (m, l) to scratch;
// attention_combine.comp merges the splits.
//
// Last split combines (LASTC, NSPLIT > 1): after writing its partial
// a workgroup counts itself done on its (b, kv head, block) counter; the last
// of the NSPLIT to finish merges the partials into out with
// attention_combine.comp's arithmetic (the same sums in the same order) and
// zeroes the counter for the next run. No combine dispatch, and no dependent
// stage for it: the merge is one workgroup's few KB at the end of the kernel.
#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "nn_common.glsl"
#include "att_splits.glsl"   // the partials' layout and merge (LASTC; attention_combine.comp alike)

layout(local_size_x = 128) in;

layout(constant_id = 0) const uint D     = 64;   // head dim (<= 256)
layout(constant_id = 1) const uint BQ    = 16;   // rows per workgroup (multiple of 8)
layout(constant_id = 2) const uint BK    = 32;   // keys per tile (multiple of 16)
layout(constant_id = 3) const uint SPLIT = 1;    // 1: separate K and V tiles; 0: V reuses K's space
layout(constant_id = 4) const uint SG16  = 0;    // 1: subgroup size >= 16, reduce with shuffles
layout(constant_id = 5) const uint VEC   = 0;    // 1: D % 4 == 0 and 16-byte aligned tensors
layout(constant_id = 6) const uint NSPLIT = 1;   // > 1: keys split over workgroups (partials to scratch)
layout(constant_id = 7) const uint PIPE  = 0;    // 1 (SPLIT): the next K/V tile is loaded while this one is computed
layout(constant_id = 8) const uint DT    = 0;    // storage of q, k, v, mask, out: DT_F32, DT_F16 or DT_BF16
layout(constant_id = 9) const uint LASTC = 0;    // 1 (NSPLIT > 1): the last split merges the partials (above)

const uint D4  = (D + 3) / 4;      // vec4s per row
const uint KST = D4 + 1;           // row stride of the K/V tiles (vec4), padded against bank conflicts
const uint RQ  = BQ / 8;           // rows per invocation
const uint SK  = BK / 16;          // keys per invocation
const uint DQ  = (D4 + 15) / 16;   // output vec4 columns per invocation
const uint VOFF = SPLIT != 0 ? BK * KST : 0;
const uint NRED = SG16 != 0 ? 1 : BQ * 16;
const float LOG2E = 1.4426950408889634;
const float NEG_INF = -1.0 / 0.0;

layout(push_constant, std430) uniform Push {
    uint64_t q, k, v, mask, out_;
    uint Sq, Skv, H, Hkv;
    uint rows;          // (H / Hkv) * Sq: rows per kv head
    uint kind;          // 0 none, 1 causal, 2 additive
    float scale_log2;   // scale * log2(e)
    uint pad0;
    uint ms0, ms1, ms2, ms3;
    uint64_t scratch;   // NSPLIT > 1: partial accumulators, then (m, l) pairs at ml_off
    uint chunk;         // keys per split (>= Skv when NSPLIT == 1)
    uint ml_off;        // float offset of the (m, l) pairs in scratch
    uint64_t kvlen;     // 0, or an i32 buffer holding the active key count (a KV cache's fill)
    uint64_t counters;  // LASTC: a zeroed u32 per (b, kv head, block), left zero again
    uint pad1, pad2;
} p;

// 16-bit storage, VEC: four elements in one 8-byte load or store (U2Buf, nn_common.glsl)
// Elements 4*d4 .. 4*d4+3 of row `row` (D per row) of the tensor at addr, zero past D.
vec4 ld4(uint64_t addr, uint row, uint d4) {
    if (VEC != 0u) {
        if (DT == DT_F32) return V4Buf(addr).v[row * D4 + d4];
        uvec2 u = U2Buf(addr).v[row * D4 + d4];
        if (DT == DT_F16) return vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y));
        return vec4(uintBitsToFloat(u.x << 16), uintBitsToFloat(u.x & 0xffff0000u), uintBitsToFloat(u.y << 16),
                    uintBitsToFloat(u.y & 0xffff0000u));
    }
    vec4 r = vec4(0.0);
    uint base = row * D + d4 * 4u;
    for (uint c = 0u; c < 4u; c++)
        if (d4 * 4u + c < D) r[c] = load_f(addr, DT, base + c);
    return r;
}
float ld1(uint64_t addr, uint i) { return DT == DT_F32 ? F32Buf(addr).v[i] : load_f(addr, DT, i); }
uint16_t to16(float x) { return DT == DT_F16 ? f32_to_f16(x) : f32_to_bf16(x); }
void st1(uint64_t addr, uint i, float x) {
    if (DT == DT_F32) F32Buf(addr).v[i] = x;
    else U16Buf(addr).v[i] = to16(x);
}
// Stores the elements of o below D at 4*d4.. of row `row`.
void st4(uint64_t addr, uint row, uint d4, vec4 o) {
    if (VEC != 0u) {
        if (DT == DT_F32) {
            V4Buf(addr).v[row * D4 + d4] = o;
        } else if (DT == DT_F16) {
            U2Buf(addr).v[row * D4 + d4] = uvec2(packHalf2x16(o.xy), packHalf2x16(o.zw));
        } else {
            U2Buf(addr).v[row * D4 + d4] = uvec2(uint(to16(o.x)) | (uint(to16(o.y)) << 16),
                                                 uint(to16(o.z)) | (uint(to16(o.w)) << 16));
        }
        return;
    }
    uint base = row * D + d4 * 4u;
    for (uint e = 0u; e < 4u; e++)
        if (d4 * 4u + e < D) st1(addr, base + e, o[e]);
}

shared vec4 Qs[BQ * D4];
shared vec4 KV[BK * KST * (SPLIT != 0 ? 2 : 1)];
shared vec4 Ps[BQ * BK / 4];
shared float red[NRED];

uint tid, tx, ty;

// Max over the 16 lanes that share a row; every lane gets the result.
void row_reduce_max(inout float x[RQ]) {
    if (SG16 != 0) {
        for (uint r = 0; r < RQ; r++)
            for (uint o = 1; o < 16; o <<= 1) x[r] = max(x[r], subgroupShuffleXor(x[r], o));
    } else {
        for (uint r = 0; r < RQ; r++) red[(ty + 8 * r) * 16 + tx] = x[r];
        barrier();
        for (uint r = 0; r < RQ; r++) {
            float m = red[(ty + 8 * r) * 16];
            for (uint i = 1; i < 16; i++) m = max(m, red[(ty + 8 * r) * 16 + i]);
            x[r] = m;
        }
        barrier();
    }
}

void row_reduce_sum(inout float x[RQ]) {
    if (SG16 != 0) {
        for (uint r = 0; r < RQ; r++)
            for (uint o = 1; o < 16; o <<= 1) x[r] += subgroupShuffleXor(x[r], o);
    } else {
        for (uint r = 0; r < RQ; r++) red[(ty + 8 * r) * 16 + tx] = x[r];
        barrier();
        for (uint r = 0; r < RQ; r++) {
            float s = 0.0;
            for (uint i = 0; i < 16; i++) s += red[(ty + 8 * r) * 16 + i];
            x[r] = s;
        }
        barrier();
    }
}

// Loads a [n][D] row block starting at row `row0` of the tensor at `addr`
// into shared tile `dst` (row stride `st` vec4s at `off`), zero past `nvalid`.
// All of an invocation's loads are issued before the first shared store: a
// load-store loop waited out one memory latency per element, which made a
// decode step's attention (a tile or two per workgroup) latency-bound.
const uint TILE_LOADS = (BK * D4 + 127u) / 128u;   // vec4 loads per invocation and tile
void load_rows(uint64_t addr, uint row0, uint nvalid, out vec4 val[TILE_LOADS]) {
    [[unroll]] for (uint u = 0u; u < TILE_LOADS; u++) {
        uint i = tid + 128u * u;
        uint jj = i / D4, d4 = i - jj * D4;
        val[u] = vec4(0.0);
        if (i < BK * D4 && jj < nvalid) val[u] = ld4(addr, row0 + jj, d4);
    }
}
void store_rows(vec4 val[TILE_LOADS], uint off) {
    [[unroll]] for (uint u = 0u; u < TILE_LOADS; u++) {
        uint i = tid + 128u * u;
        uint jj = i / D4, d4 = i - jj * D4;
        if (i < BK * D4) KV[off + jj * KST + d4] = val[u];
    }
}
void load_tile_kv(uint64_t addr, uint row0, uint nvalid, uint off) {
    vec4 val[TILE_LOADS];
    load_rows(addr, row0, nvalid, val);
    store_rows(val, off);
}
// K and V tiles together (SPLIT): both tiles' loads are in flight at once,
// so a tile costs one memory latency, not two.
void load_tiles_k_v(uint row0, uint nvalid) {
    vec4 kval[TILE_LOADS], vval[TILE_LOADS];
    load_rows(p.k, row0, nvalid, kval);
    load_rows(p.v, row0, nvalid, vval);
    store_rows(kval, 0);
    store_rows(vval, VOFF);
}

// Counts this workgroup done on counter ci once its stores are made visible;
// true (workgroup-uniform) in the last of `count` to arrive, which also
// zeroes the counter for the next run and may then read the others' stores.
bool last_to_finish(uint ci, uint count) {
    memoryBarrierBuffer();   // this invocation's stores, before the count
    barrier();
    if (tid == 0u) {   // the flag lives in Ps, unused from here on (no shared memory beyond att_smem's count)
        uint done = atomicAdd(U32Buf(p.counters).v[ci], 1u) + 1u;
        Ps[0].x = done == count ? 1.0 : 0.0;
        if (done == count) atomicExchange(U32Buf(p.counters).v[ci], 0u);   // zero for the next run
    }
    barrier();
    bool last = Ps[0].x != 0.0;
    if (last) memoryBarrierBuffer();
    return last;
}

// LASTC: counts this workgroup's partial done; the last of the NSPLIT
// merges them into out (att_splits.glsl, as attention_combine.comp does).
void combine_if_last(uint b, uint hk, uint blk, uint r0, uint qrow0) {
    if (!last_to_finish((b * p.Hkv + hk) * gl_NumWorkGroups.x + blk, NSPLIT)) return;
    for (uint r = 0; r < RQ; r++) {
        uint row = r0 + ty + 8 * r;
        if (row >= p.rows) continue;
        float M = split_max(p.scratch, p.ml_off, b, hk, row, NSPLIT, p.Hkv, p.rows);
        for (uint c = 0; c < DQ; c++) {
            uint col4 = tx + 16 * c;
            for (uint e = 0; e < 4; e++) {
                uint col = col4 * 4 + e;
                if (col4 < D4 && col < D)
                    st1(p.out_, (qrow0 + row) * D + col,
                        split_merge(p.scratch, p.ml_off, D, b, hk, row, col, M, NSPLIT, p.Hkv, p.rows));
            }
        }
    }
}

void main() {
    tid = gl_LocalInvocationIndex;
    tx = tid & 15u;
    ty = tid >> 4;
    const uint blk = gl_WorkGroupID.x, hk = gl_WorkGroupID.y, b = gl_WorkGroupID.z / NSPLIT;
    const uint split = gl_WorkGroupID.z - b * NSPLIT;   // the partial this workgroup's result goes to
    const uint group = p.H / p.Hkv;
    const uint r0 = blk * BQ;
    const uint qrow0 = (b * p.H + hk * group) * p.Sq;   // first q/out row of this kv head
    const uint kvrow0 = (b * p.Hkv + hk) * p.Skv;
    // active extent: only the first L keys exist; read on the device so a
    // recorded decode step replays unchanged as the cache fills
    const uint L = p.kvlen != 0ul ? uint(clamp(I32Buf(p.kvlen).v[0], 0, int(p.Skv))) : p.Skv;
    const uint NSA = NSPLIT;                        // key ranges
    const uint krange = split;
    const int offs = int(L) - int(p.Sq);
    const bool causal = p.kind == 1u, additive = p.kind == 2u;

    // keys this block needs at all
    uint kv_end = L;
    if (causal) {
        uint last = min(r0 + BQ, p.rows) - 1u;
        uint maxi = (r0 / p.Sq != last / p.Sq) ? p.Sq - 1u : last % p.Sq;
        kv_end = uint(clamp(offs + int(maxi) + 1, 0, int(L)));
    }
    // this workgroup's keys: [ks, ke). With an active extent the split is of
    // the L keys that exist now (whole tiles each), not of the capacity, so a
    // short context still spreads over all splits.
    const uint chunk = (NSA > 1u && p.kvlen != 0ul) ? ((L + NSA - 1u) / NSA + BK - 1u) / BK * BK : p.chunk;
    const uint ks = krange * chunk;
    kv_end = min(kv_end, ks + chunk);

    // Q tile (loads first, then stores, as in load_tile_kv)
    const uint Q_LOADS = (BQ * D4 + 127u) / 128u;
    vec4 qval[Q_LOADS];
    [[unroll]] for (uint u = 0u; u < Q_LOADS; u++) {
        uint i = tid + 128u * u;
        uint rr = i / D4, d4 = i - rr * D4, row = r0 + rr;
        qval[u] = vec4(0.0);
        if (i < BQ * D4 && row < p.rows) qval[u] = ld4(p.q, qrow0 + row, d4);
    }
    [[unroll]] for (uint u = 0u; u < Q_LOADS; u++)
        if (tid + 128u * u < BQ * D4) Qs[tid + 128u * u] = qval[u];

    // per-row state
    int lim[RQ];        // keys j < lim[r] are visible (causal); 0 for rows past the end
    uint mbase[RQ];
    float m[RQ], l[RQ];
    vec4 acc[RQ][DQ];
    for (uint r = 0; r < RQ; r++) {
        uint row = r0 + ty + 8 * r;
        uint qi = row % p.Sq, h = hk * group + row / p.Sq;
        lim[r] = row >= p.rows ? 0 : (causal ? offs + int(qi) + 1 : int(L));
        mbase[r] = additive && row < p.rows ? b * p.ms0 + h * p.ms1 + qi * p.ms2 : 0u;
        m[r] = NEG_INF;
        l[r] = 0.0;
        for (uint c = 0; c < DQ; c++) acc[r][c] = vec4(0.0);
    }

    // PIPE: the next tile's K and V are loaded into registers while this
    // tile is computed, so a workgroup with many tiles (decode at a long
    // cache: 375 keys per split at 3000) does not wait a whole memory
    // latency per tile on top of its math
    vec4 knext[TILE_LOADS], vnext[TILE_LOADS];   // unused (removed by the compiler) without PIPE
    if (PIPE != 0 && ks < kv_end) {
        load_rows(p.k, kvrow0 + ks, min(BK, kv_end - ks), knext);
        load_rows(p.v, kvrow0 + ks, min(BK, kv_end - ks), vnext);
    }
    for (uint j0 = ks; j0 < kv_end; j0 += BK) {
        const uint nk = min(BK, kv_end - j0);
        barrier();   // the previous tile's K/V/P are no longer read
        if (PIPE != 0) {
            store_rows(knext, 0);
            store_rows(vnext, VOFF);
            const uint jn = j0 + BK;
            if (jn < kv_end) {
                load_rows(p.k, kvrow0 + jn, min(BK, kv_end - jn), knext);
                load_rows(p.v, kvrow0 + jn, min(BK, kv_end - jn), vnext);
            }
        } else if (SPLIT != 0) {
            load_tiles_k_v(kvrow0 + j0, nk);
        } else {
            load_tile_kv(p.k, kvrow0 + j0, nk, 0);
        }
        barrier();

        // scores for rows ty + 8r, keys tx + 16c
        float s[RQ][SK];
        for (uint r = 0; r < RQ; r++)
            for (uint c = 0; c < SK; c++) s[r][c] = 0.0;
        for (uint d4 = 0; d4 < D4; d4++) {
            vec4 qv[RQ], kv[SK];
            for (uint r = 0; r < RQ; r++) qv[r] = Qs[(ty + 8 * r) * D4 + d4];
            for (uint c = 0; c < SK; c++) kv[c] = KV[(tx + 16 * c) * KST + d4];
            for (uint r = 0; r < RQ; r++)
                for (uint c = 0; c < SK; c++) s[r][c] += dot(qv[r], kv[c]);
        }

        float tmax[RQ];
        for (uint r = 0; r < RQ; r++) {
            tmax[r] = NEG_INF;
            for (uint c = 0; c < SK; c++) {
                uint j = j0 + tx + 16 * c;
                float x = NEG_INF;
                if (j < kv_end && int(j) < lim[r]) {
                    x = s[r][c] * p.scale_log2;
                    if (additive) x += ld1(p.mask, mbase[r] + j * p.ms3) * LOG2E;
                }
                s[r][c] = x;
                tmax[r] = max(tmax[r], x);
            }
        }
        row_reduce_max(tmax);

        for (uint r = 0; r < RQ; r++) {
            float mn = max(m[r], tmax[r]);
            float corr = 1.0;
            if (mn == NEG_INF) {
                for (uint c = 0; c < SK; c++) s[r][c] = 0.0;
            } else {
                corr = exp2(m[r] - mn);
                for (uint c = 0; c < SK; c++) s[r][c] = exp2(s[r][c] - mn);
                m[r] = mn;
            }
            float ps = 0.0;
            for (uint c = 0; c < SK; c++) ps += s[r][c];
            l[r] = l[r] * corr + ps;
            for (uint c = 0; c < DQ; c++) acc[r][c] *= corr;
            for (uint c = 0; c < SK; c++) {
                uint idx = (ty + 8 * r) * BK + tx + 16 * c;
                Ps[idx >> 2][idx & 3u] = s[r][c];
            }
        }
        if (SPLIT == 0) {
            barrier();   // K no longer read
            load_tile_kv(p.v, kvrow0 + j0, nk, VOFF);
        }
        barrier();

        // acc += P V
        for (uint jj = 0; jj < BK; jj += 4) {
            if (jj >= nk) break;
            vec4 pv[RQ];
            for (uint r = 0; r < RQ; r++) pv[r] = Ps[((ty + 8 * r) * BK + jj) >> 2];
            for (uint c = 0; c < DQ; c++) {
                uint col4 = tx + 16 * c;
                if (col4 < D4) {
                    vec4 v0 = KV[VOFF + (jj + 0) * KST + col4];
                    vec4 v1 = KV[VOFF + (jj + 1) * KST + col4];
                    vec4 v2 = KV[VOFF + (jj + 2) * KST + col4];
                    vec4 v3 = KV[VOFF + (jj + 3) * KST + col4];
                    for (uint r = 0; r < RQ; r++)
                        acc[r][c] += pv[r].x * v0 + pv[r].y * v1 + pv[r].z * v2 + pv[r].w * v3;
                }
            }
        }
    }

    row_reduce_sum(l);
    if (NSPLIT > 1) {
        // partials: unnormalized acc, and (m, l) in the log2 domain
        for (uint r = 0; r < RQ; r++) {
            uint row = r0 + ty + 8 * r;
            if (row >= p.rows) continue;
            uint part = ((b * NSPLIT + split) * p.Hkv + hk) * p.rows + row;
            if (tx == 0) {
                F32Buf(p.scratch).v[p.ml_off + 2 * part] = m[r];
                F32Buf(p.scratch).v[p.ml_off + 2 * part + 1] = l[r];
            }
            for (uint c = 0; c < DQ; c++) {
                uint col4 = tx + 16 * c;
                if (col4 >= D4) continue;
                for (uint e = 0; e < 4; e++)
                    if (col4 * 4 + e < D) F32Buf(p.scratch).v[part * D + col4 * 4 + e] = acc[r][c][e];
            }
        }
        if (LASTC != 0u) combine_if_last(b, hk, blk, r0, qrow0);
        return;
    }
    for (uint r = 0; r < RQ; r++) {
        uint row = r0 + ty + 8 * r;
        if (row >= p.rows) continue;
        float inv = l[r] > 0.0 ? 1.0 / l[r] : 0.0;
        for (uint c = 0; c < DQ; c++) {
            uint col4 = tx + 16 * c;
            if (col4 >= D4) continue;
            st4(p.out_, qrow0 + row, col4, acc[r][c] * inv);
        }
    }
}
