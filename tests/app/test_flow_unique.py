"""Uniqueness by state and debounce (README "Flow control"): an idempotency key scoped to the
holder's states, and on_conflict="replace" giving a pending holder the new payload and run_at."""

from __future__ import annotations

from datetime import timedelta

import pytest

from claimq import App
from claimq.clock import FakeClock
from claimq.errors import InvalidInput
from claimq.job import Status

# Every backend has flow control (capabilities.flow_control).
pytestmark = pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"], indirect=True)


def _run(app: App, job_id: int) -> None:
    job = app.claim("w", limit=1, start=True)[0]
    assert job.id == job_id
    app.complete(job)


def test_pending_scope_frees_the_key_once_the_holder_runs(app: App) -> None:
    first = app.enqueue("t", {"n": 1}, idempotency_key="k", unique="pending")
    assert app.enqueue("t", {"n": 2}, idempotency_key="k", unique="pending") == first
    job = app.claim("w", limit=1, start=True)[0]
    second = app.enqueue("t", {"n": 3}, idempotency_key="k", unique="pending")
    assert second != first, "a running holder does not hold a 'pending' key"
    assert app.enqueue("t", {"n": 4}, idempotency_key="k", unique="pending") == second
    app.complete(job)
    assert [j.id for j in app.list_jobs(status="pending")] == [second]


def test_active_scope_holds_while_running_and_frees_at_completion(app: App) -> None:
    first = app.enqueue("t", {}, idempotency_key="k", unique="active")
    job = app.claim("w", limit=1, start=True)[0]
    assert app.enqueue("t", {}, idempotency_key="k", unique="active") == first
    app.complete(job)
    after = app.enqueue("t", {}, idempotency_key="k", unique="active")
    assert after != first
    assert app.get_job(after).status == Status.PENDING


def test_until_done_holds_for_its_period_after_completion(app: App, clock: FakeClock) -> None:
    first = app.enqueue("t", {}, idempotency_key="k", unique_for=60)
    _run(app, first)
    clock.advance(59)
    assert app.enqueue("t", {}, idempotency_key="k", unique_for=60) == first
    clock.advance(2)
    assert app.enqueue("t", {}, idempotency_key="k", unique_for=60) != first


def test_default_scope_is_until_done_with_the_app_retention(app: App, clock: FakeClock) -> None:
    first = app.enqueue("t", {}, idempotency_key="k")
    _run(app, first)
    clock.advance(3600)
    assert app.enqueue("t", {}, idempotency_key="k") == first


def test_replace_debounces_into_one_pending_job_with_the_last_payload(
    app: App, clock: FakeClock
) -> None:
    ids = {
        app.enqueue("t", {"n": n}, idempotency_key="reindex", on_conflict="replace", delay=10)
        for n in range(5)
    }
    assert len(ids) == 1
    (job,) = app.list_jobs()
    assert job.payload == {"n": 4}
    clock.advance(3)
    app.enqueue("t", {"n": 5}, idempotency_key="reindex", on_conflict="replace", delay=10)
    job = app.get_job(job.id)
    assert job.payload == {"n": 5}
    assert job.run_at is not None
    assert job.run_at == clock.now() + timedelta(seconds=10), "run_at moves with the last enqueue"
    assert app.claim("w", limit=1) == []
    clock.advance(10)
    assert [j.payload for j in app.claim("w", limit=5)] == [{"n": 5}]


def test_replace_leaves_a_running_holder_alone(app: App) -> None:
    first = app.enqueue("t", {"n": 1}, idempotency_key="k", unique="active",
                        on_conflict="replace")
    app.claim("w", limit=1, start=True)
    assert app.enqueue("t", {"n": 2}, idempotency_key="k", unique="active",
                       on_conflict="replace") == first
    assert app.get_job(first).payload == {"n": 1}
    # Scoped to pending, the running holder frees the key: the debounce starts a new job.
    second = app.enqueue("t", {"n": 3}, idempotency_key="k", unique="pending",
                         on_conflict="replace")
    assert second != first and app.get_job(second).payload == {"n": 3}


def test_replace_in_enqueue_many_and_task_options(app: App) -> None:
    @app.task(name="reindex")
    def reindex(n: int) -> None:
        pass

    debounced = reindex.with_options(idempotency_key="r", on_conflict="replace")
    a = debounced.enqueue(n=1)
    b = debounced.enqueue(n=2)
    ids = app.enqueue_many([{"task": "reindex", "payload": {"n": 3}, "idempotency_key": "r",
                             "on_conflict": "replace"}])
    assert a == b == ids[0]
    assert app.get_job(a).payload == {"n": 3}


@pytest.mark.parametrize("options", [
    {"unique": "pending"},  # no key
    {"on_conflict": "replace"},  # no key
    {"idempotency_key": "k", "unique": "sometimes"},
    {"idempotency_key": "k", "on_conflict": "merge"},
    {"idempotency_key": "k", "unique": "pending", "unique_for": 5},
    {"idempotency_key": "k", "unique_for": 10 ** 9},  # beyond the App's retention
    {"idempotency_key": "k", "unique_for": -1},
])
def test_bad_uniqueness_options_are_refused_and_write_nothing(
    app: App, options: dict[str, object]
) -> None:
    with pytest.raises(InvalidInput):
        app.enqueue("t", {}, **options)  # type: ignore[arg-type]
    assert app.list_jobs() == []
