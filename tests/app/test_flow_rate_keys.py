"""Per-key rate limits and per-key throttles (README "Flow control"): a queue's key_rate_limit
holds for each rate key apart, for every claimer; a Throttled raised by a job with a rate key
pauses that key only. FakeClock: exact counts, no sleeping."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest

from claimq import App, Throttled
from claimq.clock import FakeClock
from claimq.errors import InvalidInput

pytestmark = pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"],
                                     indirect=True)


def _by_key(jobs: list) -> dict[str, int]:  # type: ignore[type-arg]
    return dict(Counter(j.payload.get("customer", "-") for j in jobs))


def _enqueue(app: App, customers: str, n: int) -> None:
    for i in range(n):
        for c in customers:
            app.enqueue("call", {"customer": c, "n": i}, queue="api", rate_key=f"c:{c}")


def test_each_key_has_its_own_bucket_shared_by_claimers(app: App, clock: FakeClock) -> None:
    info = app.configure_queue("api", key_rate_limit="2/s")
    assert str(info.key_rate_limit) == "2/s"
    _enqueue(app, "ab", 5)
    app.enqueue("other", {}, queue="api")  # no rate key: not held
    assert _by_key(app.claim("w1", ["api"], limit=20)) == {"a": 2, "b": 2, "-": 1}
    assert app.claim("w2", ["api"], limit=20) == []
    clock.advance(0.5)
    assert _by_key(app.claim("w2", ["api"], limit=20)) == {"a": 1, "b": 1}
    clock.advance(60)  # a quiet spell refills each bucket up to its burst only
    assert _by_key(app.claim("w1", ["api"], limit=20)) == {"a": 2, "b": 2}


def test_a_task_default_key_and_runtime_changes(app: App, clock: FakeClock) -> None:
    @app.task(name="call", queue="api", rate_key="customer")
    def call(customer: str, n: int) -> None:
        pass

    for n in range(6):
        call.enqueue(customer="a", n=n)
    app.configure_queue("api", key_rate_limit="1/m", key_rate_burst=1)
    assert len(app.claim("w", ["api"], limit=10)) == 1
    assert app.claim("w", ["api"], limit=10) == []
    info = app.configure_queue("api", key_rate_limit="5/s", key_rate_burst=3)
    assert info.key_rate_limit is not None and info.key_rate_limit.burst == 3
    assert len(app.claim("w", ["api"], limit=10)) == 3, "a new limit: every key's bucket full"
    clock.advance(0.2)
    assert len(app.claim("w", ["api"], limit=10)) == 1
    assert app.configure_queue("api", key_rate_limit=None).key_rate_limit is None
    assert len(app.claim("w", ["api"], limit=10)) == 1, "no limit: the last one"


def test_throttled_pauses_its_rate_key_only(app: App, clock: FakeClock) -> None:
    _enqueue(app, "ab", 3)
    app.enqueue("other", {}, queue="api")
    first = next(j for j in app.claim("w1", ["api"], limit=1, start=True))
    assert first.payload["customer"] == "a"
    assert app.fail(first, Throttled(after=30), attempt=1) == "retried"
    info = next(q for q in app.queues() if q.name == "api")
    assert info.throttled_until is None, "the queue is not paused"
    (paused,) = app.throttled_keys()
    assert (paused.queue, paused.key) == ("api", "c:a")
    assert paused.until == clock.now() + timedelta(seconds=30)
    assert app.stats().throttled_keys == [paused]
    assert _by_key(app.claim("w2", ["api"], limit=20)) == {"b": 3, "-": 1}
    clock.advance(29)
    assert app.claim("w3", ["api"], limit=20) == []
    clock.advance(1)
    assert _by_key(app.claim("w3", ["api"], limit=20)) == {"a": 3}, "due again, retry too"
    assert app.throttled_keys() == []


def test_a_long_run_of_one_held_key_does_not_hide_the_jobs_behind_it(
        app: App, clock: FakeClock) -> None:
    """More jobs of one empty or throttled key at the head of the queue than a claim reads at a
    time (MariaDB reads a bounded batch): the other keys' jobs behind them are still claimed."""
    app.configure_queue("api", key_rate_limit="1/m", key_rate_burst=1)
    _enqueue(app, "a", 120)
    _enqueue(app, "b", 120)
    _enqueue(app, "c", 1)
    assert _by_key(app.claim("w", ["api"], limit=1)) == {"a": 1}
    assert _by_key(app.claim("w", ["api"], limit=1, start=True)) == {"b": 1}, "a's bucket empty"
    (b,) = app.list_jobs(status="processing")
    app.fail(b, Throttled(after=600), attempt=1)  # b's key paused for 600 s
    clock.advance(60)  # a's bucket holds one again
    assert _by_key(app.claim("w", ["api"], limit=1)) == {"a": 1}
    assert _by_key(app.claim("w", ["api"], limit=10)) == {"c": 1}, "a empty, b throttled"


def test_a_key_rate_with_the_queue_rate_and_concurrency(app: App, clock: FakeClock) -> None:
    app.configure_queue("api", rate_limit="3/s", key_rate_limit="2/s")
    for i in range(4):
        app.enqueue("call", {"customer": "a", "n": i}, queue="api", rate_key="c:a",
                    concurrency_key="k", concurrency_limit=1)
        app.enqueue("call", {"customer": "b", "n": i}, queue="api", rate_key="c:b")
    got = app.claim("w", ["api"], limit=20, start=True)
    assert _by_key(got) == {"a": 1, "b": 2}, "a: its concurrency limit; all: the queue's 3"


def test_bad_key_rates_are_refused(app: App) -> None:
    with pytest.raises(InvalidInput):
        app.configure_queue("q", key_rate_limit="fast")
    with pytest.raises(InvalidInput):
        app.configure_queue("q", key_rate_burst=3)
    with pytest.raises(InvalidInput):
        app.enqueue("t", {}, rate_key="")
    with pytest.raises(InvalidInput):
        app.task(name="needs", rate_key="customer")(lambda n: None).enqueue(n=1)
    assert app.list_jobs() == []
