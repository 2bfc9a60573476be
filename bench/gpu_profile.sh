#!/usr/bin/env bash
# Decode profile on the GPU machine (docs/gpu.md): per-kernel device time of
# one Llama decode step (RLX_PROFILE=1, bench/llm_bench --report) and the
# first layer's matvecs, then the unprofiled speed. Carry .gl and the build
# folder (BIN, default build). MODELS="1b:q4_k_m 8b:q8_0" by default;
# VARIANTS: env settings ("+"-joined per variant, so values may hold commas,
# e.g. RLX_VK_DQ_I8=q4_K,q6_K+RLX_VK_DQ_T=64) timed unprofiled too.
set -u
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
bin=${BIN:-build}
out=${OUT:-/tmp}
bw=${BW:-4000}
if [ -n "${TESTS:-}" ]; then
    RLX_REQUIRE_VULKAN=1 RLX_TEST_VK_DEVICE=H200 RLX_CLI=$bin/rlx $bin/rlx_tests $TESTS > "$out/tests.txt" 2>&1
    grep -E "^FAIL" -B4 "$out/tests.txt" | tail -20; tail -1 "$out/tests.txt"
fi
for mq in ${MODELS:-1b:q4_k_m 8b:q8_0}; do
    m=${mq%%:*}; q=${mq##*:}
    RLX_PROFILE=1 $bin/llm_bench --device H200 --model $m --quant $q --prompt 128 --decode 8 --report > "$out/prof_${m}_${q}.txt" 2>&1
    echo "== $m $q profiled"; sed -n '/^profile:/,/^|/p' "$out/prof_${m}_${q}.txt" | grep -v "^|" | head -14
    grep -E "gpu +(dequant|rms|add|attention)" "$out/prof_${m}_${q}.txt" | sed -n '2,12p' | awk '{print "   ", $3, $5, $6, $7, $8}'
    $bin/llm_bench --device H200 --model $m --quant $q --prompt 128 --decode 32 --bandwidth $bw 2>&1 | grep RESULT
    for v in ${VARIANTS:-}; do   # unprofiled speed with env overrides, e.g. VARIANTS="RLX_VK_DQ_NR=2 RLX_VK_DQ_RUN=0"
        echo "$v: $(env ${v//+/ } $bin/llm_bench --device H200 --model $m --quant $q --prompt 128 --decode 32 --bandwidth $bw 2>&1 | grep RESULT)"
    done
done
