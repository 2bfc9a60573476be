# rlx build. Plain GNU Make: the project is one C library, a CLI and tests with
# no configure-time choices beyond "is Vulkan there", so Make keeps the build
# readable and dependency-free (see docs/build.md).
#
#   make            library + rlx CLI
#   make test       setup, then the whole suite; ends with "N passed, N failed, N skipped"
#   make install    PREFIX=...: rlx.h, librlx.a, librlx.so.0, rlx.pc and the CLI
#   make demo       setup, then `rlx demo` on the best available device
#   make sanitize   the suite under ASan + UBSan (build-san/)
#   make bench      bench/gemm against OpenBLAS (installs libopenblas-dev)
#   make bench-qdot build/bench_qdot: quantized matvec / prefill matmul (CPU; --m M)
#   make bench-sampler build/bench_sampler: host time of sampling one token (--vocab N)
#   make bench-python  the Python binding's run-call overhead against C and PyTorch eager

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
CFLAGS_BASE = -std=c11 -D_GNU_SOURCE -Wall -Wextra \
              -Iinclude -Isrc $(OPT) -g -fPIC -pthread
SAN_FLAGS =
CFLAGS_ALL = $(CFLAGS_BASE) $(SAN_FLAGS) $(EXTRA_CFLAGS)
LDLIBS  = -lm -pthread -ldl

ARCH := $(shell uname -m)
NPROC := $(shell nproc 2>/dev/null || echo 2)

LIB_SRC  := $(sort $(wildcard src/*/*.c src/*/*/*.c))

# The Vulkan backend builds when its headers and glslc are present; otherwise
# the library is CPU-only and says so. `make test` installs them on Debian.
VULKAN ?= $(shell [ -f /usr/include/vulkan/vulkan.h ] && command -v glslc >/dev/null 2>&1 && echo 1)
SHADER_SRC := $(sort $(wildcard src/vulkan/shaders/*.comp))
SHADER_INC := $(wildcard src/vulkan/shaders/*.glsl)
SPV        := $(SHADER_SRC:src/vulkan/shaders/%.comp=$(BUILD)/shaders/%.spv)
# dequant_matvec_i8.comp once more with the rounded-x image code (x_image.glsl),
# so that the pipelines without images keep the code they had (its dead code
# alone made 8B Q8_0 decode ~2% slower on the H200)
SPV        += $(BUILD)/shaders/dequant_matvec_i8_xim.spv
# matmul_tiled.comp and matmul_coopmat.comp once more as the implicit-GEMM convolution (lower/conv_gemm.c)
SPV        += $(BUILD)/shaders/conv_gemm_tiled.spv $(BUILD)/shaders/conv_gemm_coopmat.spv
ifeq ($(VULKAN),1)
CFLAGS_BASE += -DRLX_HAVE_VULKAN
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/vk_shaders.o
else
$(info rlx: Vulkan headers or glslc not found: building the CPU backend only (apt-get install libvulkan-dev glslc))
LIB_SRC  := $(filter-out src/vulkan/%,$(LIB_SRC))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
endif
TEST_SRC := $(sort $(wildcard tests/*.c))
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
TOOL_SRC := $(sort $(wildcard tools/*.c))
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/%.o)

# LIB: every object with every symbol, for the in-tree programs that call
# internals (tests, CLI, benches). Users get the public libraries of the
# "Public libraries" block: librlx.a / librlx.so export only rlx.h's functions.
LIB   = $(BUILD)/librlx_internal.a
RLX   = $(BUILD)/rlx
TESTS = $(BUILD)/rlx_tests
README_EXAMPLE = $(BUILD)/readme_example

# Per-file ISA flags: the SIMD micro-kernels are compiled for their ISA and
# only called after a run-time CPU feature check.
ifeq ($(ARCH),x86_64)
$(BUILD)/src/cpu/kernels/gemm_avx512.o: ISA_FLAGS = -mavx512f -mavx512vl -mavx512dq -mfma -mavx2
$(BUILD)/src/cpu/kernels/gemm_avx2.o:   ISA_FLAGS = -mavx2 -mfma
$(BUILD)/src/cpu/kernels/qdot_avx2.o:   ISA_FLAGS = -mavx2 -mfma -mf16c
$(BUILD)/src/cpu/kernels/qdot_avx512.o: ISA_FLAGS = -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mfma -mf16c -mavx2
$(BUILD)/src/cpu/kernels/qgemm_avx2.o:   ISA_FLAGS = -mavx2 -mfma -mf16c
$(BUILD)/src/cpu/kernels/qgemm_avx512.o: ISA_FLAGS = -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mfma -mf16c -mavx2
$(BUILD)/src/cpu/kernels/qgemm_packed_avx512.o: ISA_FLAGS = -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mfma -mf16c -mavx2
endif
# errno is no part of an op's result: without it sqrt and rsqrt loops vectorize
# (GCC's optimize pragma cannot turn math-errno off per file).
$(BUILD)/src/cpu/kernels/elementwise.o: ISA_FLAGS = -fno-math-errno

.PHONY: all test demo sanitize bench bench-qdot bench-sampler bench-python gpu-bench setup clean ops-doc

all: $(LIB) $(RLX)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(ISA_FLAGS) -MMD -MP -c $< -o $@

$(BUILD)/shaders/%.spv: src/vulkan/shaders/%.comp $(SHADER_INC)
	@mkdir -p $(dir $@)
	glslc --target-env=vulkan1.2 -O -Isrc/vulkan/shaders $< -o $@

$(BUILD)/shaders/dequant_matvec_i8_xim.spv: src/vulkan/shaders/dequant_matvec_i8.comp $(SHADER_INC)
	@mkdir -p $(dir $@)
	glslc --target-env=vulkan1.2 -O -DRLX_XIMAGE -Isrc/vulkan/shaders $< -o $@

$(BUILD)/shaders/conv_gemm_tiled.spv: src/vulkan/shaders/matmul_tiled.comp $(SHADER_INC)
	@mkdir -p $(dir $@)
	glslc --target-env=vulkan1.2 -O -DRLX_CONV -Isrc/vulkan/shaders $< -o $@

$(BUILD)/shaders/conv_gemm_coopmat.spv: src/vulkan/shaders/matmul_coopmat.comp $(SHADER_INC)
	@mkdir -p $(dir $@)
	glslc --target-env=vulkan1.2 -O -DRLX_CONV -Isrc/vulkan/shaders $< -o $@

$(BUILD)/gen/vk_shaders.c: $(SPV) scripts/embed_spirv.sh
	@mkdir -p $(dir $@)
	sh scripts/embed_spirv.sh $(SPV) > $@

$(BUILD)/gen/vk_shaders.o: $(BUILD)/gen/vk_shaders.c
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# Programs link the static library the way users do.
LINK_LIB = $(LIB)

$(RLX): $(TOOL_OBJ) $(LIB)
	$(CC) $(CFLAGS_ALL) -o $@ $(TOOL_OBJ) $(LINK_LIB) $(LDLIBS)

$(TESTS): $(TEST_OBJ) $(LIB)
	$(CC) $(CFLAGS_ALL) -o $@ $(TEST_OBJ) $(LINK_LIB) $(LDLIBS)

# The README's C example is extracted and compiled, so the docs cannot rot.
$(BUILD)/readme_example.c: README.md
	@mkdir -p $(BUILD)
	awk '/<!-- example:begin -->/{f=1;next}/<!-- example:end -->/{f=0}f' README.md | sed '/^```/d' > $@

$(README_EXAMPLE): $(BUILD)/readme_example.c $(LIB_PUBLIC)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIB_PUBLIC) $(LDLIBS)

README_MODEL_EXAMPLE = $(BUILD)/readme_model_example
$(BUILD)/readme_model_example.c: README.md
	@mkdir -p $(BUILD)
	awk '/<!-- model-example:begin -->/{f=1;next}/<!-- model-example:end -->/{f=0}f' README.md | sed '/^```/d' > $@

$(README_MODEL_EXAMPLE): $(BUILD)/readme_model_example.c $(LIB_PUBLIC)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIB_PUBLIC) $(LDLIBS)

README_ENCODER_EXAMPLE = $(BUILD)/readme_encoder_example
$(BUILD)/readme_encoder_example.c: README.md
	@mkdir -p $(BUILD)
	awk '/<!-- encoder-example:begin -->/{f=1;next}/<!-- encoder-example:end -->/{f=0}f' README.md | sed '/^```/d' > $@

$(README_ENCODER_EXAMPLE): $(BUILD)/readme_encoder_example.c $(LIB_PUBLIC)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIB_PUBLIC) $(LDLIBS)

README_TRAIN_EXAMPLE = $(BUILD)/readme_train_example
$(BUILD)/readme_train_example.c: README.md
	@mkdir -p $(BUILD)
	awk '/<!-- train-example:begin -->/{f=1;next}/<!-- train-example:end -->/{f=0}f' README.md | sed '/^```/d' > $@

$(README_TRAIN_EXAMPLE): $(BUILD)/readme_train_example.c $(LIB_PUBLIC)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIB_PUBLIC) $(LDLIBS)

setup:
	@bash scripts/setup.sh

test: setup
	@$(MAKE) --no-print-directory -j$(NPROC) $(TESTS) $(README_EXAMPLE) $(README_MODEL_EXAMPLE) $(README_ENCODER_EXAMPLE) $(README_TRAIN_EXAMPLE) $(RLX) $(PY_SUITE)
	@RLX_README_EXAMPLE=$(README_EXAMPLE) RLX_README_MODEL_EXAMPLE=$(README_MODEL_EXAMPLE) \
	    RLX_README_ENCODER_EXAMPLE=$(README_ENCODER_EXAMPLE) RLX_README_TRAIN_EXAMPLE=$(README_TRAIN_EXAMPLE) \
	    RLX_CLI=$(RLX) $(if $(PY_SUITE),RLX_PYTHON=$(abspath $(PYVENV))/bin/python) $(TESTS)


# The demo trains a small byte-level GPT on data/ for about half a minute on
# a 2-core CPU (the best available device: a GPU when there is one), then
# samples from what it wrote.
DEMO_DIR = $(BUILD)/demo_gpt
demo: setup
	@$(MAKE) --no-print-directory -j$(NPROC) $(RLX)
	@$(RLX) train --data data/kjv_genesis_exodus.txt --out $(DEMO_DIR) --steps 600 --log-every 60
	@echo "--- a sample from $(DEMO_DIR):"
	@$(RLX) generate -m $(DEMO_DIR) -p "And God said" -n 400 --seed 7

sanitize:
	@$(MAKE) --no-print-directory test BUILD=build-san OPT=-O1 \
	    SAN_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"

BENCH_GEMM = $(BUILD)/bench_gemm
$(BENCH_GEMM): bench/gemm.c bench/bench_cpu.h $(LIB)
	$(CC) $(CFLAGS_ALL) -I/usr/include/x86_64-linux-gnu/openblas-pthread -o $@ bench/gemm.c $(LIB) \
	    -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas $(LDLIBS)

VK_BENCH = $(BUILD)/vk_bench
$(VK_BENCH): bench/vk_bench.c $(LIB)
	$(CC) $(CFLAGS_ALL) -o $@ bench/vk_bench.c $(LINK_LIB) $(LDLIBS)

# Decode-shaped quantized matvec on the CPU: fast 8-bit path vs exact path.
BENCH_QDOT = $(BUILD)/bench_qdot
$(BENCH_QDOT): bench/qdot.c bench/bench_cpu.h $(LIB)
	$(CC) $(CFLAGS_ALL) -o $@ bench/qdot.c $(LINK_LIB) $(LDLIBS)

bench-qdot: $(BENCH_QDOT)

# Host time of sampling one token (src/models/sampler.c) against a full-sort sampler.
BENCH_SAMPLER = $(BUILD)/bench_sampler
$(BENCH_SAMPLER): bench/sampler.c $(LIB)
	$(CC) $(CFLAGS_ALL) -o $@ bench/sampler.c $(LINK_LIB) $(LDLIBS)

bench-sampler: $(BENCH_SAMPLER)

# What the Python binding adds to a run call, against C and PyTorch eager.
$(BUILD)/run_overhead: bench/run_overhead.c $(LIB_PUBLIC)
	$(CC) $(CFLAGS_ALL) -o $@ bench/run_overhead.c $(LIB_PUBLIC) $(LDLIBS)

bench-python: $(BUILD)/run_overhead $(LIB_SHARED)
	@/usr/bin/python3 bench/python_overhead.py $(BUILD)/run_overhead

$(BUILD)/vk_matmul: bench/vk_matmul.c $(LIB)
	$(CC) $(CFLAGS_ALL) -o $@ bench/vk_matmul.c $(LINK_LIB) $(LDLIBS)

$(BUILD)/llm_bench: bench/llm_bench.c bench/bench_params.h bench/bench_cpu.h $(LIB)
	$(CC) $(CFLAGS_ALL) -o $@ bench/llm_bench.c $(LINK_LIB) $(LDLIBS)

$(BUILD)/vk_matvec: bench/vk_matvec.c bench/bench_params.h $(LIB)
	$(CC) $(CFLAGS_ALL) -o $@ bench/vk_matvec.c $(LINK_LIB) $(LDLIBS)

# Shaders of the raw-Vulkan microbenchmarks in bench/.
$(BUILD)/bench_shaders/%.spv: bench/shaders/%.comp $(SHADER_INC) $(wildcard bench/shaders/*.glsl)
	@mkdir -p $(dir $@)
	glslc --target-env=vulkan1.2 -O -Isrc/vulkan/shaders $< -o $@

# Experiment: dependent L2 hits behind outstanding DRAM loads (bench/vk_inflight.c).
$(BUILD)/vk_inflight: bench/vk_inflight.c bench/vk_bench_common.h $(LIB) $(BUILD)/bench_shaders/inflight.spv
	$(CC) $(CFLAGS_ALL) -o $@ bench/vk_inflight.c $(LINK_LIB) $(LDLIBS)

$(BUILD)/encoder_dump: bench/encoder_dump.c $(LIB)
	$(CC) $(CFLAGS_ALL) -o $@ bench/encoder_dump.c $(LINK_LIB) $(LDLIBS)

# One GPT train step (bench/train_bench.c), through the graph `rlx train` builds.
$(BUILD)/train_bench: bench/train_bench.c $(LIB)
	$(CC) $(CFLAGS_ALL) -o $@ bench/train_bench.c $(LINK_LIB) $(LDLIBS)

gpu-bench: $(VK_BENCH) $(BUILD)/vk_matmul $(BUILD)/llm_bench $(BUILD)/vk_matvec $(BUILD)/vk_inflight $(BUILD)/encoder_dump $(BUILD)/train_bench $(RLX) $(TESTS)

bench:
	@bash scripts/setup.sh bench
	@$(MAKE) --no-print-directory $(BENCH_GEMM)
	@$(BENCH_GEMM)

clean:
	rm -rf build build-san

# ---- Public libraries and `make install` (docs/build.md, "Linking rlx") ----
# The export list is exactly the functions declared in include/rlx.h, read from
# the preprocessed header (scripts/api_symbols.sh). The static library is one
# relocatable object (ld -r) whose other globals objcopy makes local, so that
# internals such as gguf_find_key cannot clash with another library's; the
# shared library hides them with a version script made from the same list.
LIB_PUBLIC = $(BUILD)/librlx.a
SOVERSION  = 0
LIB_SHARED = $(BUILD)/librlx.so.$(SOVERSION)
API_SYMS   = $(BUILD)/gen/rlx_api.syms
API_MAP    = $(BUILD)/gen/rlx_api.map
# Every symbol resolved at link time, except with sanitizers, whose runtime
# (clang's) the executable brings.
SO_NO_UNDEFINED = $(if $(SAN_FLAGS),,-Wl,--no-undefined)
PREFIX    ?= /usr/local
DESTDIR   ?=

.PHONY: install libs test-prefix
all: $(LIB_PUBLIC) $(LIB_SHARED)
libs: $(LIB_PUBLIC) $(LIB_SHARED) $(LIB)

$(API_SYMS): include/rlx.h scripts/api_symbols.sh
	@mkdir -p $(dir $@)
	CC="$(CC)" sh scripts/api_symbols.sh include/rlx.h > $@.tmp && mv $@.tmp $@

$(API_MAP): $(API_SYMS)
	{ echo 'RLX_$(SOVERSION) {'; echo '  global:'; sed 's/.*/    &;/' $<; echo '  local: *;'; echo '};'; } > $@

$(BUILD)/rlx_public.o: $(LIB_OBJ) $(API_SYMS)
	$(LD) -r -o $@.all $(LIB_OBJ)
	objcopy --keep-global-symbols=$(API_SYMS) $@.all $@
	@rm -f $@.all

$(LIB_PUBLIC): $(BUILD)/rlx_public.o
	@rm -f $@
	ar rcs $@ $<

$(LIB_SHARED): $(LIB_OBJ) $(API_MAP)
	$(CC) $(CFLAGS_ALL) -shared -Wl,-soname,librlx.so.$(SOVERSION) -Wl,--version-script=$(API_MAP) \
	    $(SO_NO_UNDEFINED) -o $@ $(LIB_OBJ) $(LDLIBS)
	ln -sf librlx.so.$(SOVERSION) $(BUILD)/librlx.so

# Installs the header, both libraries, rlx.pc and the CLI under $(DESTDIR)$(PREFIX).
install: $(LIB_PUBLIC) $(LIB_SHARED) $(RLX)
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/rlx.h $(DESTDIR)$(PREFIX)/include/rlx.h
	install -m 644 $(LIB_PUBLIC) $(DESTDIR)$(PREFIX)/lib/librlx.a
	install -m 755 $(LIB_SHARED) $(DESTDIR)$(PREFIX)/lib/librlx.so.$(SOVERSION)
	ln -sf librlx.so.$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/librlx.so
	install -m 755 $(RLX) $(DESTDIR)$(PREFIX)/bin/rlx
	sed -e 's|@PREFIX@|$(PREFIX)|' -e "s|@VERSION@|$$(sed -n 's/.*rlx_version(void) { return "\(.*\)".*/\1/p' src/core/status.c)|" \
	    scripts/rlx.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/rlx.pc

# The suite's install tests (tests/test_install.c) build programs against a
# tree installed here first, with the suite's compiler and sanitizer flags.
test: export RLX_INSTALL_PREFIX = $(abspath $(BUILD))/test-prefix
test: export RLX_TEST_CC = $(CC)
test: export RLX_TEST_CFLAGS = $(SAN_FLAGS)
test: test-prefix
test-prefix: setup
	@rm -rf $(BUILD)/test-prefix
	@$(MAKE) --no-print-directory -j$(NPROC) install PREFIX=$(abspath $(BUILD))/test-prefix >/dev/null

# The Python package (python/), installed the way users install it: a venv
# that sees Debian's numpy and pytest, then `pip install ./python` (offline:
# its build backend needs nothing from an index). tests/test_python.c runs
# its suite inside `make test`. Not with sanitizers: Python cannot load an
# ASan library without preloading the runtime.
PYVENV   = $(BUILD)/pyvenv
PY_SUITE = $(if $(SAN_FLAGS),,$(PYVENV)/.installed)
$(PYVENV)/.installed: $(LIB_SHARED) $(wildcard python/rlx/*.py) python/pyproject.toml python/rlx_build.py
	@rm -rf $(PYVENV)
	/usr/bin/python3 -m venv --system-site-packages $(PYVENV)
	$(PYVENV)/bin/pip install --quiet --disable-pip-version-check --no-index ./python
	@touch $@

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(TOOL_OBJ:.o=.d)

# libFuzzer targets for the GGUF and safetensors readers (clang only; not part of `make test`).
#   make fuzz && $(BUILD)/fuzz/fuzz_gguf -max_total_time=60 $(BUILD)/fuzz/corpus
#                $(BUILD)/fuzz/fuzz_safetensors -max_total_time=45 $(BUILD)/fuzz/corpus_st
# Seed corpora: RLX_FUZZ_SEEDS=$(BUILD)/fuzz/corpus build/rlx_tests gguf_roundtrip writes valid files;
# RLX_FUZZ_SEEDS=$(BUILD)/fuzz/corpus_st build/rlx_tests safetensors_ writes safetensors ones.
FUZZ_CC ?= clang
FUZZ_FLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Iinclude -Isrc -O1 -g \
             -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_CORE = src/core/status.c src/core/util.c src/core/dtype.c src/core/log.c src/core/file_map.c
FUZZ_SRC = src/io/gguf.c src/quant/quant.c src/quant/quant_k.c $(FUZZ_CORE)
FUZZ_ST_SRC = src/io/safetensors.c src/core/json.c $(FUZZ_CORE)
.PHONY: fuzz
FUZZ_ONNX_SRC = src/io/onnx.c $(FUZZ_CORE)
FUZZ_NPY_SRC = src/io/npy.c src/core/file_out.c $(FUZZ_CORE)
# the importer needs the whole library: built again with clang's fuzzer
# instrumentation into $(BUILD)/fuzzlib (the CPU backend only)
FUZZ_LIB = $(BUILD)/fuzzlib/librlx_internal.a
fuzz: $(BUILD)/fuzz/fuzz_gguf $(BUILD)/fuzz/fuzz_safetensors $(BUILD)/fuzz/fuzz_onnx $(BUILD)/fuzz/fuzz_npy \
      $(BUILD)/fuzz/fuzz_onnx_import
$(BUILD)/fuzz/fuzz_gguf: tests/fuzz/fuzz_gguf.c $(FUZZ_SRC) $(wildcard src/io/*.h) $(wildcard src/quant/*.h) $(wildcard src/core/*.h)
	@mkdir -p $(BUILD)/fuzz/corpus
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_gguf.c $(FUZZ_SRC) -lm -pthread
$(BUILD)/fuzz/fuzz_safetensors: tests/fuzz/fuzz_safetensors.c $(FUZZ_ST_SRC) $(wildcard src/io/*.h) $(wildcard src/core/*.h)
	@mkdir -p $(BUILD)/fuzz/corpus_st
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_safetensors.c $(FUZZ_ST_SRC) -lm -pthread
$(BUILD)/fuzz/fuzz_onnx: tests/fuzz/fuzz_onnx.c $(FUZZ_ONNX_SRC) $(wildcard src/io/*.h) $(wildcard src/core/*.h)
	@mkdir -p $(BUILD)/fuzz/corpus_onnx
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_onnx.c $(FUZZ_ONNX_SRC) -lm -pthread
$(BUILD)/fuzz/fuzz_onnx_import: tests/fuzz/fuzz_onnx_import.c $(LIB_SRC) include/rlx.h
	@mkdir -p $(BUILD)/fuzz/corpus_onnx
	$(MAKE) BUILD=$(BUILD)/fuzzlib CC=$(FUZZ_CC) OPT=-O1 VULKAN=0 \
	    SAN_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_onnx_import.c $(FUZZ_LIB) -lm -pthread -ldl
$(BUILD)/fuzz/fuzz_npy: tests/fuzz/fuzz_npy.c $(FUZZ_NPY_SRC) $(wildcard src/core/*.h) include/rlx.h
	@mkdir -p $(BUILD)/fuzz/corpus_npy
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_npy.c $(FUZZ_NPY_SRC) -lm -pthread

# docs/ops.md's op x backend x dtype matrix, regenerated from the tables
# (`rlx ops --matrix`); tests/test_op_table.c fails when it is out of date.
ops-doc: $(RLX)
	$(RLX) ops --matrix > $(BUILD)/ops_matrix.md
	awk -v f=$(BUILD)/ops_matrix.md '/^<!-- rlx ops --matrix: begin/ { print; while ((getline l < f) > 0) print l; skip = 1; next } \
	    /^<!-- rlx ops --matrix: end -->/ { skip = 0 } !skip' docs/ops.md > $(BUILD)/ops.md.new
	mv $(BUILD)/ops.md.new docs/ops.md
