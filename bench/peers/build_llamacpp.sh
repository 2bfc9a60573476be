#!/usr/bin/env bash
# build_llamacpp.sh PEER WORK — on the GPU machine: builds llama.cpp's libllama with CUDA for
# sm_90 (H100 / H200) from PEER/lcpp-src.tar.gz (fetch_llamacpp.sh), unpacks the Vulkan
# libraries of PEER/vk.tar.xz, and builds the timing driver (bench/peers/llamacpp_run.c beside
# this script, else PEER's copy) against that source's llama.h.
# Leaves WORK/cuda/libllama.so (with its ggml libraries beside it), WORK/vk/ and
# WORK/llamacpp_run. About 3 minutes with 16 cores; a second run reuses the build.
set -euo pipefail
peer=$(cd "${1:?usage: build_llamacpp.sh PEER WORK}" && pwd)
work=${2:?usage: build_llamacpp.sh PEER WORK}
mkdir -p "$work"
work=$(cd "$work" && pwd)
for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    command -v nvcc > /dev/null 2>&1 || { [ -x "$d/nvcc" ] && export PATH=$d:$PATH; }
done
for tool in nvcc cmake ninja cc; do
    command -v $tool > /dev/null 2>&1 || { echo "build_llamacpp: $tool not found" >&2; exit 1; }
done
[ -d "$work/lcpp" ] || tar xzf "$peer/lcpp-src.tar.gz" -C "$work"
[ -d "$work/vk" ] || tar xJf "$peer/vk.tar.xz" -C "$work"
cmake -S "$work/lcpp" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGGML_CUDA=ON -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_NATIVE=OFF \
    -DBUILD_SHARED_LIBS=ON -DGGML_CCACHE=OFF -DGGML_RPC=OFF \
    -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF > "$work/cmake.log" 2>&1 ||
    { tail -30 "$work/cmake.log" >&2; exit 1; }
ninja -C "$work/build" -j "$(nproc)" llama > "$work/ninja.log" 2>&1 || { tail -30 "$work/ninja.log" >&2; exit 1; }
mkdir -p "$work/cuda"
find "$work/build" \( -name 'libllama.so*' -o -name 'libggml*.so*' \) -exec cp -P {} "$work/cuda/" \;
# the driver beside this script (the working tree's) where there is one, else PEER's copy
driver=$(cd "$(dirname "$0")" && pwd)/llamacpp_run.c
[ -f "$driver" ] || driver=$peer/llamacpp_run.c
cc -O2 -std=gnu11 -I "$work/lcpp/include" -I "$work/lcpp/ggml/include" "$driver" \
    -o "$work/llamacpp_run" -ldl
ls "$work/cuda"
