"""Shared fixtures: every backend-facing test runs against a real SQLite file and a real
PostgreSQL server (the conformance and App tests also a real MariaDB server). With
CLAIMQ_REQUIRE_POSTGRES=1 or CLAIMQ_REQUIRE_MARIADB=1 (CI) a missing server fails the run."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from dbs import MARIADB_URL, fresh_db_url, mariadb_admin
from slow_budget import pytest_addoption, pytest_runtest_makereport  # noqa: F401 (hooks)

from claimq import App
from claimq._worker import inflight

# A claim moved along an edge its lifecycle lacks (Flight) is an error here, in this process
# and in the workers the tests start.
os.environ["CLAIMQ_STRICT_FLIGHTS"] = "1"
inflight.STRICT = True


@pytest.fixture(autouse=True)
def _legal_flights() -> Iterator[None]:
    yield
    illegal, inflight.ILLEGAL[:] = list(inflight.ILLEGAL), []
    assert not illegal, f"illegal transitions of in-flight claims: {illegal}"

# A run started in the background by a shell without job control (`make test &`, a CI runner)
# inherits SIGINT ignored, and so would every process the tests start: a `claimq` command the
# tests stop with Ctrl-C (SIGINT) would never stop. The tests' processes get the default back.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The fault scenarios (tests/chaos) kill processes and sessions, restart servers and sample
# leases against the wall clock: they run one at a time (marker `serial`), in one xdist group
# (`make test` runs with --dist loadgroup), so one test process runs them in order while the
# others run the rest beside them. They come first, so that their group starts at once.
SERIAL_DIRS = (Path(__file__).parent / "chaos",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    serial = [item for item in items if any(d in item.path.parents for d in SERIAL_DIRS)]
    for item in serial:
        item.add_marker(pytest.mark.serial)
        item.add_marker(pytest.mark.xdist_group("serial"))
    chosen = set(map(id, serial))
    items[:] = serial + [item for item in items if id(item) not in chosen]


PG_ADMIN_URL = os.environ.get("CLAIMQ_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
PG_DB = os.environ.get("CLAIMQ_TEST_PG_DB", "claimq_test")
REQUIRE_PG = os.environ.get("CLAIMQ_REQUIRE_POSTGRES") == "1"


def _pg_base_url() -> str:
    """URL of the test database, created on first use; skips (or fails, under CI) without PG."""
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (PG_DB,)
            ).fetchone()
            if not exists:
                with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                    conn.execute(f'CREATE DATABASE "{PG_DB}"')
    except Exception as exc:  # noqa: BLE001 - any failure to reach the server means the same
        if REQUIRE_PG:
            pytest.fail(
                f"PostgreSQL is required (CLAIMQ_REQUIRE_POSTGRES=1) but unreachable: {exc}"
            )
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    return PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + PG_DB


@pytest.fixture(scope="session")
def pg_base_url() -> str:
    return _pg_base_url()


@pytest.fixture(scope="session")
def mariadb_server() -> str:
    """The MariaDB server's URL without a database (`mysql://root@127.0.0.1:3306`)."""
    mariadb_admin().close()
    return MARIADB_URL.rstrip("/")


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    """A fresh, empty database URL on each backend: a new SQLite file, or a new PG schema
    (tests/conformance and tests/app add MariaDB: their conftests widen this fixture)."""
    yield from fresh_db_url(request, request.param, tmp_path)


@pytest.fixture
def app(db_url: str) -> Iterator[App]:
    """A migrated App on a fresh database of each backend."""
    instance = App(db_url)
    instance.migrate()
    yield instance
    instance.close()
