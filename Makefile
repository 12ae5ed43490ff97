# Thin wrapper over CMake for the README's two commands and CI.
#   make demo   install deps, build, run vforge on the bundled example corpus
#   make check  install deps, the source checks (make lint), build (-Werror), run every test, then
#               the ASan+UBSan pass and fuzz smoke
#   make lint   the layer rule's #include side, the banned libc calls, the unnamed buffer
#               ceilings and the cleanup idiom (scripts/check-*.sh);
#               the build itself links each layer alone (vforge_layer_*), which holds the call side
#   make wheel  the Python package (pyproject.toml, scikit-build-core from .venv) as a wheel in $(BUILD)/wheel
#   make fuzz   build the libFuzzer harnesses (clang) and run each for FUZZ_SECONDS (default 60) on
#               its seed corpus plus the regression inputs; figures in $(FUZZ_BUILD)/fuzz-report.txt
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10
PY ?= $(CURDIR)/.venv/bin/python

.PHONY: all deps build demo check lint test test-asan fuzz-build fuzz fuzz-smoke bench clean format wheel

all: build

deps:
	bash scripts/install-deps.sh

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVFORGE_WERROR=ON >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

demo: deps build
	bash scripts/demo.sh $(BUILD)/vforge

test: build
	bash tests/run.sh $(BUILD)

test-asan:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DVFORGE_SANITIZE=ON -DVFORGE_WERROR=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp bash tests/run.sh $(ASAN_BUILD) "asan"

fuzz-build:
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DVFORGE_FUZZ=ON >/dev/null
	cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzzers

# CI: each harness briefly (crash regressions always replayed first)
fuzz-smoke: fuzz-build
	bash tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS)

# each harness for FUZZ_SECONDS; executions and CPU seconds per harness in fuzz-report.txt
fuzz: fuzz-build
	FUZZ_REPORT=$(FUZZ_BUILD)/fuzz-report.txt bash tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

lint:
	bash scripts/check-layers.sh
	bash scripts/check-banned.sh
	bash scripts/check-buflimits.sh
	bash scripts/check-idiom.sh

# The services (radosgw, nginx, Slurm) start once, as children, for both test passes.
check: deps lint
	bash tests/services/with-services.sh $(MAKE) test test-asan
	$(MAKE) fuzz-smoke

# the wheel links the libvforge this CMake project builds (static, -fPIC) into vforge/_vforge*.so
wheel: deps
	$(PY) -m pip wheel --no-build-isolation --no-deps -w $(BUILD)/wheel .
	@ls -1 $(BUILD)/wheel/vforge-*.whl

bench: build
	bash bench/scan/run.sh $(BUILD)/vforge

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) build-py
