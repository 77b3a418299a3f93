# The two set-up commands of the README's quick start. Both make their own
# virtualenv in .venv, install what they need from PyPI, then run.
#   make demo   install git-mem and run the demo in a throwaway repository
#   make test   install git-mem with its test extras (and Debian's chromium for the
#               browser tests) and run the whole suite

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: demo test docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

demo: $(BIN)/python
	$(BIN)/python -m pip install -q .
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

# mypy --strict (config in pyproject.toml) and the layer test first: they fail fast.
# worksteal keeps both workers busy whatever order the slow tests land in.
test: $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	bash scripts/browser.sh
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest -q tests/test_layers.py
	$(BIN)/python -m pytest -n 2 --dist worksteal $(PYTEST_ARGS)

docs: $(BIN)/python
	$(BIN)/python scripts/gen_docs.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
