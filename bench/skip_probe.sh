#!/usr/bin/env bash
# skip_probe.sh — each decode node kind's share of a decode token that is not
# serialized by timestamps (RLX_PROFILE serializes nodes and so hides what
# overlaps): llm_bench once as is, then once per kind with RLX_VK_SKIP
# naming its tier, so the difference is that kind's marginal device time.
# Results are wrong by design (the skipped nodes never run). Run on the GPU
# machine from the tree, carrying .gl and the build folder (docs/gpu.md,
# "Running on the H200"):
#
#   BUILD=build-x MODELS="8b:q8_0 1b:q4_k_m" bash bench/skip_probe.sh
#
# Skipping a node also drops the barrier a later node had on it (a node
# whose input nobody wrote this step starts at once), so a marginal can
# include time the skipped node kept from overlapping. Lines: model:quant,
# the skipped tiers, device µs per token (llm_bench's median).
set -u
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
b=${BUILD:-build}/llm_bench
a="--device ${DEVICE:-H200} --prompt ${PROMPT:-128} --decode ${DECODE:-32} --bandwidth 4000"
$b $a --model 1b --quant q8_0 --prompt 16 --decode 4 >/dev/null 2>&1   # warm-up
for mq in ${MODELS:-8b:q8_0 8b:q4_k_m 1b:q4_k_m}; do
    m=${mq%%:*}; q=${mq##*:}
    if [ "$q" = q8_0 ]; then t=q8_0; down=dequant-run-add-q8_0; else t=q4_K; down=dequant-i8-add-q6_K; fi
    $b $a --model "$m" --quant "$q" >/dev/null 2>&1   # a discarded run (the GPU's clocks)
    for s in none dequant-i8-norm-rope dequant-i8-norm-rope-kv dequant-i8-norm-kv \
             dequant-i8-norm-rope-kv,dequant-i8-norm-kv flash-f32-splitkv dequant-i8-add-$t \
             dequant-i8-norm-swiglu-$t $down; do
        echo "$mq $s $(RLX_VK_SKIP=$s $b $a --model "$m" --quant "$q" 2>&1 | grep RESULT | awk '{print $NF}')"
    done
done
