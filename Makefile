# bitline: the two commands (make run, make test) and a few helpers.
# Every target first installs missing Debian packages (scripts/install-deps.sh).
PRESET ?= release
BUILD  := build/$(PRESET)
JOBS   ?= $(shell nproc)
BITLINE := $(BUILD)/src/cli/bitline
# Debian's interpreter, where python3-matplotlib installs (a pyenv python3 may not see it).
PLOT_PYTHON ?= /usr/bin/python3

FUZZ_SECONDS ?= 60

.PHONY: all deps deps-fuzz configure build run test bench asan fuzz validate ssb ssd-drives serve-capacity doc-commands format format-check clean install python

all: build

deps:
	@./scripts/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt CMakePresets.json | deps
	cmake --preset $(PRESET)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The Python module (built by `make build` too): build/$(PRESET)/python/bitline (docs/python.md).
python: build
	@echo "PYTHONPATH=$(BUILD)/python python3 -c 'import bitline'"

# The program, its configs and scripts under PREFIX (bin/, share/bitline/); the installed program finds its configs
# relative to itself, from any folder (docs/commands.md).
PREFIX ?= $(HOME)/.local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# The main job: both papers' evaluations at their default (paper) configurations,
# then their summaries against the published figures.
run: build
	$(BITLINE) cosmos eval --json results/cosmos-eval.json
	$(BITLINE) cosmos write-bw --json results/cosmos-write-bw.json
	$(BITLINE) accel eval --json results/accel-eval.json
	$(BITLINE) accel ablation --json results/accel-ablation.json
	$(BITLINE) accel sessions --json results/accel-sessions.json
	python3 scripts/validation.py table results/cosmos-eval.json
	python3 scripts/validation.py accel results/accel-eval.json
	$(PLOT_PYTHON) scripts/plot_cosmos.py results/cosmos-eval.json results/cosmos-write-bw.json results/figures
	$(PLOT_PYTHON) scripts/plot_accel.py results/accel-eval.json results/accel-ablation.json results/accel-sessions.json results/figures

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

bench: build
	$(BUILD)/bench/bitline_bench --benchmark_counters_tabular=true
	@echo "== whole paper-scale Flash-Cosmos evaluation (wall time and event rate; issue 55 target: <= 2 s) =="
	$(BITLINE) cosmos eval --quiet --json results/bench-cosmos-eval.json | tail -n 1
	@echo "== Flash-Cosmos sequential writes, 64 GiB per program mode and scheme (wall time in the last line; target < 5 s) =="
	$(BITLINE) cosmos write-bw --bytes 64GiB | tail -n 1
	@echo "== whole FlashAccel evaluation matrix (wall time in the last line; issue 55 target: <= 2 s) =="
	$(BITLINE) accel eval --quiet --json results/bench-accel-eval.json | tail -n 1
	@echo "== static batches (accel run --static-batch): the longest visible TensorRT-LLM rows (target < 0.1 s each) =="
	/usr/bin/time -f "   %e s" $(BITLINE) accel run --static-batch --model llama2-70b --system h100x4 --context 128:2048 --batch 512 --precision fp8 | tail -n 1
	/usr/bin/time -f "   %e s" $(BITLINE) accel run --static-batch --model llama2-70b --system h200-sxmx1 --context 2048:2048 --batch 64 --precision fp8 | tail -n 1
	@echo "== serve run: 100,000 requests of Llama-3.1-70B on 8 x H100 under --engine vllm (issue 53 target: < 2 s on one core, < 500 MB) =="
	/usr/bin/time -f "   %e s wall, %U s CPU, peak RSS %M KB" $(BITLINE) serve run --model llama3.1-70b --system h100x8 --engine vllm --rate 12 --input lognormal:1024:0.6 --output lognormal:256:0.6 --requests 100000 --json results/bench-serve.json | tail -n 1
	@echo "== accel sessions: the paper's multi-turn experiment served by the serving simulation (44 simulations, 2.5e9 decoded tokens; issue 55 target: <= 10 s) =="
	/usr/bin/time -f "   %e s wall, %U s CPU, peak RSS %M KB" $(BITLINE) accel sessions --quiet --json results/bench-accel-sessions.json | tail -n 1
	@echo "== make run on this built tree (the main job and its charts; issue 55 target: <= 30 s) =="
	/usr/bin/time -f "   %e s wall, %U s CPU" $(MAKE) --no-print-directory run > /dev/null
	@echo "== HBF: a 100 GiB weight read on a CSI GPU at megapage granularity (wall time in the last line) =="
	$(BITLINE) hbf stream --preset csi --bytes 100GiB --json results/bench-hbf-stream.json | tail -n 2
	@echo "== SSB in flash: SF 1 with rows, checks and every system, then SF 100 timing-only (issue 26: each under 60 s) =="
	/usr/bin/time -f "   %e s wall, %U s CPU, peak RSS %M KB" $(BITLINE) cosmos ssb --sf 1 --quiet --json results/bench-ssb-sf1.json | tail -n 1
	/usr/bin/time -f "   %e s wall, %U s CPU, peak RSS %M KB" $(BITLINE) cosmos ssb --sf 100 --quiet --json results/bench-ssb-sf100.json | tail -n 1
	@echo "== general SSD: MQSim-default device, 10 s of QD16+QD16 4 KiB random reads, then QD16+QD2 4 KiB random writes =="
	@echo "   (MQSim on this machine kind, issue 14: 51,000 and 34,000 simulated requests per wall second and 2.1 / 2.26 GB;"
	@echo "    the 30x target is 1.53 M and 1.02 M requests/s below, the 1/20 memory target 105 / 113 MB of peak RSS)"
	/usr/bin/time -f "   peak RSS %M KB" $(BITLINE) ssd run --quiet --device configs/ssd/device.xml --workload configs/ssd/read.xml --json results/bench-ssd-read.json | head -n 1
	/usr/bin/time -f "   peak RSS %M KB" $(BITLINE) ssd run --quiet --device configs/ssd/device.xml --workload configs/ssd/write.xml --json results/bench-ssd-write.json | head -n 1
	@echo "== general SSD as a modern drive: 200 GB of sequential 128 KiB writes on the 980 PRO through its SLC cache (issue 54 target: < 5 s) =="
	/usr/bin/time -f "   %e s wall, %U s CPU, peak RSS %M KB" $(BITLINE) ssd fio configs/ssd/bench/seqwrite-200g-128k.fio --device configs/ssd/drives/samsung-980pro-1tb.xml --quiet --json results/bench-ssd-fio.json
	@echo "   the same at page-level mapping without cache programs (MQSim's FTL on the drive; docs/ssd.md, Mapping units):"
	/usr/bin/time -f "   %e s wall, %U s CPU, peak RSS %M KB" $(BITLINE) ssd fio configs/ssd/bench/seqwrite-200g-128k.fio --device configs/ssd/drives/samsung-980pro-1tb.xml --set ssd_device.mapping_unit=0 --set ssd_device.cache_program=false --quiet --json results/bench-ssd-fio-page.json

# The Star Schema Benchmark in flash (docs/cosmos.md, "Analytical queries in flash"): its table and figures.
ssb: build
	$(BITLINE) cosmos ssb --sf 1 --quiet --json results/ssb-sf1.json
	$(BITLINE) cosmos ssb --sf 1 --quiet --timing-only --aggregation flash --json results/ssb-sf1-flash.json
	$(PLOT_PYTHON) scripts/plot_ssb.py results/ssb-sf1.json results/ssb-sf1-flash.json docs/figures docs/cosmos.md
	python3 scripts/doc_values.py write $(BITLINE)

# Regenerates docs/validation.md (paper vs bitline), README.md's headline tables, docs/parameters.md and the charts in docs/figures from the model,
# then the figures the prose repeats from those tables and from example runs (scripts/doc_values.py; as do ssb, ssd-drives
# and serve-capacity).
validate: build
	python3 scripts/validation.py docs $(BITLINE) docs/validation.md
	$(PLOT_PYTHON) scripts/plot_real_gpus.py results/real-gpus.json docs/figures
	$(PLOT_PYTHON) scripts/plot_real_gpus_batch.py results/real-gpus-batch.json docs/figures
	$(PLOT_PYTHON) scripts/plot_gemm_kernels.py results/gemm-kernels.json docs/figures
	$(PLOT_PYTHON) scripts/plot_gemm_kernels_b200.py results/gemm-kernels-b200.json docs/figures
	$(PLOT_PYTHON) scripts/plot_attention_kernels.py results/attention-kernels.json docs/figures
	$(PLOT_PYTHON) scripts/plot_collective_kernels.py results/collective-kernels.json docs/figures
	$(BITLINE) describe --json | python3 scripts/gen_param_table.py > docs/parameters.md.partial && mv docs/parameters.md.partial docs/parameters.md
	$(PLOT_PYTHON) scripts/plot_cosmos.py results/cosmos-eval.json results/cosmos-write-bw.json docs/figures
	$(BITLINE) accel eval --quiet --json results/accel-eval.json
	$(BITLINE) accel ablation --json results/accel-ablation.json > /dev/null
	$(BITLINE) accel sessions --json results/accel-sessions.json > /dev/null
	$(PLOT_PYTHON) scripts/plot_accel.py results/accel-eval.json results/accel-ablation.json results/accel-sessions.json docs/figures
	$(BITLINE) hbf area --preset csi --vary hbf.area.periphery=bonded,beside --vary hbf.area.layers=64,96,128,160,176,200,232,262,300,350,400,512 --json results/hbf-area.json > /dev/null
	$(PLOT_PYTHON) scripts/plot_area.py results/hbf-area.json docs/figures docs/hbf.md
	$(PLOT_PYTHON) scripts/serve_engines.py $(BITLINE) docs/serving.md results/serve-engines.json docs/figures/serve-engines.png
	python3 scripts/doc_values.py write $(BITLINE)

# The general SSD against real drives (docs/ssd.md, "Against real drives"): runs configs/ssd/drives/ on their
# fio-shaped workloads and regenerates the table of measured figures beside bitline's, and the SLC cache's bandwidth
# over a 64 GB fill beside the data sheets' rates (docs/ssd.md, "SLC caching").
ssd-drives: build
	python3 scripts/ssd_drives.py $(BITLINE) docs/ssd.md
	$(PLOT_PYTHON) scripts/ssd_slc_cache.py $(BITLINE) results/ssd-slc-cache.json docs/figures/ssd-slc-cache.png docs/ssd.md
	python3 scripts/doc_values.py write $(BITLINE)

# Serving capacity of the FlashAccel systems request by request (configs/experiments/serve-capacity.yaml; docs/serving.md).
serve-capacity: build
	$(PLOT_PYTHON) scripts/serve_capacity.py $(BITLINE) configs/experiments/serve-capacity.yaml results/serve-capacity.json docs/figures/serve-capacity.png docs/serving.md
	$(PLOT_PYTHON) scripts/serve_capacity.py $(BITLINE) configs/experiments/serve-capacity-colocated.yaml results/serve-capacity-colocated.json docs/figures/serve-capacity-colocated.png docs/serving.md
	python3 scripts/doc_values.py write $(BITLINE)

# Every command shown in README.md and docs/*.md, run as written on the built tree, then every figure the prose repeats
# from a generated table and every CSV column list against the program's (CI; scripts/check_doc_commands.py, doc_values.py).
doc-commands: build
	python3 scripts/check_doc_commands.py $(BITLINE) README.md $(wildcard docs/*.md)
	BITLINE=$(abspath $(BITLINE)) $(PLOT_PYTHON) -m pytest -q -p no:cacheprovider tests/scripts/test_doc_values.py

# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer (g++).
asan:
	$(MAKE) test PRESET=asan

deps-fuzz:
	@./scripts/install-deps.sh fuzz

# libFuzzer harnesses (clang++, ASan + UBSan), each run for FUZZ_SECONDS from its
# seed corpus in fuzz/corpus/; fails on any crash, sanitizer report, timeout or OOM.
# Then fuzz/fuzz_plot.py (scripts/plot.py, with PLOT_PYTHON) for FUZZ_SECONDS.
fuzz: deps-fuzz
	cmake --preset fuzz
	cmake --build build/fuzz --target fuzzers -j $(JOBS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) PLOT_PYTHON=$(PLOT_PYTHON) ./scripts/fuzz.sh

# C++ formatting (.clang-format, clang-format 14 from Debian).
FORMAT_FILES = $(shell git ls-files '*.cpp' '*.hpp')
format: deps
	clang-format -i $(FORMAT_FILES)
format-check: deps
	clang-format --dry-run -Werror $(FORMAT_FILES)

clean:
	rm -rf build
