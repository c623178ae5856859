"""Setup mistakes get claimq's own errors at once, naming the cause (defect 10 of issue 12): an
unmigrated database, a PostgreSQL database that does not exist, a SQLite file in a directory
that does not exist, a server that is not there. The driver's exception stays the __cause__."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from app_support import DRIVER_MODULES, execute

from claimq import App
from claimq.errors import (
    DatabaseError,
    DatabaseMissing,
    DatabaseUnavailable,
    InvalidInput,
    SchemaMissing,
)

# Generous: the fix makes each of these immediate; before it, a missing PostgreSQL database
# waited out the pool's 30 s timeout and then raised PoolTimeout.
pytestmark = pytest.mark.timeout(120)

CALLS: dict[str, Callable[[App], Any]] = {
    "enqueue": lambda app: app.enqueue("t", {"n": 1}),
    "enqueue_many": lambda app: app.enqueue_many([{"task": "t"}, {"task": "u"}]),
    "enqueue_many_large": lambda app: app.enqueue_many([{"task": "t"}] * 300),  # COPY path
    "queues": lambda app: app.queues(),
    "list_jobs": lambda app: app.list_jobs("live"),
    "list_dead": lambda app: app.list_jobs("dead"),
    "get_job": lambda app: app.get_job(1),
    "claim": lambda app: app.claim("w1", limit=5),
    "reap": lambda app: app.reap(),
    "configure_queue": lambda app: app.pause("q"),
}


def _driver_error(exc: BaseException) -> bool:
    cause = exc.__cause__
    return cause is not None and type(cause).__module__.split(".")[0] in DRIVER_MODULES


@pytest.mark.parametrize("call", sorted(CALLS))
def test_an_unmigrated_database_raises_schema_missing(db_url: str, call: str) -> None:
    with App(db_url) as app:
        with pytest.raises(SchemaMissing, match="claimq migrate") as raised:
            CALLS[call](app)
        assert _driver_error(raised.value), "the driver's exception is kept as the cause"
        with pytest.raises(SchemaMissing, match="claimq migrate"):
            app.backend.check_schema()
        app.migrate()
        app.enqueue("t")  # the same App works once migrated
        assert [q.name for q in app.queues()] == ["default"]


def _missing_database_url(pg_base_url: str) -> tuple[str, str]:
    name = f"claimq_missing_{uuid.uuid4().hex[:8]}"
    return pg_base_url.rsplit("/", 1)[0] + f"/{name}?schema=x", name


@pytest.mark.parametrize("call", ["enqueue", "queues", "list_jobs", "migrate"])
def test_a_postgres_database_that_does_not_exist_raises_database_missing(
    pg_base_url: str, call: str
) -> None:
    url, name = _missing_database_url(pg_base_url)
    calls = {**CALLS, "migrate": lambda app: app.migrate()}
    with App(url) as app:
        with pytest.raises(DatabaseMissing, match=name) as raised:
            calls[call](app)
        assert _driver_error(raised.value)
        with pytest.raises(DatabaseMissing, match=name):  # and again, not a pool timeout later
            calls[call](app)


def test_a_postgres_server_that_is_not_there_raises_database_unavailable(
    pg_base_url: str,
) -> None:
    host = pg_base_url.split("@", 1)[1].split("/", 1)[0].rsplit(":", 1)[0]
    url = pg_base_url.replace(host + ":", "127.0.0.1:", 1)
    url = url.rsplit("/", 1)[0].rsplit(":", 1)[0] + ":1/x"  # nothing listens on port 1
    with App(url) as app:
        with pytest.raises(DatabaseUnavailable, match="cannot connect") as raised:
            app.enqueue("t")
        assert _driver_error(raised.value)


def test_a_refused_postgres_login_is_a_database_error_not_transient(pg_base_url: str) -> None:
    url = pg_base_url.replace("postgres@", f"no_such_role_{uuid.uuid4().hex[:6]}@", 1)
    with App(url) as app, pytest.raises(DatabaseError, match="refused the login"):
        app.queues()


@pytest.mark.parametrize("call", ["enqueue", "queues", "migrate", "check_schema"])
def test_a_sqlite_file_in_a_missing_directory_raises_database_missing(
    tmp_path: Path, call: str
) -> None:
    missing = tmp_path / "no" / "such" / "dir"
    calls = {**CALLS, "migrate": lambda app: app.migrate(),
             "check_schema": lambda app: app.backend.check_schema()}
    with App(f"sqlite:///{missing}/claimq.db") as app:
        with pytest.raises(DatabaseMissing, match=str(missing)) as raised:
            calls[call](app)
        assert _driver_error(raised.value)
    assert not (tmp_path / "no").exists(), "nothing created"


def test_errors_of_the_callers_own_statements_pass_through_unmapped(app: App) -> None:
    """transaction() hands the caller a driver connection: what its own SQL raises is the
    driver's (the caller wrote the statement), while claimq's own statements map."""
    with pytest.raises(Exception) as raised, app.transaction() as conn:
        execute(conn, "SELECT * FROM no_such_table_of_the_caller")
    assert type(raised.value).__module__.split(".")[0] in DRIVER_MODULES
    assert app.queues() == []  # the failed transaction left nothing behind


def test_a_postgres_url_with_a_bad_claimq_option_is_invalid_input(pg_base_url: str) -> None:
    for query, message in (("schema=Bad-Name", "schema must be"),
                           ("pool_size=0", "pool_size must be"),
                           ("pooler=statement", "pooler must be one of")):
        with pytest.raises(InvalidInput, match=message):
            App(f"{pg_base_url}?{query}").backend  # noqa: B018 - building it checks the URL


def test_a_busy_sqlite_database_is_database_unavailable(tmp_path: Path) -> None:
    """Another process's write lock outlasting busy_timeout is transient, not a bug."""
    url = f"sqlite:///{tmp_path}/busy.db?busy_timeout=0"
    with App(url) as app:
        app.migrate()
        other: Any = app.backend.connect()  # type: ignore[attr-defined]
        other.execute("BEGIN IMMEDIATE")
        try:
            with App(url) as second, pytest.raises(DatabaseUnavailable, match="locked") as raised:
                second.enqueue("t")
            assert _driver_error(raised.value)
        finally:
            other.execute("ROLLBACK")
            other.close()
        app.enqueue("t")  # free again
