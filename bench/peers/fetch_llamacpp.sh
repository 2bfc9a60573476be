#!/usr/bin/env bash
# fetch_llamacpp.sh OUT — llama.cpp as a same-run benchmark peer, from the npm
# registry only (the one registry the development machine reaches):
#   OUT/vk.tar.xz          the prebuilt Vulkan libraries of @node-llama-cpp/linux-x64-vulkan
#   OUT/lcpp-src.tar.gz    llama.cpp's source (the git bundle inside node-llama-cpp), cut to
#                          what a CUDA build of libllama needs: ggml with its CPU and CUDA
#                          backends, src, include, vendor, the CMake files
#   OUT/llamacpp_run.c     the timing driver (bench/peers/llamacpp_run.c), built on the GPU
#                          machine against that source's llama.h
# Both npm packages are version NLC_VERSION (default 3.22.1: llama.cpp v0.5.0). OUT stays out
# of git; its three files travel to the GPU machine (~10 MB), where
# bench/peers/build_llamacpp.sh builds the CUDA peer and the driver.
set -euo pipefail
out=${1:?usage: fetch_llamacpp.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
ver=${NLC_VERSION:-3.22.1}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack -q "node-llama-cpp@$ver" "@node-llama-cpp/linux-x64-vulkan@$ver" > /dev/null
mkdir nlc vk
tar xzf "node-llama-cpp-$ver.tgz" -C nlc
tar xzf "node-llama-cpp-linux-x64-vulkan-$ver.tgz" -C vk
# the Vulkan build: libllama, libggml, its base, and the Vulkan and CPU backends it loads
bins=vk/package/bins/linux-x64-vulkan
mkdir -p lib/vk
cp "$bins"/libllama*.so "$bins"/libggml*.so lib/vk/
tar cf - -C lib vk | xz -6 > "$out/vk.tar.xz"
# the source: only what libllama with CUDA needs (no tools, tests or other backends)
git clone -q nlc/package/llama/gitRelease.bundle src
keep=(CMakeLists.txt LICENSE cmake include src vendor ggml/CMakeLists.txt ggml/cmake ggml/include)
for p in $(git -C src ls-tree --name-only HEAD ggml/src/); do
    case "$p" in
        ggml/src/ggml-cpu|ggml/src/ggml-cuda) keep+=("$p") ;;
        ggml/src/ggml-?*) [ -d "src/$p" ] || keep+=("$p") ;;   # files, not other backends' folders
        *) keep+=("$p") ;;
    esac
done
[ -e src/licenses ] && keep+=(licenses)
git -C src archive --format=tar --prefix=lcpp/ HEAD -- "${keep[@]}" | gzip -9n > "$out/lcpp-src.tar.gz"
cp "$here/llamacpp_run.c" "$out/"
du -sh "$out"/*
