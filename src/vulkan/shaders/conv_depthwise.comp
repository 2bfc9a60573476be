// conv_depthwise.comp — depthwise CONV (groups == C == O, 1 or 2 spatial
// dims as [1, H, W]): a workgroup of 16 x 16 invocations computes a 16 x 16
// tile of one (image, channel) plane. The input window the tile reads (its
// rows and columns span (16 - 1) * stride + (k - 1) * dilation + 1) is
// staged once in shared memory, zero outside the image, so each input is
// read from memory once per tile instead of once per tap; bias and
// activation fused. The lowering (lower/conv.c) takes windows up to
// DW_SPAN x DW_SPAN; larger ones stay on conv.comp.
//
// Spec constants: 0 = activation (rlx_activation), 1 = has bias, 2 = has a
// residual (pc.res, added before the activation).
#version 450
#include "ew_common.glsl"
#include "conv_act.glsl"

layout(constant_id = 0) const uint ACT = 0;
layout(constant_id = 1) const uint HAS_BIAS = 0;
layout(constant_id = 2) const uint HAS_RES = 0;
layout(local_size_x = 16, local_size_y = 16) in;

const uint DW_SPAN = 48;   // = VK_DW_SPAN in lower/conv.c
shared float tile[DW_SPAN * DW_SPAN];

layout(push_constant) uniform PC {
    uint64_t x, w, bias, out_;
    uint C, H, W, OH, OW, KH, KW;
    uint sh, sw, dh, dw;
    int ph, pw;
    uint tiles_w, span_h, span_w;
    uint64_t res;      // residual of out's shape (HAS_RES), added before the activation
} pc;

void main() {
    uint plane = gl_WorkGroupID.z;   // n * C + c
    uint c = plane % pc.C;
    uint oy0 = (gl_WorkGroupID.y) * 16u, ox0 = gl_WorkGroupID.x * 16u;
    int iy0 = int(oy0 * pc.sh) - pc.ph, ix0 = int(ox0 * pc.sw) - pc.pw;
    F32Buf X = F32Buf(pc.x);
    uint xbase = plane * pc.H * pc.W;
    uint lid = gl_LocalInvocationID.y * 16u + gl_LocalInvocationID.x;
    for (uint e = lid; e < pc.span_h * pc.span_w; e += 256u) {
        int iy = iy0 + int(e / pc.span_w), ix = ix0 + int(e % pc.span_w);
        float v = 0.0;
        if (iy >= 0 && iy < int(pc.H) && ix >= 0 && ix < int(pc.W)) v = X.v[xbase + uint(iy) * pc.W + uint(ix)];
        tile[(e / pc.span_w) * DW_SPAN + e % pc.span_w] = v;
    }
    barrier();
    uint oy = oy0 + gl_LocalInvocationID.y, ox = ox0 + gl_LocalInvocationID.x;
    if (oy >= pc.OH || ox >= pc.OW) return;
    F32Buf Wt = F32Buf(pc.w);
    uint wbase = c * pc.KH * pc.KW;
    uint ty = gl_LocalInvocationID.y * pc.sh, tx = gl_LocalInvocationID.x * pc.sw;
    float acc = 0.0;
    for (uint a = 0; a < pc.KH; a++)
        for (uint b = 0; b < pc.KW; b++)
            acc = fma(tile[(ty + a * pc.dh) * DW_SPAN + tx + b * pc.dw], Wt.v[wbase + a * pc.KW + b], acc);
    if (HAS_BIAS != 0u) acc += F32Buf(pc.bias).v[c];
    uint oi = (plane * pc.OH + oy) * pc.OW + ox;
    if (HAS_RES != 0u) acc += F32Buf(pc.res).v[oi];
    F32Buf(pc.out_).v[oi] = conv_activate(acc, ACT);
}
