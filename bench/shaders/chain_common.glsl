// chain_common.glsl — the decode-chain experiment's (bench/vk_chain.c,
// bench/shaders/decode_chain.comp) stage-level pieces:
// the stage table and push block, x rounded to 8 bits per 256-block in
// shared memory (the library's i8 matvec rounding, in its unit order when
// XL is 1), and the grid barrier's wait.
//
// The including shader declares first: common.glsl, the subgroup basic,
// shuffle and ballot extensions, GL_EXT_spirv_intrinsics, and the spec
// constants XK (largest K), XL, XBATCH and WAITALL.

struct Stage { uint64_t x, w, out_, res; uint N, K, row_bytes, epi; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer StageBuf { Stage s[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer U4Buf { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) coherent buffer CohV4 { vec4 v[]; };
// count: workgroups done with a stage; err: a wait gave up; done (XIM):
// 256-blocks of stage outputs rounded into their images
layout(buffer_reference, std430, buffer_reference_align = 4) buffer SyncBuf { uint count; uint err; uint done; };

layout(push_constant, std430) uniform Push {
    uint64_t stages, sync;
    uint64_t xim;          // XIM: two image slots of p.xim_slot bytes, then the block counters
    uint first, count;     // stages [first, first + count)
    uint spin_limit, xim_slot;
    uint xim_xs, xim_xd;   // XIM: byte offsets of an image's sums and scales (after the largest output's quants)
} p;

shared uvec4 xq[XK / 16u];    // x quants, 16 per entry (XL 0: position order; 1: unit order, store_chunk)
shared int xs[XL == 0u ? XK / 16u : 1u];    // XL 0: the sum of each entry's 16 quants (the Q4_K min term)
shared ivec2 xs2[XL == 0u ? 1u : XK / 32u]; // XL 1: unit u of block b's two sums at 8b + u
shared float xd[XK / 256u];   // block scales
shared uint xa[XK / 256u];    // block absmax bits (two-pass rounding, subgroups < 32)

#include "int8_dot.glsl"   // sdot16, sudot16, absmax_bits, inv_scale, block_scale, round4
#include "x_image.glsl"    // chunk_slot (the rest of it is the library's, under RLX_XIMAGE)

// ------------------------------------------------------------ x rounding

// Chunk c (8 values) rounded with 1 / scale id, and the sum of its 16-position
// entry (chunks c and c ^ 1 sit in adjacent lanes). XL 0: half c & 1 of entry
// c >> 1. XL 1: the library's Q4_K order (x_image.glsl, chunk_slot): xq entry
// e, half half_, sum xs2[s][si].
void store_chunk(uint c, vec4 a, vec4 b, float id) {
    uvec2 q = uvec2(round4(a, id), round4(b, id));
    int sum = sdot4_acc(q.y, 0x01010101u, sdot4(q.x, 0x01010101u, 0), 0);
    sum += subgroupShuffleXor(sum, 1u);
    uint e = c >> 1, half_ = c & 1u;
    if (XL != 0u) {
        uint s, si;
        chunk_slot(true, c, e, half_, s, si);
        if (half_ == 0u) xs2[s][si] = sum;
    } else if (half_ == 0u) {
        xs[e] = sum;
    }
    if (half_ == 0u) xq[e].xy = q;
    else xq[e].zw = q;
}

void round_x(uint64_t x, uint K) {
    const uint nt = gl_WorkGroupSize.x;
    const uint i0 = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    const uint n8 = K / 8u;
    const bool one_pass = gl_SubgroupSize >= 32u;
    if (!one_pass) {
        for (uint b = i0; b < K / 256u; b += nt) xa[b] = 0u;
        barrier();
    }
    // n8 % 32 == 0 and nt % 32 == 0: a 32-lane cluster is all in or all out
    for (uint c0 = i0; c0 < n8; c0 += XBATCH * nt) {
        vec4 av[4], bv[4];
        [[unroll]] for (uint t = 0u; t < 4u; t++) {   // every load first (one L2 round trip, not XBATCH)
            uint c = c0 + t * nt;
            if (t < XBATCH && c < n8) {
                av[t] = CohV4(x).v[2u * c];
                bv[t] = CohV4(x).v[2u * c + 1u];
            }
        }
        [[unroll]] for (uint t = 0u; t < 4u; t++) {
            uint c = c0 + t * nt;
            if (t >= XBATCH || c >= n8) continue;
            uint ab = absmax_bits(av[t], bv[t]);
            if (one_pass) {   // the cluster of 32 lanes holds the whole 256-block
                [[unroll]] for (uint s = 1u; s < 32u; s <<= 1) ab = max(ab, subgroupShuffleXor(ab, s));
                store_chunk(c, av[t], bv[t], inv_scale(ab));
                if ((c & 31u) == 0u) xd[c >> 5] = block_scale(ab);
            } else {
                atomicMax(xa[c >> 5], ab);
            }
        }
    }
    if (!one_pass) {
        barrier();
        for (uint c = i0; c < n8; c += nt) {
            vec4 a = CohV4(x).v[2u * c], b = CohV4(x).v[2u * c + 1u];
            store_chunk(c, a, b, inv_scale(xa[c >> 5]));
        }
        for (uint b = i0; b < K / 256u; b += nt)
            xd[b] = block_scale(xa[b]);
    }
    barrier();
}

// WAITALL 0: subgroup 0 polls (its elected lane reads, the subgroup follows
// in uniform control flow); WAITALL 1: every invocation polls on its own (on
// the H200 slower). Then a workgroup barrier. On lavapipe a chain of two
// workgroups went wrong now and then with either (bench/RESULTS.md, ninth
// session), so the tests run it on one.
uint sync_read(bool blocks) {
    return blocks ? atomicAdd(SyncBuf(p.sync).done, 0u) : atomicAdd(SyncBuf(p.sync).count, 0u);
}

// Waits until the workgroup counter (blocks: the rounded-block counter)
// reaches target.
void grid_wait(uint target, bool blocks) {
    uint polls = 0u;
    if (WAITALL != 0u) {
        while (sync_read(blocks) < target) {
            if (++polls > p.spin_limit) {
                atomicOr(SyncBuf(p.sync).err, 1u);
                break;
            }
        }
    } else if (gl_SubgroupID == 0u) {
        for (;;) {
            uint seen = 0u;
            if (subgroupElect()) seen = sync_read(blocks);
            if (subgroupBroadcastFirst(seen) >= target) break;
            if (++polls > p.spin_limit) {
                if (subgroupElect()) atomicOr(SyncBuf(p.sync).err, 1u);
                break;
            }
        }
    }
    barrier();
}

