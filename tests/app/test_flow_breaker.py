"""Circuit breakers (README "Flow control"): a task's breaker, its state in the database,
opens after N failures within a window and then no claimer takes the task's jobs; after the
cool-down one probe goes out; its success closes it, its failure opens it again. FakeClock:
exact, no sleeping."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from claimq import App, Throttled
from claimq.clock import FakeClock
from claimq.errors import InvalidInput

pytestmark = pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"],
                                     indirect=True)


def _fail_one(app: App, task: str = "call") -> None:
    job = next(j for j in app.claim("w", ["api"], limit=20, start=True) if j.task == task)
    app.fail(job, RuntimeError("dependency down"), attempt=1)
    for other in app.list_jobs(status="processing"):  # give back what the claim took
        app.release(other)


def _jobs_behind_a_breaker(app: App, jobs: int, failures: int, window: float) -> None:
    app.configure_breaker("call", failures=failures, window=window, cooldown=5, queue="api")
    for n in range(jobs):
        app.enqueue("call", {"n": n}, queue="api")


def _breaker(app: App) -> Any:
    return next(b for b in app.breakers() if b.task == "call")


def test_opens_after_n_failures_in_the_window_then_probes(app: App, clock: FakeClock) -> None:
    info = app.configure_breaker("call", failures=3, window=60, cooldown=30, queue="api")
    assert info is not None and (info.state, info.failures) == ("closed", 0)
    for n in range(8):
        app.enqueue("call", {"n": n}, queue="api")
    app.enqueue("other", {}, queue="api")
    for _ in range(2):
        _fail_one(app)
    assert _breaker(app).state == "closed" and _breaker(app).failures == 2
    _fail_one(app)
    opened = _breaker(app)
    assert opened.state == "open" and opened.open_until == clock.now() + timedelta(seconds=30)
    assert [j.task for j in app.claim("w2", ["api"], limit=20)] == ["other"], (
        "an open breaker holds back its task only")
    clock.advance(29)
    assert app.claim("w3", ["api"], limit=20) == []
    clock.advance(1)
    probe = app.claim("w3", ["api"], limit=20, start=True)
    assert len(probe) == 1 and probe[0].task == "call", "cooled down: one probe"
    assert _breaker(app).state == "half_open" and _breaker(app).probe_id == probe[0].id
    assert app.claim("w4", ["api"], limit=20) == [], "nothing else while the probe is out"
    app.complete(probe[0])
    assert len(app.claim("w4", ["api"], limit=20)) == 7, "the probe succeeded: closed"
    assert (_breaker(app).state, _breaker(app).failures) == ("closed", 0)


def test_a_failed_probe_opens_it_again(app: App, clock: FakeClock) -> None:
    _jobs_behind_a_breaker(app, jobs=3, failures=1, window=10)
    _fail_one(app)
    clock.advance(5)
    probe = app.claim("w", ["api"], limit=5, start=True)
    assert len(probe) == 1
    app.fail(probe[0], RuntimeError("still down"), attempt=1)
    again = _breaker(app)
    assert again.state == "open" and again.open_until == clock.now() + timedelta(seconds=5)
    assert app.claim("w", ["api"], limit=5) == []
    clock.advance(5)
    assert len(app.claim("w", ["api"], limit=5)) == 1, "the next probe"


def test_a_long_run_of_a_shut_task_does_not_hide_the_jobs_behind_it(
        app: App, clock: FakeClock) -> None:
    """More jobs of the shut task at the head of the queue than a claim reads at a time (MariaDB
    reads a bounded batch): the other task's jobs behind them are still claimed, and once it has
    cooled down one probe goes out."""
    _jobs_behind_a_breaker(app, jobs=120, failures=1, window=60)
    for n in range(2):
        app.enqueue("report", {"n": n}, queue="api")
    _fail_one(app)
    assert _breaker(app).state == "open"
    assert [j.task for j in app.claim("w", ["api"], limit=1)] == ["report"]
    clock.advance(5)
    assert [j.task for j in app.claim("w", ["api"], limit=10)].count("call") == 1
    assert _breaker(app).state == "half_open"


def test_failures_outside_the_window_do_not_add_up(app: App, clock: FakeClock) -> None:
    _jobs_behind_a_breaker(app, jobs=4, failures=2, window=10)
    _fail_one(app)
    clock.advance(11)
    _fail_one(app)
    assert (_breaker(app).state, _breaker(app).failures) == ("closed", 1)
    _fail_one(app)
    assert _breaker(app).state == "open"


def test_throttled_does_not_count_and_settings_change_and_remove(
        app: App, clock: FakeClock) -> None:
    @app.task(name="call", queue="api")
    def call(n: int) -> None:
        pass

    app.configure_breaker(call, failures=1, window=10, cooldown=5)
    for n in range(3):
        call.enqueue(n=n)
    job = app.claim("w", ["api"], limit=1, start=True)[0]
    app.fail(job, Throttled(after=1), attempt=1)
    assert _breaker(app).state == "closed"
    clock.advance(1)
    _fail_one(app)
    assert _breaker(app).state == "open"
    changed = app.configure_breaker(call, failures=5, window=60, cooldown=1)
    assert changed is not None and (changed.state, changed.failure_limit) == ("open", 5)
    assert app.stats().breakers == app.breakers()
    assert app.configure_breaker(call, failures=None) is None
    assert app.breakers() == []
    clock.advance(3600)  # the failed one's retry is due too
    assert len(app.claim("w", ["api"], limit=5)) == 3, "no breaker: claimed as usual"


@pytest.mark.parametrize("options", [{"failures": 0}, {"failures": 1, "window": 0},
                                     {"failures": 1, "cooldown": -1}])
def test_bad_breakers_are_refused(app: App, options: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        app.configure_breaker("call", **options)  # type: ignore[arg-type]
