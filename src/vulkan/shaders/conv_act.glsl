// conv_act.glsl — the activation fused into the direct convolution kernels
// (conv.comp, conv_depthwise.comp), codes = rlx_activation, cpu_activate's
// semantics, with ew_common.glsl's accurate exp/tanh/erf.
// Include after ew_common.glsl.
float conv_activate(float v, uint act) {
    switch (act) {
    case 1u: return (v < 0.0 && !isnan(v)) ? 0.0 : v;
    case 2u: return gelu_erf(v);
    case 3u: return gelu_tanh(v);
    case 4u: return v / (1.0 + rlx_exp(-v));
    case 5u: return sigmoid(v);
    case 6u: return rlx_tanh(v);
    }
    return v;
}
