#!/usr/bin/env bash
# decode_peers.sh — on the GPU machine: prefill and decode of rlx builds and of
# llama.cpp (CUDA and Vulkan) on the same random-weight GGUF files, so that
# every number of one table comes from one warm lease.
#
#   PHASE=peers  bash bench/decode_peers.sh   build llama.cpp CUDA (~3 min), write
#                                             the GGUFs, time llama.cpp on them
#   PHASE=rlx    bash bench/decode_peers.sh   time the rlx builds (A B A B ...)
#   PHASE=table  bash bench/decode_peers.sh   print the table of both phases' results
#   PHASE=all    bash bench/decode_peers.sh   peers, then rlx, then the table
#
# The phases may run in separate calls on one warm machine (the GGUFs, the
# CUDA build and the results stay in $WORK); each phase ends with the table
# of whatever results $WORK holds. Carry .gl, the rlx build folders named in
# BUILDS (each with llm_bench), and PEER: the folder bench/peers/fetch_llamacpp.sh
# fills on the development machine (llama.cpp's trimmed source, the prebuilt
# Vulkan libraries of @node-llama-cpp/linux-x64-vulkan, the timing driver);
# the peers phase builds the CUDA peer there with bench/peers/build_llamacpp.sh.
#
# MODES (default "pp512"): the workloads, each a prompt length then DECODE
# (default 64) single-token steps, prefill and decode timed in both:
#   ppN     prefill of an N-token prompt (pp512, pp2048)
#   depthN  decode after an N-token prompt (depth4096: the KV cache N + DECODE + 8 rows)
# The two spellings measure the same runs; the name says which column the
# mode is for. Both runtimes get a cache of N + DECODE + 8 positions (llm_bench's
# default --ctx, llamacpp_run's default n_ctx). llama.cpp runs the prompt in
# micro-batches of LCPP_UBATCH (default 512, its own default; 0 = the whole
# prompt at once, as rlx does). Each model gets one untimed llama.cpp process
# per runtime before the rounds (LCPP_WARMUP=0 skips it). PROMPT=N alone (the old interface) means MODES=ppN.
#
# ROUNDS (default 3) rounds of each; the table shows medians over rounds, each
# round itself a median (llm_bench: of 3 prefills after a warm-up and of the
# decode steps; llamacpp_run: of 3 prefills after a warm-up and of the steps).
# llama.cpp times all the modes of a model in one process (one model load,
# one context a mode); rlx runs one llm_bench a model, mode, build and round.
#
# Time: a device call ends at 10 minutes, so no run is started once BUDGET_S
# seconds (default 540) have passed since the phase began (each skipped run is
# named); progress lines with the elapsed seconds go to stderr. At the
# defaults (4 models, ROUNDS=3): PHASE=peers with MODES="pp512 pp2048
# depth4096" is the llama.cpp build (~3 min) + the GGUFs + ~3 min; PHASE=rlx
# with one build and the three modes is 36 llm_bench runs (~5 min). Give
# MODELS a subset to split a larger job over calls: results accumulate in
# $WORK (RESET=1 clears them first).
#
# Result lines ($WORK/peers.txt, $WORK/rlx.txt, copied to $OUT when set):
#   model:quant mode runtime prefill_tok_s X decode_tok_s Y ...
# (rlx lines carry llm_bench's RESULT fields). REPORT=1 adds each model's
# decode report from the last build ($OUT/report_<model>_<quant>.txt),
# TESTS="..." runs those tests of the last build's rlx_tests on the GPU
# ($OUT/tests.txt). The table: bench/peers/peers_table.py.
set -u
for f in .gl/*.deb; do [ -e "$f" ] && dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
here=$(cd "$(dirname "$0")" && pwd)
work=${WORK:-/tmp/decode_peers}
peer=${PEER:-.peer}
builds=${BUILDS:-build}
last=${builds##* }
models=${MODELS:-8b:q4_k_m 8b:q8_0 1b:q4_k_m 1b:q8_0}
modes=${MODES:-pp${PROMPT:-512}}
decode=${DECODE:-64}
rounds=${ROUNDS:-3}
ubatch=${LCPP_UBATCH:-512}
budget=${BUDGET_S:-540}
device=${DEVICE:-H200}
phase=${PHASE:-rlx}
mkdir -p "$work"
[ -n "${RESET:-}" ] && rm -f "$work/peers.txt" "$work/rlx.txt"
start=$SECONDS

say() { echo "[$(date +%H:%M:%S) +$((SECONDS - start))s] $*" >&2; }
in_budget() {   # in_budget WHAT: 0 while time is left, else names WHAT as skipped
    if [ $((SECONDS - start)) -ge "$budget" ]; then say "skipped (BUDGET_S=$budget): $*"; return 1; fi
}
prompt_of() {   # ppN | depthN -> N
    case "$1" in
        pp[0-9]*) echo "${1#pp}" ;;
        depth[0-9]*) echo "${1#depth}" ;;
        *) echo "decode_peers: mode '$1' is not ppN or depthN" >&2; return 1 ;;
    esac
}
for mode in $modes; do prompt_of "$mode" > /dev/null || exit 2; done
table() {
    [ -s "$work/peers.txt" ] || [ -s "$work/rlx.txt" ] || return 0
    python3 "$here/peers/peers_table.py" --rlx "$last" "$work/peers.txt" "$work/rlx.txt" |
        tee "${OUT:-$work}/table.txt"
}
save() { [ -n "${OUT:-}" ] && cp "$work/$1" "$OUT/$1"; return 0; }

run_peers() {
    if [ -n "${LCPP_SKIP_BUILD:-}" ] && [ -x "$work/llamacpp_run" ]; then
        say "LCPP_SKIP_BUILD: using $work/llamacpp_run, $work/cuda and $work/vk as they are"
    else
        say "building llama.cpp CUDA (bench/peers/build_llamacpp.sh $peer $work)"
        bash "$here/peers/build_llamacpp.sh" "$peer" "$work" > "$work/lcpp_build.txt" 2>&1 ||
            { tail -20 "$work/lcpp_build.txt"; return 1; }
    fi
    local run=$work/llamacpp_run prompts="" mode mq m q f r rt lib
    for mode in $modes; do prompts=${prompts:+$prompts,}$(prompt_of "$mode"); done
    for mq in $models; do
        m=${mq%%:*}; q=${mq##*:}; f=$work/$m-$q.gguf
        if [ ! -f "$f" ]; then
            in_budget "writing $f" || continue
            say "writing $f (llm_bench --write-gguf)"
            "$last/llm_bench" --device "$device" --model "$m" --quant "$q" --prompt 1 --decode 1 \
                --write-gguf "$f" > /dev/null 2>&1 || { say "llm_bench --write-gguf $f failed"; rm -f "$f"; continue; }
        fi
        # an untimed process per runtime first: llama.cpp Vulkan's first process on a machine
        # compiles the quant type's pipelines (the driver caches them on disk for the next),
        # and its in-process warm-up run does not absorb it (1B prefill 13050 tok/s in a
        # machine's first process, 47928 in the second, 2026-12-02)
        if [ "${LCPP_WARMUP:-1}" = 1 ]; then
            for rt in cuda vulkan; do
                if [ $rt = cuda ]; then lib=$work/cuda/libllama.so; else lib=$(ls "$work"/vk/libllama.vulkan.*.so); fi
                [ -e "$lib" ] || continue
                LD_LIBRARY_PATH=$(dirname "$lib") "$run" "$lib" "$f" "$prompts" 4 1 999 1 4 0 "$ubatch" > /dev/null 2>&1
            done
        fi
        for r in $(seq "$rounds"); do
            for rt in cuda vulkan; do
                in_budget "$mq llama.cpp-$rt round $r" || continue
                say "$mq llama.cpp-$rt round $r/$rounds, prompts $prompts"
                if [ $rt = cuda ]; then lib=$work/cuda/libllama.so; else lib=$(ls "$work"/vk/libllama.vulkan.*.so); fi
                # one RESULT line a prompt length, in the order of $modes
                LD_LIBRARY_PATH=$(dirname "$lib") "$run" "$lib" "$f" "$prompts" "$decode" 3 999 1 4 0 "$ubatch" \
                    > "$work/lcpp_out.txt" 2>&1 || { say "llamacpp_run failed:"; tail -5 "$work/lcpp_out.txt" >&2; }
                local line p
                for mode in $modes; do
                    p=$(prompt_of "$mode")
                    line=$(grep "^RESULT" "$work/lcpp_out.txt" | grep " prompt $p " | head -1 | cut -d' ' -f3-)
                    echo "$mq $mode llama.cpp-$rt ${line:-failed}" | tee -a "$work/peers.txt"
                done
            done
        done
    done
    save peers.txt
}

run_rlx() {
    local mq m q mode p r b first
    "$last/llm_bench" --device "$device" --model 1b --quant q8_0 --prompt 16 --decode 4 > /dev/null 2>&1   # warm-up
    for mq in $models; do
        m=${mq%%:*}; q=${mq##*:}; first=1
        for mode in $modes; do
            p=$(prompt_of "$mode")
            if [ $first = 1 ] && in_budget "$mq discarded run"; then   # one discarded run a model
                say "$mq $mode $last (discarded)"
                "$last/llm_bench" --device "$device" --model "$m" --quant "$q" --prompt "$p" --decode "$decode" > /dev/null 2>&1
                first=0
            fi
            for r in $(seq "$rounds"); do
                for b in $builds; do
                    in_budget "$mq $mode $b round $r" || continue
                    say "$mq $mode $b round $r/$rounds"
                    echo "$mq $mode $b $("$b/llm_bench" --device "$device" --model "$m" --quant "$q" --prompt "$p" \
                        --decode "$decode" 2>&1 | grep RESULT | cut -d' ' -f4-)" | tee -a "$work/rlx.txt"
                done
            done
        done
        if [ -n "${REPORT:-}" ] && [ -n "${OUT:-}" ] && in_budget "$mq report"; then
            "$last/llm_bench" --device "$device" --model "$m" --quant "$q" --prompt 16 --decode 4 --report \
                > "$OUT/report_${m}_${q}.txt" 2>&1
        fi
    done
    save rlx.txt
    if [ -n "${TESTS:-}" ]; then
        say "tests: $TESTS"
        RLX_REQUIRE_VULKAN=1 RLX_TEST_VK_DEVICE=$device RLX_CLI=$last/rlx RLX_README_MODEL_EXAMPLE=$last/readme_model_example \
            "$last/rlx_tests" $TESTS > "${OUT:-$work}/tests.txt" 2>&1
        grep -E "^FAIL" -A3 "${OUT:-$work}/tests.txt" | tail -20
        tail -1 "${OUT:-$work}/tests.txt"
    fi
}

case "$phase" in
    peers) run_peers ;;
    rlx) run_rlx ;;
    all) run_peers; run_rlx ;;
    table) ;;
    *) echo "decode_peers: PHASE is peers, rlx, all or table, not '$phase'" >&2; exit 2 ;;
esac
say "phase $phase done"
table
