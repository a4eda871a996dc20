# Two commands: `make run` serves the lab, `make test` checks everything.
# Both set themselves up on a fresh machine with nothing but python3 (>= 3.11) and make.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run test lint typecheck pytest bench conformance clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Stamps re-run pip when pyproject.toml changes.
$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed-run

run: $(VENV)/.installed-run
	$(BIN)/autograd-lab serve --host $(HOST) --port $(PORT)

lint: $(VENV)/.installed-test
	$(BIN)/ruff check app engine tests bench

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy

pytest: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -rs

test: lint typecheck pytest

conformance: $(VENV)/.installed-run
	$(BIN)/python ../shared/conformance/check.py --show 5

bench: $(VENV)/.installed-test
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
