/*
 * gpt.c — the GPT trainer's decoder as an rlx graph (gpt.h): params, the
 * forward pass, and for training the loss, its gradients (rlx_gradients) and
 * an AdamW step (rlx_optimizer_step) in the same graph.
 */
#include "models/gpt.h"
#include "core/core.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { INIT_NORMAL, INIT_NORMAL_RESID, INIT_ZERO, INIT_ONE };
static const char *const block_params[] = {
    "ln1.weight", "ln1.bias", "attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight", "attn.proj.bias",
    "ln2.weight", "ln2.bias", "mlp.fc.weight", "mlp.fc.bias", "mlp.proj.weight", "mlp.proj.bias",
};
#define N_BLOCK_PARAMS 12

static int d_ff(const gpt_config *c) { return c->d_ff > 0 ? c->d_ff : 4 * c->d_model; }

rlx_status gpt_config_check(const gpt_config *c) {
    if (!c) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gpt: config is NULL");
    struct { const char *name; int v, lo, hi; } f[] = {
        {"vocab", c->vocab, 2, 1 << 20}, {"layers", c->layers, 1, 256}, {"d_model", c->d_model, 2, 1 << 16},
        {"heads", c->heads, 1, 1024}, {"max_seq", c->max_seq, 1, 1 << 16}, {"d_ff", d_ff(c), 1, 1 << 20},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].v < f[i].lo || f[i].v > f[i].hi)
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gpt: %s = %d is outside [%d, %d]", f[i].name, f[i].v, f[i].lo, f[i].hi);
    if (c->d_model % c->heads)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gpt: d_model %d is not a multiple of heads %d", c->d_model, c->heads);
    if (c->rope && (c->d_model / c->heads) % 2)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gpt: rotary positions need an even head dim, got %d", c->d_model / c->heads);
    return RLX_OK;
}

int gpt_param_count(const gpt_config *c) { return (c->rope ? 1 : 2) + c->layers * N_BLOCK_PARAMS + 2; }

/* Param i's name, dims and initialization. */
static void param_spec(const gpt_config *c, int i, char *name, size_t n, int *rank, int64_t *dims, int *init) {
    int64_t D = c->d_model, F = d_ff(c);
    int lead = c->rope ? 1 : 2;
    if (i == 0 || (!c->rope && i == 1)) {
        snprintf(name, n, "%s", i == 0 ? "wte" : "wpe");
        *rank = 2, dims[0] = i == 0 ? c->vocab : c->max_seq, dims[1] = D, *init = INIT_NORMAL;
        return;
    }
    int j = i - lead;
    if (j >= c->layers * N_BLOCK_PARAMS) {
        bool w = j == c->layers * N_BLOCK_PARAMS;
        snprintf(name, n, "ln_f.%s", w ? "weight" : "bias");
        *rank = 1, dims[0] = D, *init = w ? INIT_ONE : INIT_ZERO;
        return;
    }
    int layer = j / N_BLOCK_PARAMS, k = j % N_BLOCK_PARAMS;
    snprintf(name, n, "h.%d.%s", layer, block_params[k]);
    static const int64_t out_dim[N_BLOCK_PARAMS] = {1, 1, 3, 3, 1, 1, 1, 1, -1, -1, 1, 1};   /* x D, or F (-1) */
    int64_t out = out_dim[k] == -1 ? F : out_dim[k] * D;
    bool weight = k == 2 || k == 4 || k == 8 || k == 10;
    if (weight) {
        *rank = 2, dims[0] = out, dims[1] = k == 10 ? F : D;
        *init = k == 4 || k == 10 ? INIT_NORMAL_RESID : INIT_NORMAL;
    } else {
        *rank = 1, dims[0] = out;
        *init = k == 0 || k == 6 ? INIT_ONE : INIT_ZERO;
    }
}

void gpt_param_name(const gpt_config *c, int i, char *buf, size_t n) {
    int rank, init;
    int64_t dims[2];
    param_spec(c, i, buf, n, &rank, dims, &init);
}

/* ------------------------------------------------------------- graph */

typedef struct builder {
    rlx_graph *g;
    const gpt_config *c;
    rlx_node *params;
} builder;

static rlx_node P(builder *b, const char *name) {
    for (int i = 0; i < gpt_param_count(b->c); i++) {
        char nm[64];
        gpt_param_name(b->c, i, nm, sizeof nm);
        if (!strcmp(nm, name)) return b->params[i];
    }
    return RLX_NO_NODE;
}

static rlx_node Pl(builder *b, int layer, const char *what) {
    char nm[64];
    snprintf(nm, sizeof nm, "h.%d.%s", layer, what);
    return P(b, nm);
}

/* x [B, S, in] -> x W^T + bias, W [out, in]. */
/* Names a node "h.<layer>.<what>", so that messages (the NaN finder's) say where. */
static rlx_node named(builder *b, rlx_node x, int layer, const char *what) {
    char nm[64];
    snprintf(nm, sizeof nm, "h.%d.%s", layer, what);
    rlx_set_name(b->g, x, nm);
    return x;
}

/* x [B, S, in] is multiplied as one [B*S, in] matrix (reshapes are views), as
 * torch's F.linear does: the weight's gradient is then one GEMM over all B*S
 * rows, where a batched product would make B partial [in, out] gradients and
 * sum them. The activation stays a node of its own, so that its gradient reads
 * the kept pre-activation instead of recomputing the product. */
static rlx_node linear(builder *b, rlx_node x, int64_t B, int64_t S, int layer, const char *w, const char *bias,
                       rlx_activation act) {
    rlx_graph *g = b->g;
    char what[48];
    snprintf(what, sizeof what, "%.*s", (int)(strlen(w) - strlen(".weight")), w);
    rlx_node W = Pl(b, layer, w);
    int64_t wd[2] = {0, 0};   /* [out, in] */
    int rank = 0;
    rlx_node_shape(g, W, NULL, &rank, wd);
    int64_t d2[2] = {B == 1 ? S : B * S, wd[1]}, d3[3] = {B, S, wd[0]};   /* S may be a symbol (B is 1 then) */
    rlx_node y = rlx_matmul_bias_act(g, rlx_reshape(g, x, 2, d2), W, 1, Pl(b, layer, bias), RLX_ACT_NONE);
    y = rlx_reshape(g, named(b, y, layer, what), 3, d3);
    if (act == RLX_ACT_GELU_TANH) {
        snprintf(what + strlen(what), sizeof what - strlen(what), ".gelu");
        y = named(b, rlx_gelu_tanh(g, y), layer, what);
    }
    return y;
}

/* [B, S, D] -> [B, H, S, Dh] */
static rlx_node heads_of(builder *b, rlx_node x, int64_t B, int64_t S) {
    int64_t H = b->c->heads, Dh = b->c->d_model / H;
    int64_t d4[4] = {B, S, H, Dh};
    int perm[4] = {0, 2, 1, 3};
    return rlx_transpose(b->g, rlx_reshape(b->g, x, 4, d4), perm);
}

static rlx_node block(builder *b, int l, rlx_node x, int64_t B, int64_t S) {
    rlx_graph *g = b->g;
    int64_t D = b->c->d_model;
    rlx_node h = named(b, rlx_layer_norm(g, x, Pl(b, l, "ln1.weight"), Pl(b, l, "ln1.bias"), 1e-5f), l, "ln1");
    rlx_node qkv = linear(b, h, B, S, l, "attn.qkv.weight", "attn.qkv.bias", RLX_ACT_NONE);
    rlx_node q = heads_of(b, rlx_narrow(g, qkv, 2, 0, D), B, S);
    rlx_node k = heads_of(b, rlx_narrow(g, qkv, 2, D, D), B, S);
    rlx_node v = heads_of(b, rlx_narrow(g, qkv, 2, 2 * D, D), B, S);
    if (b->c->rope) {
        q = rlx_rope(g, q, RLX_NO_NODE, RLX_ROPE_NEOX, 10000.0f, 0);
        k = rlx_rope(g, k, RLX_NO_NODE, RLX_ROPE_NEOX, 10000.0f, 0);
    }
    rlx_node a = named(b, rlx_attention(g, q, k, v, RLX_MASK_CAUSAL, RLX_NO_NODE, 0), l, "attn");
    int perm[4] = {0, 2, 1, 3};
    int64_t d3[3] = {B, S, D};
    a = rlx_reshape(g, rlx_transpose(g, a, perm), 3, d3);
    x = rlx_add(g, x, linear(b, a, B, S, l, "attn.proj.weight", "attn.proj.bias", RLX_ACT_NONE));
    h = named(b, rlx_layer_norm(g, x, Pl(b, l, "ln2.weight"), Pl(b, l, "ln2.bias"), 1e-5f), l, "ln2");
    h = linear(b, h, B, S, l, "mlp.fc.weight", "mlp.fc.bias", RLX_ACT_GELU_TANH);
    return rlx_add(g, x, linear(b, h, B, S, l, "mlp.proj.weight", "mlp.proj.bias", RLX_ACT_NONE));
}

rlx_status gpt_build(const gpt_config *c, gpt_graph_kind kind, int B, int S, const rlx_optimizer_options *opt,
                     rlx_graph **out) {
    *out = NULL;
    rlx_status st = gpt_config_check(c);
    if (st != RLX_OK) return st;
    bool sample = kind == GPT_SAMPLE;
    if (!sample && (B < 1 || S < 1 || S > c->max_seq))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gpt: batch %d and seq %d (<= max_seq %d) must be >= 1", B, S, c->max_seq);
    if (kind == GPT_TRAIN && !opt) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gpt: training needs optimizer options");
    rlx_graph *g = rlx_graph_new();
    int np = gpt_param_count(c);
    rlx_node *params = malloc(sizeof *params * (size_t)np);
    if (!g || !params) {
        rlx_graph_free(g), free(params);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gpt: out of memory");
    }
    for (int i = 0; i < np; i++) {
        char name[64];
        int rank, init;
        int64_t dims[2];
        param_spec(c, i, name, sizeof name, &rank, dims, &init);
        params[i] = rlx_param(g, name, RLX_F32, rank, dims);
    }
    builder b = {g, c, params};
    int64_t Bd = sample ? 1 : B, Sd = sample ? rlx_symbol(g, "seq") : S;
    int64_t dt[2] = {Bd, Sd};
    rlx_node tokens = rlx_input(g, "tokens", RLX_I32, 2, dt);
    rlx_node positions = rlx_input(g, "positions", RLX_I32, 1, &Sd);
    rlx_node x = rlx_gather_rows(g, P(&b, "wte"), tokens);   /* [B, S, D] */
    if (!c->rope) x = rlx_add(g, x, rlx_gather_rows(g, P(&b, "wpe"), positions));
    for (int l = 0; l < c->layers; l++) x = block(&b, l, x, Bd, Sd);
    x = rlx_layer_norm(g, x, P(&b, "ln_f.weight"), P(&b, "ln_f.bias"), 1e-5f);
    if (sample) {
        int64_t d2[2] = {Sd, c->d_model};   /* every position: a sampler pads on the right (causal) */
        rlx_node logits = rlx_matmul(g, rlx_reshape(g, x, 2, d2), P(&b, "wte"), 1);
        rlx_output(g, "logits", logits);
    } else {
        rlx_node targets = rlx_input(g, "targets", RLX_I32, 2, dt);
        int64_t d2[2] = {(int64_t)B * S, c->d_model}, d1 = (int64_t)B * S;
        rlx_node logits = rlx_matmul(g, rlx_reshape(g, x, 2, d2), P(&b, "wte"), 1);   /* tied head */
        rlx_node loss = rlx_softmax_cross_entropy(g, logits, rlx_reshape(g, targets, 1, &d1));
        rlx_output(g, "loss", loss);
        rlx_node *grads = malloc(sizeof *grads * (size_t)np);
        if (!grads) st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gpt: out of memory");
        rlx_node scaled = kind == GPT_TRAIN ? rlx_scale_loss(g, loss, opt) : loss;   /* loss when scaling is off */
        if (st == RLX_OK && (st = rlx_graph_status(g)) == RLX_OK) st = rlx_gradients(g, scaled, np, params, grads);
        if (st == RLX_OK && kind == GPT_GRADS) {
            for (int i = 0; i < np && st == RLX_OK; i++) {
                char name[64], out_name[80];
                gpt_param_name(c, i, name, sizeof name);
                snprintf(out_name, sizeof out_name, "grad.%s", name);
                st = rlx_output(g, out_name, grads[i]);
            }
        } else if (st == RLX_OK) {
            int64_t one = 1;
            rlx_node lr = rlx_input(g, "lr", RLX_F32, 1, &one), norm;
            st = rlx_optimizer_step(g, opt, np, params, grads, lr, &norm);
            if (st == RLX_OK) st = rlx_output(g, "grad_norm", norm);
        }
        free(grads);
    }
    free(params);
    if (st == RLX_OK) st = rlx_graph_status(g);
    if (st != RLX_OK) {
        rlx_graph_free(g);
        return st;
    }
    *out = g;
    return RLX_OK;
}

/* ------------------------------------------------------------ init */

static double normal(uint64_t *s) {   /* Box-Muller on splitmix64 */
    double u[2];
    for (int i = 0; i < 2; i++) {
        uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        u[i] = ((double)(z >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

rlx_status gpt_init_params(const gpt_config *c, rlx_exec *e, uint64_t seed) {
    rlx_status st = gpt_config_check(c);
    uint64_t s = seed * 0x2545f4914f6cdd1dull + 1;
    for (int i = 0; i < gpt_param_count(c) && st == RLX_OK; i++) {
        char name[64];
        int rank, init;
        int64_t dims[2];
        param_spec(c, i, name, sizeof name, &rank, dims, &init);
        size_t n = (size_t)dims[0] * (size_t)(rank > 1 ? dims[1] : 1);
        float *v = malloc(sizeof *v * n);
        if (!v) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gpt: out of memory initializing '%s'", name);
        double sd = init == INIT_NORMAL_RESID ? 0.02 / sqrt(2.0 * c->layers) : 0.02;
        for (size_t j = 0; j < n; j++)
            v[j] = init == INIT_ZERO ? 0.0f : init == INIT_ONE ? 1.0f : (float)(sd * normal(&s));
        st = rlx_exec_set_param_f32(e, name, v, n);
        free(v);
    }
    return st;
}
