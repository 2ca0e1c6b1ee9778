# Two commands on a fresh machine: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint install clean mutate

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
	$(BIN)/python -m pytest -q -rs $(PYTEST_ARGS)

# Slow (see README): mutation score per module and the surviving mutants.
# Measure a subset with mutant-name globs, e.g. make mutate MUTANTS='bot.core.progress.scoring.*'
MUTANTS ?=
MUTATE_CHILDREN ?= 2
mutate: $(STAMP)
	$(BIN)/pip install --quiet "mutmut==3.8.1"
	cd $(CURDIR) && $(BIN)/mutmut run --max-children $(MUTATE_CHILDREN) $(MUTANTS) || true
	$(BIN)/python tools/mutation_report.py

lint: $(STAMP)
	$(BIN)/ruff check bot runner tests bench tools

clean:
	rm -rf $(VENV) .pytest_cache
