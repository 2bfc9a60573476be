// kv_write.comp — copies rows [B,H,S,D] into a cache [B,H,C,D] at positions
// [pos, pos+S), reading pos from its device buffer so that a recorded decode
// step needs no re-record. Out-of-range positions write nothing (the host
// checks the range before submitting). Works on 4-byte words; the lowering
// passes sizes in words (element size * D must be a multiple of 4).
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform PC {
    uint64_t cache, rows, pos;
    uint H, S, C, row_words;   // row_words = D * elem_size / 4
    uint total;                // B * H * S * row_words
} pc;

void main() {
    uint i = linear_id();
    if (i >= pc.total) return;
    int p = I32Buf(pc.pos).v[0];
    uint w = i % pc.row_words;
    uint s = (i / pc.row_words) % pc.S;
    uint bh = i / (pc.row_words * pc.S);
    if (p < 0 || uint(p) + pc.S > pc.C) return;
    U32Buf(pc.cache).v[(bh * pc.C + uint(p) + s) * pc.row_words + w] = U32Buf(pc.rows).v[i];
}
