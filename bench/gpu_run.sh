#!/usr/bin/env bash
# Runs on the GPU machine (see docs/gpu.md): installs the carried Vulkan
# loader, lists devices, runs the Vulkan tests on the GPU, then the benchmarks
# against PyTorch. Usage: bash bench/gpu_run.sh [tests|bench|all] [--quick]
set -u
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
what=${1:-all}
out=${OUT:-/tmp}
build/rlx devices 2>&1 | tee "$out/devices.txt"
if [ "$what" = tests ] || [ "$what" = all ]; then
    RLX_REQUIRE_VULKAN=1 RLX_TEST_VK_DEVICE=H200 RLX_CLI=build/rlx build/rlx_tests vk_ kv_cache llama model_ > "$out/tests.txt" 2>&1
    grep -E "FAIL|passed" -A4 "$out/tests.txt" | tail -40
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    RLX_DEVICE=H200 python3 bench/gpu_compare.py ${2:-} 2>&1 | tee "$out/bench.txt"
fi
