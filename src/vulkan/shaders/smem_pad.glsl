// smem_pad.glsl — shared memory that only raises a workgroup's allocation
// (RLX_VK_SMEM_FLOOR, docs/gpu.md; an experiment, off by default).
//
// Why: in bench/vk_chain, per-stage dispatches at 4 workgroups per SM took
// 49 us per 1B layer instead of 43 when every other stage's kernel asked for
// 2x or 4x the shared memory of the one before (bench/RESULTS.md, fifteenth
// session); the runtime's decode kernels ask for 2-24 KB. With a floor, the
// i8 and run matvecs and the attention all ask for about the same.
//
// The including shader defines SMEM_PAD_ID (a free constant_id) first and
// calls smem_pad_keep with a workgroup-uniform condition that is false at run
// time but unknown to the compiler, so the array is not removed.
layout(constant_id = SMEM_PAD_ID) const uint SMEM_PAD = 0u;   // 32-bit words

shared uint smem_pad[SMEM_PAD > 0u ? SMEM_PAD : 1u];

void smem_pad_keep(bool never, uint64_t sink) {
    if (SMEM_PAD == 0u || !never) return;
    smem_pad[gl_LocalInvocationIndex % SMEM_PAD] = gl_LocalInvocationIndex;
    barrier();
    U32Buf(sink).v[gl_LocalInvocationIndex] = smem_pad[(gl_LocalInvocationIndex + 1u) % SMEM_PAD];
}
