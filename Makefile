# Two commands on a fresh machine: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint install clean mutate mutate-all stack-test

$(STAMP): pyproject.toml .ci/constraints.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c .ci/constraints.txt -e '.[discord,slack,postgres,redis,runner,dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/torchdrill migrate
	$(BIN)/torchdrill serve

test: $(STAMP)
	$(BIN)/ruff check bot runner tests bench tools
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -rs $(PYTEST_ARGS)

# Not part of `make test` (see docs/mutation-testing.md). `make mutate`: the score of bot/core and
# runner/ from a seeded random sample of mutants sized for a 95% margin of MUTATE_CORE_MARGIN
# and MUTATE_RUNNER_MARGIN points. `make mutate-all`: every mutant (hours). A subset by
# mutant-name globs: make mutate-all MUTANTS='bot.core.domain.scoring.*'
MUTANTS ?=
MUTATE_CHILDREN ?= 2
MUTATE_CORE_MARGIN ?= 3
MUTATE_RUNNER_MARGIN ?= 6
MUTATE_SEED ?=
MUTMUT := $(BIN)/pip install --quiet "mutmut==3.8.1"
mutate: $(STAMP)
	$(MUTMUT)
	$(BIN)/python tools/mutate_sample.py --children $(MUTATE_CHILDREN) $(if $(MUTATE_SEED),--seed $(MUTATE_SEED)) \
		--core-margin $(MUTATE_CORE_MARGIN) --runner-margin $(MUTATE_RUNNER_MARGIN)

mutate-all: $(STAMP)
	$(MUTMUT)
	$(BIN)/mutmut run --max-children $(MUTATE_CHILDREN) $(MUTANTS) || true
	$(BIN)/python tools/mutation_report.py

# Not part of `make test` (root, minutes): every image built with podman from a locally
# bootstrapped Debian base, docker/compose.yaml run end to end on CPU (docs/stack-test.md).
stack-test:
	tools/stack_test.sh

lint: $(STAMP)
	$(BIN)/ruff check bot runner tests bench tools
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache
