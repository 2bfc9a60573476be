#!/usr/bin/env bash
# cpu_baseline.sh — rlx against llama.cpp on this CPU, same weights, same run:
# llm_bench writes each model it times to a GGUF (--write-gguf), then rlx
# (llm_bench) and llama.cpp (bench/llamacpp_bench.mjs, through the prebuilt CPU
# libraries of the node-llama-cpp npm package) alternate ROUNDS times on that
# file. Prints one table of medians and the rlx / llama.cpp ratios.
#
#   MODELS="1b:q4_k_m 1b:q8_0" PROMPT=32 DECODE=32 THREADS=2 ROUNDS=3 bash bench/cpu_baseline.sh
#
# ISA=avx2 times the AVX2 path on any x86-64, AVX-512 machines included: rlx
# runs with llm_bench --isa avx2, and llama.cpp is the npm package's CPU build
# (@node-llama-cpp/linux-x64) with only its haswell variant
# (libggml-cpu-haswell.so) beside the library, so ggml cannot pick a wider one;
# it is timed by bench/peers/llamacpp_run.c (0 GPU layers), built here against
# the llama.h of the same version (the git bundle inside node-llama-cpp).
#
#   ISA=avx2 ROUNDS=3 bash bench/cpu_baseline.sh
#
# Needs node >= 18 and npm (and cc and git for ISA=avx2); installs node-llama-cpp@$NLC_VERSION into $NLC_DIR
# (default /tmp/nlc) from the npm registry the first time. Build first:
# make build/llm_bench.
set -eu
nlc_dir=${NLC_DIR:-/tmp/nlc}
nlc_version=${NLC_VERSION:-3.22.1}
models=${MODELS:-1b:q4_k_m 1b:q8_0}
prompt=${PROMPT:-32}
decode=${DECODE:-32}
threads=${THREADS:-2}
rounds=${ROUNDS:-3}
tmp=${TMPDIR:-/tmp}
isa=${ISA:-}

if [ ! -d "$nlc_dir/node_modules/node-llama-cpp" ]; then
    mkdir -p "$nlc_dir"
    (cd "$nlc_dir" && npm install --no-audit --no-fund --ignore-scripts "node-llama-cpp@$nlc_version" >/dev/null)
fi

# ISA=avx2: a folder holding libllama, libggml, its base and the haswell CPU
# variant alone, and the driver compiled against the same version's headers.
if [ "$isa" = avx2 ]; then
    if [ ! -d "$nlc_dir/node_modules/@node-llama-cpp/linux-x64" ]; then
        (cd "$nlc_dir" && npm install --no-audit --no-fund --ignore-scripts "@node-llama-cpp/linux-x64@$nlc_version" >/dev/null)
    fi
    hw=$nlc_dir/haswell
    if [ ! -x "$hw/llamacpp_run" ]; then
        bins=$nlc_dir/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
        rm -rf "$hw" "$nlc_dir/src"; mkdir -p "$hw"
        cp "$bins"/libllama.*.so "$bins"/libggml.*.so "$bins"/libggml-base.so "$bins"/libggml-cpu-haswell.so "$hw/"
        git clone -q "$nlc_dir/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$nlc_dir/src" 2>/dev/null
        cc -O2 -I"$nlc_dir/src/include" -I"$nlc_dir/src/ggml/include" bench/peers/llamacpp_run.c -o "$hw/llamacpp_run" -ldl
    fi
    lib=$(ls "$hw"/libllama.*.so | head -1)
fi
rlx_isa=${isa:+--isa $isa}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
field() { tr ' ' '\n' | grep -A1 -x "$1" | tail -1; }

echo "| model | quant | threads | rlx prefill $prompt tok/s | llama.cpp prefill | ratio | rlx decode tok/s | llama.cpp decode | ratio |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
for mq in $models; do
    m=${mq%%:*}; q=${mq##*:}
    file="$tmp/rlx_baseline_${m}_${q}.gguf"
    build/llm_bench --model "$m" --quant "$q" --prompt 1 --decode 1 --write-gguf "$file" >/dev/null
    : > "$tmp/rlx_baseline.rlx"; : > "$tmp/rlx_baseline.lcpp"
    for r in $(seq "$rounds"); do
        RLX_THREADS=$threads build/llm_bench $rlx_isa --model "$m" --quant "$q" --prompt "$prompt" --decode "$decode" |
            grep RESULT >> "$tmp/rlx_baseline.rlx"
        if [ "$isa" = avx2 ]; then
            "$hw/llamacpp_run" "$lib" "$file" "$prompt" "$decode" 3 0 1 "$threads" 2>/dev/null |
                grep RESULT >> "$tmp/rlx_baseline.lcpp"
        else
            NLC_DIR=$nlc_dir node bench/llamacpp_bench.mjs "$file" "$prompt" "$decode" "$threads" |
                grep RESULT >> "$tmp/rlx_baseline.lcpp"
        fi
    done
    rp=$(while read -r l; do echo "$l" | field prefill_tok_s; done < "$tmp/rlx_baseline.rlx" | median)
    rd=$(while read -r l; do echo "$l" | field decode_tok_s; done < "$tmp/rlx_baseline.rlx" | median)
    lp=$(while read -r l; do echo "$l" | field prefill_tok_s; done < "$tmp/rlx_baseline.lcpp" | median)
    ld=$(while read -r l; do echo "$l" | field decode_tok_s; done < "$tmp/rlx_baseline.lcpp" | median)
    awk -v m="$m" -v q="$q" -v t="$threads" -v rp="$rp" -v lp="$lp" -v rd="$rd" -v ld="$ld" 'BEGIN {
        printf "| %s | %s | %d | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |\n", m, q, t, rp, lp, rp / lp, rd, ld, rd / ld }'
    rm -f "$file"
done
