// att_splits.glsl — split-key attention's partials in scratch: attention.comp
// writes them; attention_combine.comp, or attention.comp's last split to
// finish (LASTC), merges them. Partial `part` = ((b * nsplit + s) * Hkv + hk)
// * rows + row has its unnormalized accumulator at part * D and its (m, l)
// pair (log2 domain) at ml_off + 2 part. Both mergers call split_max and
// split_merge, so the two give the same sums in the same order:
//   out = sum_s 2^(m_s - M) acc_s / sum_s 2^(m_s - M) l_s,  M = max_s m_s,
// 0 for a row with no visible key (M = -inf or a zero sum). The reads are
// `coherent`: the LASTC merger reads other workgroups' stores of its own
// dispatch, which this SM's L1 may hold stale.
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer SplitF { float v[]; };

uint split_part(uint b, uint s, uint hk, uint row, uint nsplit, uint Hkv, uint rows) {
    return ((b * nsplit + s) * Hkv + hk) * rows + row;
}

float split_max(uint64_t scratch, uint ml_off, uint b, uint hk, uint row, uint nsplit, uint Hkv, uint rows) {
    float M = -1.0 / 0.0;
    for (uint s = 0; s < nsplit; s++) M = max(M, SplitF(scratch).v[ml_off + 2 * split_part(b, s, hk, row, nsplit, Hkv, rows)]);
    return M;
}

// Column d of the merged row, M = split_max of the row.
float split_merge(uint64_t scratch, uint ml_off, uint D, uint b, uint hk, uint row, uint d, float M, uint nsplit, uint Hkv,
                  uint rows) {
    float num = 0.0, den = 0.0;
    if (M != -1.0 / 0.0) {
        for (uint s = 0; s < nsplit; s++) {
            uint part = split_part(b, s, hk, row, nsplit, Hkv, rows);
            float w = exp2(SplitF(scratch).v[ml_off + 2 * part] - M);
            den += w * SplitF(scratch).v[ml_off + 2 * part + 1];
            num += w * SplitF(scratch).v[part * D + d];
        }
    }
    return den > 0.0 ? num / den : 0.0;
}
