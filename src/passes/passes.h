/*
 * passes.h — graph-to-graph passes and the memory planner.
 *
 *   verify -> fuse -> dce -> specialize(binding) -> plan -> (backend lowering)
 *
 * Each pass reads one graph and writes a new one (graphs are append-only SSA,
 * so rewriting by rebuilding is simplest and keeps ids topological).
 * Broadcast legalization is not a pass: every backend kernel takes numpy
 * broadcasting natively (see docs/architecture.md).
 */
#ifndef RLX_PASSES_H
#define RLX_PASSES_H

#include "ir/ir.h"

/* Copies src into dst keeping only nodes that outputs depend on, plus every
 * INPUT and PARAM (the interface stays stable even when unused). */
rlx_status pass_dce(const ir_graph *src, ir_graph *dst);

/* The rlx_activation an activation op applies, or -1 (fuse.c). */
int pass_activation_of(ir_op op);

/* Which fused kernels the target backend has. */
typedef struct fuse_claims {
    bool matmul_bias_act;   /* matmul [+ bias[N]] [+ activation] */
    bool add_norm;          /* residual add + layer_norm / rms_norm */
    bool dequant_epilogue;  /* dequant_matmul + residual add; silu(dequant_matmul) * dequant_matmul */
    bool rope_kv_write;     /* kv_write(cache, rope(x, ...), pos) */
    bool norm_prologue;     /* rms_norm feeding only dequant_matmul / dequant_swiglu x operands */
    int  norm_fold_rows;    /* instead, per specialization: fold norms of at most this many rows (0: never) */
    bool epilogue_fold;     /* per specialization: projections with their rope / KV-write consumer (folds_epilogue) */
    bool combine_fold;      /* per specialization: attention with the projection of its result (folds_combine) */
    bool conv_bn_fold;      /* batch_norm [+ activation] folded into the conv before it (fold_bn.c) */
    bool conv_residual;     /* act(add(conv, r)) as one conv with a residual input */
} fuse_claims;

/* Rewrites fusable patterns whose interior results have no other use.
 * *n_fused counts the fused nodes created. */
rlx_status pass_fuse(const ir_graph *src, const fuse_claims *claims, ir_graph *dst, int *n_fused);
/* The norm_prologue fold on a specialized graph, in place (ids unchanged), for
 * norms of at most max_rows rows whose gamma is a param or constant and whose
 * every product ok() accepts (weight type, rows, K); *n_folded counts the
 * rewritten products. */
typedef bool (*fold_norm_pred)(void *ctx, rlx_dtype w, int64_t rows, int64_t K);
rlx_status pass_fold_norm_inplace(ir_graph *g, int64_t max_rows, fold_norm_pred ok, void *ctx, int *n_folded);

/* A projection and its rope / rope_kv_write / kv_write consumer as one
 * dequant_rope_kv node, on a specialized graph, in place (fold_decode.c),
 * where ok(ctx, g, product, consumer) accepts it (NULL: every candidate);
 * *n_folded counts the fused nodes. */
typedef bool (*fold_epilogue_pred)(void *ctx, const ir_graph *g, int32_t product, int32_t consumer);
rlx_status pass_fold_epilogue_inplace(ir_graph *g, fold_epilogue_pred ok, void *ctx, int *n_folded);
/* The consumer that product i (a dequant_matmul or rms_dequant_matmul, static)
 * would fold with, or -1; uses from pass_use_counts. */
int32_t    pass_epilogue_consumer(const ir_graph *g, const int32_t *uses, int32_t i);

/* Attention and the dequant_matmul[_add] reading its result as x as one
 * attention_dequant_matmul node, on a specialized graph, in place
 * (fold_decode.c), where ok(ctx, g, attention, product) accepts it. */
rlx_status pass_fold_combine_inplace(ir_graph *g, fold_epilogue_pred ok, void *ctx, int *n_folded);
int32_t    pass_combine_consumer(const ir_graph *g, const int32_t *uses, int32_t i);

/* batch_norm folded into the conv before it (fold_bn.c). A fold over params
 * is a recipe: the runtime writes params w_out and b_out from the sources'
 * values with bn_fold_compute whenever a source changed. */
typedef struct bn_fold {
    char   *w_out, *b_out;      /* the conv's new w and bias params */
    char   *w, *b;              /* the conv's w and bias (b NULL: none) */
    char   *stat[4];            /* the batch_norm's gamma, beta, mean, var */
    double  eps;
    int64_t O, per_o;           /* w is [O, per_o elements] */
} bn_fold;
typedef struct bn_fold_list { bn_fold *items; int n; } bn_fold_list;
void       bn_fold_list_free(bn_fold_list *l);
/* Appends the recipes of param folds to *folds; *n_folded counts the folds,
 * and the activations that joined a conv without one. */
rlx_status pass_fold_batch_norm(const ir_graph *src, ir_graph *dst, bn_fold_list *folds, int *n_folded);
/* w_out[o, :] = w[o, :] a[o], b_out = (b - mean) a + beta (b NULL: 0), a = gamma / sqrt(var + eps);
 * stat = gamma, beta, mean, var; in double, rounded once. */
void       bn_fold_compute(int64_t O, int64_t per_o, double eps, const float *w, const float *b,
                           const float *const stat[4], float *w_out, float *b_out);

/* Specialized copy: symbols replaced by sym_values, shape rules re-run so that
 * every provisional check becomes exact. All dims of dst are static. */
rlx_status pass_specialize(const ir_graph *src, const int64_t *sym_values, ir_graph *dst);

/* Where a node's bytes live after planning. */
typedef enum plan_storage {
    PLAN_ARENA = 0,     /* arena + offset                      */
    PLAN_PARAM = 1,     /* param buffer of node `base` + offset */
    PLAN_CONST = 2,     /* constant data of node `base` + offset */
} plan_storage;

typedef struct plan_entry {
    plan_storage storage;
    int32_t      base;      /* for PARAM/CONST: the source node; for ARENA: the storage root */
    int64_t      offset;    /* bytes */
    int64_t      bytes;     /* size of this node's tensor */
    int32_t      first, last;  /* lifetime of the storage root, in node indices (inclusive) */
    bool         is_view;   /* aliases another node's bytes (reshape, contiguous slice) */
} plan_entry;

typedef struct mem_plan {
    int32_t     n;
    plan_entry *entries;    /* one per node */
    size_t      arena_bytes;
    size_t      tensor_bytes;   /* sum of arena-resident non-view tensors */
} mem_plan;

#define PLAN_ALIGN 64

/* Plans a specialized graph (all shapes static). Inputs and outputs are
 * pinned (live for the whole run); params and constants stay outside the
 * arena; reshapes and contiguous slices alias their source. */
rlx_status plan_memory(const ir_graph *g, mem_plan *plan);
/* The same with every arena tensor pinned (no reuse: each keeps its bytes
 * after the run), so that every node's result can be read afterwards (the
 * numerics check). */
rlx_status plan_memory_pinned(const ir_graph *g, mem_plan *plan);
void       plan_free(mem_plan *plan);

/* Brute-force check that no two simultaneously live arena tensors overlap and
 * that every tensor fits in the arena. Returns RLX_OK or RLX_STATUS_INTERNAL. */
rlx_status plan_validate(const ir_graph *g, const mem_plan *plan);

/* Number of uses of each node by other nodes and outputs (caller frees). */
int32_t *pass_use_counts(const ir_graph *g);

#endif
