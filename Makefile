# nnperf top-level targets (the README explains each). CMake does the real work.
#   make bench      THE MAIN JOB: installs, builds, runs `nnperf bench` (default model,
#                   every available backend, batch 1 and 16, fp32; --cache: native and
#                   torch-compile also on a warm plan / Inductor cache, beside the cold rows)
#   make            release build in build/ (bin: build/nnperf)
#   make test       installs dependencies, builds with ASan+UBSan in build-asan/, runs the
#                   whole suite (unit, per-op, conformance, CLI, model tests, fuzz smoke)
#   make conformance   ONNX backend node tests only, with the per-op table
#   make benchmarks the project's own performance benchmarks (bench/): ratios, not tests
#   make crosscheck nnperf's openvino / ort-cpu / tflite / torch-compile P50 vs benchmark_app / a bare
#                   ORT loop / LiteRT's benchmark_litert_model / a bare torch.compile loop (ratios)
#   make fuzz       long fuzz runs (1M executions per target, see scripts/fuzz.sh)
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz

.PHONY: all build deps bench benchmarks test conformance fuzz clean crosscheck

all: build

deps:
	scripts/install-deps.sh
	scripts/install-python.sh
	scripts/install-torch2.sh
	scripts/install-llm.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j$(JOBS)

bench: build
	$(BUILD)/nnperf bench --cache $(BUILD)/bench-cache

test: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNNP_SANITIZE=ON
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS)
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNNP_FUZZ=ON
	cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzz_onnx_load fuzz_tensor_pb fuzz_worker_protocol fuzz_npy fuzz_result_load fuzz_shape_infer fuzz_jpeg_read fuzz_png_read fuzz_plan_cache fuzz_sse_stream fuzz_gguf
	cd $(FUZZ_BUILD) && ctest --output-on-failure -L fuzz

conformance: build
	$(BUILD)/tests/conformance/nnp_conformance --known-failures tests/conformance/known_failures.txt \
	  /usr/share/libonnx-testdata/data/node /usr/share/libonnx-testdata/data/pytorch-converted \
	  /usr/share/libonnx-testdata/data/pytorch-operator /usr/share/libonnx-testdata/data/simple

benchmarks: build
	$(BUILD)/bench/bench_harness_overhead
	$(BUILD)/bench/bench_graph_passes

crosscheck: build
	.venv/bin/python bench/crosscheck.py --nnperf $(BUILD)/nnperf
	bench/llm_crosscheck.sh $(BUILD)/nnperf

fuzz: deps
	scripts/fuzz.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
