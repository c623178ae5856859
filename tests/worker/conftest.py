"""Fixtures of the worker tests: `spawn_worker` starts real worker processes on the test's
database and kills whatever is left of them when the test ends.

The worker-process modules of ROLE_MODULES run a third time, on PostgreSQL under least-privilege
roles (`pg-roles`): the test enqueues and inspects as a producer that may also read (`claimq grant
--as producer` and `--as reader`), its workers run as the worker role, and whatever an operator
does (cancel) is done as the admin role (`operator`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from dbs import fresh_db_url
from pgroles import Roles, least_privilege
from worker_harness import WorkerProcess

from claimq import App

ROLE_MODULES = frozenset({
    "test_worker_outcomes", "test_worker_shutdown", "test_worker_polling",
    "test_worker_supervisor",
})
_ROLES: dict[str, Roles] = {}  # producer URL -> its roles, while its test runs


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    own = any("db_url" in str(m.args[0]) for m in metafunc.definition.iter_markers("parametrize"))
    if "db_url" in metafunc.fixturenames and not own:
        kinds = ["sqlite", "postgresql"]
        if metafunc.module.__name__.rsplit(".", 1)[-1] in ROLE_MODULES:
            kinds.append("pg-roles")
        metafunc.parametrize("db_url", kinds, indirect=True)


@pytest.fixture
def db_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    if request.param != "pg-roles":
        yield from fresh_db_url(request, request.param, tmp_path)
        return
    kinds = {"producer": ["producer", "reader"], "worker": ["worker"], "admin": ["admin"]}
    with least_privilege(request.getfixturevalue("pg_base_url"), kinds) as roles:
        url = roles.url("producer")
        _ROLES[url] = roles
        try:
            yield url
        finally:
            del _ROLES[url]


@pytest.fixture
def app(db_url: str) -> Iterator[App]:
    """A migrated App on a fresh database of each backend (pg-roles: migrated by its owner; the
    App is the producer's)."""
    instance = App(db_url)
    if db_url not in _ROLES:
        instance.migrate()
    yield instance
    instance.close()


@pytest.fixture
def operator(app: App) -> Iterator[App]:
    """Who cancels, pauses, purges: the test's App itself, or (pg-roles) the admin role."""
    roles = _ROLES.get(app.url)
    if roles is None:
        yield app
        return
    admin = App(roles.url("admin"))
    yield admin
    admin.close()


@pytest.fixture
def worker_db_url(app: App) -> str:
    """The URL an in-process worker of the test uses (pg-roles: the worker role's)."""
    return worker_url(app.url)


def worker_url(url: str) -> str:
    """The URL a worker process of the test uses: the test's own, or the worker role's."""
    roles = _ROLES.get(url)
    return url if roles is None else roles.url("worker")


@pytest.fixture
def spawn_worker(tmp_path: Path) -> Iterator[Callable[..., WorkerProcess]]:
    started: list[WorkerProcess] = []

    def spawn(url: str, **options: Any) -> WorkerProcess:
        proc = WorkerProcess(worker_url(url), tmp_path / f"worker-{len(started)}.log",
                             **options)
        started.append(proc)
        return proc

    yield spawn
    for proc in started:
        proc.kill()
        # Shown only when the test failed (pytest captures teardown output).
        print(f"--- {proc.log_path.name} (pid {proc.pid}) ---\n{proc.log()[-6000:]}")
