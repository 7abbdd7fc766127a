# One command for the demo, one for the tests; both set up .venv with uv first.
#   make demo   start the local Weaviate, ingest samples/, run searches
#   make test   lint, type-check, build the docs and run the whole test suite against a real Weaviate
#   make check  lint, type-check and the tests that need no server (the edit loop)
#   make docs   the documentation site, into site/

SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
UV := python3 -m uv
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

# The suite runs in parallel (pytest-xdist), one worker more than there are cores: with a worker
# per core the cores stood idle a quarter of the time (149% of 200% on 2 cores, quiet machine),
# while tests waited on servers they had killed, restarted or paused. Each worker is a pytest
# session of its own, with its own STITCHER_HOME and, once one of its tests needs it, its own
# Weaviate on free ports. --dist loadfile keeps a file's tests on one worker, so what a module
# builds once (an ingested corpus, the 3-node cluster) is built once. TEST_WORKERS=0 runs it in
# this process.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
PYTEST := $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

.PHONY: setup server demo test check lint docs clean-venv

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

# pytest's status is printed before make replaces it with its own 2: 1 tests failed,
# 2 interrupted, 3 internal error, 4 usage error, 5 no tests collected.
test: setup lint docs
	@$(PYTEST) || { status=$$?; echo "pytest exited with status $$status" >&2; exit $$status; }

# No server is started, none is built (`integration` marks every test that needs one), no
# wheel is built and no real embedding model is loaded (`packaging`, `slow`).
check: lint
	$(PYTEST) -m "not integration and not packaging and not slow"

clean-venv:
	rm -rf $(VENV)
