"""The conformance suite's one fixture for claimq's own backends: a factory over a fresh
database of each backend (the `db_url` fixture: a new SQLite file, a new PostgreSQL schema, a
new MariaDB database)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from dbs import fresh_db_url

from claimq.backends import open_backend
from claimq.backends.base import Backend
from claimq.clock import Clock
from claimq.testing.conformance import BackendFactory

_TABLES = ("jobs", "archive", "dead")


def _store_json_sqlite(backend: Backend, job_id: int, column: str, text: str) -> bool:
    """SQLite keeps JSON as text: any text another program might write, where the schema's
    json_valid() checks let it."""
    path: Any = getattr(backend, "path")  # noqa: B009 - the SQLite backend's own attribute
    with sqlite3.connect(path, timeout=30) as conn:
        for table in _TABLES:
            if table == "jobs" and column == "result":
                continue
            name = "claimq_" + table
            try:
                cur = conn.execute(f"UPDATE {name} SET {column} = ? WHERE id = ?", (text, job_id))
            except sqlite3.IntegrityError:  # the schema checks that this column is valid JSON
                return False
            if cur.rowcount:
                return True
    raise AssertionError(f"no row of job {job_id} has a {column} column")


def _store_json_postgres(backend: Backend, job_id: int, column: str, text: str) -> bool:
    """jsonb holds any valid JSON exactly (numbers beyond any float or 64-bit integer too),
    and refuses text that is not JSON; tags are text[], not JSON."""
    import psycopg

    if column == "tags":
        return False
    schema: str = getattr(backend, "schema")  # noqa: B009
    conninfo: str = getattr(backend, "conninfo")  # noqa: B009
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for table in _TABLES:
            if table == "jobs" and column == "result":
                continue
            try:
                cur = conn.execute(
                    f"UPDATE {schema}.{table} SET {column} = %s::jsonb WHERE id = %s",
                    (text, job_id))
            except psycopg.errors.InvalidTextRepresentation:
                return False
            if cur.rowcount:
                return True
    raise AssertionError(f"no row of job {job_id} has a {column} column")


def _store_json_mariadb(backend: Backend, job_id: int, column: str, text: str) -> bool:
    """MariaDB keeps JSON as LONGTEXT (the payload with a json_valid() check), tags too."""
    conn: Any
    with backend.transaction() as conn:
        cur = conn.cursor()
        for table in _TABLES:
            if table == "jobs" and column == "result":
                continue
            try:
                cur.execute(f"UPDATE claimq_{table} SET {column} = %s WHERE id = %s",
                            (text, job_id))
            except Exception as exc:
                if exc.args and exc.args[0] == 4025:  # CONSTRAINT ... failed (json_valid)
                    return False
                raise
            if cur.rowcount:
                return True
    raise AssertionError(f"no row of job {job_id} has a {column} column")


# Backends by capabilities.flow_control: the flow-control classes run where it exists, and
# TestFlowControlRefused (every feature refused with InvalidInput) where it does not.
WITH_FLOW_CONTROL = ["sqlite", "postgresql", "mariadb"]
WITHOUT_FLOW_CONTROL: list[str] = []  # none of claimq's own (a third party's backend may be)


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked flow_control / no_flow_control gets db_url parametrized with the backends
    of that kind (before the fixture's own params would give it all three)."""
    if "db_url" not in metafunc.fixturenames:
        return
    if metafunc.definition.get_closest_marker("flow_control") is not None:
        kinds = WITH_FLOW_CONTROL
    elif metafunc.definition.get_closest_marker("no_flow_control") is not None:
        kinds = WITHOUT_FLOW_CONTROL
        if not kinds:
            return  # deselected below: no backend here to run it on
    else:
        return
    metafunc.definition.add_marker(pytest.mark.parametrize("db_url", kinds, indirect=True))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """TestFlowControlRefused is deselected while every backend here has flow control."""
    if WITHOUT_FLOW_CONTROL:
        return
    refused = [i for i in items if i.get_closest_marker("no_flow_control") is not None]
    if refused:
        config.hook.pytest_deselected(items=refused)
        items[:] = [i for i in items if i.get_closest_marker("no_flow_control") is None]


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def db_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    yield from fresh_db_url(request, request.param, tmp_path)


@pytest.fixture
def conformance_backend_factory(db_url: str) -> BackendFactory:
    def open_migrated(clock: Clock) -> Backend:
        backend = open_backend(db_url, clock=clock)
        backend.migrate()
        return backend

    store = (_store_json_sqlite if db_url.startswith("sqlite")
             else _store_json_mariadb if db_url.startswith("mysql") else _store_json_postgres)
    return BackendFactory(open=open_migrated, store_json=store)
