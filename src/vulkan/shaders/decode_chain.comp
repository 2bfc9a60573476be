// decode_chain.comp — the persistent decode chain (vk_chain.c): a run of
// dependent Q8_0 decode matvecs, out_s = x_s · W_sᵀ with its epilogue, as ONE
// dispatch whose workgroups (one wave: one per SM, all resident) meet at a
// grid barrier where the per-dispatch path had a pipeline barrier.
//
// Why this shape and not the per-dispatch kernels' (docs/gpu.md, "Where the
// next gain is"): those hide memory latency with many resident lanes, one
// 16-byte unit in flight each, which a grid that must stay resident cannot
// have. Here a workgroup is wide (WG lanes, one per SM) and each lane keeps
// U units of its next step in flight while it computes the current one; in a
// stage's last item the next step is the next stage's first, so those loads
// are in flight through the signal, the grid wait and the rounding of x.
// (bench/shaders/decode_chain.comp measured the pattern: ~10 µs saved per 8B
// Q8_0 layer of four stages.)
//
// A stage (Stage below, vk_chain_stage on the host): x [K] f32, Q8_0 rows
// planar ([K quants][K/32 f16 scales], planar.glsl); epi 0 store, 1 + res,
// 2 SwiGLU (y = silu(x · w_r) * (x · w2_r)); gamma != 0: x is RMS-normalized
// first with weights gamma (the folded norm of dequant_matvec_i8.comp: the
// quants are made from x * gamma, 1 / rms only multiplies the block scales).
// x is rounded to 8 bits per 32-block as the i8 kernel rounds Q8_0's x
// (d = absmax / 127, q = round-half-even(x / d)); a non-finite block makes
// the stage's outputs NaN (the i8 kernel's rule).
//
// Layout: workgroup w owns rows [N w / G, N (w + 1) / G); subgroup g of it
// rows lo + g, lo + g + NG, ...; lane l units l, l + S, ... of a row (a unit:
// one Q8_0 block, 32 quants and its scale; SwiGLU: U / 2 units of the gate
// row and the same of the up row a step).
//
// Grid barrier: after a stage whose successor waits (Stage.wait), each
// workgroup makes its stores visible and adds 1 to the counter; subgroup 0
// polls until it reaches (waits so far) * G, and x and res are read through
// `coherent` references (this SM's L1 may hold stale lines). A wait that
// spins past pc.spin_limit polls stores pc.code in the status word (the
// host fails the run with a message) and gives up instead of hanging. The
// last workgroup out zeroes the counters for the next run.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_ballot : require

layout(local_size_x_id = 0) in;   // before the includes (docs/gpu.md pitfalls)

#include "common.glsl"

layout(constant_id = 1) const uint XK = 4096;   // the largest K of the chain (sizes the shared x)
layout(constant_id = 2) const uint U = 4;       // units per lane per step (their loads issue together), 2 or 4
layout(constant_id = 3) const uint ABL = 0;     // timing ablations (RLX_VK_CHAIN_ABL; results wrong): bit 0 no x
                                                // rounding, bit 1 no grid waits, bit 2 no weight math, bit 3 no
                                                // norm, bit 4 no x rounding where K > 4096

struct Stage {
    uint64_t x, w, w2, res, out_, gamma;
    uint N, K, row_bytes, epi;
    uint eps_bits, wait, pad0, pad1;
};
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer StageBuf { Stage s[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer ChainSync { uint count; uint done; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer U4Buf { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) coherent buffer CohV4 { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer CohF { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer GamV4 { vec4 v[]; };

layout(push_constant, std430) uniform Push {
    uint64_t stages, sync, status;
    uint first, count;   // stages [first, first + count) of the table
    uint spin_limit, code;
} pc;

shared uvec4 xq[XK / 16u];   // x quants in position order, 16 an entry
shared float xd[XK / 32u];   // 32-block scales (times 1 / rms with a norm)
shared float red[256];       // per-subgroup partial sums of the norm's statistic (WG / subgroup size <= 128)
shared uint xbad;            // a block of x is not finite

#include "int8_dot.glsl"   // sdot16, absmax_bits, inv_scale, block_scale, round4
#include "sumsq.glsl"      // sumsq8, inv_rms

// ------------------------------------------------------------ x rounding

// x of stage st (K values, times gamma with a norm) rounded into xq / xd.
// Invocation i takes 8-value chunks i, i + WG, ...; a 32-block is 4 chunks in
// a cluster of 4 lanes (numbered from the subgroup ids).
void round_x(Stage st) {
    const uint nt = gl_WorkGroupSize.x, i0 = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    const uint n8 = st.K / 8u;
    const bool norm = st.gamma != 0ul && (ABL & 8u) == 0u;
    if (gl_LocalInvocationIndex == 0u) xbad = 0u;
    barrier();
    vec2 ss = vec2(0.0);
    for (uint c = i0; c < n8; c += nt) {   // n8 % 4 == 0: a cluster is all in or all out
        vec4 a = CohV4(st.x).v[2u * c], b = CohV4(st.x).v[2u * c + 1u];
        if (norm) {
            ss += sumsq8(a, b);
            a *= GamV4(st.gamma).v[2u * c];
            b *= GamV4(st.gamma).v[2u * c + 1u];
        }
        uint ab = absmax_bits(a, b);
        ab = max(ab, subgroupShuffleXor(ab, 1u));
        ab = max(ab, subgroupShuffleXor(ab, 2u));
        float id = inv_scale(ab);
        uvec2 q = uvec2(round4(a, id), round4(b, id));
        if ((c & 1u) == 0u) xq[c >> 1].xy = q;
        else xq[c >> 1].zw = q;
        if ((c & 3u) == 0u) xd[c >> 2] = block_scale(ab);
        if (ab >= 0x7f800000u) xbad = 1u;
    }
    if (norm) {   // 1 / rms of x into every block scale
        ss = subgroupAdd(ss);
        if (gl_SubgroupInvocationID == 0u) {
            red[2u * gl_SubgroupID] = ss.x;
            red[2u * gl_SubgroupID + 1u] = ss.y;
        }
        barrier();
        vec2 tot = vec2(0.0);
        for (uint k = 0u; k < gl_NumSubgroups; k++) tot += vec2(red[2u * k], red[2u * k + 1u]);
        float inv = inv_rms(tot, float(st.K), uintBitsToFloat(st.eps_bits));
        barrier();   // every xd store above is done
        for (uint b = i0; b < st.K / 32u; b += nt) xd[b] *= inv;
    }
    barrier();
}

// ------------------------------------------------------------ weight steps

// A step: U units (SwiGLU: U / 2 of the gate row, then as many of the up row).
struct step_t { uvec4 lo[4]; uvec4 hi[4]; float d[4]; };

// Unit r of the planar Q8_0 row at `row` (K weights) into slot u.
void load_unit(inout step_t st, uint u, uint64_t row, uint r, uint K) {
    st.lo[u] = U4Buf(row).v[2u * r];
    st.hi[u] = U4Buf(row).v[2u * r + 1u];
    st.d[u] = unpackHalf2x16(uint(U16Buf(row).v[(K >> 1) + r])).x;
}

// What a subgroup does in a stage: rows lo + k NG for k < rows; `items`
// steps of units (`steps` a row).
struct ctx_t { uint s, lo, rows, steps, items, units, per_row; };

ctx_t make_ctx(uint s) {
    Stage st = StageBuf(pc.stages).s[s];
    uint G = gl_NumWorkGroups.x, w = gl_WorkGroupID.x, NG = gl_NumSubgroups;
    uint a = uint((uint64_t(st.N) * w) / G), e = uint((uint64_t(st.N) * (w + 1u)) / G);
    ctx_t c;
    c.s = s;
    c.lo = a + gl_SubgroupID;
    c.units = st.K / 32u;
    c.per_row = st.epi == 2u ? U / 2u : U;   // units of one weight row a step
    c.steps = (c.units + c.per_row * gl_SubgroupSize - 1u) / (c.per_row * gl_SubgroupSize);
    c.rows = c.lo < e ? (e - c.lo + NG - 1u) / NG : 0u;
    c.items = c.rows * c.steps;
    return c;
}

// Item j of c: row k = j / steps, step i; units clamped to the row (the dot
// leaves the clamped ones out).
step_t load_item(ctx_t c, uint j) {
    Stage st = StageBuf(pc.stages).s[c.s];
    uint k = j / c.steps, i = j - k * c.steps;
    uint row = c.lo + k * gl_NumSubgroups;
    uint r0 = gl_SubgroupInvocationID + i * c.per_row * gl_SubgroupSize;
    step_t o;
    [[unroll]] for (uint u = 0u; u < 4u; u++) {
        o.lo[u] = uvec4(0u);
        o.hi[u] = uvec4(0u);
        o.d[u] = 0.0;
        if (u >= U) continue;
        bool up = st.epi == 2u && u >= U / 2u;
        uint r = min(r0 + (up ? u - U / 2u : u) * gl_SubgroupSize, c.units - 1u);
        load_unit(o, u, (up ? st.w2 : st.w) + uint64_t(row) * st.row_bytes, r, st.K);
    }
    return o;
}

// The step's dot with x: (gate or plain, up).
vec2 step_dot(step_t stp, ctx_t c, uint i) {
    uint r0 = gl_SubgroupInvocationID + i * c.per_row * gl_SubgroupSize;
    vec2 acc = vec2(0.0);
    [[unroll]] for (uint u = 0u; u < 4u; u++) {
        if (u >= U) continue;
        bool up = c.per_row != U && u >= U / 2u;
        uint r = r0 + (up ? u - U / 2u : u) * gl_SubgroupSize;
        uint rc = min(r, c.units - 1u);
        float v = xd[rc] * stp.d[u] * float(sdot16(stp.lo[u], xq[2u * rc]) + sdot16(stp.hi[u], xq[2u * rc + 1u]));
        v = r < c.units ? v : 0.0;
        if (up) acc.y += v;
        else acc.x += v;
    }
    return acc;
}

// ------------------------------------------------------------ grid barrier

void grid_wait(uint target) {
    memoryBarrierBuffer();
    barrier();
    if (gl_LocalInvocationIndex == 0u) atomicAdd(ChainSync(pc.sync).count, 1u);
    if (gl_SubgroupID == 0u) {
        uint polls = 0u;
        for (;;) {
            uint seen = 0u;
            if (subgroupElect()) seen = atomicAdd(ChainSync(pc.sync).count, 0u);
            if (subgroupBroadcastFirst(seen) >= target) break;
            if (++polls > pc.spin_limit) {
                if (subgroupElect()) U32Buf(pc.status).v[0] = pc.code;
                break;
            }
        }
    }
    barrier();
    memoryBarrierBuffer();
}

// Item `it` of stage st (context c) with its step: the dot into acc, and at
// a row's last step the row's output.
void consume(step_t cur, ctx_t c, Stage st, uint it, inout vec2 acc) {
    uint k = it / c.steps, i = it - k * c.steps;
    if ((ABL & 4u) == 0u) acc += step_dot(cur, c, i);
    else {   // every loaded word kept alive, cheaply
        uvec4 k4 = uvec4(0u);
        float kd = 0.0;
        [[unroll]] for (uint u = 0u; u < 4u; u++) if (u < U) { k4 ^= cur.lo[u] ^ cur.hi[u]; kd += cur.d[u]; }
        acc.x += uintBitsToFloat(k4.x ^ k4.y ^ k4.z ^ k4.w) + kd;
    }
    if (i == c.steps - 1u) {
        acc = subgroupAdd(acc);
        if (gl_SubgroupInvocationID == 0u) {
            uint row = c.lo + k * gl_NumSubgroups;
            float y = acc.x;
            if (st.epi == 1u) y += CohF(st.res).v[row];
            if (st.epi == 2u) y = y / (1.0 + exp(-y)) * acc.y;
            F32Buf(st.out_).v[row] = xbad != 0u ? uintBitsToFloat(0x7fc00000u) : y;
        }
        acc = vec2(0.0);
    }
}

bool do_round(Stage st) {
    return (ABL & 1u) == 0u && ((ABL & 16u) == 0u || st.K <= 4096u);
}

// ------------------------------------------------------------ main

void main() {
    const uint nwg = gl_NumWorkGroups.x, end = pc.first + pc.count;
    uint waits = 0u;
    step_t cur;
    bool have = false;   // cur holds this stage's first step (prefetched)
    ctx_t c = make_ctx(pc.first);
    for (uint s = pc.first; s < end; s++) {
        Stage st = StageBuf(pc.stages).s[s];
        if (s > pc.first) {
            if (st.wait != 0u && (ABL & 2u) == 0u) grid_wait(++waits * nwg);
            else barrier();   // the shared x of the stage before is still being read
        }
        if (!have && c.items > 0u) cur = load_item(c, 0u);
        if (do_round(st)) round_x(st);
        bool last = s + 1u == end;
        ctx_t nc = last ? c : make_ctx(s + 1u);
        bool pf = !last && nc.items > 0u;
        vec2 acc = vec2(0.0);
        for (uint it = 0u; it < c.items; it++) {
            step_t nxt;
            if (it + 1u < c.items) nxt = load_item(c, it + 1u);
            else if (pf) nxt = load_item(nc, 0u);   // the next stage's first weights, through the wait
            consume(cur, c, st, it, acc);
            cur = nxt;
        }
        have = pf && c.items > 0u;   // a subgroup with no rows here prefetched nothing
        c = nc;
    }
    barrier();
    if (gl_LocalInvocationIndex == 0u && atomicAdd(ChainSync(pc.sync).done, 1u) == nwg - 1u) {
        atomicExchange(ChainSync(pc.sync).count, 0u);
        atomicExchange(ChainSync(pc.sync).done, 0u);
    }
}
