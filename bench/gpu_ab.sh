#!/usr/bin/env bash
# gpu_ab.sh — A/B decode comparison on the GPU machine in one device call
# (the GPU's clock state varies between calls, so only same-call numbers
# compare): a warm-up run, then `llm_bench` for each model alternating the
# builds (A B A B), optionally env variants of the last build, the profile of
# a decode step per model, and the selected tests. Carry .gl and the build
# folders (docs/gpu.md, "Running on the H200").
#
#   BUILDS="build-base build-lead" MODELS="8b:q4_k_m 1b:q4_k_m" \
#   VARIANTS="RLX_NO_FUSE=1" PROFILE=1 TESTS="vk_ llama model" \
#   OUT=$OUT bash bench/gpu_ab.sh
#
# PROMPT, DECODE, CTX (KV cache rows) and BW set llm_bench's arguments; each
# model gets one discarded run first (WARM=0 skips it).
#
# Each result line: model:quant build-or-variant, then llm_bench's RESULT
# fields (decode_tok_s ... decode_us device_us). A variant's env settings are
# joined with "+" (values may hold commas).
set -u
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
out=${OUT:-/tmp}
mkdir -p "$out"
builds=${BUILDS:-build}
last=${builds##* }
rounds=${ROUNDS:-2}
dev=${DEVICE:-H200}
args="--prompt ${PROMPT:-128} --decode ${DECODE:-32} --bandwidth ${BW:-4000}${CTX:+ --ctx $CTX}"

"$last/llm_bench" --device "$dev" --model 1b --quant q8_0 --prompt 16 --decode 4 >/dev/null 2>&1   # warm-up

for mq in ${MODELS:-8b:q4_k_m 8b:q8_0 1b:q4_k_m 1b:q8_0}; do
    m=${mq%%:*}; q=${mq##*:}
    # a discarded run of this model first (WARM=0: none): a call's first run of a large
    # model often found the GPU in its slow state (8B prefill ~1000 instead of ~3500 tok/s)
    [ "${WARM:-1}" != 0 ] && "$last/llm_bench" --device "$dev" --model "$m" --quant "$q" $args >/dev/null 2>&1
    for r in $(seq "$rounds"); do
        for b in $builds; do
            echo "$mq $b $("$b/llm_bench" --device "$dev" --model "$m" --quant "$q" $args 2>&1 | grep RESULT | cut -d' ' -f4-)"
        done
        for v in ${VARIANTS:-}; do
            echo "$mq $v $(env ${v//+/ } "$last/llm_bench" --device "$dev" --model "$m" --quant "$q" $args 2>&1 | grep RESULT | cut -d' ' -f4-)"
        done
    done
    if [ -n "${PROFILE:-}" ]; then
        RLX_PROFILE=1 "$last/llm_bench" --device "$dev" --model "$m" --quant "$q" --prompt 128 --decode 8 --report \
            > "$out/prof_${m}_${q}.txt" 2>&1
        sed -n '/^profile:/,/^|/p' "$out/prof_${m}_${q}.txt" | grep -v "^|"
    fi
done 2>&1 | tee "$out/ab.txt"

if [ -n "${TESTS:-}" ]; then
    # the tests that run rlx or the README example take them from the build folder
    # (copy build/rlx, build/readme_model_example there too)
    RLX_REQUIRE_VULKAN=1 RLX_TEST_VK_DEVICE=$dev RLX_CLI=$last/rlx RLX_README_MODEL_EXAMPLE=$last/readme_model_example \
        "$last/rlx_tests" $TESTS > "$out/tests.txt" 2>&1
    grep -E "^FAIL" -B4 "$out/tests.txt" | tail -20
    tail -1 "$out/tests.txt"
fi
