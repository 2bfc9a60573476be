#!/usr/bin/env bash
# cpu_baseline.sh — rlx against llama.cpp on this CPU, same weights, same run:
# llm_bench writes each model it times to a GGUF (--write-gguf), then rlx
# (llm_bench) and llama.cpp (bench/llamacpp_bench.mjs, through the prebuilt CPU
# libraries of the node-llama-cpp npm package) alternate ROUNDS times on that
# file. Prints one table of medians and the rlx / llama.cpp ratios.
#
#   MODELS="1b:q4_k_m 1b:q8_0" PROMPT=32 DECODE=32 THREADS=2 ROUNDS=3 bash bench/cpu_baseline.sh
#
# Needs node >= 18 and npm; installs node-llama-cpp@$NLC_VERSION into $NLC_DIR
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

if [ ! -d "$nlc_dir/node_modules/node-llama-cpp" ]; then
    mkdir -p "$nlc_dir"
    (cd "$nlc_dir" && npm install --no-audit --no-fund --ignore-scripts "node-llama-cpp@$nlc_version" >/dev/null)
fi

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
        RLX_THREADS=$threads build/llm_bench --model "$m" --quant "$q" --prompt "$prompt" --decode "$decode" |
            grep RESULT >> "$tmp/rlx_baseline.rlx"
        NLC_DIR=$nlc_dir node bench/llamacpp_bench.mjs "$file" "$prompt" "$decode" "$threads" |
            grep RESULT >> "$tmp/rlx_baseline.lcpp"
    done
    rp=$(while read -r l; do echo "$l" | field prefill_tok_s; done < "$tmp/rlx_baseline.rlx" | median)
    rd=$(while read -r l; do echo "$l" | field decode_tok_s; done < "$tmp/rlx_baseline.rlx" | median)
    lp=$(while read -r l; do echo "$l" | field prefill_tok_s; done < "$tmp/rlx_baseline.lcpp" | median)
    ld=$(while read -r l; do echo "$l" | field decode_tok_s; done < "$tmp/rlx_baseline.lcpp" | median)
    awk -v m="$m" -v q="$q" -v t="$threads" -v rp="$rp" -v lp="$lp" -v rd="$rd" -v ld="$ld" 'BEGIN {
        printf "| %s | %s | %d | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |\n", m, q, t, rp, lp, rp / lp, rd, ld, rd / ld }'
    rm -f "$file"
done
