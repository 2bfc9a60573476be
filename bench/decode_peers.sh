#!/usr/bin/env bash
# decode_peers.sh — on the GPU machine: prefill and decode of rlx builds and of
# llama.cpp (CUDA and Vulkan) on the same random-weight GGUF files, so that
# every number of one table comes from one device call.
#
#   PHASE=peers  bash bench/decode_peers.sh   build llama.cpp CUDA (~3 min), write
#                                             the GGUFs, time llama.cpp on them
#   PHASE=rlx    bash bench/decode_peers.sh   time the rlx builds (A B A B ...)
#
# The two phases may run in two calls on one warm machine (the GGUFs and the
# CUDA build stay in $WORK). Carry .gl, the rlx build folders named in BUILDS
# (each with llm_bench), and PEER: the folder bench/peers/fetch_llamacpp.sh
# fills on the development machine (llama.cpp's trimmed source, the prebuilt
# Vulkan libraries of @node-llama-cpp/linux-x64-vulkan, the timing driver);
# the peers phase builds the CUDA peer there with bench/peers/build_llamacpp.sh.
# Prints one line per model and runtime:
#   model:quant runtime prefill_tok_s X decode_tok_s Y
# (rlx lines carry llm_bench's RESULT fields). With OUT set, the lines also go
# to $OUT/peers.txt or $OUT/rlx.txt; REPORT=1 adds each model's decode report
# from the last build ($OUT/report_<model>_<quant>.txt), TESTS="..." runs
# those tests of the last build's rlx_tests on the GPU ($OUT/tests.txt).
set -u
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
work=${WORK:-/tmp/decode_peers}
peer=${PEER:-.peer}
builds=${BUILDS:-build}
last=${builds##* }
models=${MODELS:-8b:q4_k_m 8b:q8_0 1b:q4_k_m 1b:q8_0}
prompt=${PROMPT:-512}
decode=${DECODE:-64}
rounds=${ROUNDS:-2}
mkdir -p "$work"

if [ "${PHASE:-rlx}" = peers ]; then
    here=$(cd "$(dirname "$0")" && pwd)
    bash "$here/peers/build_llamacpp.sh" "$peer" "$work" > "$work/lcpp_build.txt" 2>&1 ||
        { tail -20 "$work/lcpp_build.txt"; exit 1; }
    run=$work/llamacpp_run
    for mq in $models; do
        m=${mq%%:*}; q=${mq##*:}; f=$work/$m-$q.gguf
        [ -f "$f" ] || "$last/llm_bench" --device H200 --model "$m" --quant "$q" --prompt 1 --decode 1 \
            --write-gguf "$f" > /dev/null 2>&1
        for r in $(seq "$rounds"); do
            echo "$mq llama.cpp-cuda $(LD_LIBRARY_PATH=$work/cuda "$run" "$work/cuda/libllama.so" "$f" \
                "$prompt" "$decode" 3 999 1 2>&1 | grep RESULT | cut -d' ' -f3-)"
            echo "$mq llama.cpp-vulkan $(LD_LIBRARY_PATH=$work/vk "$run" "$(ls "$work"/vk/libllama.vulkan.*.so)" \
                "$f" "$prompt" "$decode" 3 999 1 2>&1 | grep RESULT | cut -d' ' -f3-)"
        done
    done | tee "${OUT:-$work}/peers.txt"
    exit 0
fi

"$last/llm_bench" --device H200 --model 1b --quant q8_0 --prompt 16 --decode 4 > /dev/null 2>&1   # warm-up
for mq in $models; do
    m=${mq%%:*}; q=${mq##*:}
    "$last/llm_bench" --device H200 --model "$m" --quant "$q" --prompt "$prompt" --decode "$decode" > /dev/null 2>&1
    for r in $(seq "$rounds"); do
        for b in $builds; do
            echo "$mq $b $("$b/llm_bench" --device H200 --model "$m" --quant "$q" --prompt "$prompt" \
                --decode "$decode" 2>&1 | grep RESULT | cut -d' ' -f4-)"
        done
    done
    if [ -n "${REPORT:-}" ] && [ -n "${OUT:-}" ]; then
        "$last/llm_bench" --device H200 --model "$m" --quant "$q" --prompt 16 --decode 4 --report \
            > "$OUT/report_${m}_${q}.txt" 2>&1
    fi
done | tee "${OUT:-$work}/rlx.txt"
if [ -n "${TESTS:-}" ]; then
    RLX_REQUIRE_VULKAN=1 RLX_TEST_VK_DEVICE=H200 RLX_CLI=$last/rlx RLX_README_MODEL_EXAMPLE=$last/readme_model_example \
        "$last/rlx_tests" $TESTS > "${OUT:-$work}/tests.txt" 2>&1
    grep -E "^FAIL" -A3 "${OUT:-$work}/tests.txt" | tail -20
    tail -1 "${OUT:-$work}/tests.txt"
fi
