// decode_chain_ws.comp — experiment for bench/vk_chain.c (`--kernel ws`): the
// chain of decode_chain.comp (Q4_K matvecs, one persistent dispatch, a grid
// barrier between stages) with the workgroup's lanes split into two roles, so
// that the weight math no longer sits between a lane's loads:
//
//   producers (the upper half of the lanes) only stream weights: each keeps D tiles
//     of loads in flight in registers and stores the oldest into shared memory
//     once per iteration;
//   consumers (the lower half) only compute, from shared memory: one
//     32-weight unit of the current tile per lane, a subgroup sum, and a few
//     lanes that add the subgroups' sums into rows.
//
// decode_chain.comp showed that with the loads alone the persistent chain
// streams 3.5 TB/s on the H200, and that the math in the same lanes costs
// ~12 µs per 8B layer that the loads do not hide. Here a tile is one Q4_K
// block per 8 consumer lanes (1024 lanes: 64 blocks, 9216 bytes) of the workgroup's rows, which are one contiguous byte
// range per stage (rows [N w / G, N (w + 1) / G)); the producers' tile
// sequence runs across stages, so the next stage's first tiles are in flight
// through the grid wait and x's rounding.
//
// Iteration i: consumers work on tile i in slot i & 1 and finish the rows of
// tile i - 1 (partial sums in part[slot ^ 1]); producers store tile i + 1
// into slot (i + 1) & 1 and load tile i + 1 + D; then one barrier. Row sums
// add subgroup partials in a fixed order, so the per-stage dispatch and the
// persistent one agree bit for bit. A row that runs on into the next tile
// hands its sum on in carry[slot].
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_memory_scope_semantics : require

layout(local_size_x_id = 0) in;   // before the includes (docs/gpu.md pitfalls); 1024 or 512

#include "common.glsl"

layout(constant_id = 1) const uint XK = 4096;   // the largest K of the chain (sizes the shared x)
layout(constant_id = 2) const uint D = 4;       // tiles in flight per producer lane, 1..DMAX
layout(constant_id = 5) const uint ABL = 0;     // timing ablations (results wrong): bit 0 no weight math,
                                                // bit 2 no per-tile barrier
layout(constant_id = 6) const uint WAITALL = 0; // chain_common.glsl grid_wait
layout(constant_id = 7) const uint BAR = 0;     // the per-tile barrier: 0 barrier(); 1 a control barrier that
                                                // orders shared memory only; 2 a control barrier with no
                                                // memory semantics (timing only: shared stores unordered)
const uint XL = 1u;                             // x in unit order (chain_common.glsl)
const uint XBATCH = 1u;

#include "chain_common.glsl"   // Stage, push block, shared x, round_x, grid_wait

const uint NC = gl_WorkGroupSize.x / 2u;   // consumers: invocations 0 .. NC - 1; producers: the rest
const uint TB = NC / 8u;        // Q4_K blocks per tile (one unit per consumer lane)
const uint TV = TB * 9u;        // 16-byte words per tile (144-byte blocks)
const uint DMAX = 6u;
const uint MAXST = 64u;         // stages per dispatch

shared uvec4 wt[2][TV];         // tiles: block b's header at 9b, its unit u's quants at 9b + 1 + u
shared float part[2][NC / 4u];  // a tile's subgroup sums (subgroups of >= 4 lanes)
const uint NFIN = TB / 4u + 2u; // lanes that add rows: a tile touches at most TB / 4 + 2 rows (K >= 1024)
shared float carry[2];          // the sum so far of a row that continues into the next tile
shared uint tstart[MAXST + 1u]; // this workgroup's first tile of each stage, cumulative

// This workgroup's rows of a stage, as blocks: rows [a, a + nb / bpr), bpr
// blocks per row, starting at byte w.
struct slice_t { uint64_t w; uint a, nb, bpr; };

slice_t slice_of(uint s) {
    Stage st = StageBuf(p.stages).s[s];
    uint G = gl_NumWorkGroups.x, w = gl_WorkGroupID.x;
    uint a = uint((uint64_t(st.N) * w) / G), e = uint((uint64_t(st.N) * (w + 1u)) / G);
    slice_t o;
    o.bpr = st.K / 256u;
    o.a = a;
    o.nb = (e - a) * o.bpr;
    o.w = st.w + uint64_t(a) * st.row_bytes;
    return o;
}

// ------------------------------------------------------------ producers

// Producer lane q's part of a tile: words q and q + NC (q < TV - NC).
struct ptile_t { uvec4 a, b; };

ptile_t pload(slice_t sl, uint t, uint q) {
    ptile_t o;
    o.a = uvec4(0u);
    o.b = uvec4(0u);
    uint64_t base = sl.w + uint64_t(t) * uint64_t(TV * 16u);
    uint left = sl.nb * 9u - t * TV;   // words of the slice from this tile on (> 0)
    if (q < left) o.a = U4Buf(base).v[q];
    if (q < TV - NC && q + NC < left) o.b = U4Buf(base).v[q + NC];
    return o;
}

void pstore(uint slot, uint q, ptile_t r) {
    wt[slot][q] = r.a;
    if (q < TV - NC) wt[slot][q + NC] = r.b;
}

// ------------------------------------------------------------ consumers

// Unit c of tile slot (block c / 8, unit c % 8) times x; gb: the block's index in the slice.
float unit_dot(uint slot, uint c, slice_t sl, uint gb) {
    uint bt = c >> 3, u = c & 7u;
    uvec4 h = wt[slot][9u * bt], qw = wt[slot][9u * bt + 1u + u];
    if ((ABL & 1u) != 0u) return float((h.x ^ qw.x ^ qw.w) & 1u);
    uint blk = gb % sl.bpr, j = u >> 1;
    vec2 dm = unpackHalf2x16(h.x);
    uint sh = 16u * (j & 1u);
    uint lo = (h.y >> sh) & 0xffffu, mid = (h.z >> sh) & 0xffffu, hi = (h.w >> sh) & 0xffffu;
    uint scp = j < 2u ? lo & 0x3f3fu : (hi & 0x0f0fu) | ((lo >> 2) & 0x3030u);
    uint mnp = j < 2u ? mid & 0x3f3fu : ((hi >> 4) & 0x0f0fu) | ((mid >> 2) & 0x3030u);
    uint ea = 16u * blk + u;
    ivec2 sums = xs2[8u * blk + u];
    int isum = int(scp & 0xffu) * sudot16(xq[ea], qw & 0x0f0f0f0fu) +
               int(scp >> 8) * (sudot16(xq[ea + 8u], qw & 0xf0f0f0f0u) >> 4);
    int msum = int(mnp & 0xffu) * sums.x + int(mnp >> 8) * sums.y;
    return xd[blk] * (dm.x * float(isum) - dm.y * float(msum));
}

// The rows of tile lt (its partials in part[slot]): consumer lane j adds the
// j-th row the tile touches; a row that began in the previous tile starts
// from carry[slot ^ 1]; one that goes on into the next leaves its sum in
// carry[slot]; a finished row is stored (+ res).
void finish_rows(Stage st, slice_t sl, uint lt, uint slot, uint j) {
    const uint per = gl_SubgroupSize / 8u;   // blocks per subgroup sum
    uint fb = lt * TB, lb = min(fb + TB, sl.nb) - 1u;
    uint r = fb / sl.bpr + j;
    if (r > lb / sl.bpr) return;
    uint b0 = max(r * sl.bpr, fb), b1 = min((r + 1u) * sl.bpr, lb + 1u);
    float sum = r * sl.bpr < fb ? carry[slot ^ 1u] : 0.0;
    for (uint k = (b0 - fb) / per; k < (b1 - fb) / per; k++) sum += part[slot][k];
    if ((r + 1u) * sl.bpr - 1u > lb) {
        carry[slot] = sum;
        return;
    }
    uint row = sl.a + r;
    F32Buf(st.out_).v[row] = sum + (st.epi == 1u ? F32Buf(st.res).v[row] : 0.0);
}

// ------------------------------------------------------------ main

void main() {
    // lanes numbered from the subgroup ids, so a subgroup is whole consumers or producers
    const uint tid = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    const bool prod = tid >= NC;
    const uint q = tid - NC;
    const uint nst = min(p.count, MAXST);
    if (tid == 0u) {
        uint acc = 0u;
        for (uint s = 0u; s < nst; s++) {
            tstart[s] = acc;
            acc += (slice_of(p.first + s).nb + TB - 1u) / TB;
        }
        tstart[nst] = acc;
    }
    barrier();
    const uint total = tstart[nst];

    // producers: the stage of the next tile to load, and its slice
    uint ps = 0u;
    slice_t psl = slice_of(p.first);
    ptile_t r[DMAX];
    if (prod) {
        [[unroll]] for (uint d = 0u; d < DMAX; d++) {
            if (d >= D || d >= total) continue;
            while (d >= tstart[ps + 1u]) psl = slice_of(p.first + ++ps);
            r[d] = pload(psl, d - tstart[ps], q);
        }
    }
    uint cs = 0u;   // consumers' stage
    Stage cst = StageBuf(p.stages).s[p.first];
    slice_t csl = slice_of(p.first);
    round_x(cst.x, cst.K);   // (barriers) while the first tiles stream in
    if (prod && total > 0u) {
        pstore(0u, q, r[0]);
        if (D < total) {
            while (D >= tstart[ps + 1u]) psl = slice_of(p.first + ++ps);
            r[0] = pload(psl, D - tstart[ps], q);
        }
    }
    barrier();

    for (uint i0 = 0u; i0 < total; i0 += D) {
        [[unroll]] for (uint d = 0u; d < DMAX; d++) {
            if (d >= D) continue;
            uint i = i0 + d;
            if (i >= total) break;   // uniform
            uint slot = i & 1u;
            if (!prod) {
                uint lt = i - tstart[cs], gb = lt * TB + (tid >> 3);
                float v = gb < csl.nb ? unit_dot(slot, tid, csl, gb) : 0.0;
                v = subgroupAdd(v);
                if (subgroupElect()) part[slot][gl_SubgroupID] = v;
                if (lt > 0u && tid < NFIN) finish_rows(cst, csl, lt - 1u, slot ^ 1u, tid);
            } else {
                const uint dd = (d + 1u) % D;   // r[dd] holds tile i + 1
                if (i + 1u < total) pstore(slot ^ 1u, q, r[dd]);
                uint nx = i + 1u + D;
                if (nx < total) {
                    while (nx >= tstart[ps + 1u]) psl = slice_of(p.first + ++ps);
                    r[dd] = pload(psl, nx - tstart[ps], q);
                }
            }
            if ((ABL & 4u) != 0u) {
            } else if (BAR == 2u) {
                controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsNone, gl_SemanticsRelaxed);
            } else if (BAR == 1u) {
                controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
            } else {
                barrier();
            }
            if (i + 1u == tstart[cs + 1u]) {   // tile i ends stage cs (uniform)
                if (!prod && tid < NFIN) finish_rows(cst, csl, i - tstart[cs], slot, tid);
                if (cs + 1u < nst) {
                    memoryBarrierBuffer();
                    barrier();
                    if (tid == 0u) atomicAdd(SyncBuf(p.sync).count, 1u);
                    grid_wait((cs + 1u) * gl_NumWorkGroups.x);
                    cs++;
                    cst = StageBuf(p.stages).s[p.first + cs];
                    csl = slice_of(p.first + cs);
                    round_x(cst.x, cst.K);
                }
            }
        }
    }
}
