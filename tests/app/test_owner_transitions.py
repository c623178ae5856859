"""The owner's token-guarded transitions: start, heartbeat, complete, fail, release. Each one
matches (id, claim_token, expected status); zero rows means the lease was lost."""

from __future__ import annotations

import dataclasses
import uuid

import pytest
from app_support import (
    LEASE,
    archived,
    claim_one,
    counts,
    dead,
    expire,
    live,
    running,
    seconds_until,
    state,
)

from claimq import App, DeadReason, Job, LeaseLost, Permanent, Retry, RetryPolicy, Status
from claimq.backends.base import Completion, Failure, Owned, ReapResult
from claimq.clock import FakeClock


def stale(job: Job) -> Job:
    """The same job with a token nobody holds (the shape of a token from an older claim)."""
    token = job.claim_token or ""
    other = uuid.uuid4().hex if len(token) == 32 else str(uuid.uuid4())
    return dataclasses.replace(job, claim_token=other)


# -- start ------------------------------------------------------------------------------------


def test_start_moves_fetched_to_processing_and_spends_an_attempt(app: App) -> None:
    app.enqueue("t")
    job = claim_one(app, lease=5)
    assert app.start(job) == 1
    now = app.get_job(job.id)
    assert now.status is Status.PROCESSING
    assert now.attempts == 1
    assert now.claim_token == job.claim_token and now.worker_id == job.worker_id
    assert now.started_at is not None and now.heartbeat_at is not None
    assert now.lease_until == job.lease_until, "start without a lease keeps the claim's lease"


def test_start_with_a_lease_sets_a_new_one(app: App) -> None:
    app.enqueue("t")
    job = claim_one(app, lease=5)
    app.start(job, lease=90)
    assert 85 < seconds_until(app, app.get_job(job.id).lease_until) <= 90.5


def test_start_refuses_a_stale_token(app: App) -> None:
    app.enqueue("t")
    job = claim_one(app)
    before = state(app)
    with pytest.raises(LeaseLost) as info:
        app.start(stale(job))
    assert info.value.job_ids == [job.id] and info.value.operation == "start"
    assert state(app) == before
    assert app.backend.start([Owned(job.id, stale(job).claim_token or "")], None) == []
    assert state(app) == before


def test_start_refuses_a_job_already_started(app: App) -> None:
    job = running(app)
    before = state(app)
    with pytest.raises(LeaseLost):
        app.start(job)
    assert state(app) == before and app.get_job(job.id).attempts == 1


def test_start_refuses_a_released_job(app: App) -> None:
    app.enqueue("t")
    job = claim_one(app)
    app.release(job)
    before = state(app)
    with pytest.raises(LeaseLost):
        app.start(job)
    assert state(app) == before


def test_start_refuses_a_cancelled_job(app: App) -> None:
    app.enqueue("t")
    job = claim_one(app)
    assert app.cancel(job.id) == "cancelled"
    before = state(app)
    with pytest.raises(LeaseLost):
        app.start(job)
    assert state(app) == before
    assert app.get_job(job.id).reason == DeadReason.CANCELLED


def test_start_refuses_a_job_re_owned_by_another_worker(app: App, clock: FakeClock) -> None:
    app.enqueue("t")
    mine = claim_one(app, "w1", lease=LEASE)
    expire(clock)
    assert app.reap().requeued == [mine.id]
    theirs = claim_one(app, "w2", lease=30)
    before = state(app)
    with pytest.raises(LeaseLost):
        app.start(mine)
    assert state(app) == before
    assert app.start(theirs) == 1


def test_start_refuses_a_job_without_a_token(app: App) -> None:
    job_id = app.enqueue("t")
    with pytest.raises(LeaseLost):
        app.start(app.get_job(job_id))


def test_batched_start_starts_only_the_owned(app: App) -> None:
    app.enqueue_many([{"task": "t"} for _ in range(3)])
    jobs = app.claim("w", limit=3)
    owned = [Owned(j.id, j.claim_token or "") for j in jobs]
    owned[1] = Owned(jobs[1].id, stale(jobs[1]).claim_token or "")
    started = app.backend.start(owned, None)
    assert sorted((s.id, s.attempts) for s in started) == [(jobs[0].id, 1), (jobs[2].id, 1)]
    assert app.get_job(jobs[1].id).status is Status.FETCHED


# -- heartbeat --------------------------------------------------------------------------------


def test_batched_heartbeat_extends_leases(app: App) -> None:
    app.enqueue_many([{"task": "t"} for _ in range(3)])
    jobs = app.claim("w", limit=3, lease=5)
    app.start(jobs[0])
    app.start(jobs[1])  # jobs[2] stays fetched: a buffered job is heartbeaten too
    result = app.backend.heartbeat([Owned(j.id, j.claim_token or "") for j in jobs], 120)
    assert result.alive == {j.id for j in jobs}
    assert result.lost == set() and result.cancel_requested == set()
    for job in jobs:
        now = app.get_job(job.id)
        assert 115 < seconds_until(app, now.lease_until) <= 120.5
        assert now.heartbeat_at is not None
    assert app.heartbeat(jobs[0], lease=200) is False
    assert 195 < seconds_until(app, app.get_job(jobs[0].id).lease_until) <= 200.5


def test_heartbeat_keeps_a_short_lease_alive(app: App, clock: FakeClock) -> None:
    app.enqueue("t")
    job = claim_one(app, lease=1.0)
    app.start(job)
    for _ in range(5):  # 1.5 s in all, longer than the lease
        clock.advance(0.3)
        app.heartbeat(job, lease=1.0)
        assert app.reap() == ReapResult()
    assert app.get_job(job.id).status is Status.PROCESSING


def test_heartbeat_reports_cancel_requests(app: App) -> None:
    job = running(app)
    other = running(app)
    assert app.cancel(job.id) == "cancel_requested"
    result = app.backend.heartbeat(
        [Owned(job.id, job.claim_token or ""), Owned(other.id, other.claim_token or "")], None
    )
    assert result.cancel_requested == {job.id}
    assert result.alive == {job.id, other.id}
    assert app.heartbeat(job) is True
    assert app.heartbeat(other) is False


def test_heartbeat_reports_stale_tokens_as_lost(app: App) -> None:
    good = running(app)
    bad = running(app)
    gone = running(app)
    app.complete(gone)
    before = state(app)
    result = app.backend.heartbeat(
        [Owned(good.id, good.claim_token or ""), Owned(bad.id, stale(bad).claim_token or ""),
         Owned(gone.id, gone.claim_token or "")],
        30,
    )
    assert result.alive == {good.id}
    assert result.lost == {bad.id, gone.id}
    with pytest.raises(LeaseLost):
        app.heartbeat(stale(bad))
    with pytest.raises(LeaseLost):
        app.heartbeat(gone)
    assert state(app)[1:] == before[1:]
    assert app.get_job(bad.id) == [j for j in before[0] if j.id == bad.id][0]
    assert app.backend.heartbeat([], None).alive == set()


# -- complete ---------------------------------------------------------------------------------


def test_complete_moves_the_job_to_the_archive_with_its_result(app: App) -> None:
    job = running(app, payload={"p": 1}, tags=["x"], priority=4)
    app.complete(job, {"sum": 3, "items": ["a"]})
    done = app.get_job(job.id)
    assert done.status is Status.SUCCEEDED
    assert done.result == {"sum": 3, "items": ["a"]}
    assert done.finished_at is not None and done.finished_at >= (done.started_at or 0)
    assert (done.payload, done.tags, done.priority, done.attempts) == ({"p": 1}, ("x",), 4, 1)
    assert done.worker_id == job.worker_id
    assert live(app) == [] and [j.id for j in archived(app)] == [job.id]
    [info] = [q for q in app.queues() if q.name == job.queue]
    assert info.archived == 1 and info.processing == 0


@pytest.mark.parametrize("result", [None, 0, "text", [1, 2], {"nested": {"ok": True}}])
def test_complete_stores_any_json_result(app: App, result: object) -> None:
    job = running(app)
    app.complete(job, result)
    assert app.get_job(job.id).result == result


def test_complete_refuses_a_job_not_started(app: App) -> None:
    app.enqueue("t")
    job = claim_one(app)
    before = state(app)
    with pytest.raises(LeaseLost):
        app.complete(job)
    assert state(app) == before


def test_complete_twice_is_lease_lost(app: App) -> None:
    job = running(app)
    app.complete(job, 1)
    before = state(app)
    with pytest.raises(LeaseLost):
        app.complete(job, 2)
    assert state(app) == before and app.get_job(job.id).result == 1


def test_batched_complete_with_valid_and_stale_items(app: App) -> None:
    jobs = [running(app, queue="batch") for _ in range(4)]
    fetched_id = app.enqueue("t", queue="batch")
    fetched = claim_one(app, queue="batch")
    assert fetched.id == fetched_id
    items = [
        Completion(jobs[0].id, jobs[0].claim_token or "", '{"n": 0}'),
        Completion(jobs[1].id, stale(jobs[1]).claim_token or "", None),
        Completion(jobs[2].id, jobs[2].claim_token or "", None),
        Completion(fetched.id, fetched.claim_token or "", None),  # not started: no
        Completion(jobs[3].id, stale(jobs[3]).claim_token or "", None),
    ]
    assert app.backend.complete(items) == {jobs[0].id, jobs[2].id}
    assert app.get_job(jobs[0].id).result == {"n": 0}
    assert app.get_job(jobs[1].id).status is Status.PROCESSING
    assert app.get_job(jobs[3].id).status is Status.PROCESSING
    assert app.get_job(fetched.id).status is Status.FETCHED
    assert counts(app) == (3, 2, 0)
    with pytest.raises(LeaseLost):
        app.complete(stale(jobs[1]))
    assert app.backend.complete([]) == set()


# -- fail -------------------------------------------------------------------------------------


def test_fail_with_retry_goes_back_to_pending_later_with_history(app: App) -> None:
    job = running(app, worker="w-fail")
    policy = RetryPolicy(base=30, factor=2, cap=600, jitter=0)
    outcome = app.fail(job, RuntimeError("boom"), attempt=1, retry=policy)
    assert outcome == "retried"
    now = app.get_job(job.id)
    assert now.status is Status.PENDING
    assert now.attempts == 1, "the failed attempt stays counted"
    assert now.claim_token is None and now.worker_id is None and now.lease_until is None
    assert 25 < seconds_until(app, now.run_at) <= 30.5
    [entry] = now.errors
    assert entry["attempt"] == 1 and entry["error"] == "RuntimeError"
    assert entry["message"] == "boom" and entry["worker"] == "w-fail"
    assert app.claim("w", limit=10) == [], "not due before its backoff"


def test_fail_records_the_attempt_that_failed(app: App) -> None:
    """app.fail without attempt= names the attempt start() began, not the claim's count."""
    job = running(app, max_attempts=5)
    app.fail(job, Retry(after=0))
    again = claim_one(app, queue=job.queue)
    assert app.start(again) == 2
    app.fail(again, ValueError("second"))
    assert [e["attempt"] for e in app.get_job(job.id).errors] == [1, 2]


def test_fail_uses_the_job_retry_policy_backoff(app: App) -> None:
    job = running(app, retry=RetryPolicy(base=40, factor=3, cap=1000, jitter=0), max_attempts=5)
    app.fail(job, RuntimeError("x"))
    assert 35 < seconds_until(app, app.get_job(job.id).run_at) <= 40.5


def test_fail_with_retry_after_uses_that_delay(app: App) -> None:
    job = running(app)
    assert app.fail(job, Retry(after=45, reason="rate limited")) == "retried"
    now = app.get_job(job.id)
    assert 40 < seconds_until(app, now.run_at) <= 45.5
    assert now.errors[-1]["error"] == "Retry" and now.errors[-1]["message"] == "rate limited"


def test_fail_with_retry_after_zero_is_due_at_once(app: App) -> None:
    job = running(app, queue="again")
    app.fail(job, Retry(after=0))
    again = claim_one(app, "w2", queue="again")
    assert again.id == job.id and again.claim_token != job.claim_token
    assert app.start(again) == 2


def test_fail_permanent_goes_to_dead_letters(app: App) -> None:
    job = running(app, max_attempts=10)
    assert app.fail(job, Permanent("bad input")) == "dead"
    gone = app.get_job(job.id)
    assert gone.status is Status.DEAD
    assert gone.reason == DeadReason.PERMANENT_ERROR
    assert gone.errors[-1]["error"] == "Permanent" and gone.errors[-1]["message"] == "bad input"
    assert gone.finished_at is not None
    assert live(app) == [] and [j.id for j in dead(app)] == [job.id]


def test_fail_with_attempts_exhausted_goes_to_dead_letters_with_history(app: App) -> None:
    job = running(app, max_attempts=3, queue="ex")
    assert app.fail(job, Retry(after=0, reason="one")) == "retried"
    second = claim_one(app, queue="ex")
    app.start(second)
    no_wait = RetryPolicy(base=0, jitter=0)
    assert app.fail(second, RuntimeError("two"), retry=no_wait) == "retried"
    [pending] = live(app)
    assert pending.attempts == 2 and len(pending.errors) == 2
    third = claim_one(app, queue="ex")
    assert app.start(third) == 3
    assert app.fail(third, RuntimeError("three")) == "dead"
    gone = app.get_job(job.id)
    assert gone.reason == DeadReason.RETRIES_EXHAUSTED
    assert gone.attempts == 3
    assert [e["message"] for e in gone.errors] == ["one", "two", "three"]


def test_fail_stale_token_is_lease_lost(app: App) -> None:
    job = running(app)
    other = running(app)
    before = state(app)
    with pytest.raises(LeaseLost):
        app.fail(stale(job), RuntimeError("x"))
    result = app.backend.fail(
        [
            Failure(job.id, stale(job).claim_token or "", {"error": "E"}, 0.0, "retries_exhausted"),
            Failure(other.id, other.claim_token or "", {"error": "E"}, 60.0, "retries_exhausted"),
        ]
    )
    assert result.lost == {job.id} and result.retried == {other.id} and result.dead == set()
    assert app.get_job(job.id) == [j for j in before[0] if j.id == job.id][0]
    assert app.backend.fail([]).lost == set()


# -- release ----------------------------------------------------------------------------------


def test_release_fetched_goes_back_to_pending(app: App) -> None:
    job_id = app.enqueue("t", payload={"a": 1})
    job = claim_one(app)
    app.release(job)
    now = app.get_job(job_id)
    assert now.status is Status.PENDING and now.attempts == 0
    assert now.claim_token is None and now.worker_id is None and now.lease_until is None
    assert now.errors == ()
    assert claim_one(app).id == job_id


def test_release_processing_does_not_spend_the_attempt(app: App) -> None:
    job = running(app, queue="rel")
    assert app.get_job(job.id).attempts == 1
    app.release(job)
    now = app.get_job(job.id)
    assert now.status is Status.PENDING and now.attempts == 0 and now.started_at is None
    again = claim_one(app, queue="rel")
    assert app.start(again) == 1


def test_release_with_delay_postpones_the_job(app: App) -> None:
    job = running(app)
    app.release(job, delay=60)
    assert 55 < seconds_until(app, app.get_job(job.id).run_at) <= 60.5
    assert app.claim("w", limit=10) == []


def test_release_of_a_cancel_requested_job_buries_it_as_cancelled(app: App) -> None:
    job = running(app)
    assert app.cancel(job.id) == "cancel_requested"
    app.release(job)
    gone = app.get_job(job.id)
    assert gone.status is Status.DEAD and gone.reason == DeadReason.CANCELLED
    assert live(app) == []


def test_release_stale_is_lease_lost(app: App) -> None:
    job = running(app)
    before = state(app)
    with pytest.raises(LeaseLost):
        app.release(stale(job))
    assert state(app) == before
    app.release(job)
    after = state(app)
    with pytest.raises(LeaseLost):
        app.release(job)  # released already
    assert state(app) == after


def test_batched_release_returns_only_the_owned(app: App) -> None:
    a, b = running(app), running(app)
    released = app.backend.release(
        [Owned(a.id, a.claim_token or ""), Owned(b.id, stale(b).claim_token or "")], 0.0
    )
    assert released == {a.id}
    assert app.get_job(b.id).status is Status.PROCESSING
    assert app.backend.release([], 0.0) == set()
