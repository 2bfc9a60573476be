/*
 * test_onnx_import.c — ONNX models exported by PyTorch (Debian's
 * python3-torch, tests/ref/onnx_export_ref.py) run through rlx_onnx_load on
 * the CPU and on Vulkan (lavapipe in CI), against PyTorch's float64 outputs
 * at two batch sizes (the batch is a dynamic axis, so a symbol): an MLP
 * (Gemm, Clip, GELU written with Erf, Softmax), and a pre-LN attention block exported at opset 13
 * (LayerNorm decomposed, shape arithmetic from Shape / Gather / Concat) and
 * 17 (LayerNormalization); a small CNN (Conv 2-D and 1-D with padding,
 * stride, dilation and a depthwise group, BatchNormalization, global
 * average pooling as an export writes it); max and average pooling with
 * padding, ceil mode and both divisors (resnet's stem among them); Pad in
 * reflect, edge and constant modes; torchvision's resnet18 and mobilenet_v2
 * (random weights, 64x64) and a small ViT; a
 * hand-made model whose Clip bounds are float
 * initializers, as newer exporters write them; Resize as nn.Upsample and
 * F.interpolate export it (nearest, bilinear, bicubic, align_corners both
 * ways, by scale and by size, 1-d and 3-d). A model with unsupported operators fails with one
 * error naming all of them; bad files fail with FORMAT or IO.
 */
#include "harness.h"
#include "rlx.h"
#include "vk_parity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[] = "/tmp/rlx_onnx_imp_XXXXXX";
static bool made, made_ok;

static void remove_models(void) {
    char cmd[600], out[16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    test_run_command(cmd, out, sizeof out);
}

static bool models(void) {
    if (made) return made_ok;
    made = true;
    if (!mkdtemp(dir)) return false;
    atexit(remove_models);
    const char *py = test_program("RLX_PYTHON", "/usr/bin/python3");
    char cmd[1024], out[4096];
    snprintf(cmd, sizeof cmd, "%s tests/ref/onnx_export_ref.py %s 2>&1", py, dir);
    int rc = test_run_command(cmd, out, sizeof out);
    if (rc != 0) harness_fail(__FILE__, __LINE__, "onnx_export_ref.py failed (python3-torch, python3-onnx): %.600s", out);
    made_ok = rc == 0;
    return made_ok;
}

static void check_batches(const char *name, int n_out, bool vulkan, int max_batch) {
    if (!models()) return;
    char path[600];
    snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
    rlx_onnx *m = NULL;
    CHECK_MSG(rlx_onnx_load(path, &m) == RLX_OK, "%s: %s", name, rlx_last_error());
    rlx_compile_options o;
    if (vulkan) vkp_options(&o);
    else rlx_compile_options_init(&o);
    rlx_exec *e = NULL;
    CHECK_MSG(rlx_onnx_compile(m, &o, &e) == RLX_OK, "%s: %s", name, rlx_last_error());
    const char *in_name = NULL;
    rlx_tensor info;
    CHECK_OK(rlx_exec_input_info(e, 0, &info));
    in_name = info.name;
    for (int b = 2; b <= max_batch; b++) {
        rlx_tensor x;
        snprintf(path, sizeof path, "%s/%s.in.%d.npy", dir, name, b);
        CHECK_OK(rlx_npy_load(path, &x));
        x.name = in_name;
        CHECK_MSG(rlx_exec_run(e, &x, 1) == RLX_OK, "%s batch %d: %s", name, b, rlx_last_error());
        free(x.data);
        for (int k = 0; k < n_out; k++) {
            rlx_tensor want, oi;
            snprintf(path, sizeof path, "%s/%s.out%d.%d.npy", dir, name, k, b);
            CHECK_OK(rlx_npy_load(path, &want));
            CHECK_OK(rlx_exec_output_info(e, k, &oi));
            size_t n = want.bytes / 4;
            float *got = malloc(want.bytes);
            double *ref = malloc(n * sizeof *ref);
            CHECK_MSG(rlx_exec_read_output(e, oi.name, got, want.bytes) == RLX_OK, "%s: %s", name, rlx_last_error());
            for (size_t i = 0; i < n; i++) ref[i] = ((float *)want.data)[i];
            char what[160];
            snprintf(what, sizeof what, "%s%s batch %d output %s", name, vulkan ? " (Vulkan)" : "", b, oi.name);
            CHECK(test_close_f32_f64(what, got, ref, (int64_t)n, 1e-4));
            free(got), free(ref), free(want.data);
        }
    }
    rlx_exec_free(e);
    rlx_onnx_free(m);
}

static void check_model(const char *name, int n_out, bool vulkan) { check_batches(name, n_out, vulkan, 3); }

TEST(onnx_import_torchvision_resnet18_mobilenet_v2_vit) {
    check_model("resnet18", 1, false);
    check_model("mobilenet_v2", 1, false);
    check_model("vit", 1, false);
}
TEST(vk_onnx_import_torchvision_resnet18_mobilenet_v2_vit) {
    VKP_REQUIRE();
    check_batches("resnet18", 1, true, 2);
    check_batches("mobilenet_v2", 1, true, 2);
    check_model("vit", 1, true);
}
/* resnet18 exported with its BatchNormalization nodes: each folds into its
 * conv (and the ReLU after it joins the conv), so the program has neither,
 * and the outputs still match PyTorch's (the ReLUs after residual adds stay). */
static void check_bn_folded(bool vulkan) {
    if (!models()) return;
    char path[600];
    snprintf(path, sizeof path, "%s/resnet18_bn.onnx", dir);
    rlx_onnx *m = NULL;
    CHECK_MSG(rlx_onnx_load(path, &m) == RLX_OK, "resnet18_bn: %s", rlx_last_error());
    char *dump = rlx_graph_dump(rlx_onnx_graph(m));
    bool has_bn = dump && strstr(dump, "batch_norm");
    free(dump);
    if (!has_bn) {   /* torch 2's exporter folds BatchNormalization into the convs itself, even with training=PRESERVE */
        rlx_onnx_free(m);
        SKIP("the exporter folded resnet18_bn's BatchNormalization nodes: nothing left to fold");
    }
    rlx_compile_options o;
    if (vulkan) vkp_options(&o);
    else rlx_compile_options_init(&o);
    rlx_exec *e = NULL;
    CHECK_MSG(rlx_onnx_compile(m, &o, &e) == RLX_OK, "resnet18_bn: %s", rlx_last_error());
    rlx_tensor x;   /* the batch is a symbol: the program exists after a run */
    snprintf(path, sizeof path, "%s/resnet18_bn.in.2.npy", dir);
    CHECK_OK(rlx_npy_load(path, &x));
    x.name = "image";
    CHECK_MSG(rlx_exec_run(e, &x, 1) == RLX_OK, "resnet18_bn: %s", rlx_last_error());
    free(x.data);
    char *rep = rlx_exec_report(e);
    /* resnet18 has 17 relus: 9 after a batch_norm join their convs, and the 8 that
       follow residual adds join the conv before the add together with the add */
    int relus = 0, adds = 0;
    for (const char *p = rep; p && (p = strstr(p, "relu #")); p++) relus++;
    for (const char *p = rep; p && (p = strstr(p, "add #")); p++) adds++;
    CHECK_MSG(rep && !strstr(rep, "batch_norm") && relus == 0 && adds == 0,
              "folded program (%d relus, %d adds): %s", relus, adds, rep ? rep : "(none)");
    free(rep);
    rlx_exec_free(e);
    rlx_onnx_free(m);
    check_batches("resnet18_bn", 1, vulkan, vulkan ? 2 : 3);
}
TEST(onnx_import_resnet18_batch_norm_folds) { check_bn_folded(false); }
TEST(vk_onnx_import_resnet18_batch_norm_folds) { VKP_REQUIRE(); check_bn_folded(true); }
/* GroupNorm and InstanceNorm2d as torch exports them (InstanceNormalization),
 * ConvNeXt's LayerNorm2d (transposes around LayerNormalization at opset 17),
 * and GroupNormalization at opsets 21 (per-channel scale) and 18 (per group). */
TEST(onnx_import_norms_match_torch) {
    check_model("norms13", 1, false);
    check_model("norms17", 1, false);
    check_model("group_norm21", 1, false);
    check_model("group_norm18", 1, false);
}
TEST(vk_onnx_import_norms_match_torch) {
    VKP_REQUIRE();
    check_model("norms13", 1, true);
    check_model("norms17", 1, true);
    check_model("group_norm21", 1, true);
}
TEST(onnx_import_mlp_matches_torch) { check_model("mlp", 1, false); }
TEST(onnx_import_float_initializer_bounds) { check_model("clip_init", 1, false); }
/* External data: read from beside the model; a location outside its folder
 * and a length past the end of the file are FORMAT errors naming them. */
TEST(onnx_import_external_data) {
    check_model("clip_ext", 1, false);
    char path[600];
    rlx_onnx *m = NULL;
    snprintf(path, sizeof path, "%s/ext_escape.onnx", dir);
    CHECK_STATUS(rlx_onnx_load(path, &m), RLX_STATUS_FORMAT);
    CHECK_MSG(strstr(rlx_last_error(), "leaves the model's folder"), "%s", rlx_last_error());
    snprintf(path, sizeof path, "%s/ext_past_end.onnx", dir);
    CHECK_STATUS(rlx_onnx_load(path, &m), RLX_STATUS_FORMAT);
    CHECK_MSG(strstr(rlx_last_error(), "does not fit"), "%s", rlx_last_error());
    CHECK(m == NULL);
}
TEST(onnx_import_auto_pad_same) { check_model("auto_pad", 1, false); }
/* Shape arithmetic of newer exporters (GatherND on a shape, Mod with both
 * sign rules, Max) folds at import into a Reshape's target. */
TEST(onnx_import_shape_arithmetic_folds) { check_model("shape_fold", 1, false); }
/* GatherND of a tensor by import-time index tuples: a gather of rows (static shape). */
TEST(onnx_import_gather_nd_of_a_tensor) { check_batches("gather_nd", 2, false, 2); }
TEST(vk_onnx_import_gather_nd_of_a_tensor) { VKP_REQUIRE(); check_batches("gather_nd", 2, true, 2); }
/* What the shape folding and GatherND refuse: each a status and a message saying why. */
TEST(onnx_import_refuses_bad_shape_arithmetic) {
    if (!models()) return;
    static const struct { const char *name; rlx_status st; const char *why; } bad[] = {
        {"bad_gather_nd_index", RLX_STATUS_INVALID_ARGUMENT, "GatherND index out of range"},
        {"bad_gather_nd_runtime", RLX_STATUS_UNSUPPORTED, "GatherND with run-time indices"},
        {"bad_mod_tensor", RLX_STATUS_UNSUPPORTED, "Mod on run-time tensors"},
        {"bad_reshape_count", RLX_STATUS_INVALID_ARGUMENT, "to another count"},
        {"bad_transpose_perm", RLX_STATUS_INVALID_ARGUMENT, "not a permutation"},
        {"bad_scaled_symbol_add", RLX_STATUS_UNSUPPORTED, "arithmetic on a symbolic dim"},
        {"bad_two_inferred", RLX_STATUS_UNSUPPORTED, "more than one dim to infer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.onnx", dir, bad[i].name);
        rlx_onnx *m = NULL;
        rlx_status st = rlx_onnx_load(path, &m);
        CHECK_MSG(st == bad[i].st && !m && strstr(rlx_last_error(), bad[i].why), "%s: status %d, '%s'", bad[i].name, (int)st,
                  rlx_last_error());
    }
}
TEST(onnx_import_depth_to_space) { check_model("depth_space", 3, false); }
TEST(vk_onnx_import_depth_to_space) { VKP_REQUIRE(); check_model("depth_space", 3, true); }
/* nn.Upsample nearest / bilinear (align_corners both ways, by scale and by size), F.interpolate
 * bicubic both ways, nearest down by size, 1-d linear and trilinear, against PyTorch */
TEST(onnx_import_upsample) { check_model("upsample", 8, false); }
TEST(vk_onnx_import_upsample) { VKP_REQUIRE(); check_model("upsample", 8, true); }
/* opset 19's Resize attributes against the spec's formulas (numpy float64); tf_crop_and_resize refused */
TEST(onnx_import_resize_opset19) {
    check_model("resize19", 4, false);
    if (!models()) return;
    char path[600];
    snprintf(path, sizeof path, "%s/resize_crop.onnx", dir);
    rlx_onnx *m = NULL;
    CHECK_STATUS(rlx_onnx_load(path, &m), RLX_STATUS_UNSUPPORTED);
    CHECK_MSG(strstr(rlx_last_error(), "crop") && strstr(rlx_last_error(), "tf_crop_and_resize"), "%s", rlx_last_error());
}
TEST(vk_onnx_import_resize_opset19) { VKP_REQUIRE(); check_model("resize19", 4, true); }
TEST(onnx_import_cnn_matches_torch) { check_model("cnn", 1, false); }
TEST(vk_onnx_import_cnn_matches_torch) { VKP_REQUIRE(); check_model("cnn", 1, true); check_model("pools", 1, true); }
TEST(onnx_import_pooling_matches_torch) { check_model("pools", 1, false); }
TEST(onnx_import_conv_transpose_matches_torch) { check_model("convt", 1, false); }
TEST(vk_onnx_import_conv_transpose_matches_torch) { VKP_REQUIRE(); check_model("convt", 1, true); }
TEST(onnx_import_pad_modes_match_torch) { check_model("pads", 3, false); }
TEST(vk_onnx_import_pad_modes_match_torch) { VKP_REQUIRE(); check_model("pads", 3, true); }
TEST(onnx_import_attention_opset13_matches_torch) { check_model("attn13", 2, false); }
TEST(onnx_import_attention_opset17_matches_torch) { check_model("attn17", 2, false); }
TEST(vk_onnx_import_mlp_matches_torch) { VKP_REQUIRE(); check_model("mlp", 1, true); }
TEST(vk_onnx_import_attention_matches_torch) { VKP_REQUIRE(); check_model("attn17", 2, true); check_model("attn13", 2, true); }

TEST(onnx_import_lists_every_unsupported_operator) {
    if (!models()) return;
    char path[600];
    snprintf(path, sizeof path, "%s/unsupported.onnx", dir);
    rlx_onnx *m = (rlx_onnx *)1;
    CHECK_STATUS(rlx_onnx_load(path, &m), RLX_STATUS_UNSUPPORTED);
    CHECK(m == NULL);
    const char *msg = rlx_last_error();
    CHECK_MSG(strstr(msg, "2 operators are not supported") && strstr(msg, "Einsum (2 nodes)") &&
                  strstr(msg, "NonMaxSuppression (1 node)"),
              "message: %s", msg);
    CHECK_STATUS(rlx_onnx_load("/nonexistent/model.onnx", &m), RLX_STATUS_IO);
    char bad[] = "/tmp/rlx_onnx_bad_XXXXXX";
    CHECK(test_temp_file(bad));
    FILE *f = fopen(bad, "wb");
    fputs("this is not a protobuf \xff\xff\xff", f);
    fclose(f);
    CHECK_STATUS(rlx_onnx_load(bad, &m), RLX_STATUS_FORMAT);
    remove(bad);
    CHECK_STATUS(rlx_onnx_load(NULL, &m), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_onnx_compile(NULL, NULL, NULL), RLX_STATUS_INVALID_ARGUMENT);
}

/* rlx inspect and rlx run on an exported model: outputs as .npy equal the
 * library's, and inspect marks the unsupported operators. */
TEST(onnx_cli_inspect_and_run) {
    if (!models()) return;
    const char *rlx = test_program("RLX_CLI", "build/rlx");
    char cmd[2048], out[8192];
    snprintf(cmd, sizeof cmd, "%s inspect %s/attn17.onnx 2>&1", rlx, dir);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "[batch, 5, 32]") && strstr(out, "LayerNormalization") && strstr(out, "every operator is imported"),
              "inspect: %s", out);
    snprintf(cmd, sizeof cmd, "%s inspect %s/unsupported.onnx 2>&1", rlx, dir);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "Einsum") && strstr(out, "NO") && strstr(out, "not importable"), "inspect: %s", out);
    snprintf(cmd, sizeof cmd, "%s run %s/attn17.onnx --input x=%s/attn17.in.3.npy --out %s/run --runs 3 2>&1", rlx, dir, dir, dir);
    CHECK_MSG(test_run_command(cmd, out, sizeof out) == 0, "run: %s", out);
    CHECK_MSG(strstr(out, "pooled.npy  f32 [3, 32]") && strstr(out, "3 runs"), "run: %s", out);
    char path[700];
    for (int k = 0; k < 2; k++) {
        rlx_tensor got, want;
        snprintf(path, sizeof path, "%s/run/%s.npy", dir, k ? "pooled" : "y");
        CHECK_OK(rlx_npy_load(path, &got));
        snprintf(path, sizeof path, "%s/attn17.out%d.3.npy", dir, k);
        CHECK_OK(rlx_npy_load(path, &want));
        CHECK(got.bytes == want.bytes);
        size_t n = want.bytes / 4;
        double *ref = malloc(n * sizeof *ref);
        for (size_t i = 0; i < n; i++) ref[i] = ((float *)want.data)[i];
        CHECK(test_close_f32_f64("rlx run", got.data, ref, (int64_t)n, 1e-4));
        free(ref), free(got.data), free(want.data);
    }
    snprintf(cmd, sizeof cmd, "%s run %s/unsupported.onnx --input x=%s/mlp.in.2.npy 2>&1", rlx, dir, dir);
    CHECK(test_run_command(cmd, out, sizeof out) == 1 && strstr(out, "NonMaxSuppression (1 node)"));
    snprintf(cmd, sizeof cmd, "%s run %s/mlp.onnx --input %s/nonexistent.npy 2>&1", rlx, dir, dir);
    CHECK(test_run_command(cmd, out, sizeof out) == 1 && strstr(out, "nonexistent.npy"));
}
