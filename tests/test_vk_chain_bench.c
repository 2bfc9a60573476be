/*
 * test_vk_chain_bench.c — the persistent decode-chain experiment
 * (bench/vk_chain.c, bench/shaders/decode_chain.comp) checks its kernel
 * itself: every stage of a 1B-shaped layer against float64 (with x rounded
 * as the shader rounds it, to 1e-5), and the persistent dispatch against the
 * per-stage one bit for bit. Run on one workgroup: lavapipe (Mesa 22.3) ran
 * two workgroups of the grid-barrier chain wrongly now and then (bench/RESULTS.md,
 * ninth session); the H200 checks it on the full grid. `make test` passes the
 * binary's path in RLX_VK_CHAIN.
 */
#include "harness.h"
#include "vk_parity.h"
#include <stdio.h>
#include <string.h>

TEST(vk_chain_bench_check) {
    VKP_REQUIRE();
    char out[16384], cmd[512];
    snprintf(cmd, sizeof cmd, "%s --model 1b --layers 1 --grids 1 --wg 256 --runs 1 --check 2>&1",
             test_program("RLX_VK_CHAIN", "build/vk_chain"));
    int code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "%s exited %d: %s", cmd, code, out);
    CHECK_MSG(strstr(out, "vk_chain: check passed") != NULL, "vk_chain printed: %s", out);
    CHECK(strstr(out, "| persistent + prefetch | 1 |") != NULL);
}
