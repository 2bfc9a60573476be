/*
 * test_encoder.c — BERT-family encoders from Hugging Face folders
 * (src/models/encoder*.c): tiny BERT, RoBERTa and DistilBERT checkpoints
 * with random weights are written by the tests (config.json, safetensors,
 * vocab.txt), loaded with rlx_encoder_load and checked against
 * tests/ref/encoder_ref.py, a float64 numpy implementation of the
 * transformers forward pass that reads the same files with its own parser:
 * last_hidden_state, the three poolings, BERT's pooler and the
 * classification heads, with the bounds (cosine >= 0.99999, max abs
 * error <= 1e-3). Also: weights in f16 / bf16, a task model's prefixed
 * tensor names, padding that must not change another row, CPU <-> Vulkan
 * parity (lavapipe in CI), text through vocab.txt and tokenizer.json, and the errors a bad
 * folder gives (unknown architecture, missing and misshapen tensors,
 * out-of-range config values).
 */
#include "harness.h"
#include "vk_parity.h"
#include "core/core.h"
#include "io/safetensors.h"
#include "models/encoder.h"
#include "rlx.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct tiny {
    const char *model_type;   /* "bert", "roberta", "distilbert" */
    int H, layers, heads, ff, vocab, max_pos, type_vocab;
    sft_dtype wdt;            /* 2-D weights (1-D ones f32, or f16 with wdt F16) */
    bool pooler, head, prefixed;
    int labels;
    const char *act;
    const char *drop;         /* a tensor to leave out (error tests), or NULL */
    const char *bad_shape;    /* a tensor written one row short, or NULL */
} tiny;

typedef struct owned { void *p[512]; int n; } owned;
static void *keep(owned *o, size_t bytes) {
    void *p = calloc(1, bytes ? bytes : 1);
    if (o->n < 512) o->p[o->n++] = p;
    return p;
}
static void release(owned *o) {
    for (int i = 0; i < o->n; i++) free(o->p[i]);
    o->n = 0;
}

/* A tensor of random values around `center` (spread s) in dtype dt. */
static void add_tensor(sft_writer *w, owned *o, const tiny *t, const char *name, int rank, int64_t d0, int64_t d1,
                       double center, double s) {
    if (t->drop && strcmp(t->drop, name) == 0) return;
    if (t->bad_shape && strcmp(t->bad_shape, name) == 0) d0 -= 1;
    int64_t dims[2] = {d0, d1}, n = rank == 1 ? d0 : d0 * d1;
    sft_dtype dt = rank == 2 ? t->wdt : t->wdt == SFT_F16 ? SFT_F16 : SFT_F32;
    size_t es = dt == SFT_F32 ? 4 : 2;
    void *data = keep(o, (size_t)n * es);
    for (int64_t i = 0; i < n; i++) {
        float v = (float)(center + test_rand_uniform(-s, s));
        if (dt == SFT_F32) ((float *)data)[i] = v;
        else if (dt == SFT_F16) ((uint16_t *)data)[i] = rlx_f32_to_f16(v);
        else ((uint16_t *)data)[i] = rlx_f32_to_bf16(v);
    }
    sft_writer_add(w, name, dt, rank, dims, data, (uint64_t)n * es);
}

static void linear(sft_writer *w, owned *o, const tiny *t, const char *base, int64_t out, int64_t in) {
    char n[192];
    snprintf(n, sizeof n, "%s.weight", base);
    add_tensor(w, o, t, n, 2, out, in, 0, 1.0 / sqrt((double)in));
    snprintf(n, sizeof n, "%s.bias", base);
    add_tensor(w, o, t, n, 1, out, 0, 0, 0.1);
}
static void norm(sft_writer *w, owned *o, const tiny *t, const char *base, int64_t H) {
    char n[192];
    snprintf(n, sizeof n, "%s.weight", base);
    add_tensor(w, o, t, n, 1, H, 0, 1, 0.2);
    snprintf(n, sizeof n, "%s.bias", base);
    add_tensor(w, o, t, n, 1, H, 0, 0, 0.1);
}

static bool write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* dir (created) gets config.json, model.safetensors and vocab.txt of model t. */
static bool write_tiny(const char *dir, const tiny *t) {
    mkdir(dir, 0700);
    bool db = strcmp(t->model_type, "distilbert") == 0, rob = strcmp(t->model_type, "roberta") == 0;
    char path[512], cfg[2048], labels[512] = "";
    int n = 0;
    for (int i = 0; i < t->labels; i++) n += snprintf(labels + n, sizeof labels - (size_t)n, "%s\"%d\": \"L%d\"", i ? ", " : "", i, i);
    if (db)
        snprintf(cfg, sizeof cfg,
                 "{\"model_type\": \"distilbert\", \"vocab_size\": %d, \"dim\": %d, \"n_layers\": %d, \"n_heads\": %d, "
                 "\"hidden_dim\": %d, \"max_position_embeddings\": %d, \"activation\": \"%s\", \"pad_token_id\": 0, "
                 "\"id2label\": {%s}}",
                 t->vocab, t->H, t->layers, t->heads, t->ff, t->max_pos, t->act, labels);
    else
        snprintf(cfg, sizeof cfg,
                 "{\"model_type\": \"%s\", \"vocab_size\": %d, \"hidden_size\": %d, \"num_hidden_layers\": %d, "
                 "\"num_attention_heads\": %d, \"intermediate_size\": %d, \"max_position_embeddings\": %d, "
                 "\"type_vocab_size\": %d, \"hidden_act\": \"%s\", \"layer_norm_eps\": 1e-05, \"pad_token_id\": %d, "
                 "\"position_embedding_type\": \"absolute\", \"id2label\": {%s}}",
                 t->model_type, t->vocab, t->H, t->layers, t->heads, t->ff, t->max_pos, t->type_vocab, t->act,
                 rob ? 1 : 0, labels);
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (!write_text(path, cfg)) return false;

    owned o = {0};
    sft_writer *w = sft_writer_new();
    const char *pre = !t->prefixed ? "" : db ? "distilbert." : rob ? "roberta." : "bert.";
    char b[192];
    snprintf(b, sizeof b, "%sembeddings.word_embeddings.weight", pre);
    add_tensor(w, &o, t, b, 2, t->vocab, t->H, 0, 0.5);
    snprintf(b, sizeof b, "%sembeddings.position_embeddings.weight", pre);
    add_tensor(w, &o, t, b, 2, t->max_pos, t->H, 0, 0.5);
    if (!db) {
        snprintf(b, sizeof b, "%sembeddings.token_type_embeddings.weight", pre);
        add_tensor(w, &o, t, b, 2, t->type_vocab, t->H, 0, 0.5);
    }
    snprintf(b, sizeof b, "%sembeddings.LayerNorm", pre);
    norm(w, &o, t, b, t->H);
    for (int l = 0; l < t->layers; l++) {
        char p[128];
        if (db) {
            snprintf(p, sizeof p, "%stransformer.layer.%d.", pre, l);
            const char *lin[4] = {"attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin"};
            for (int i = 0; i < 4; i++) snprintf(b, sizeof b, "%s%s", p, lin[i]), linear(w, &o, t, b, t->H, t->H);
            snprintf(b, sizeof b, "%ssa_layer_norm", p), norm(w, &o, t, b, t->H);
            snprintf(b, sizeof b, "%sffn.lin1", p), linear(w, &o, t, b, t->ff, t->H);
            snprintf(b, sizeof b, "%sffn.lin2", p), linear(w, &o, t, b, t->H, t->ff);
            snprintf(b, sizeof b, "%soutput_layer_norm", p), norm(w, &o, t, b, t->H);
        } else {
            snprintf(p, sizeof p, "%sencoder.layer.%d.", pre, l);
            const char *lin[3] = {"attention.self.query", "attention.self.key", "attention.self.value"};
            for (int i = 0; i < 3; i++) snprintf(b, sizeof b, "%s%s", p, lin[i]), linear(w, &o, t, b, t->H, t->H);
            snprintf(b, sizeof b, "%sattention.output.dense", p), linear(w, &o, t, b, t->H, t->H);
            snprintf(b, sizeof b, "%sattention.output.LayerNorm", p), norm(w, &o, t, b, t->H);
            snprintf(b, sizeof b, "%sintermediate.dense", p), linear(w, &o, t, b, t->ff, t->H);
            snprintf(b, sizeof b, "%soutput.dense", p), linear(w, &o, t, b, t->H, t->ff);
            snprintf(b, sizeof b, "%soutput.LayerNorm", p), norm(w, &o, t, b, t->H);
        }
    }
    if (t->pooler) snprintf(b, sizeof b, "%spooler.dense", pre), linear(w, &o, t, b, t->H, t->H);
    if (t->head) {
        if (db) linear(w, &o, t, "pre_classifier", t->H, t->H), linear(w, &o, t, "classifier", t->labels, t->H);
        else if (rob) linear(w, &o, t, "classifier.dense", t->H, t->H), linear(w, &o, t, "classifier.out_proj", t->labels, t->H);
        else linear(w, &o, t, "classifier", t->labels, t->H);
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    bool ok = sft_write_file(w, path) == RLX_OK;
    if (!ok) printf("    writing %s: %s\n", path, rlx_last_error());
    sft_writer_free(w);
    release(&o);

    /* vocab.txt: BERT's specials, a few words, then filler up to vocab */
    static const char *const words[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat",
                                        "on", "mat", "##s", "dog", "a", "red", "##dish", "."};
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f) return false;
    for (int i = 0; i < t->vocab; i++) {
        if (i < (int)(sizeof words / sizeof words[0])) fprintf(f, "%s\n", words[i]);
        else fprintf(f, "w%d\n", i);
    }
    return fclose(f) == 0 && ok;
}

static void remove_tiny(const char *dir) {
    static const char *const files[] = {"config.json", "model.safetensors", "vocab.txt"};
    char path[512];
    for (int i = 0; i < 3; i++) snprintf(path, sizeof path, "%s/%s", dir, files[i]), remove(path);
    rmdir(dir);
}

static bool make_dir(char *tmpl) { return mkdtemp(tmpl) != NULL; }

/* cosine and max abs error of got against want over n */
static bool close_enough(const char *what, const float *got, const double *want, int64_t n, double min_cos, double max_abs) {
    double dot = 0, ng = 0, nw = 0, worst = 0;
    int64_t wi = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = got[i], d = fabs(g - want[i]);
        if (!(d <= worst)) worst = d, wi = i;
        dot += g * want[i], ng += g * g, nw += want[i] * want[i];
    }
    double cosv = ng > 0 && nw > 0 ? dot / sqrt(ng * nw) : (ng == nw ? 1 : 0);
    if (cosv >= min_cos && worst <= max_abs) return true;
    printf("    %s: cosine %.8f, max abs error %.3g at %lld (got %g, want %g)\n", what, cosv, worst, (long long)wi,
           (double)got[wi], want[wi]);
    return false;
}

typedef struct batch {
    int B, S;
    int32_t ids[4 * 24], types[4 * 24], mask[4 * 24];
} batch;

/* Rows of different lengths padded with pad_id; ids from 5 (no specials) except a leading cls. */
static void make_batch(batch *b, int B, int S, int vocab, int32_t cls, int32_t pad, bool types) {
    b->B = B, b->S = S;
    for (int r = 0; r < B; r++) {
        int len = S - 3 * r;
        if (len < 2) len = 2;
        for (int s = 0; s < S; s++) {
            int k = r * S + s;
            b->ids[k] = s >= len ? pad : s == 0 ? cls : (int32_t)test_rand_int(5, vocab - 1);
            b->types[k] = types && s >= len / 2 && s < len ? 1 : 0;
            b->mask[k] = s < len;
        }
    }
}

/* Runs the Python reference on dir for b; *ref gets its float64 outputs. */
static bool run_reference(const char *dir, const batch *b, double **ref, size_t *n) {
    const char *py = test_program("RLX_PYTHON", "/usr/bin/python3");
    char ids[] = "/tmp/rlx_enc_ids_XXXXXX", out[] = "/tmp/rlx_enc_ref_XXXXXX", cmd[1024], msg[2048];
    if (!test_temp_file(ids) || !test_temp_file(out)) return false;
    FILE *f = fopen(ids, "wb");
    size_t k = (size_t)b->B * b->S;
    bool ok = f && fwrite(b->ids, 4, k, f) == k && fwrite(b->types, 4, k, f) == k && fwrite(b->mask, 4, k, f) == k;
    if (f) ok = fclose(f) == 0 && ok;
    snprintf(cmd, sizeof cmd, "%s tests/ref/encoder_ref.py %s %s %s %d %d 2>&1", py, dir, ids, out, b->B, b->S);
    int code = ok ? test_run_command(cmd, msg, sizeof msg) : -1;
    void *data = NULL;
    size_t bytes = 0;
    ok = code == 0 && test_read_file(out, &data, &bytes);
    if (!ok) printf("    reference exited %d: %s\n", code, msg);
    remove(ids);
    remove(out);
    *ref = data;
    *n = bytes / sizeof(double);
    return ok;
}

static bool reference_available(void) {
    const char *py = test_program("RLX_PYTHON", "/usr/bin/python3");
    char cmd[256], out[256];
    snprintf(cmd, sizeof cmd, "%s -c 'import numpy' 2>&1", py);
    return access(py, X_OK) == 0 && access("tests/ref/encoder_ref.py", R_OK) == 0 && test_run_command(cmd, out, sizeof out) == 0;
}

static rlx_status load(const char *dir, bool vulkan, rlx_pooling pool, rlx_encoder **e) {
    rlx_encoder_options o;
    rlx_encoder_options_init(&o);
    o.pooling = pool;
    if (vulkan) vkp_options(&o.compile);
    else o.compile.backend = RLX_BACKEND_CPU;
    return rlx_encoder_load(dir, &o, e);
}

/* Every output of model t on a padded batch against the float64 reference. */
static bool check_against_reference(const tiny *t, double min_cos, double max_abs) {
    char dir[] = "/tmp/rlx_enc_XXXXXX";
    if (!make_dir(dir) || !write_tiny(dir, t)) return false;
    bool rob = strcmp(t->model_type, "roberta") == 0;
    batch b;
    make_batch(&b, 3, 20, t->vocab, 2, rob ? 1 : 0, t->type_vocab > 1);
    double *ref = NULL;
    size_t nref = 0;
    bool ok = run_reference(dir, &b, &ref, &nref);
    const int64_t H = t->H, BS = (int64_t)b.B * b.S;
    size_t want = (size_t)(BS * H + 3 * b.B * H + (t->pooler ? b.B * H : 0) + (t->head ? b.B * t->labels : 0));
    if (ok && nref != want) {
        printf("    reference gave %zu values, expected %zu\n", nref, want);
        ok = false;
    }
    static const rlx_pooling pools[3] = {RLX_POOL_MEAN, RLX_POOL_CLS, RLX_POOL_MAX};
    float *hidden = malloc(sizeof(float) * (size_t)(BS * H)), emb[3 * 64], pooled[3 * 64], logits[3 * 8];
    for (int p = 0; p < 3 && ok; p++) {
        rlx_encoder *e = NULL;
        if (load(dir, false, pools[p], &e) != RLX_OK) {
            printf("    load: %s\n", rlx_last_error());
            ok = false;
            break;
        }
        ok = rlx_encoder_run_ids(e, b.B, b.S, b.ids, b.types, b.mask, hidden, emb, t->pooler ? pooled : NULL,
                                 t->head ? logits : NULL) == RLX_OK;
        if (!ok) printf("    run: %s\n", rlx_last_error());
        const double *r = ref;
        ok = ok && close_enough("last_hidden_state", hidden, r, BS * H, min_cos, max_abs);
        ok = ok && close_enough(p == 0 ? "mean pooling" : p == 1 ? "cls pooling" : "max pooling", emb, r + BS * H + p * b.B * H,
                                b.B * H, min_cos, max_abs);
        const double *after = r + BS * H + 3 * b.B * H;
        if (ok && t->pooler) ok = close_enough("pooler_output", pooled, after, b.B * H, min_cos, max_abs), after += b.B * H;
        if (ok && t->head) ok = close_enough("logits", logits, after, b.B * t->labels, min_cos, max_abs);
        rlx_encoder_info info;
        if (ok && rlx_encoder_get_info(e, &info) == RLX_OK && t->head &&
            (info.num_labels != t->labels || !rlx_encoder_label(e, t->labels - 1) ||
             strncmp(rlx_encoder_label(e, 0), "L0", 2) != 0)) {
            printf("    labels: %d, first '%s'\n", info.num_labels, rlx_encoder_label(e, 0));
            ok = false;
        }
        rlx_encoder_free(e);
    }
    free(hidden);
    free(ref);
    remove_tiny(dir);
    return ok;
}

static const tiny BERT = {"bert", 32, 2, 4, 64, 60, 40, 2, SFT_F32, true, true, false, 3, "gelu", NULL, NULL};

TEST(encoder_bert_matches_float64_reference) {
    if (!reference_available()) SKIP("no /usr/bin/python3 with numpy for tests/ref/encoder_ref.py");
    CHECK(check_against_reference(&BERT, 0.99999, 1e-3));
    tiny pre = BERT;   /* a task model's checkpoint: backbone tensors under "bert." */
    pre.prefixed = true;
    pre.act = "gelu_new";
    CHECK(check_against_reference(&pre, 0.99999, 1e-3));
}

TEST(encoder_roberta_distilbert_match_float64_reference) {
    if (!reference_available()) SKIP("no /usr/bin/python3 with numpy for tests/ref/encoder_ref.py");
    tiny rob = {"roberta", 32, 2, 2, 48, 50, 40, 1, SFT_F32, false, true, true, 2, "gelu", NULL, NULL};
    CHECK(check_against_reference(&rob, 0.99999, 1e-3));
    tiny db = {"distilbert", 24, 3, 3, 40, 50, 30, 0, SFT_F32, false, true, true, 4, "gelu", NULL, NULL};
    CHECK(check_against_reference(&db, 0.99999, 1e-3));
    db.act = "relu";
    db.head = false;
    CHECK(check_against_reference(&db, 0.99999, 1e-3));
}

/* Weights kept in f16 / bf16 (the reference reads the same stored values). */
TEST(encoder_half_weights_match_float64_reference) {
    if (!reference_available()) SKIP("no /usr/bin/python3 with numpy for tests/ref/encoder_ref.py");
    tiny h = BERT;
    h.wdt = SFT_F16;
    CHECK(check_against_reference(&h, 0.99999, 1e-3));
    h.wdt = SFT_BF16;
    CHECK(check_against_reference(&h, 0.99999, 1e-3));
}

/* A row's outputs do not depend on the rows batched with it or their padding. */
TEST(encoder_padding_does_not_change_other_rows) {
    char dir[] = "/tmp/rlx_enc_XXXXXX";
    CHECK(make_dir(dir) && write_tiny(dir, &BERT));
    rlx_encoder *e = NULL;
    CHECK_OK(load(dir, false, RLX_POOL_MEAN, &e));
    batch b;
    make_batch(&b, 3, 20, BERT.vocab, 2, 0, true);
    int len1 = 17;   /* row 1's real tokens */
    float all[3 * 32], one[32], hid_all[3 * 20 * 32], hid_one[17 * 32];
    CHECK_OK(rlx_encoder_run_ids(e, 3, 20, b.ids, b.types, b.mask, hid_all, all, NULL, NULL));
    int32_t ids1[17], ty1[17];
    for (int s = 0; s < len1; s++) ids1[s] = b.ids[20 + s], ty1[s] = b.types[20 + s];
    CHECK_OK(rlx_encoder_run_ids(e, 1, len1, ids1, ty1, NULL, hid_one, one, NULL, NULL));
    double worst = 0;
    for (int i = 0; i < 32; i++) worst = fmax(worst, fabs(all[32 + i] - one[i]));
    for (int i = 0; i < len1 * 32; i++) worst = fmax(worst, fabs(hid_all[20 * 32 + i] - hid_one[i]));
    CHECK_MSG(worst < 1e-5, "row 1 alone vs in the batch: max difference %g", worst);
    rlx_encoder_free(e);
    remove_tiny(dir);
}

/* The same checkpoint on Vulkan (lavapipe in CI) gives the CPU's outputs, with no host steps. */
TEST(encoder_vulkan_matches_cpu) {
    VKP_REQUIRE();
    char dir[] = "/tmp/rlx_enc_XXXXXX";
    CHECK(make_dir(dir) && write_tiny(dir, &BERT));
    rlx_encoder *c = NULL, *v = NULL;
    CHECK_OK(load(dir, false, RLX_POOL_MEAN, &c));
    CHECK_OK(load(dir, true, RLX_POOL_MEAN, &v));
    batch b;
    make_batch(&b, 3, 20, BERT.vocab, 2, 0, true);
    static float hc[3 * 20 * 32], hv[3 * 20 * 32];
    float ec[96], ev[96], pc[96], pv[96], lc[9], lv[9];
    CHECK_OK(rlx_encoder_run_ids(c, 3, 20, b.ids, b.types, b.mask, hc, ec, pc, lc));
    CHECK_OK(rlx_encoder_run_ids(v, 3, 20, b.ids, b.types, b.mask, hv, ev, pv, lv));
    double *d = malloc(sizeof(double) * 3 * 20 * 32);
    for (int i = 0; i < 3 * 20 * 32; i++) d[i] = hc[i];
    CHECK(close_enough("vulkan last_hidden_state", hv, d, 3 * 20 * 32, 0.99999, 1e-3));
    for (int i = 0; i < 96; i++) d[i] = ec[i];
    CHECK(close_enough("vulkan embedding", ev, d, 96, 0.99999, 1e-3));
    for (int i = 0; i < 9; i++) d[i] = lc[i];
    CHECK(close_enough("vulkan logits", lv, d, 9, 0.99999, 1e-3));
    free(d);
    rlx_encoder_info info;
    CHECK_OK(rlx_encoder_get_info(v, &info));
    CHECK_MSG(strcmp(info.backend, "vulkan") == 0, "backend %s", info.backend);
    rlx_encoder_free(c);
    rlx_encoder_free(v);
    remove_tiny(dir);
}

/* Text through vocab.txt: the embedding of a batch of texts equals run_ids on the ids the tokenizer makes. */
TEST(encoder_embeds_text) {
    char dir[] = "/tmp/rlx_enc_XXXXXX";
    CHECK(make_dir(dir) && write_tiny(dir, &BERT));
    rlx_encoder *e = NULL;
    CHECK_OK(load(dir, false, RLX_POOL_CLS, &e));
    rlx_encoder_info info;
    CHECK_OK(rlx_encoder_get_info(e, &info));
    CHECK(info.has_tokenizer && info.hidden == 32 && info.max_length == 40);
    const char *texts[2] = {"The cat sat on the mat.", "a reddish dog"};
    float emb[64], one[32], logits[6];
    CHECK_OK(rlx_encoder_embed(e, texts, 2, emb, 64));
    /* [CLS] a red ##dish dog [SEP] */
    int32_t ids[6] = {2, 12, 13, 14, 11, 3};
    CHECK_OK(rlx_encoder_run_ids(e, 1, 6, ids, NULL, NULL, NULL, one, NULL, NULL));
    double worst = 0;
    for (int i = 0; i < 32; i++) worst = fmax(worst, fabs(emb[32 + i] - one[i]));
    CHECK_MSG(worst < 1e-5, "text 1 vs its ids: max difference %g", worst);
    CHECK_OK(rlx_encoder_classify(e, texts, 2, logits, 6));
    int32_t tok[8], ty[8];
    int n = 0;
    CHECK_OK(rlx_encoder_tokenize(e, texts[1], NULL, NULL, NULL, 0, &n));   /* the count alone */
    CHECK(n == 6);
    CHECK_OK(rlx_encoder_tokenize(e, texts[1], NULL, tok, ty, 8, &n));
    CHECK(n == 6 && memcmp(tok, ids, sizeof ids) == 0 && ty[5] == 0);
    CHECK_OK(rlx_encoder_tokenize(e, "the cat", "a dog", tok, ty, 8, &n));   /* [CLS] the cat [SEP] a dog [SEP] */
    CHECK(n == 7 && tok[0] == 2 && tok[3] == 3 && tok[6] == 3 && ty[3] == 0 && ty[4] == 1 && ty[6] == 1);
    CHECK_STATUS(rlx_encoder_tokenize(e, "the cat", "a dog", tok, ty, 6, &n), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_encoder_embed(e, texts, 2, emb, 63), RLX_STATUS_INVALID_ARGUMENT);   /* too small */
    CHECK_STATUS(rlx_encoder_run_ids(e, 1, 41, ids, NULL, NULL, NULL, one, NULL, NULL), RLX_STATUS_INVALID_ARGUMENT);
    int32_t bad[2] = {2, 60};
    CHECK_STATUS(rlx_encoder_run_ids(e, 1, 2, bad, NULL, NULL, NULL, one, NULL, NULL), RLX_STATUS_INVALID_ARGUMENT);
    rlx_encoder_free(e);
    remove_tiny(dir);
}

/* A RoBERTa folder with a tokenizer.json (BPE, RobertaProcessing) embeds
 * text: "the cat" is <s> the cat </s> = 0 12 8 2 by the merges below. An
 * unsupported tokenizer.json leaves the ids path working, with the reason. */
TEST(encoder_roberta_tokenizer_json_embeds_text) {
    static const char tj[] =
        "{\"added_tokens\": [{\"id\": 0, \"content\": \"<s>\", \"special\": true}, {\"id\": 1, \"content\": \"<pad>\", "
        "\"special\": true}, {\"id\": 2, \"content\": \"</s>\", \"special\": true}, {\"id\": 3, \"content\": \"<unk>\", "
        "\"special\": true}], \"normalizer\": null, \"pre_tokenizer\": {\"type\": \"Whitespace\"}, "
        "\"post_processor\": {\"type\": \"RobertaProcessing\", \"sep\": [\"</s>\", 2], \"cls\": [\"<s>\", 0]}, "
        "\"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": \"<unk>\", \"vocab\": {\"<s>\": 0, \"<pad>\": 1, "
        "\"</s>\": 2, \"<unk>\": 3, \"c\": 4, \"a\": 5, \"t\": 6, \"ca\": 7, \"cat\": 8, \"h\": 9, \"e\": 10, \"th\": 11, "
        "\"the\": 12}, \"merges\": [\"c a\", \"ca t\", \"t h\", \"th e\"]}}";
    tiny rob = {"roberta", 32, 2, 2, 48, 50, 40, 1, SFT_F32, false, true, true, 2, "gelu", NULL, NULL};
    char dir[] = "/tmp/rlx_enc_XXXXXX", path[512];
    CHECK(make_dir(dir) && write_tiny(dir, &rob));
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    CHECK(write_text(path, tj));
    rlx_encoder *e = NULL;
    CHECK_OK(load(dir, false, RLX_POOL_MEAN, &e));
    rlx_encoder_info info;
    CHECK_OK(rlx_encoder_get_info(e, &info));
    CHECK(info.has_tokenizer);
    int32_t tok[8], ty[8], want[4] = {0, 12, 8, 2};
    int n = 0;
    CHECK_OK(rlx_encoder_tokenize(e, "the cat", NULL, tok, ty, 8, &n));
    CHECK(n == 4 && memcmp(tok, want, sizeof want) == 0);
    CHECK_OK(rlx_encoder_tokenize(e, "the", "cat", tok, ty, 8, &n));   /* <s> the </s></s> cat </s> */
    CHECK(n == 6 && tok[2] == 2 && tok[3] == 2 && tok[4] == 8 && ty[4] == 0);
    const char *texts[2] = {"the cat", "cat the the cat"};
    float emb[64], one[32];
    CHECK_OK(rlx_encoder_embed(e, texts, 2, emb, 64));
    CHECK_OK(rlx_encoder_run_ids(e, 1, 4, want, NULL, NULL, NULL, one, NULL, NULL));
    double worst = 0;
    for (int i = 0; i < 32; i++) worst = fmax(worst, fabs(emb[i] - one[i]));
    CHECK_MSG(worst < 1e-5, "text 0 vs its ids: max difference %g", worst);
    rlx_encoder_free(e);
    /* an unsupported normalizer: the model loads, texts say why */
    CHECK(write_text(path, "{\"normalizer\": {\"type\": \"Nmt\"}, \"model\": {\"type\": \"WordPiece\", \"unk_token\": \"u\", "
                           "\"vocab\": {\"u\": 0}}}"));
    CHECK_OK(load(dir, false, RLX_POOL_MEAN, &e));
    CHECK_STATUS(rlx_encoder_embed(e, texts, 2, emb, 64), RLX_STATUS_UNSUPPORTED);
    CHECK_MSG(strstr(rlx_last_error(), "Nmt"), "message: %s", rlx_last_error());
    CHECK_OK(rlx_encoder_run_ids(e, 1, 4, want, NULL, NULL, NULL, one, NULL, NULL));
    rlx_encoder_free(e);
    /* a malformed one is an error of the load */
    CHECK(write_text(path, "{\"model\": [}"));
    CHECK_STATUS(load(dir, false, RLX_POOL_MEAN, &e), RLX_STATUS_FORMAT);
    remove(path);
    remove_tiny(dir);
}

/* A bad folder is an error naming what is wrong, never a crash. */
TEST(encoder_bad_folders_are_named_errors) {
    char dir[] = "/tmp/rlx_enc_XXXXXX";
    CHECK(make_dir(dir));
    rlx_encoder *e = NULL;
    CHECK_STATUS(load(dir, false, RLX_POOL_MEAN, &e), RLX_STATUS_IO);   /* no config.json */
    CHECK(strstr(rlx_last_error(), "config.json") != NULL);
    tiny t = BERT;
    t.drop = "encoder.layer.1.attention.self.key.weight";
    CHECK(write_tiny(dir, &t));
    CHECK_STATUS(load(dir, false, RLX_POOL_MEAN, &e), RLX_STATUS_FORMAT);
    CHECK_MSG(strstr(rlx_last_error(), "encoder.layer.1.attention.self.key.weight") != NULL, "%s", rlx_last_error());
    t.drop = NULL;
    t.bad_shape = "encoder.layer.0.intermediate.dense.weight";
    CHECK(write_tiny(dir, &t));
    CHECK_STATUS(load(dir, false, RLX_POOL_MEAN, &e), RLX_STATUS_FORMAT);
    CHECK_MSG(strstr(rlx_last_error(), "intermediate.dense.weight") && strstr(rlx_last_error(), "[63, 32]"), "%s",
              rlx_last_error());
    t.bad_shape = NULL;
    CHECK(write_tiny(dir, &t));
    char path[512];
    snprintf(path, sizeof path, "%s/config.json", dir);
    /* no id2label (older configs): loads, the head's rows name the labels */
    CHECK(write_text(path, "{\"model_type\": \"bert\", \"vocab_size\": 60, \"hidden_size\": 32, \"num_hidden_layers\": 2, "
                           "\"num_attention_heads\": 4, \"intermediate_size\": 64, \"max_position_embeddings\": 40}"));
    CHECK_OK(load(dir, false, RLX_POOL_MEAN, &e));
    CHECK_MSG(rlx_encoder_label(e, 2) && strcmp(rlx_encoder_label(e, 2), "LABEL_2") == 0 && !rlx_encoder_label(e, 3),
              "labels: %s", rlx_encoder_label(e, 2));
    rlx_encoder_free(e);
    e = NULL;
    CHECK(write_text(path, "{\"model_type\": \"gpt2\", \"vocab_size\": 10}"));
    CHECK_STATUS(load(dir, false, RLX_POOL_MEAN, &e), RLX_STATUS_UNSUPPORTED);
    CHECK(strstr(rlx_last_error(), "gpt2") != NULL);
    CHECK(write_text(path, "{\"model_type\": \"bert\", \"vocab_size\": 60, \"hidden_size\": 30, \"num_hidden_layers\": 2, "
                           "\"num_attention_heads\": 4, \"intermediate_size\": 64}"));
    CHECK_STATUS(load(dir, false, RLX_POOL_MEAN, &e), RLX_STATUS_FORMAT);   /* 30 % 4 */
    CHECK(strstr(rlx_last_error(), "multiple") != NULL);
    CHECK(write_text(path, "{\"model_type\": \"bert\", \"vocab_size\": 60, \"hidden_size\": 32, \"num_attention_heads\": 4, "
                           "\"intermediate_size\": 64}"));
    CHECK_STATUS(load(dir, false, RLX_POOL_MEAN, &e), RLX_STATUS_FORMAT);   /* no num_hidden_layers */
    CHECK(strstr(rlx_last_error(), "num_hidden_layers") != NULL);
    CHECK(write_text(path, "{\"model_type\": \"bert\", \"vocab_size\": 60, \"hidden_size\": 32, \"num_hidden_layers\": -2, "
                           "\"num_attention_heads\": 4, \"intermediate_size\": 64}"));
    CHECK_STATUS(load(dir, false, RLX_POOL_MEAN, &e), RLX_STATUS_FORMAT);
    CHECK(write_text(path, "{\"model_type\": \"bert\", \"vocab_size\": 60, \"hidden_size\": 32, \"num_hidden_layers\": 2, "
                           "\"num_attention_heads\": 4, \"intermediate_size\": 64, \"hidden_act\": \"mish\"}"));
    CHECK_STATUS(load(dir, false, RLX_POOL_MEAN, &e), RLX_STATUS_UNSUPPORTED);
    CHECK(write_text(path, "{\"model_type\": \"bert\", \"vocab_size\": 60,"));   /* truncated JSON */
    CHECK_STATUS(load(dir, false, RLX_POOL_MEAN, &e), RLX_STATUS_FORMAT);
    CHECK(e == NULL);
    CHECK_STATUS(rlx_encoder_load(NULL, NULL, &e), RLX_STATUS_INVALID_ARGUMENT);
    remove_tiny(dir);
}

/* The README's encoder example, compiled by `make test`, on a tiny model. */
TEST(encoder_readme_example_runs) {
    const char *exe = test_program("RLX_README_ENCODER_EXAMPLE", "build/readme_encoder_example");
    if (access(exe, X_OK) != 0) SKIP("%s not built (make test builds it)", exe);
    char dir[] = "/tmp/rlx_enc_XXXXXX", cmd[512], out[1024];
    CHECK(make_dir(dir) && write_tiny(dir, &BERT));
    snprintf(cmd, sizeof cmd, "RLX_DEVICE=cpu %s %s 2>&1", exe, dir);
    int code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0 && strstr(out, "bert, 32 dims on cpu: cosine "), "exit %d: %s", code, out);
    remove_tiny(dir);
}

/* `rlx embed` (text, --json, --npy) and `rlx classify` on a tiny model: one line out per line in. */
TEST(encoder_cli_embed_and_classify) {
    const char *cli = test_program("RLX_CLI", "build/rlx");
    if (access(cli, X_OK) != 0) SKIP("%s not built", cli);
    char dir[] = "/tmp/rlx_enc_XXXXXX", in[] = "/tmp/rlx_enc_in_XXXXXX", npy[] = "/tmp/rlx_enc_npy_XXXXXX";
    char cmd[1024];
    static char out[1 << 16];
    CHECK(make_dir(dir) && write_tiny(dir, &BERT) && test_temp_file(in) && test_temp_file(npy));
    CHECK(write_text(in, "the cat sat\n\na reddish dog\n"));
    snprintf(cmd, sizeof cmd, "%s embed -m %s --device cpu --pool cls --normalize -i %s 2>/dev/null", cli, dir, in);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    CHECK_MSG(test_count(out, "\n") == 3, "%s", out);
    float first = 0;
    CHECK(sscanf(out, "%f", &first) == 1 && fabsf(first) <= 1.0f);
    snprintf(cmd, sizeof cmd, "%s embed -m %s --device cpu --json --batch 2 < %s 2>/dev/null", cli, dir, in);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    CHECK_MSG(test_count(out, "[") == 3 && test_count(out, "]\n") == 3, "%s", out);
    snprintf(cmd, sizeof cmd, "%s embed -m %s --device cpu --npy %s -i %s 2>&1", cli, dir, npy, in);
    CHECK(test_run_command(cmd, out, sizeof out) == 0 && strstr(out, "3 texts"));
    void *data = NULL;
    size_t bytes = 0;
    CHECK(test_read_file(npy, &data, &bytes));
    CHECK_MSG(bytes == 128 + 3 * 32 * 4 && memcmp(data, "\x93NUMPY", 6) == 0 && strstr((char *)data + 10, "(3, 32)"),
              "npy of %zu bytes", bytes);
    free(data);
    snprintf(cmd, sizeof cmd, "%s classify -m %s --device cpu -i %s 2>/dev/null", cli, dir, in);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    CHECK_MSG(test_count(out, "\n") == 3 && out[0] == 'L' && strchr(out, '\t'), "%s", out);
    snprintf(cmd, sizeof cmd, "%s embed -m %s/missing --device cpu -i %s 2>&1", cli, dir, in);
    CHECK(test_run_command(cmd, out, sizeof out) != 0 && strstr(out, "config.json"));
    snprintf(cmd, sizeof cmd, "%s embed -m %s --pool median 2>&1 < /dev/null", cli, dir);
    CHECK(test_run_command(cmd, out, sizeof out) == 2);
    remove(in);
    remove(npy);
    remove_tiny(dir);
}

/* On Vulkan every node of the encoder graph runs on the GPU (no host steps),
 * for f32 and f16 weights, with the pooler and a head. */
TEST(encoder_graph_has_no_host_steps_on_vulkan) {
    VKP_REQUIRE();
    static const char cfg[] = "{\"model_type\": \"bert\", \"vocab_size\": 60, \"hidden_size\": 32, \"num_hidden_layers\": 2, "
                              "\"num_attention_heads\": 4, \"intermediate_size\": 64, \"max_position_embeddings\": 40, "
                              "\"id2label\": {\"0\": \"a\", \"1\": \"b\"}}";
    json_doc *d = NULL;
    CHECK_OK(json_parse(cfg, sizeof cfg - 1, NULL, &d));
    enc_config c;
    CHECK_OK(enc_config_parse(json_root(d), "config", &c));
    json_free(d);
    for (int half = 0; half < 2; half++)
        for (int pool = 0; pool < 3; pool++) {
            enc_parts p;
            memset(&p, 0, sizeof p);
            p.has_pooler = p.has_head = true;
            for (int r = 0; r < ER_COUNT; r++) p.wdtype[r] = half ? RLX_F16 : RLX_F32;
            rlx_graph *g = enc_build_graph(&c, &p, (enc_pooling)pool, pool == 1);
            rlx_compile_options o;
            vkp_options(&o);
            rlx_exec *e = NULL;
            int32_t ids[2 * 16] = {0};
            float mask[2 * 16];
            for (int i = 0; i < 32; i++) mask[i] = i % 16 < 11;
            rlx_tensor in[4] = {
                {.name = "input_ids", .dtype = RLX_I32, .rank = 2, .dims = {2, 16}, .data = ids, .bytes = sizeof ids},
                {.name = "position_ids", .dtype = RLX_I32, .rank = 2, .dims = {2, 16}, .data = ids, .bytes = sizeof ids},
                {.name = "token_type_ids", .dtype = RLX_I32, .rank = 2, .dims = {2, 16}, .data = ids, .bytes = sizeof ids},
                {.name = "attention_mask", .dtype = RLX_F32, .rank = 2, .dims = {2, 16}, .data = mask, .bytes = sizeof mask}};
            rlx_exec_stats st;
            memset(&st, 0, sizeof st);
            bool ok = g && rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_run(e, in, 4) == RLX_OK &&
                      rlx_exec_get_stats(e, &st) == RLX_OK;
            char *rep = ok && st.host_steps ? rlx_exec_report(e) : NULL;
            CHECK_MSG(ok && st.host_steps == 0, "%s weights, pooling %d: %s %d host steps\n%s", half ? "f16" : "f32", pool,
                      ok ? "" : rlx_last_error(), st.host_steps, rep ? rep : "");
            free(rep);
            rlx_exec_free(e);
            rlx_graph_free(g);
        }
    enc_config_clear(&c);
}
