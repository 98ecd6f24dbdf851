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

# Six workers (pytest-xdist) on two cores, idle ones stealing queued tests from busy ones (the
# default split left one worker with a long tail: 196-295 s, against 137 s). The suite waits on
# subprocesses, fsyncs and the fake Discord's quiet periods more than it computes.
unit: $(STAMP)
	$(BIN)/pytest -n 6 --dist worksteal

# Bounded to a few minutes on 2 cores. Full scale: make bench LOG_ROWS=10000000
LOG_ROWS ?= 1000000
REVIEW_GAMES ?= 500
bench: $(STAMP)
	$(BIN)/python -m tests.bench.bot_bench
	$(BIN)/python -m tests.bench.storage_bench --rows $(LOG_ROWS)
	$(BIN)/python -m tests.bench.roll_road --out bench-results-road.json
	$(BIN)/python -m tests.bench.review_bench --games $(REVIEW_GAMES)
	$(BIN)/python -m tests.bench.review_desk_bench --games 40
	$(BIN)/python -m tests.bench.shard_bench --actions 40 --rounds 3

# Not part of `make test`: mutants of the code that decides scores, turns, moderator rights,
# the log chain and the fairness draws, each against its module's tests (tests/MUTATION.md).
mutate: $(STAMP)
	$(BIN)/python -m tests.mutate

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
