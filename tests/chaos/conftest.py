"""Fixtures of the chaos suite: a migrated App with the business tables on each backend (a fresh
SQLite file, a fresh PostgreSQL schema; a fresh MariaDB database for MARIADB_MODULES), and real
worker processes that are killed (whole process group) when the test ends, whatever happened."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import chaos_biz as biz
import pytest
from chaos_harness import WorkerProcess, drop_schema
from dbs import fresh_db_url

from claimq import App

# The scenarios whose `db_url` tests run on MariaDB too (the rest: SQLite and PostgreSQL). MariaDB
# has scenarios of its own besides: test_chaos_mariadb (KILL CONNECTION), test_chaos_mariadb_restart
# (a throwaway server restarted and crashed) and the MySQL-protocol cut in test_chaos_lost_response.
MARIADB_MODULES = frozenset({
    "test_chaos_kill", "test_chaos_repeated_kills", "test_chaos_stall", "test_chaos_locks",
    "test_chaos_lost_response", "test_chaos_priority_bulkhead", "test_chaos_flow",
    "test_chaos_workflow",
})


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    own = any("db_url" in str(m.args[0]) for m in metafunc.definition.iter_markers("parametrize"))
    if "db_url" in metafunc.fixturenames and not own:  # a test may name its own backends
        kinds = ["sqlite", "postgresql"]
        if metafunc.module.__name__.rsplit(".", 1)[-1] in MARIADB_MODULES:
            kinds.append("mariadb")
        metafunc.parametrize("db_url", kinds, indirect=True)


@pytest.fixture
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database of the kind the test is parametrized with."""
    yield from fresh_db_url(request, request.param, tmp_path)


@pytest.fixture
def capp(db_url: str) -> Iterator[App]:
    """A migrated App with the chaos business tables, on each backend."""
    instance = App(db_url)
    instance.migrate()
    biz.create_tables(instance)
    yield instance
    instance.close()


@pytest.fixture
def pg_capp(pg_base_url: str) -> Iterator[App]:
    """The same on PostgreSQL only (a fresh schema of the shared test server)."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    instance = App(f"{pg_base_url}?schema={schema}")
    instance.migrate()
    biz.create_tables(instance)
    yield instance
    instance.close()
    drop_schema(pg_base_url, schema)


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[..., WorkerProcess]]:
    started: list[WorkerProcess] = []

    def start(url: str, **options: Any) -> WorkerProcess:
        proc = WorkerProcess(url, tmp_path / f"worker-{len(started)}.log", **options)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.kill()
        # Shown only when the test failed (pytest captures teardown output).
        print(f"--- {proc.log_path.name} (pid {proc.pid}) ---\n{proc.log()[-5000:]}")
