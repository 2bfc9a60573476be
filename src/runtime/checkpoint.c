/*
 * checkpoint.c — an exec's params to and from safetensors files
 * (rlx_exec_save_params, rlx_exec_load_params): weights and optimizer state
 * alike, as rlx_exec_read_param reads them and rlx_exec_set_param sets them.
 *
 * Saving goes through the safetensors writer, which writes a temporary file
 * in the same directory and renames it over the path: a crash or a full disk
 * mid-write leaves the previous checkpoint as it was. Loading checks every
 * tensor it takes against its param (dtype and shape) before setting any, so
 * a mismatched file changes nothing. The params a batch_norm fold derives
 * from others (passes/fold_bn.c) are neither saved nor expected: a
 * checkpoint of the unfolded graph loads into the folded one.
 */
#include "core/core.h"
#include "runtime/backend.h"
#include "io/safetensors.h"
#include <stdlib.h>
#include <string.h>

rlx_status rlx_exec_save_params(rlx_exec *e, const char *path, int n_meta, const char *const *meta) {
    const char *fn = "rlx_exec_save_params";
    if (!e || !path) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: exec and path are required", fn);
    if (n_meta < 0 || (n_meta > 0 && !meta)) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: %d metadata pairs without a list", fn, n_meta);
    int n = rlx_exec_param_count(e);
    sft_writer *w = sft_writer_new();
    void **bufs = calloc((size_t)(n > 0 ? n : 1), sizeof *bufs);
    rlx_status st = w && bufs ? RLX_OK : rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    for (int i = 0; i < n_meta && st == RLX_OK; i++) {
        if (!meta[2 * i] || !meta[2 * i + 1]) st = rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: metadata pair %d has a NULL", fn, i);
        else st = sft_writer_set_metadata(w, meta[2 * i], meta[2 * i + 1]);
    }
    for (int i = 0; i < n && st == RLX_OK; i++) {
        rlx_tensor info;
        sft_dtype sd;
        if ((st = rlx_exec_param_info(e, i, &info)) != RLX_OK) break;
        if (rt_exec_param_is_folded(e, info.name)) continue;
        if ((st = sft_dtype_from_rlx(info.dtype, &sd)) != RLX_OK) {
            st = rlx_fail(st, "%s: param '%s' is %s, which safetensors cannot hold", fn, info.name, rlx_dtype_name(info.dtype));
            break;
        }
        size_t bytes = rlx_tensor_bytes(info.dtype, info.rank, info.dims);
        if (!(bufs[i] = malloc(bytes ? bytes : 1))) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: %zu bytes for '%s'", fn, bytes, info.name); break; }
        if ((st = rlx_exec_read_param(e, info.name, info.dtype, bufs[i], bytes)) != RLX_OK) break;
        st = sft_writer_add(w, info.name, sd, info.rank, info.dims, bufs[i], bytes);
    }
    if (st == RLX_OK) st = sft_write_file(w, path);
    for (int i = 0; bufs && i < n; i++) free(bufs[i]);
    free(bufs);
    sft_writer_free(w);
    return st;
}

rlx_status rlx_exec_load_params(rlx_exec *e, const char *path, unsigned flags) {
    const char *fn = "rlx_exec_load_params";
    if (!e || !path) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: exec and path are required", fn);
    if (flags & ~(unsigned)RLX_LOAD_ALLOW_MISSING) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: unknown flags 0x%x", fn, flags);
    sft_file *f;
    rlx_status st = sft_open(path, &f);
    if (st != RLX_OK) return st;
    int n = rlx_exec_param_count(e);
    const sft_tensor **found = calloc((size_t)(n > 0 ? n : 1), sizeof *found);
    if (!found) { sft_close(f); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn); }
    /* every check first, so a bad file sets nothing */
    for (int i = 0; i < n && st == RLX_OK; i++) {
        rlx_tensor info;
        if ((st = rlx_exec_param_info(e, i, &info)) != RLX_OK) break;
        if (rt_exec_param_is_folded(e, info.name)) continue;
        const sft_tensor *t = sft_find(f, info.name);
        if (!t) {
            if (!(flags & RLX_LOAD_ALLOW_MISSING))
                st = rlx_fail(RLX_STATUS_NOT_FOUND, "%s: %s has no tensor '%s' (a param of this exec)", fn, path, info.name);
            continue;
        }
        rlx_dtype dt;
        bool same = sft_dtype_to_rlx(t->dtype, &dt) == RLX_OK && dt == info.dtype && t->n_dims == info.rank;
        for (int d = 0; same && d < info.rank; d++) same = t->dims[d] == info.dims[d];
        if (!same) {
            st = rlx_fail(RLX_STATUS_SHAPE, "%s: %s's '%s' is %s with %d dims, the param is %s with %d", fn, path, info.name,
                          sft_dtype_name(t->dtype), t->n_dims, rlx_dtype_name(info.dtype), info.rank);
            break;
        }
        found[i] = t;
    }
    for (int i = 0; i < n && st == RLX_OK; i++) {
        if (!found[i]) continue;
        rlx_tensor info;
        if ((st = rlx_exec_param_info(e, i, &info)) == RLX_OK)
            st = rlx_exec_set_param(e, info.name, info.dtype, found[i]->data, (size_t)found[i]->size);
    }
    free(found);
    sft_close(f);
    return st;
}
