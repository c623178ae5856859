# The README's two commands: `make demo` (the main job, on the SQLite default) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/claimq: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(BIN)/claimq

.PHONY: setup demo test lint
setup: $(BIN)/claimq

demo: setup
	$(BIN)/claimq demo

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

# The long soaks (marker `soak`) are left out; their one-round forms run. All of it:
# `$(BIN)/pytest -q`.
test: setup lint
	$(BIN)/pytest -q -p no:cacheprovider -m "not soak" --durations=25
