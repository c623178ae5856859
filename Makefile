# The README's two commands: `make demo` (the main job, on the SQLite default) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

# `make setup` (and test, lint): claimq with every extra and the development tools.
$(VENV)/.dev-installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

# `make demo`: claimq alone (click, orjson, rich): the demo needs no extra and no dev tool. A
# .venv that `make setup` made already has it.
$(VENV)/.core-installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e .
	touch $@

# Django 6.0's own tests/tasks/ against claimq's Django Tasks backend (tests/django_upstream),
# in a venv of its own (Django 6 needs Python 3.12); `make test` runs it through
# tests/django_project/test_django_upstream.py. Django's MySQL backend needs mysqlclient (built
# against libmariadb-dev, with pkg-config: .ci/run installs them).
DJ6_PYTHON ?= /root/.pyenv/versions/3.12.1/bin/python3.12
DJ6_VENV := .venv-django6
DJ6_DBS ?= sqlite postgresql mariadb

$(DJ6_VENV)/bin/django-admin: pyproject.toml tests/django_upstream/requirements.txt
	$(DJ6_PYTHON) -m venv $(DJ6_VENV)
	$(DJ6_VENV)/bin/pip install --quiet -e '.[postgres]' -r tests/django_upstream/requirements.txt
	touch $(DJ6_VENV)/bin/django-admin

.PHONY: setup demo test lint setup-django6 test-django-upstream test-tasks-db-upstream
setup-django6: $(DJ6_VENV)/bin/django-admin

test-django-upstream: setup-django6
	$(DJ6_VENV)/bin/python tests/django_upstream/run.py $(addprefix --db ,$(DJ6_DBS))

# django-tasks-db's own tests (its sdist's tests/tests.py), the database-backend part, against
# claimq's backend (tests/django_upstream/tasks_db.py), in the same venv.
test-tasks-db-upstream: setup-django6
	$(DJ6_VENV)/bin/python tests/django_upstream/tasks_db.py $(addprefix --db ,$(DJ6_DBS))

setup: $(VENV)/.dev-installed

demo: $(VENV)/.core-installed
	$(BIN)/claimq demo

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

# The long soaks (marker `soak`) are left out; their one-round forms run. All of it:
# `$(BIN)/pytest -q`.
# Tests run side by side (pytest-xdist, each test process on databases of its own); the fault
# scenarios (marker `serial`, tests/chaos) are one xdist group, run in order by one test process
# beside the rest. The run prints its 25 slowest; a passing test over 30 s without a
# `Slow: <reason>` line in its docstring errors (tests/slow_budget.py).
test: setup lint setup-django6
	$(BIN)/pytest -q -p no:cacheprovider -m "not soak" -n 5 --dist loadgroup --durations=25
