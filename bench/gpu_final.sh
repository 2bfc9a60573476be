#!/usr/bin/env bash
# One device call for the LLM work (see docs/gpu.md): Vulkan tests on the GPU,
# then bench/llm_bench for Llama-3.2-1B and Llama-3-8B shapes at Q8_0 and
# Q4_K_M, with the decode matvec's rows-per-subgroup choices on 1B Q4_K_M.
set -u
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
out=${OUT:-/tmp}
RLX_REQUIRE_VULKAN=1 RLX_TEST_VK_DEVICE=H200 RLX_CLI=build/rlx build/rlx_tests ${TESTS:-vk_ kv_cache llama model_ dequant rope planner} > "$out/tests.txt" 2>&1
grep -E "^FAIL" -B4 "$out/tests.txt" | tail -30; tail -1 "$out/tests.txt"
bw=${BW:-4000}   # GB/s: the H200's copy bandwidth through Vulkan (vk_bench, 2026-11-29, bench/HISTORY.md)
for nr in ${NRS:-1 2 4}; do
    RLX_VK_DQ_NR=$nr build/llm_bench --device H200 --model 1b --quant q4_k_m --prompt 128 --decode 32 --bandwidth $bw 2>&1 | grep RESULT | sed "s/^/NR=$nr /"
done
for model in 1b 8b; do
    for q in q8_0 q4_k_m; do
        build/llm_bench --device H200 --model $model --quant $q --prompt 128 --decode 32 --bandwidth $bw > "$out/one.txt" 2>&1
        grep "^| $model" "$out/one.txt" >> "$out/llm.txt" || tail -3 "$out/one.txt"
        grep RESULT "$out/one.txt"
    done
done
head -2 "$out/one.txt"; cat "$out/llm.txt"
