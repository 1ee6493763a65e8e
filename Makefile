# bitline: the two commands (make run, make test) and a few helpers.
# Every target first installs missing Debian packages (scripts/install-deps.sh).
PRESET ?= release
BUILD  := build/$(PRESET)
JOBS   ?= $(shell nproc)
BITLINE := $(BUILD)/src/cli/bitline

.PHONY: all deps configure build run test bench asan validate clean

all: build

deps:
	@./scripts/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt CMakePresets.json | deps
	cmake --preset $(PRESET)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BITLINE) nand demo --json results/nand-demo.json

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

bench: build
	$(BUILD)/bench/bitline_bench --benchmark_counters_tabular=true

asan:
	$(MAKE) test PRESET=asan

clean:
	rm -rf build
