"""App-level tests run on a FakeClock: it starts at the real time (so a run_at written from
datetime.now() means what it says) and moves only when a test advances it, so that leases
expire, delays fall due and retention windows close without sleeping."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from claimq import App
from claimq.clock import FakeClock


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
