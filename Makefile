# cgc front end. Every target does the set-up it needs and is idempotent.
#
#   make demo    import the bundled example model and print what cgc made of it
#   make test    the whole test suite (lit, gtest, Python), ending with the
#                skips by cause and a summary line
#   make build   configure and build the compiler tools
#   make setup   Debian packages and the Python venv
#   make docs    regenerate docs/ops.md and the ODS reference pages
#   make test-sanitize  importer, interpreter and runtime tests on an
#                ASan+UBSan build (the runtime on the stub CUDA driver)
#   make fuzz    run the importer fuzzers FUZZ_SECONDS each (default 60)
#   make bench-compile PARTS=...   compile the benchmark models (bench/README.md)

SHELL := /bin/bash
BUILD_DIR ?= build
VENV      := $(BUILD_DIR)/venv
LLVM_DIR  := /usr/lib/llvm-22
LIT       := $(LLVM_DIR)/bin/lit
JOBS      ?= $(shell nproc)
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# graphviz and chromium-headless-shell: the tests that render --explain
# (dot -Tpng, a Chromium screenshot); about 120 MB, 20 s to install.
APT_PACKAGES := cmake ninja-build ccache g++ python3-venv python3-dev \
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools \
  libonnx-dev libonnx-testdata protobuf-compiler libprotobuf-dev libgtest-dev \
  graphviz chromium-headless-shell

.PHONY: all setup build test demo docs clean conformance bench-compile \
  sanitize-build test-sanitize fuzz

all: build

# Installs only what is missing, so a second run costs a dpkg query.
$(BUILD_DIR)/.apt-done:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@mkdir -p $(BUILD_DIR) && touch $@

$(VENV)/.done: requirements.txt | $(BUILD_DIR)/.apt-done
	/usr/bin/python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r requirements.txt
	@touch $@

setup: $(BUILD_DIR)/.apt-done $(VENV)/.done

$(BUILD_DIR)/build.ninja: | setup
	cmake -G Ninja -S . -B $(BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DMLIR_DIR=$(LLVM_DIR)/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=$(LIT) \
	  -DPython3_EXECUTABLE=$(abspath $(VENV))/bin/python

build: setup $(BUILD_DIR)/build.ninja
	ninja -C $(BUILD_DIR) -j $(JOBS) cgc cgc-opt cgc-unit-tests cgrt-tests cgc-run cgrt-stress cgrt-test-package cgrt _cgc_native \
	  cgc-fuzz-replay cgc-interp cgc-conformance

# Ends with the skips of lit, gtest and Python by cause and one line of
# counts (utils/ci/test_summary.py, docs/testing.md "What make test
# reports"); a skip whose message states no cause fails it.
# The emulated-kernel suites (test/Emulation) each leave a JSON record; the
# line over all of them says what CI ran on the CPU (docs/testing.md).
EMULATION_RECORDS = $(BUILD_DIR)/test/Emulation/Output/*.json

test: build
	@set -o pipefail; rm -f $(BUILD_DIR)/test-results.json $(EMULATION_RECORDS); \
	$(LIT) -sv -o $(BUILD_DIR)/test-results.json $(BUILD_DIR)/test 2>&1 \
	  | tee $(BUILD_DIR)/test.log; \
	lit_exit=$$?; \
	if ls $(EMULATION_RECORDS) >/dev/null 2>&1; then \
	  $(VENV)/bin/python utils/ci/emulate.py summary $(EMULATION_RECORDS); fi; \
	python3 utils/ci/test_summary.py --title "make test" --lit-exit $$lit_exit \
	  --log $(BUILD_DIR)/test.log $(BUILD_DIR)/test-results.json $(BUILD_DIR)/test

# The compiler and the runtime built with clang, ASan, UBSan and LLVM
# assertions, plus the libFuzzer targets (docs/reliability.md). The tests
# that run there: the importer-facing ones, the interpreter's (cgc-interp,
# cgc-conformance, against onnxruntime) and the runtime's on the stub CUDA
# driver (cgrt-tests, cgc-run, cgrt-stress; docs/testing.md).
SAN_BUILD_DIR ?= build-asan
SAN_APT_PACKAGES := clang-14 libclang-rt-14-dev
FUZZ_SECONDS ?= 60
SAN_TARGETS := cgc cgc-opt cgc-unit-tests cgc-fuzz-replay cgc-fuzz-bytes cgc-fuzz-proto \
  cgc-interp cgc-conformance cgrt-tests cgrt-test-package cgrt_stub_driver \
  cgc-run cgrt-stress
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons memory in our
# (instrumented) copies of its inline code that the prebuilt, uninstrumented
# LLVM never unpoisons; ASan would report that as use-after-poison.
SAN_ENV := ASAN_OPTIONS=abort_on_error=1:allow_user_poisoning=0:detect_leaks=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
SAN_TESTS := $(SAN_BUILD_DIR)/test/Import $(SAN_BUILD_DIR)/test/fuzz \
  $(SAN_BUILD_DIR)/test/unit.test $(SAN_BUILD_DIR)/test/Interpreter \
  $(SAN_BUILD_DIR)/test/Training \
  $(addprefix $(SAN_BUILD_DIR)/test/Runtime/,runtime.test stub-driver.test \
    cgc-run.test cgrt-stress.test)

$(SAN_BUILD_DIR)/.apt-done:
	@missing=""; for p in $(SAN_APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@mkdir -p $(SAN_BUILD_DIR) && touch $@

$(SAN_BUILD_DIR)/build.ninja: | setup $(SAN_BUILD_DIR)/.apt-done
	cmake -G Ninja -S . -B $(SAN_BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
	  "-DCMAKE_C_FLAGS_RELEASE=-O1 -g1" "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g1" \
	  -DLLVM_ENABLE_ASSERTIONS=ON -DCGC_SANITIZE=ON -DCGC_FUZZ=ON \
	  -DMLIR_DIR=$(LLVM_DIR)/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=$(LIT) \
	  -DPython3_EXECUTABLE=$(abspath $(VENV))/bin/python

sanitize-build: setup $(SAN_BUILD_DIR)/.apt-done $(SAN_BUILD_DIR)/build.ninja
	ninja -C $(SAN_BUILD_DIR) -j $(JOBS) $(SAN_TARGETS)

test-sanitize: sanitize-build
	@set -o pipefail; rm -f $(SAN_BUILD_DIR)/test-results.json; \
	$(SAN_ENV) $(LIT) -sv -o $(SAN_BUILD_DIR)/test-results.json $(SAN_TESTS) 2>&1 \
	  | tee $(SAN_BUILD_DIR)/test.log; \
	python3 utils/ci/test_summary.py --title "make test-sanitize" --lit-exit $$? \
	  --log $(SAN_BUILD_DIR)/test.log $(SAN_BUILD_DIR)/test-results.json \
	  $(SAN_BUILD_DIR)/test

fuzz: sanitize-build
	python3 utils/fuzz/run_fuzzers.py --build $(SAN_BUILD_DIR) --seconds $(FUZZ_SECONDS)

DEMO_MODEL := examples/tiny_mlp/model.onnx

demo: build
	@echo "== cgc $(DEMO_MODEL) --emit=cgc   (the imported program)"
	@$(BUILD_DIR)/bin/cgc $(DEMO_MODEL) --emit=cgc -o -
	@echo "== cgc $(DEMO_MODEL) --explain   (islands, kernels, arena plan)"
	@$(BUILD_DIR)/bin/cgc $(DEMO_MODEL) --explain
	@echo "== cgc $(DEMO_MODEL) -o $(BUILD_DIR)/demo-package   (kernels, graph, weights, library)"
	@rm -rf $(BUILD_DIR)/demo-package
	@$(BUILD_DIR)/bin/cgc $(DEMO_MODEL) -o $(BUILD_DIR)/demo-package
	@ls -l $(BUILD_DIR)/demo-package
	@echo "== run it on a GPU machine with: $(BUILD_DIR)/bin/cgc-run $(BUILD_DIR)/demo-package --bench 1000"

docs: build
	$(BUILD_DIR)/bin/cgc --list-ops > docs/ops.md
	ninja -C $(BUILD_DIR) mlir-doc
	mkdir -p docs/generated
	cp $(BUILD_DIR)/docs/Dialects/*.md $(BUILD_DIR)/docs/*.md docs/generated/
	$(BUILD_DIR)/bin/cgc --list-gradients > docs/generated/gradients.md

# The ONNX backend suites of the venv's onnx (1.23: written from its test
# cases by utils/conformance/onnx_suite.py, once per version).
ONNX_SUITE := $(BUILD_DIR)/onnx-suite
ONNX_SUITES := node,pytorch-converted,pytorch-operator,simple,light

# Runs every ONNX backend test (libonnx-testdata) on the reference
# interpreter (rtol 1e-5, atol 1e-6; test/conformance/tolerances.txt gives
# looser ones to a few tests, each with its reason), fails on any status
# that differs from test/conformance/expected.txt (and on a test without a
# line or a line without a test), and regenerates docs/conformance.md; then
# the same for the ONNX 1.23 suites (test/conformance/expected-onnx-1.23.txt),
# whose section follows 1.12's on the same page.
# `make conformance CONFORMANCE_FLAGS=--update-expected` rewrites the list.
conformance: setup $(BUILD_DIR)/build.ninja
	ninja -C $(BUILD_DIR) -j $(JOBS) cgc-conformance
	$(BUILD_DIR)/bin/cgc-conformance --quiet \
	  --expected test/conformance/expected.txt \
	  --tolerances test/conformance/tolerances.txt $(CONFORMANCE_FLAGS)
	$(BUILD_DIR)/bin/cgc-conformance --emit-doc docs/conformance.md \
	  --doc-section "ONNX 1.12: Debian's libonnx-testdata" \
	  --expected test/conformance/expected.txt \
	  --tolerances test/conformance/tolerances.txt \
	  --gpu-expected test/conformance/gpu-expected.txt
	$(VENV)/bin/python utils/conformance/onnx_suite.py --out $(ONNX_SUITE)
	$(BUILD_DIR)/bin/cgc-conformance --quiet --data $(ONNX_SUITE) \
	  --suites $(ONNX_SUITES) \
	  --expected test/conformance/expected-onnx-1.23.txt \
	  --tolerances test/conformance/tolerances-onnx-1.23.txt $(CONFORMANCE_FLAGS)
	$(BUILD_DIR)/bin/cgc-conformance --emit-doc docs/conformance.md --append-doc \
	  --doc-section "ONNX 1.23: the pip wheel's test cases" \
	  --data $(ONNX_SUITE) --suites $(ONNX_SUITES) \
	  --expected test/conformance/expected-onnx-1.23.txt \
	  --tolerances test/conformance/tolerances-onnx-1.23.txt \
	  --gpu-expected test/conformance/gpu-expected-onnx-1.23.txt

# The benchmark against PyTorch (bench/README.md): after bench/export.py ran
# on the GPU machine, compile its models and pack them for bench/run.py:
#   make bench-compile PARTS='/work/.device/N/export.tar.xz.*'
bench-compile: build
	$(VENV)/bin/python bench/compile.py $(if $(PARTS),--parts '$(PARTS)')

clean:
	rm -rf $(BUILD_DIR) $(SAN_BUILD_DIR)
