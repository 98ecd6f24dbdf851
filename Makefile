# rollkeeper: `make run` plays at once, `make test` checks everything.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# `make run` installs only what playing needs; the test tools (pytest, hypothesis, ruff, mypy)
# come with the first `make test`, `make bench` or `make mutate`.
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck unit bench mutate clean

$(RUN_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# `make run DB=postgresql://USER@HOST/DB` (or a file) plays on another database.
run: $(RUN_STAMP)
	$(BIN)/rollkeeper run $(if $(DB),--db '$(DB)')

test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# Six workers (pytest-xdist) on two cores: the suite waits on subprocesses, fsyncs and the fake
# Discord's quiet periods more than it computes (its CPU time is about 1.2 cores' worth). The
# tests marked `long` (8 s or more) are collected first (tests/conftest.py) and handed out two
# at a time, so they run side by side from the start: 139 s, where work stealing (each worker
# a block of the collection) ran the whole games one after another at the end: 157-170 s.
unit: $(STAMP)
	$(BIN)/pytest -n 6 --dist load --maxschedchunk 2

# Bounded to a few minutes on 2 cores. Full scale: make bench LOG_ROWS=10000000
LOG_ROWS ?= 1000000
REVIEW_GAMES ?= 500
bench: $(STAMP)
	$(BIN)/python -m tests.bench.bot_bench
	$(BIN)/python -m tests.bench.storage_bench --rows $(LOG_ROWS)
	$(BIN)/python -m tests.bench.roll_road --out bench-results-road.json
	$(BIN)/python -m tests.bench.targets
	$(BIN)/python -m tests.bench.review_bench --games $(REVIEW_GAMES)
	$(BIN)/python -m tests.bench.review_desk_bench --games 40
	$(BIN)/python -m tests.bench.shard_bench --actions 40 --rounds 3

# Not part of `make test`: mutants of the code that decides scores, turns, moderator rights,
# the log chain and the fairness draws, each against its module's tests (tests/MUTATION.md).
mutate: $(STAMP)
	$(BIN)/python -m tests.mutate

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
