// decode_chain.comp — experiment for bench/vk_chain.c (not part of the
// library): a chain of dependent Q4_K decode matvecs, out_s = x_s · W_sᵀ
// (+ res_s), where x_s is stage s - 1's output, run as ONE persistent
// dispatch with a grid-wide barrier between stages, or one stage per dispatch
// (p.count = 1) with pipeline barriers between them, for comparison.
//
// The question it answers (bench/RESULTS.md, ninth session): the library's
// decode kernels pay, per dependent stage, the producer's tail, the launch,
// and the consumer's ramp (x rounded by every workgroup, then the first DRAM
// round trip). A persistent kernel with few workgroups (about one per SM)
// can instead issue the next stage's first weight loads before it waits at
// the grid barrier (the weights do not depend on the previous stage), so
// DRAM stays busy through the barrier and the rounding of x. With one
// workgroup per SM, registers are plentiful: each lane keeps the U units of
// its next step in flight while it works on the current one.
//
// Layout: workgroup w owns rows [N w / G, N (w + 1) / G) of every stage;
// subgroup g of it takes rows g, g + NG, ... of that slice; lane l takes units
// l, l + S, ... (S = subgroup size) of a row; a unit is 32 weights: 16 bytes of
// a Q4_K block's qs (low nibbles: 16 positions of sub-block 2j, high nibbles
// the same positions of sub-block 2j + 1) plus the block's 16-byte header;
// or (Q8) a whole Q8_0 block of a planar row ([K quants][K/32 f16 scales],
// the library's device layout): 32 quant bytes and the block's scale.
// x is rounded to 8 bits per 256-block as the library's i8 matvec rounds it
// (d = absmax / 127, q = round-half-even(x / d)).
//
// Grid barrier: every workgroup adds 1 to p.sync's counter after its stores
// and a buffer memory barrier; before stage s + 1 subgroup 0 (WAITALL: every
// invocation) polls until the counter reaches (s + 1 - first) * G, and x is
// then read through `coherent` references (the producers' lines may be stale
// in this SM's L1). All G workgroups must be resident at once, which the host
// arranges (G <= SMs); a spin past p.spin_limit polls sets p.sync's error word
// and gives up instead of hanging (the results are then invalid and the host
// says so). Measured: bench/RESULTS.md, "ninth session" (18–26% per layer
// over per-stage dispatches; the weight math and the boundaries are what
// remain between it and the loads' own 3.5 TB/s).
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
layout(constant_id = 2) const uint U = 4;       // units per lane per step (their loads issue together), 1..UMAX
layout(constant_id = 3) const uint PF = 1;      // 1: the next stage's first step is loaded before the grid wait
layout(constant_id = 4) const uint HN = 1;      // 1: high nibbles dotted in place (unsigned x signed dot, >> 4)
layout(constant_id = 5) const uint ABL = 0;     // timing ablations (results wrong): bit 0 no weight math,
                                                // bit 1 no x rounding, bit 2 no grid wait
layout(constant_id = 6) const uint WAITALL = 0; // 1: every invocation polls the grid counter (grid_wait)
layout(constant_id = 7) const uint XL = 1;      // x layout: 0 position order, 1 unit order (the i8 matvec's: a block's
                                                // 8 lanes read 8 adjacent entries, no shared-memory bank conflicts)
layout(constant_id = 8) const uint XBATCH = 1;  // x chunks per invocation whose loads issue together while rounding, 1..4
layout(constant_id = 9) const uint XIM = 0;     // 1 (XL 1): x handed on as a rounded image (image_rows_done below)
layout(constant_id = 10) const uint FLOW = 0;   // 1: one stage per dispatch, no pipeline barriers: the stage's
                                                // first weights are loaded, then it waits on the counter for the
                                                // earlier dispatches' workgroups
layout(constant_id = 11) const uint ALT = 0;    // no effect: a second pipeline of the same code (vk_chain --alt)
layout(constant_id = 12) const uint Q8 = 0;     // 1: Q8_0 weights in planar rows (x in position order, XL 0)

#include "chain_common.glsl"   // Stage, push block, shared x, round_x, grid_wait

// ------------------------------------------------------------ weight steps

// A step: U units of one row (units r0, r0 + S, ...; clamped to the row).
const uint UMAX = 4u;   // step arrays have a constant size (a struct with spec-sized arrays cannot be copied)
struct step_t { uvec4 q[UMAX]; uvec4 h[UMAX]; float d[UMAX]; };   // Q8: q, h the block's two halves, d its scale

step_t load_step(uint64_t row, uint r0, uint units) {
    step_t o;
    [[unroll]] for (uint u = 0u; u < UMAX; u++) {
        o.d[u] = 0.0;
        if (u >= U) { o.h[u] = uvec4(0u); o.q[u] = uvec4(0u); continue; }
        uint r = min(r0 + u * gl_SubgroupSize, units - 1u);
        if (Q8 != 0u) {   // quants at 32 r, the scale at byte 32 units + 2 r
            o.q[u] = U4Buf(row).v[2u * r];
            o.h[u] = U4Buf(row).v[2u * r + 1u];
            o.d[u] = unpackHalf2x16(uint(U16Buf(row).v[16u * units + r])).x;
            continue;
        }
        uint64_t blk = row + uint64_t(144u * (r >> 3));
        o.h[u] = U4Buf(blk).v[0];
        o.q[u] = U4Buf(blk).v[1u + (r & 7u)];
    }
    return o;
}

float step_dot(step_t st, uint r0, uint units) {
    float acc = 0.0;
    if ((ABL & 1u) != 0u) {   // keep the loads, drop the math
        uint k = 0u;
        [[unroll]] for (uint u = 0u; u < UMAX; u++) k ^= st.q[u].x ^ st.q[u].w ^ st.h[u].x;
        return float(k & 1u);
    }
    [[unroll]] for (uint u = 0u; u < UMAX; u++) {
        if (u >= U) continue;
        uint r = r0 + u * gl_SubgroupSize;
        if (Q8 != 0u) {   // x in position order: the block's 32 quants are entries 2r, 2r + 1
            float v = xd[r >> 3] * st.d[u] * float(sdot16(st.q[u], xq[2u * r]) + sdot16(st.h[u], xq[2u * r + 1u]));
            acc += r < units ? v : 0.0;
            continue;
        }
        uvec4 h = st.h[u], qw = st.q[u];
        uint b = r >> 3, j = (r >> 1) & 3u, hf = r & 1u;
        vec2 dm = unpackHalf2x16(h.x);
        uint sh = 16u * (j & 1u);
        uint lo = (h.y >> sh) & 0xffffu, mid = (h.z >> sh) & 0xffffu, hi = (h.w >> sh) & 0xffffu;
        uint scp = j < 2u ? lo & 0x3f3fu : (hi & 0x0f0fu) | ((lo >> 2) & 0x3030u);
        uint mnp = j < 2u ? mid & 0x3f3fu : ((hi >> 4) & 0x0f0fu) | ((mid >> 2) & 0x3030u);
        uint ea = XL != 0u ? 16u * b + (r & 7u) : 16u * b + 4u * j + hf, eb = XL != 0u ? ea + 8u : ea + 2u;
        ivec2 sums = XL != 0u ? xs2[8u * b + (r & 7u)] : ivec2(xs[ea], xs[eb]);
        int isum;
        if (HN != 0u)   // the high nibbles stay in place: 16 times the dot, exactly
            isum = int(scp & 0xffu) * sudot16(xq[ea], qw & 0x0f0f0f0fu) + int(scp >> 8) * (sudot16(xq[eb], qw & 0xf0f0f0f0u) >> 4);
        else
            isum = int(scp & 0xffu) * sdot16(qw & 0x0f0f0f0fu, xq[ea]) + int(scp >> 8) * sdot16((qw >> 4) & 0x0f0f0f0fu, xq[eb]);
        int msum = int(mnp & 0xffu) * sums.x + int(mnp >> 8) * sums.y;
        float v = xd[b] * (dm.x * float(isum) - dm.y * float(msum));
        acc += r < units ? v : 0.0;
    }
    return acc;
}

// ------------------------------------------------------------ x images (XIM)

// The library's x image (src/vulkan/shaders/x_image.glsl) inside the
// persistent kernel: the grid barrier becomes "every block of the previous
// output rounded". After its rows of a stage, a workgroup adds its row count
// to each 256-block it touched; the one completing a block rounds it into
// the stage's image slot (xq, xs2, xd as they sit in shared memory, at 0,
// p.xim_xs and p.xim_xd) and adds
// 1 to p.sync's done. The next stage waits on done instead of the workgroup
// count and copies the image instead of rounding x. Stage s writes slot s & 1.
layout(buffer_reference, std430, buffer_reference_align = 16) coherent buffer CohU4 { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) coherent buffer CohI2 { ivec2 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer CohF { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer CohU { uint v[]; };

shared uint cx_flag, cx_ab;
shared int cx_sum[32];

uint64_t image_slot(uint s) { return p.xim + uint64_t((s & 1u) * p.xim_slot); }

// Block b of stage st's output (rows 256 b..) rounded into slot `img`, by
// the first 32 invocations (shared-memory reductions: any subgroup size).
void round_block(Stage st, uint64_t img, uint b) {
    const uint tid = gl_LocalInvocationIndex;
    if (tid == 0u) cx_ab = 0u;
    barrier();
    vec4 a = vec4(0.0), c = vec4(0.0);
    if (tid < 32u) {
        uint e4 = (256u * b + 8u * tid) >> 2;
        a = CohV4(st.out_).v[e4];
        c = CohV4(st.out_).v[e4 + 1u];
        atomicMax(cx_ab, absmax_bits(a, c));
    }
    barrier();
    uint ab = cx_ab;
    uvec2 q = uvec2(round4(a, inv_scale(ab)), round4(c, inv_scale(ab)));
    if (tid < 32u) cx_sum[tid] = sdot4_acc(q.y, 0x01010101u, sdot4(q.x, 0x01010101u, 0), 0);
    barrier();
    if (tid < 32u) {   // chunk tid of block b, where store_chunk's XL 1 layout puts it
        uint e, half_, s, si;
        chunk_slot(true, 32u * b + tid, e, half_, s, si);
        CohU(img).v[4u * e + 2u * half_] = q.x;
        CohU(img).v[4u * e + 2u * half_ + 1u] = q.y;
        if (half_ == 0u) CohU(img + uint64_t(p.xim_xs)).v[2u * s + si] = uint(cx_sum[tid] + cx_sum[tid ^ 1u]);
        if (tid == 0u) CohF(img + uint64_t(p.xim_xd)).v[b] = block_scale(ab);
    }
    barrier();
}

// After this workgroup's rows [a, e) of stage s are stored (uniform).
void image_rows_done(uint s, Stage st, uint a, uint e) {
    const uint64_t cnt = p.xim + uint64_t(2u * p.xim_slot);
    memoryBarrierBuffer();
    barrier();
    if (e <= a) return;   // workgroup-uniform: no rows here
    for (uint b = a / 256u; b * 256u < e; b++) {
        uint lo = max(a, 256u * b), hi = min(e, 256u * b + 256u);
        if (gl_LocalInvocationIndex == 0u) {
            uint got = atomicAdd(CohU(cnt).v[b], hi - lo) + (hi - lo);
            cx_flag = got == 256u ? 1u : 0u;
            if (got == 256u) atomicExchange(CohU(cnt).v[b], 0u);
        }
        barrier();
        uint last = cx_flag;
        barrier();
        if (last == 0u) continue;
        memoryBarrierBuffer();
        round_block(st, image_slot(s), b);
        memoryBarrierBuffer();
        barrier();
        if (gl_LocalInvocationIndex == 0u) atomicAdd(SyncBuf(p.sync).done, 1u);
    }
}

// x of a stage from the previous stage's image (K values).
void load_image(uint64_t img, uint K) {
    const uint tid = gl_LocalInvocationIndex, nt = gl_WorkGroupSize.x;
    for (uint i = tid; i < K / 16u; i += nt) xq[i] = CohU4(img).v[i];
    for (uint i = tid; i < K / 32u; i += nt) xs2[i] = CohI2(img + uint64_t(p.xim_xs)).v[i];
    for (uint i = tid; i < K / 256u; i += nt) xd[i] = CohF(img + uint64_t(p.xim_xd)).v[i];
    barrier();
}

// Blocks rounded by the end of stage s - 1 (stages p.first .. s - 1).
uint blocks_before(uint s) {
    uint n = 0u;
    for (uint t = p.first; t < s; t++) n += StageBuf(p.stages).s[t].N / 256u;
    return n;
}

// ------------------------------------------------------------ stages

// A subgroup's work in one stage: items (row k, step i) in order, k < rows.
struct ctx_t { uint64_t w; uint row_bytes, lo, units, steps, items; };

// This subgroup's rows of a stage: lo + g + k * NG for k < n, inside
// workgroup w's slice [N w / G, N (w + 1) / G).
ctx_t make_ctx(uint s) {
    Stage st = StageBuf(p.stages).s[s];
    uint G = gl_NumWorkGroups.x, w = gl_WorkGroupID.x, NG = gl_NumSubgroups;
    uint a = uint((uint64_t(st.N) * w) / G), e = uint((uint64_t(st.N) * (w + 1u)) / G);
    ctx_t c;
    c.w = st.w;
    c.row_bytes = st.row_bytes;
    c.lo = a + gl_SubgroupID;
    c.units = st.K / 32u;
    c.steps = (c.units + U * gl_SubgroupSize - 1u) / (U * gl_SubgroupSize);
    uint rows = c.lo < e ? (e - c.lo + NG - 1u) / NG : 0u;
    c.items = rows * c.steps;
    return c;
}

step_t load_item(ctx_t c, uint j) {
    uint k = j / c.steps, i = j - k * c.steps;
    return load_step(c.w + uint64_t(c.lo + k * gl_NumSubgroups) * c.row_bytes,
                     gl_SubgroupInvocationID + i * U * gl_SubgroupSize, c.units);
}

// Each lane keeps one step in flight ahead of the one it works on (cur /
// nxt). In a stage's last item the next step is the next stage's first (PF),
// so those loads are in flight through the signal, the grid wait and the
// rounding of x, in the same registers.
void main() {
    const uint S = gl_SubgroupSize, lane = gl_SubgroupInvocationID, NG = gl_NumSubgroups;
    step_t cur;
    bool have = false;   // cur holds this stage's first step (prefetched)
    ctx_t c = make_ctx(p.first);
    if (FLOW != 0u && p.first > 0u) {   // flow: wait for every workgroup of the earlier dispatches
        if (PF != 0u && c.items > 0u) {   // this stage's first weights are in flight through the wait
            cur = load_item(c, 0u);
            have = true;
        }
        if ((ABL & 4u) == 0u) grid_wait(p.first * gl_NumWorkGroups.x, false);
    }
    const uint end = FLOW != 0u ? p.first + 1u : p.first + p.count;
    for (uint s = p.first; s < end; s++) {
        Stage st = StageBuf(p.stages).s[s];
        bool last_stage = FLOW != 0u || s + 1u == end;
        bool from_image = XIM != 0u && s > p.first;
        if (s > p.first && (ABL & 4u) == 0u)
            grid_wait(from_image ? blocks_before(s) : (s - p.first) * gl_NumWorkGroups.x, from_image);
        if (!have && c.items > 0u) cur = load_item(c, 0u);
        if (from_image) load_image(image_slot(s - 1u), st.K);
        else if ((ABL & 2u) == 0u) round_x(st.x, st.K);
        else barrier();

        ctx_t nc = last_stage ? c : make_ctx(s + 1u);
        bool pf_next = PF != 0u && !last_stage && nc.items > 0u;
        uint n = c.items;
        float acc = 0.0;
        for (uint it = 0u; it < n; it++) {
            step_t nxt;
            if (it + 1u < n) nxt = load_item(c, it + 1u);
            else if (pf_next) nxt = load_item(nc, 0u);
            uint k = it / c.steps, i = it - k * c.steps;
            acc += step_dot(cur, lane + i * U * S, c.units);
            if (i == c.steps - 1u) {
                acc = subgroupAdd(acc);
                if (lane == 0u) {
                    uint row = c.lo + k * NG;
                    float y = acc + (st.epi == 1u ? F32Buf(st.res).v[row] : 0.0);
                    if (XIM != 0u) CohF(st.out_).v[row] = y;   // another workgroup may round its block
                    else F32Buf(st.out_).v[row] = y;
                }
                acc = 0.0;
            }
            cur = nxt;
        }
        have = pf_next && n > 0u;   // a subgroup with no rows here prefetched nothing
        if (!last_stage && XIM != 0u) {   // signal: the blocks this workgroup completed are rounded
            uint G = gl_NumWorkGroups.x, w = gl_WorkGroupID.x;
            image_rows_done(s, st, uint((uint64_t(st.N) * w) / G), uint((uint64_t(st.N) * (w + 1u)) / G));
        } else if (!last_stage || FLOW != 0u) {   // signal: this workgroup's rows of stage s are stored
            memoryBarrierBuffer();
            barrier();
            if (gl_LocalInvocationIndex == 0u) atomicAdd(SyncBuf(p.sync).count, 1u);
        }
        c = nc;
    }
}
