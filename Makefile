# Quick start: `make demo` (set up, run the main example) and `make test` (set up, run the tests).
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ARGS ?=
# The venv's bin first: the Futhark compiler (make futhark) is found on PATH.
export PATH := $(abspath $(BIN)):$(PATH)

# `futhark`: the real Futhark compiler (docs/futhark.md), see tools/install_futhark.sh.
.PHONY: setup opencl cc futhark demo test test-deps lint bench study clean

setup: $(STAMP) opencl cc futhark

# Reinstall only when the package metadata changes: a second `make setup` is fast.
# HEARTBEAT: a quiet step prints a line every 5 s while it runs (tools/heartbeat.sh; never silent > 10 s).
HEARTBEAT := tools/heartbeat.sh
$(STAMP): pyproject.toml
	@echo "setup: installing searchlab and its dependencies into $(VENV) (a few minutes the first time)"
	@test -x $(BIN)/python || $(HEARTBEAT) "creating $(VENV)" $(PY) -m venv $(VENV)
	@$(HEARTBEAT) "pip: upgrading pip" $(BIN)/python -m pip install -q --upgrade pip
	@$(HEARTBEAT) "pip: installing searchlab and its dependencies" $(BIN)/python -m pip install -q -e '.[dev]'
	@if ls /opt/wheels/torch-2.13.0*.whl >/dev/null 2>&1; then \
		$(HEARTBEAT) "pip: installing the CPU torch wheel" $(BIN)/python -m pip install -q /opt/wheels/torch-2.13.0*.whl; \
	else echo "no local CPU torch wheel in /opt/wheels: searcher=optuna_gp will be unavailable"; fi
	@touch $(STAMP)

# Debian's pocl gives an OpenCL CPU device when pyopencl finds no platform at all.
opencl: $(STAMP)
	@if ! $(HEARTBEAT) "looking for an OpenCL platform" \
		bash -c "$(BIN)/python -c 'import pyopencl as cl; assert cl.get_platforms()' >/dev/null 2>&1"; then \
		echo "no OpenCL platform found: installing Debian's pocl-opencl-icd"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$(HEARTBEAT) "apt-get: installing pocl-opencl-icd" bash -c "$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq pocl-opencl-icd >/dev/null"; \
		$(BIN)/python -c 'import pyopencl as cl; print("OpenCL:", [d.name for p in cl.get_platforms() for d in p.get_devices()])'; \
	fi

# The system gcc (with OpenMP) and FFTW 3: problem=dft compiles its C library and compares with FFTW;
# examples/gcc_matmul (problem=command) compiles C programs.
cc:
	@command -v gcc >/dev/null 2>&1 && test -e /usr/include/fftw3.h || { \
		echo "installing Debian's gcc and libfftw3-dev (problem=dft, problem=command's example)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$(HEARTBEAT) "apt-get: installing gcc and libfftw3-dev" bash -c "$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq gcc libc6-dev libfftw3-dev >/dev/null"; }

# The real Futhark compiler in a private prefix (.futhark/), linked as .venv/bin/futhark.
futhark: $(STAMP)
	@VENV=$(VENV) $(HEARTBEAT) "installing the Futhark compiler" tools/install_futhark.sh

# The demo is bounded (issue 54): search 20 evaluations or 3 minutes (conf/budget/demo.yaml), confirm and
# validation at most 1 minute each: about 5 minutes on a busy machine with warm caches, at most 7.
demo: setup
	$(BIN)/python -m searchlab problem=lud searcher=tag $(ARGS)

# The study report test opens report.html in headless Chromium (Debian's package).
test-deps: setup
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the report test"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$(HEARTBEAT) "apt-get: installing chromium" bash -c "$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null"; }

# Without ARGS: the parallel_safe files on two workers, then the rest one at a time (tests/conftest.py).
# Both parts always run; the first failure's status is the result, and "no tests" (5) is a failure.
test: setup test-deps
	@if [ -n "$(ARGS)" ]; then $(BIN)/python -m pytest -q $(ARGS); rc=$$?; else \
		$(BIN)/python -m pytest -q -n 2 --dist loadgroup -m parallel_safe; rc=$$?; \
		$(BIN)/python -m pytest -q -m "not parallel_safe"; rc2=$$?; \
		if [ $$rc -eq 0 ]; then rc=$$rc2; fi; fi; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

lint: setup
	$(BIN)/ruff check searchlab tests bench examples
	$(BIN)/mypy

bench: setup
	$(BIN)/python -m bench overhead

study: setup
	$(BIN)/python -m searchlab.study study=synthetic_replay $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
