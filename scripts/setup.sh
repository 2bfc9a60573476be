#!/usr/bin/env bash
# Installs what the build, tests and benches need on Debian, once:
# a C compiler, make and pkg-config (the install tests build through rlx.pc);
# the Vulkan headers, glslc and Mesa's lavapipe (the software Vulkan device
# the GPU tests run on); Python 3 with numpy for the tests' independent
# references (tests/ref/*.py), regex (grapheme clusters) for the tokenizer.json
# Precompiled reference, and sentencepiece + protobuf to train the tiny model
# whose real precompiled_charsmap that test reads; PyTorch (Debian's
# python3-torch), the training tests' autograd and torch.optim reference;
# python3-onnx, which writes and reads the ONNX reader tests' models, and
# python3-torchvision, whose resnet18, mobilenet_v2 and ViT the import tests export;
# python3-venv (its venvs bring their own pip) and python3-pytest, which install and test the
# Python package (python/) in a venv.
# `setup.sh bench` adds OpenBLAS.
set -eu
need=()
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v make >/dev/null 2>&1 || need+=(make)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
[ -f /usr/include/vulkan/vulkan.h ] || need+=(libvulkan-dev)
command -v glslc >/dev/null 2>&1 || need+=(glslc)
ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || need+=(mesa-vulkan-drivers)
[ -x /usr/bin/python3 ] || need+=(python3)
/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1 || need+=(python3-numpy)
/usr/bin/python3 -c 'import regex' >/dev/null 2>&1 || need+=(python3-regex)
/usr/bin/python3 -c 'import sentencepiece' >/dev/null 2>&1 || need+=(python3-sentencepiece)
/usr/bin/python3 -c 'from sentencepiece import sentencepiece_model_pb2' >/dev/null 2>&1 || need+=(python3-protobuf)
/usr/bin/python3 -c 'import torch' >/dev/null 2>&1 || need+=(python3-torch)
/usr/bin/python3 -c 'import onnx' >/dev/null 2>&1 || need+=(python3-onnx)
/usr/bin/python3 -c 'import torchvision' >/dev/null 2>&1 || need+=(python3-torchvision)
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || need+=(python3-pytest)
/usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
if [ "${1:-}" = bench ]; then
    [ -f /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h ] || need+=(libopenblas-dev)
fi
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing ${need[*]}; run as root or install them with apt-get" >&2
    exit 1
fi
echo "setup: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq "${need[@]}" >/dev/null
