// matvec_i8_store.glsl — dequant_matvec_i8.comp's stores: where a result
// row goes (a plain row, a rope pair's rows, ROPE; a KV cache row, KVW; also
// into an x image, XOUT). Included by dequant_matvec_i8.comp before main;
// not a shader of its own.

// Output row of slot s of a group whose first row (or, ROPE, pair) is n0.
uint slot_row(uint n0, uint s) {
    if (ROPE == 0u) return n0 + s;
    uint hd = p.D >> 1;
    return ROPE == 1u ? 2u * n0 + s : (n0 / hd) * p.D + n0 % hd + s * hd;
}

// Stores output row r of x row m: to out[m, r], or (KVW, M = 1) to the
// cache row p.pos of head r / D; a position past the cache writes nothing
// (the host checks the range before submitting, as for kv_write).
void store_row(uint m, uint r, float y) {
    if (xbad[m] != 0u) y = uintBitsToFloat(0x7fc00000u);
    if (!KVW) {
#ifdef RLX_XIMAGE
        if (XOUT != 0u) {   // another workgroup may round this row's block (x_image.glsl)
            XimOutF(p.out_).v[m * p.N + r] = y;
            return;
        }
#endif
        F32Buf(p.out_).v[m * p.N + r] = y;
        return;
    }
    int cp = I32Buf(p.pos).v[0];
    if (cp >= 0 && uint(cp) < p.C) F32Buf(p.out_).v[((r / p.D) * p.C + uint(cp)) * p.D + r % p.D] = y;
}

