"""App-level tests run on a FakeClock: it starts at the real time (so a run_at written from
datetime.now() means what it says) and moves only when a test advances it, so that leases
expire, delays fall due and retention windows close without sleeping."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from dbs import fresh_db_url

from claimq import App
from claimq.clock import FakeClock


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def db_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    """A fresh, empty database on each backend, MariaDB too."""
    yield from fresh_db_url(request, request.param, tmp_path)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=datetime.now(UTC))


@pytest.fixture
def app(db_url: str, clock: FakeClock) -> Iterator[App]:
    """A migrated App on a fresh database of each backend, on the test's FakeClock."""
    instance = App(db_url, clock=clock)
    instance.migrate()
    yield instance
    instance.close()
