"""Issue 24, suspected item: a circuit breaker's probe dead-lettered by the reaper (its lease
ran out on its last attempt) must not close the breaker. A half_open breaker closes when its
probe finished without failing; the probe gone from the live jobs was taken for that, though
only one in the archive succeeded. FakeClock: exact, no sleeping."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from dbs import fresh_db_url

from claimq import App
from claimq.clock import FakeClock


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    yield from fresh_db_url(request, request.param, tmp_path)


def _breaker(app: App) -> Any:
    return next(b for b in app.breakers() if b.task == "call")


def test_a_probe_the_reaper_buries_does_not_close_the_breaker(url: str) -> None:
    clock = FakeClock()
    app = App(url, clock=clock, default_max_attempts=1)
    app.migrate()
    try:
        app.configure_breaker("call", failures=1, window=10, cooldown=5, queue="api")
        for n in range(4):
            app.enqueue("call", {"n": n}, queue="api")
        [first] = app.claim("w", ["api"], limit=1, start=True)
        app.fail(first, RuntimeError("dependency down"), attempt=1)
        assert _breaker(app).state == "open"
        clock.advance(5)
        [probe] = app.claim("w", ["api"], limit=5, lease=10, start=True)
        assert _breaker(app).state == "half_open" and _breaker(app).probe_id == probe.id
        clock.advance(11)  # the probe's worker died: its lease runs out on its last attempt
        assert app.reap().dead == [probe.id]
        taken = app.claim("w", ["api"], limit=5, start=True)
        breaker = _breaker(app)
        assert taken == [], (
            f"the breaker let {len(taken)} job(s) through after its probe was dead-lettered "
            f"(state {breaker.state})")
        assert breaker.state == "open"
        assert breaker.open_until == clock.now() + timedelta(seconds=5)
        clock.advance(5)
        assert len(app.claim("w", ["api"], limit=5, start=True)) == 1, "the next probe"
        assert _breaker(app).state == "half_open"
    finally:
        app.close()
