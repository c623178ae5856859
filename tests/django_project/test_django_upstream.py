"""Django 6.0's own tests/tasks/ pass against claimq's Django Tasks backend, on SQLite,
PostgreSQL and MariaDB: `make test-django-upstream` (tests/django_upstream/run.py: Django's
sdist from the package index, the adaptations and exclusions named there with their reasons,
Django's runtests.py in a Python 3.12 venv of its own) in a subprocess; and so does the
database-backend part of django-tasks-db's own suite (`make test-tasks-db-upstream`,
tests/django_upstream/tasks_db.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(600)  # the first run makes .venv-django6


def excluded(name: str = "excluded.txt") -> int:
    text = (ROOT / "tests" / "django_upstream" / name).read_text()
    return sum(1 for line in text.splitlines()
               if line.strip() and not line.startswith(("#", "[")))


def _env(db: str, request: pytest.FixtureRequest) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "VIRTUAL_ENV"))}
    if db == "postgresql":
        base = urlparse(request.getfixturevalue("pg_base_url"))  # fails under CI without PG
        env.update({"CLAIMQ_UPSTREAM_PG_HOST": base.hostname or "127.0.0.1",
                    "CLAIMQ_UPSTREAM_PG_PORT": str(base.port or 5432),
                    "CLAIMQ_UPSTREAM_PG_USER": base.username or "postgres"})
    if db == "mariadb":
        server = urlparse(request.getfixturevalue("mariadb_server"))  # fails under CI without
        env.update({"CLAIMQ_UPSTREAM_MARIADB_HOST": server.hostname or "127.0.0.1",
                    "CLAIMQ_UPSTREAM_MARIADB_PORT": str(server.port or 3306),
                    "CLAIMQ_UPSTREAM_MARIADB_USER": server.username or "root",
                    "CLAIMQ_UPSTREAM_MARIADB_PASSWORD": server.password or ""})
    return env


@pytest.mark.parametrize("db", ["sqlite", "postgresql", "mariadb"])
def test_djangos_own_tasks_tests(db: str, request: pytest.FixtureRequest) -> None:
    done = subprocess.run(["make", "--no-print-directory", "test-django-upstream",
                           f"DJ6_DBS={db}"], cwd=ROOT, env=_env(db, request),
                          capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-15000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    run = summary["runs"][db]
    print(json.dumps(summary))
    assert summary["django"].startswith("6.0.")
    assert summary["chosen"] == summary["total"] - excluded()
    assert summary["chosen"] >= 45  # test_tasks.py and test_dummy_backend.py, as adapted
    assert run["ok"] and run["ran"] == summary["chosen"] and not run["failed"], run


@pytest.mark.parametrize("db", ["sqlite", "postgresql", "mariadb"])
def test_django_tasks_db_suite(db: str, request: pytest.FixtureRequest) -> None:
    """django-tasks-db 0.13's own tests/tests.py, the database-backend part (enqueue, results,
    priorities, queues, run_after, atomic(), its worker's batch runs in claimq's terms):
    `make test-tasks-db-upstream` (tests/django_upstream/tasks_db.py; what is left out, what
    fails by design and every change are named there and in excluded_tasks_db.txt)."""
    done = subprocess.run(["make", "--no-print-directory", "test-tasks-db-upstream",
                           f"DJ6_DBS={db}"], cwd=ROOT, env=_env(db, request),
                          capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-15000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    run = summary["runs"][db]
    print(json.dumps(summary))
    assert summary["django_tasks_db"] == "0.13.0"
    assert summary["chosen"] == summary["total"] - excluded("excluded_tasks_db.txt")
    assert summary["chosen"] >= 27
    assert run["ok"] and run["ran"] == summary["chosen"] and not run["failed"], run
    assert run["differences"]["passing"] == [], run
