// stage_sync.glsl — overlapped dependent stages (vk_program.c, "Overlapped
// stages"): the shaders that take part are also built with -DSTAGE_SYNC
// (<name>_sync.spv). In that variant a dispatch may
//   wait:   before reading anything an earlier stage wrote, invocation 0
//           spins until that stage's counter reaches its workgroup count;
//   signal: after its last store, each workgroup adds 1 to its stage's
//           counter (every invocation's stores fenced first).
// so a stage's dispatch is recorded without a pipeline barrier in front of
// it: its workgroups launch while the previous stage drains, and start
// their work the moment the last producer workgroup is done.
//
// Counters are 32-bit words of a per-device buffer (its address in spec
// constants SYNC_ID0 / SYNC_ID0 + 1, set by the recorder), reset to zero at
// the start of every command-buffer segment. A wait word packs the counter
// index (bits 0-15) and the count to reach (bits 16-31); 0 means none. A
// wait that spins too long (a scheduler that runs a consumer ahead of its
// producers' workgroups) gives up, sets bit 31 of its counter and goes on;
// the host reads the counters back after the segment and fails the run.
//
// Memory: a later stage's workgroups can share an SM (and its L1) with
// earlier ones and no barrier invalidates L1 between them, so every load of
// something a stage wrote goes through the Act* reference types below,
// which are `coherent` in the sync variant (served from L2). Weights and
// constants, never written during a run, keep the plain types.
//
// The including shader defines SYNC_ID0 (a literal: the first of two free
// constant_ids) before including this, after common.glsl.

#ifdef STAGE_SYNC
#define RLX_ACT_QUAL coherent
#else
#define RLX_ACT_QUAL
#endif

layout(buffer_reference, std430, buffer_reference_align = 4) RLX_ACT_QUAL buffer ActF32 { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) RLX_ACT_QUAL buffer ActI32 { int v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) RLX_ACT_QUAL buffer ActV2 { vec2 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) RLX_ACT_QUAL buffer ActV4 { vec4 v[]; };

#ifdef STAGE_SYNC
layout(constant_id = SYNC_ID0) const uint SYNC_LO = 0u;
layout(constant_id = SYNC_ID0 + 1) const uint SYNC_HI = 0u;
layout(buffer_reference, std430, buffer_reference_align = 4) coherent volatile buffer SyncWords { uint v[]; };

// About 2^22 L2 round trips (seconds): far beyond any real producer stage.
const uint SYNC_SPIN_LIMIT = 1u << 22;

SyncWords sync_words() { return SyncWords((uint64_t(SYNC_HI) << 32) | uint64_t(SYNC_LO)); }

// Workgroup-uniform control flow only (a barrier).
void stage_wait(uint w) {
    if (w == 0u) return;
    if (gl_LocalInvocationIndex == 0u) {
        uint idx = w & 0xffffu, target = w >> 16, n = 0u;
        while ((sync_words().v[idx] & 0x7fffffffu) < target) {
            if (++n == SYNC_SPIN_LIMIT) {
                atomicOr(sync_words().v[idx], 0x80000000u);
                break;
            }
        }
        memoryBarrierBuffer();   // acquire: the producers' stores before ours
    }
    barrier();
}

// Workgroup-uniform control flow only (a barrier); after the last store.
void stage_signal(uint idx) {
    if (idx == 0u) return;
    memoryBarrierBuffer();   // release: each invocation's stores before the count
    barrier();
    if (gl_LocalInvocationIndex == 0u) atomicAdd(sync_words().v[idx], 1u);
}
#else
void stage_wait(uint w) {}
void stage_signal(uint idx) {}
#endif
