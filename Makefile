# One command for the demo, one for the tests; both set up .venv with uv first.
#   make demo   start the local Weaviate, ingest samples/, run searches
#   make test   lint, type-check, build the docs and run the whole test suite against a real Weaviate
#   make docs   the documentation site, into site/

SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
UV := python3 -m uv
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup server demo test lint docs clean-venv

$(BIN)/.installed: pyproject.toml
	@python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv
	$(UV) venv --quiet --allow-existing $(VENV)
	$(UV) pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[dev]'
	@touch $@

setup: $(BIN)/.installed server

# Builds the pinned Weaviate once (go install, ~8 min cold) into ~/.cache/stitcher; later a no-op.
server: $(BIN)/.installed
	$(BIN)/stitcher server install

demo: setup
	$(BIN)/stitcher server start
	$(BIN)/stitcher ingest samples/
	$(BIN)/stitcher search "how do birds navigate at night?"
	$(BIN)/stitcher search "茶树 修剪"
	@echo "The server keeps running for the next command; stop it with: $(BIN)/stitcher server stop"

lint: $(BIN)/.installed
	$(BIN)/ruff check stitcher tests bench
	$(BIN)/ruff format --check stitcher tests bench
	$(BIN)/mypy

# The documentation site from docs/ (the CLI reference is generated from the commands); --strict
# turns a broken link or a page missing from the navigation into a failure.
docs: $(BIN)/.installed
	HF_HUB_OFFLINE=1 NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

test: setup lint docs
	$(BIN)/python -m pytest

clean-venv:
	rm -rf $(VENV)
