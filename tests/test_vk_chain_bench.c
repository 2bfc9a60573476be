/*
 * test_vk_chain_bench.c — the persistent decode-chain experiment
 * (bench/vk_chain.c, bench/shaders/decode_chain.comp) checks its kernel
 * itself: every stage of a 1B-shaped layer against float64 (with x rounded
 * as the shader rounds it, to 1e-5), and the persistent dispatch against the
 * per-stage one bit for bit, with x rounded by every workgroup and handed on
 * as images (--xim 1), and with Q8_0 weights (--quant q8_0). Run on one workgroup and small shapes: lavapipe
 * ends every loop of an invocation once all its loops together have run
 * 65535 iterations (docs/gpu.md, pitfalls), which a grid wait's polling or a
 * long tile loop reach; the H200 checks the full grid. `make test` passes
 * the binary's path in RLX_VK_CHAIN_BIN.
 */
#include "harness.h"
#include "vk_parity.h"
#include <stdio.h>
#include <string.h>

/* Runs vk_chain with args and --check; the output must say the check passed
 * and show the row of the mode named. */
static void run_checked(const char *args, const char *mode_row) {
    char out[16384], cmd[512];
    snprintf(cmd, sizeof cmd, "%s %s --runs 1 --check 2>&1", test_program("RLX_VK_CHAIN_BIN", "build/vk_chain"), args);
    int code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "%s exited %d: %s", cmd, code, out);
    CHECK_MSG(strstr(out, "vk_chain: check passed") != NULL, "vk_chain printed: %s", out);
    CHECK_MSG(strstr(out, mode_row) != NULL, "no '%s' row in: %s", mode_row, out);
}

TEST(vk_chain_bench_check) {
    VKP_REQUIRE();
    run_checked("--model tiny --layers 2 --grids 1 --wg 256", "| persistent + prefetch | 1 |");
    /* flow (no pipeline barriers, counter waits) with a second pipeline on
     * odd stages whose shared x is twice the size: the same bits */
    run_checked("--model tiny --layers 2 --grids 1 --wg 256 --alt 2 --modes 0,3,4", "| flow: dispatches, counter waits | 1 |");
    /* x handed on as rounded images: the persistent result must still equal
     * the per-stage one (which rounds x itself) bit for bit */
    run_checked("--model tiny --layers 2 --grids 1 --wg 256 --xim 1", "| persistent + prefetch | 1 |");
    /* Q8_0 weights in the library's planar rows, x in position order */
    run_checked("--model tiny --layers 2 --grids 1 --wg 256 --quant q8_0 --xl 0 --modes 1,4",
                "| per-stage dispatches, no timestamps between | 1 |");
}

/* Arguments the chain cannot honour are refused (exit 2) with the reason,
 * before any device work. */
TEST(vk_chain_bench_refuses) {
    VKP_REQUIRE();   /* vk_chain is built only with Vulkan */
    static const struct { const char *args, *says; } cases[] = {
        {"--quant q5_k", "--quant is q4_k or q8_0"},
        {"--quant q8_0", "--quant q8_0 needs --xl 0"},   /* Q8_0 reads x in position order */
        {"--quant q8_0 --xl 0 --xim 1", "--quant q8_0 needs --xl 0 and no --xim"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[4096], cmd[512];
        snprintf(cmd, sizeof cmd, "%s --model tiny %s 2>&1", test_program("RLX_VK_CHAIN_BIN", "build/vk_chain"), cases[i].args);
        int code = test_run_command(cmd, out, sizeof out);
        CHECK_MSG(code == 2 && strstr(out, cases[i].says), "%s: exit %d, printed %s", cmd, code, out);
    }
}
