"""The reaper: expired leases go back to pending (attempts left) or to dead letters; the old
owner's token is worthless afterwards."""

from __future__ import annotations

import time

import pytest
from app_support import LEASE, claim_one, counts, expire, live, running, state

from claimq import App, DeadReason, LeaseLost, RetryPolicy, Status
from claimq.backends.base import Completion, Failure, Owned, ReapResult
from claimq.clock import FakeClock


def test_expired_fetched_job_goes_back_to_pending(app: App, clock: FakeClock) -> None:
    job_id = app.enqueue("t", queue="r")
    job = claim_one(app, lease=LEASE)
    expire(clock)
    result = app.reap()
    assert result.requeued == [job_id] and result.dead == []
    now = app.get_job(job_id)
    assert now.status is Status.PENDING and now.attempts == 0
    assert now.claim_token is None and now.worker_id is None and now.lease_until is None
    assert now.errors[-1]["error"] == "LeaseExpired"
    again = claim_one(app, "w2", queue="r")
    assert again.claim_token != job.claim_token


def test_expired_processing_job_with_attempts_left_is_requeued_with_history(
    app: App, clock: FakeClock
) -> None:
    job = running(app, worker="w-old", lease=LEASE, max_attempts=3)
    expire(clock)
    assert app.reap() == ReapResult(requeued=[job.id], dead=[])
    now = app.get_job(job.id)
    assert now.status is Status.PENDING
    assert now.attempts == 1, "the attempt that ran out of lease counts"
    assert now.claim_token is None
    [entry] = now.errors
    assert entry["error"] == "LeaseExpired" and entry["attempt"] == 1
    assert entry["worker"] == "w-old" and "processing" in entry["message"]
    again = claim_one(app, "w-new", queue=job.queue)
    assert again.claim_token and again.claim_token != job.claim_token
    assert app.start(again) == 2


def test_expired_processing_job_without_attempts_left_is_buried(app: App, clock: FakeClock) -> None:
    job = running(app, lease=LEASE, max_attempts=1)
    expire(clock)
    assert app.reap() == ReapResult(requeued=[], dead=[job.id])
    gone = app.get_job(job.id)
    assert gone.status is Status.DEAD and gone.reason == DeadReason.LEASE_EXPIRED
    assert gone.errors[-1]["error"] == "LeaseExpired"
    assert counts(app) == (0, 0, 1)


def test_exhausted_after_retries_keeps_the_whole_history(app: App, clock: FakeClock) -> None:
    job = running(app, lease=LEASE, max_attempts=2)
    app.fail(job, RuntimeError("first"), retry=RetryPolicy(base=0, jitter=0))
    second = claim_one(app, queue=job.queue, lease=LEASE)
    app.start(second)
    expire(clock)
    assert app.reap().dead == [job.id]
    gone = app.get_job(job.id)
    assert [e["error"] for e in gone.errors] == ["RuntimeError", "LeaseExpired"]


def test_expired_cancel_requested_job_is_buried_as_cancelled(app: App, clock: FakeClock) -> None:
    job = running(app, lease=LEASE, max_attempts=5)
    assert app.cancel(job.id) == "cancel_requested"
    expire(clock)
    assert app.reap().dead == [job.id]
    gone = app.get_job(job.id)
    assert gone.status is Status.DEAD and gone.reason == DeadReason.CANCELLED


def test_reaper_leaves_unexpired_leases_alone(app: App) -> None:
    running(app, lease=60)
    app.enqueue("t", queue="x")
    claim_one(app, queue="x", lease=60)
    app.enqueue("t", queue="y")
    before = state(app)
    assert app.reap() == ReapResult()
    assert state(app) == before


def test_reaping_twice_is_harmless(app: App, clock: FakeClock) -> None:
    a = running(app, lease=LEASE, max_attempts=3)
    b = running(app, lease=LEASE, max_attempts=1)
    expire(clock)
    first = app.reap()
    assert first.requeued == [a.id] and first.dead == [b.id]
    after = state(app)
    assert app.reap() == ReapResult()
    assert state(app) == after


def test_reap_limit_bounds_one_pass(app: App, clock: FakeClock) -> None:
    app.enqueue_many([{"task": "t"} for _ in range(5)])
    app.claim("w", limit=5, lease=LEASE)
    expire(clock)
    assert len(app.reap(limit=2).requeued) == 2
    assert len(app.reap(limit=10).requeued) == 3
    assert {j.status for j in live(app)} == {Status.PENDING}


def test_queues_count_expired_leases(app: App, clock: FakeClock) -> None:
    running(app, lease=LEASE, queue="e")
    expire(clock)
    [info] = [q for q in app.queues() if q.name == "e"]
    assert info.past_lease == 1 and info.processing == 1


@pytest.mark.parametrize("old_state", ["fetched", "processing"])
@pytest.mark.parametrize("new_state", ["fetched", "processing"])
def test_old_token_is_worthless_after_reap_and_reclaim(
    app: App, clock: FakeClock, old_state: str, new_state: str
) -> None:
    app.enqueue("t", queue="z", max_attempts=5)
    old = claim_one(app, "w-old", queue="z", lease=LEASE)
    if old_state == "processing":
        app.start(old)
    expire(clock)
    assert app.reap().requeued == [old.id]
    new = claim_one(app, "w-new", queue="z", lease=60)
    if new_state == "processing":
        app.start(new)
    before = state(app)
    for attempt in (
        lambda: app.start(old),
        lambda: app.heartbeat(old),
        lambda: app.complete(old, {"stale": True}),
        lambda: app.fail(old, RuntimeError("stale")),
        lambda: app.release(old),
    ):
        with pytest.raises(LeaseLost):
            attempt()
        assert state(app) == before
    token = old.claim_token or ""
    assert app.backend.start([Owned(old.id, token)], None) == []
    assert app.backend.heartbeat([Owned(old.id, token)], None).lost == {old.id}
    assert app.backend.complete([Completion(old.id, token)]) == set()
    failure = Failure(old.id, token, {"error": "E"}, 0.0, "retries_exhausted", permanent=True)
    assert app.backend.fail([failure]).lost == {old.id}
    assert app.backend.release([Owned(old.id, token)], 0.0) == set()
    assert state(app) == before
    # The new owner is untouched and finishes normally.
    if new_state == "fetched":
        app.start(new)
    app.complete(new, "mine")
    assert app.get_job(old.id).result == "mine"


# -- tidy(): clearing what busy claiming leaves behind ---------------------------------------------


def test_tidy_vacuums_once_claims_leave_enough_dead_rows(app: App) -> None:
    app.enqueue_many([{"task": "t", "queue": "tidy"}] * 200)
    for _ in range(10):
        jobs = app.claim("w", ["tidy"], limit=20, start=True)
        assert app.backend.complete([Completion(j.id, j.claim_token or "") for j in jobs]) == {
            j.id for j in jobs}
    assert app.backend.tidy(10**9) is False, "far below the threshold: nothing to do"
    if app.backend.kind in ("sqlite", "mysql"):
        assert app.backend.tidy(1) is False  # nothing to clear (InnoDB purges by itself)
        return
    import psycopg

    def vacuums() -> int:
        with psycopg.connect(app.backend.conninfo, autocommit=True) as conn:
            row = conn.execute(
                "SELECT vacuum_count FROM pg_stat_user_tables"
                " WHERE schemaname = %s AND relname = 'jobs'", (app.backend.schema,)
            ).fetchone()
        return int(row[0]) if row else 0

    before = vacuums()
    # The statistics arrive about a second after the writes: ask until they show the dead rows.
    deadline = time.monotonic() + 15
    while not app.backend.tidy(100):
        assert time.monotonic() < deadline, "the dead rows never showed in the statistics"
        time.sleep(0.2)
    assert vacuums() == before + 1
    assert counts(app) == (0, 200, 0)
