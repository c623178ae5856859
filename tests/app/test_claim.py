"""claim: pending -> fetched. Ordering, due time, paused/inactive queues, bulkhead, lease."""

from __future__ import annotations

from datetime import timedelta

import pytest
from app_support import claim_one, live, running, seconds_until, state

from claimq import App, Status


def test_claim_orders_by_priority_then_run_at_then_id(app: App) -> None:
    now = app.backend.now()
    ids = {
        "low-old": app.enqueue("t", priority=-5, run_at=now - timedelta(seconds=50)),
        "mid-new": app.enqueue("t", priority=0, run_at=now - timedelta(seconds=10)),
        "mid-old": app.enqueue("t", priority=0, run_at=now - timedelta(seconds=40)),
        "high": app.enqueue("t", priority=10, run_at=now - timedelta(seconds=1)),
        "mid-tie-a": app.enqueue("t", priority=0, run_at=now - timedelta(seconds=20)),
        "mid-tie-b": app.enqueue("t", priority=0, run_at=now - timedelta(seconds=20)),
    }
    expected = [ids[k] for k in ("high", "mid-old", "mid-tie-a", "mid-tie-b", "mid-new", "low-old")]
    assert ids["mid-tie-a"] < ids["mid-tie-b"]
    assert [j.id for j in app.claim("w", limit=100)] == expected


def test_claim_one_at_a_time_follows_the_same_order(app: App) -> None:
    low = app.enqueue("t", priority=1)
    high = app.enqueue("t", priority=5, queue="other")
    mid = app.enqueue("t", priority=3)
    assert [claim_one(app).id for _ in range(3)] == [high, mid, low]
    assert app.claim("w") == []


def test_claim_takes_only_due_jobs(app: App) -> None:
    due = app.enqueue("t")
    app.enqueue("t", delay=60)
    app.enqueue("t", run_at=app.backend.now() + timedelta(hours=1))
    assert [j.id for j in app.claim("w", limit=10)] == [due]
    assert app.claim("w", limit=10) == []
    assert {j.status for j in live(app)} == {Status.FETCHED, Status.PENDING}


def test_claim_sets_owner_fresh_token_and_lease(app: App) -> None:
    a, b = app.enqueue("t"), app.enqueue("t")
    jobs = app.claim("worker-7", limit=2, lease=5)
    assert [j.id for j in jobs] == [a, b]
    for job in jobs:
        assert job.status is Status.FETCHED
        assert job.worker_id == "worker-7"
        assert job.claim_token
        assert job.attempts == 0, "claim does not spend an attempt; start does"
        assert 3 < seconds_until(app, job.lease_until) <= 5.5
        assert app.get_job(job.id) == job
    assert jobs[0].claim_token != jobs[1].claim_token
    # Handing a job back and claiming it again gives a new token.
    app.release(jobs[0])
    again = claim_one(app, "worker-8")
    assert again.id == a and again.claim_token not in (jobs[0].claim_token, jobs[1].claim_token)
    assert again.worker_id == "worker-8"


def test_claim_without_lease_uses_the_queue_lease(app: App) -> None:
    app.configure_queue("slow", lease=120)
    app.enqueue("t", queue="slow")
    app.enqueue("t", queue="fast")
    slow = claim_one(app, queue="slow")
    fast = claim_one(app, queue="fast")
    assert 115 < seconds_until(app, slow.lease_until) <= 120.5
    assert 25 < seconds_until(app, fast.lease_until) <= 30.5  # the default queue lease is 30s


def test_claim_limit_zero_claims_nothing(app: App) -> None:
    app.enqueue("t")
    before = state(app)
    assert app.claim("w", limit=0) == []
    assert state(app) == before


def test_claim_only_the_named_queues(app: App) -> None:
    a = app.enqueue("t", queue="a")
    b = app.enqueue("t", queue="b")
    app.enqueue("t", queue="c")
    assert app.claim("w", ["nope"], limit=10) == []
    assert [j.id for j in app.claim("w", ["a", "b"], limit=10)] == [a, b]
    assert [j.queue for j in app.claim("w", None, limit=10)] == ["c"]


def test_paused_queue_is_not_claimed_until_resumed(app: App) -> None:
    job_id = app.enqueue("t", queue="p")
    info = app.pause("p")
    assert info.paused and info.pending == 1
    assert app.claim("w", limit=10) == []
    assert app.claim("w", ["p"], limit=10) == []
    assert not app.resume("p").paused
    assert [j.id for j in app.claim("w", ["p"])] == [job_id]


def test_deactivated_queue_is_not_claimed_until_activated(app: App) -> None:
    job_id = app.enqueue("t", queue="d")
    assert not app.deactivate("d").active
    assert app.claim("w", limit=10) == []
    assert app.activate("d").active
    assert [j.id for j in app.claim("w")] == [job_id]


def test_queue_configured_before_its_first_job_keeps_its_settings(app: App) -> None:
    info = app.configure_queue("pre", paused=True, max_workers=2, lease=45, timeout=9)
    assert (info.paused, info.active, info.max_workers) == (True, True, 2)
    assert (info.lease_seconds, info.timeout_seconds) == (45, 9)
    app.enqueue("t", queue="pre")
    assert app.claim("w", limit=10) == []
    [again] = [q for q in app.queues() if q.name == "pre"]
    assert again.max_workers == 2 and again.paused
    cleared = app.configure_queue("pre", max_workers=None, timeout=None)
    assert cleared.max_workers is None and cleared.timeout_seconds is None
    assert cleared.paused and cleared.lease_seconds == 45, "unnamed settings stay as they were"


def test_bulkhead_within_one_claim(app: App) -> None:
    app.configure_queue("bh", max_workers=2)
    for _ in range(5):
        app.enqueue("t", queue="bh")
    free = [app.enqueue("t", queue="free") for _ in range(3)]
    jobs = app.claim("w", limit=10)
    assert sum(j.queue == "bh" for j in jobs) == 2
    assert sorted(j.id for j in jobs if j.queue == "free") == free


def test_bulkhead_across_claims_and_workers(app: App) -> None:
    app.configure_queue("bh", max_workers=3)
    for _ in range(6):
        app.enqueue("t", queue="bh")
    first = app.claim("w1", limit=2)
    assert len(first) == 2
    assert len(app.claim("w2", limit=5)) == 1
    assert app.claim("w3", limit=5) == []
    # A started job still holds its slot.
    app.start(first[0])
    assert app.claim("w3", limit=5) == []
    # Finishing or handing back frees slots, one each.
    app.complete(first[0])
    assert len(app.claim("w3", limit=5)) == 1
    app.release(first[1])
    assert len(app.claim("w4", limit=5)) == 1
    assert app.claim("w4", limit=5) == []
    [info] = [q for q in app.queues() if q.name == "bh"]
    assert info.fetched + info.processing == 3
    # Raising the limit lets more through at once; lifting it lets all through.
    app.configure_queue("bh", max_workers=4)
    assert len(app.claim("w5", limit=5)) == 1
    app.configure_queue("bh", max_workers=None)
    assert len(app.claim("w5", limit=5)) == 1
    assert [q.pending for q in app.queues() if q.name == "bh"] == [0]


def test_claim_does_not_touch_running_jobs(app: App) -> None:
    job = running(app, queue="r")
    before = app.get_job(job.id)
    assert app.claim("w2", ["r"], limit=10) == []
    assert app.get_job(job.id) == before


@pytest.mark.parametrize("limit", [1, 3, 50])
def test_claim_never_returns_more_than_limit(app: App, limit: int) -> None:
    app.enqueue_many([{"task": "t"} for _ in range(10)])
    jobs = app.claim("w", limit=limit)
    assert len(jobs) == min(limit, 10)
    assert len({j.id for j in jobs}) == len(jobs)
