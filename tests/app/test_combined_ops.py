"""The combined forms the worker uses: claim(start=True), settle() (outcomes and the next
claim in one call) and app.transaction() (the caller's writes with claimq's)."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid

import pytest
from app_support import LEASE, counts, expire, live, running, state

from claimq import App, DeadReason, Job, JobNotFound, LeaseLost, Status
from claimq.backends.base import (
    ClaimRequest,
    Completion,
    FailResult,
    Failure,
    Owned,
    Settled,
)
from claimq.clock import FakeClock
from claimq.errors import ClaimqError


def _stale_token(token: str | None) -> str:
    return uuid.uuid4().hex if token is not None and len(token) == 32 else str(uuid.uuid4())


# -- claim(start=True) --------------------------------------------------------------------------


def test_claim_and_start_in_one_step(app: App) -> None:
    low = app.enqueue("t", priority=1)
    high = app.enqueue("t", priority=9)
    jobs = app.claim("w", limit=5, lease=30, start=True)
    assert [j.id for j in jobs] == [high, low]
    for job in jobs:
        assert job.status is Status.PROCESSING
        assert job.attempts == 1 and job.started_at is not None and job.claim_token
        assert app.get_job(job.id) == job
    with pytest.raises(LeaseLost):
        app.start(jobs[0])  # already started
    app.complete(jobs[0], "ok")
    app.release(jobs[1])
    assert app.get_job(low).attempts == 0, "release hands the attempt back"


def test_claim_and_start_honours_the_bulkhead_and_pauses(app: App) -> None:
    app.configure_queue("bh", max_workers=2)
    for _ in range(4):
        app.enqueue("t", queue="bh")
    app.enqueue("t", queue="paused")
    app.pause("paused")
    assert len(app.claim("w", limit=10, start=True)) == 2
    assert app.claim("w", limit=10, start=True) == []


def test_claimed_and_started_job_expires_like_a_processing_one(app: App, clock: FakeClock) -> None:
    app.enqueue("t", max_attempts=1)
    [job] = app.claim("w", limit=1, lease=LEASE, start=True)
    expire(clock)
    assert app.reap().dead == [job.id]
    assert app.get_job(job.id).reason == DeadReason.LEASE_EXPIRED


# -- settle -------------------------------------------------------------------------------------


def test_settle_writes_outcomes_then_claims(app: App) -> None:
    app.configure_queue("s", max_workers=2)
    a = running(app, queue="s")
    b = running(app, queue="s", max_attempts=1)
    waiting = [app.enqueue("t", queue="s") for _ in range(3)]
    assert app.claim("w", ["s"], limit=5) == [], "the bulkhead is full"
    settled = app.backend.settle(
        [Completion(a.id, a.claim_token or "", '{"r": 1}')],
        [Failure(b.id, b.claim_token or "", {"error": "E"}, 0.0, DeadReason.RETRIES_EXHAUSTED)],
        ClaimRequest("w2", ["s"], 5, 30.0),
    )
    assert settled.completed == {a.id}
    assert settled.failed.dead == {b.id} and not settled.failed.lost
    # The slots its own outcomes freed are claimed in the same call.
    assert [j.id for j in settled.claimed] == waiting[:2]
    assert all(j.status is Status.FETCHED and j.worker_id == "w2" for j in settled.claimed)
    assert app.get_job(a.id).result == {"r": 1}
    assert app.get_job(b.id).status is Status.DEAD


def test_settle_reports_stale_items_and_still_claims(app: App) -> None:
    a = running(app)
    b = running(app)
    nxt = app.enqueue("t", queue="next")
    before_a, before_b = app.get_job(a.id), app.get_job(b.id)
    settled = app.backend.settle(
        [Completion(a.id, _stale_token(a.claim_token))],
        [Failure(b.id, _stale_token(b.claim_token), {"error": "E"}, 0.0, "retries_exhausted")],
        ClaimRequest("w", ["next"], 1, None, True),
    )
    assert settled.completed == set() and settled.failed.lost == {b.id}
    assert app.get_job(a.id) == before_a and app.get_job(b.id) == before_b
    [claimed] = settled.claimed
    assert claimed.id == nxt and claimed.status is Status.PROCESSING


def test_tokens_that_are_not_one_uuid_each_match_nothing(app: App) -> None:
    """A token is matched whole: two real tokens joined by a comma, one in upper case without
    dashes, or text that is no UUID at all own nothing (and break no other completion)."""
    a, b, c = (running(app) for _ in range(3))
    ta, tb, tc = (j.claim_token or "" for j in (a, b, c))
    assert app.backend.settle([Completion(a.id, f"{ta},{tb}")], [], None).completed == set()
    settled = app.backend.settle(
        [Completion(a.id, f"{ta},{tb}"), Completion(b.id, "not a token"),
         Completion(c.id, tc.replace("-", "").upper())], [], None)
    # The last one is the same UUID written another way: PostgreSQL and SQLite may differ on
    # whether it matches, but never on the two that are not a single UUID.
    assert a.id not in settled.completed and b.id not in settled.completed
    assert app.get_job(a.id).status is Status.PROCESSING
    assert app.get_job(b.id).status is Status.PROCESSING
    assert app.backend.settle([Completion(a.id, ta), Completion(b.id, tb)], [], None).completed \
        == {a.id, b.id}


def test_settle_with_nothing_to_do(app: App) -> None:
    app.enqueue("t")
    before = state(app)
    settled = app.backend.settle([], [], None)
    assert settled.completed == set() and settled.claimed == []
    assert app.backend.settle([], [], ClaimRequest("w", None, 0, None)).claimed == []
    assert state(app) == before


def _settle_on_loop(app: App, *args: object) -> Settled:
    """The worker's PostgreSQL path: asettle on an event loop's own async pool."""

    async def run() -> Settled:
        await app.backend.open_async()
        try:
            return await app.backend.asettle(*args)  # type: ignore[arg-type]
        finally:
            await app.backend.close_async()

    return asyncio.run(run())


def _path(app: App, raw_libpq: bool) -> None:
    """PostgreSQL's asettle runs settle.sql through the raw libpq fast path or through psycopg's
    cursor (the plain path): both must do the same."""
    if app.backend.kind == "postgresql":
        app.backend.raw_libpq_settle = raw_libpq  # type: ignore[attr-defined]


# SQLite has one path: its "plain-path" case runs the same test again (cheap), not a skip.
@pytest.mark.parametrize("raw_libpq", [True, False], ids=["fast-path", "plain-path"])
def test_settle_on_the_event_loop_does_what_settle_does(app: App, raw_libpq: bool) -> None:
    _path(app, raw_libpq)
    # PostgreSQL settles on the loop's own connections; sqlite3 has no async driver, so its
    # asettle is settle() in a thread (capabilities say which): the same outcome either way.
    assert app.backend.capabilities.async_settle is (app.backend.kind == "postgresql")
    app.configure_queue("s", max_workers=2)
    a = running(app, queue="s")
    b = running(app, queue="s", max_attempts=1)
    c = running(app, queue="other")
    waiting = [app.enqueue("t", queue="s") for _ in range(3)]
    settled = _settle_on_loop(
        app,
        [Completion(a.id, a.claim_token or "", '{"r": 1}'),
         Completion(c.id, _stale_token(c.claim_token))],
        [Failure(b.id, b.claim_token or "", {"error": "E"}, 0.0, DeadReason.RETRIES_EXHAUSTED)],
        ClaimRequest("w2", ["s"], 5, 30.0, True),
    )
    assert settled.completed == {a.id}, "the stale completion matched no row"
    assert settled.failed.dead == {b.id} and not settled.failed.lost
    # The two slots its outcomes freed in the bulkhead of 2 are claimed in the same call.
    assert [j.id for j in settled.claimed] == waiting[:2]
    assert all(j.status is Status.PROCESSING for j in settled.claimed)
    assert settled.claimed[0] == app.get_job(waiting[0])
    assert app.get_job(a.id).result == {"r": 1}
    assert app.get_job(c.id).status is Status.PROCESSING
    assert _settle_on_loop(app, [], [], None) == Settled(set(), FailResult(), [])


@pytest.mark.parametrize("raw_libpq", [True, False], ids=["fast-path", "plain-path"])
def test_claimed_jobs_are_ordinary_frozen_jobs(app: App, raw_libpq: bool) -> None:
    """The worker's claims build Jobs without their constructor (PostgreSQL: through a twin
    class of the same slots): what comes out must be a Job like any other."""
    _path(app, raw_libpq)
    ids = [app.enqueue("t", {"n": n}, queue="frozen", tags=["a"]) for n in range(3)]
    claim = ClaimRequest("w", ["frozen"], 5, 30.0, True)
    if app.backend.kind == "sqlite":
        claimed = app.backend.settle([], [], claim).claimed
    else:
        claimed = _settle_on_loop(app, [], [], claim).claimed
    assert [j.id for j in claimed] == ids
    for n, job in enumerate(claimed):
        assert type(job) is Job
        assert job == app.get_job(job.id)
        assert dataclasses.asdict(job) == dataclasses.asdict(app.get_job(job.id))
        assert job.payload == {"n": n} and job.tags == ("a",) and job.errors == ()
        with pytest.raises(dataclasses.FrozenInstanceError):
            job.attempts = 5  # type: ignore[misc]
        assert dataclasses.replace(job, attempts=7).attempts == 7 and job.attempts == 1


def test_settle_on_the_event_loop_needs_its_pool_opened(app: App) -> None:
    if not app.backend.capabilities.async_settle:
        return  # settle() in a thread: nothing to open
    app.enqueue("t")
    with pytest.raises(ClaimqError, match="open_async"):
        asyncio.run(app.backend.asettle([], [], ClaimRequest("w", None, 1, None)))
    assert app.claim("w", limit=5) != [], "nothing was claimed by the refused call"


# -- app.transaction ----------------------------------------------------------------------------


def test_transaction_commits_completion_and_follow_up_together(app: App) -> None:
    job = running(app)
    with app.transaction() as conn:
        app.complete(job, {"step": 1}, conn=conn)
        follow_up = app.enqueue("t", {"after": job.id}, queue="next", conn=conn)
    assert app.get_job(job.id).status is Status.SUCCEEDED
    assert app.get_job(follow_up).payload == {"after": job.id}


def test_transaction_rolls_back_on_an_exception(app: App) -> None:
    job = running(app)
    before = state(app)
    follow_up = 0
    with pytest.raises(RuntimeError), app.transaction() as conn:
        app.complete(job, conn=conn)
        follow_up = app.enqueue("t", queue="next", conn=conn)
        raise RuntimeError("the business write failed")
    assert state(app) == before
    assert app.get_job(job.id).status is Status.PROCESSING
    with pytest.raises(JobNotFound):
        app.get_job(follow_up)
    app.complete(job)
    assert counts(app) == (0, 1, 0)


def test_get_job_reads_inside_the_callers_transaction(app: App) -> None:
    """get_job(conn=...) reads through the caller's connection: a job enqueued in its open
    transaction is there before the commit (MariaDB too: Django's get_result() needs it)."""
    with app.transaction() as conn:
        job_id = app.enqueue("t", {"n": 1}, queue="seen", conn=conn)
        job = app.get_job(job_id, conn=conn)
        assert (job.id, job.payload, job.status) == (job_id, {"n": 1}, Status.PENDING)
        with pytest.raises(JobNotFound):
            app.get_job(job_id + 1, conn=conn)
    assert app.get_job(job_id, conn=None) == job


def test_stale_completion_inside_a_transaction_raises_and_rolls_back(app: App) -> None:
    job = running(app)
    stale = dataclasses.replace(job, claim_token=_stale_token(job.claim_token))
    with pytest.raises(LeaseLost), app.transaction() as conn:
        app.enqueue("t", queue="side-effect", conn=conn)
        app.complete(stale, conn=conn)
    assert [j.id for j in live(app)] == [job.id], "the enqueue rolled back with it"
    assert app.backend.heartbeat([Owned(job.id, job.claim_token or "")], None).alive == {job.id}


# -- orphaned(): claims whose answers a worker never received ------------------------------------


def test_orphaned_lists_what_a_worker_holds_in_the_database_but_not_in_memory(app: App) -> None:
    app.enqueue_many([{"task": "t"}] * 3)
    mine = app.claim("w-lost", limit=3, lease=30, start=True)
    theirs = running(app, worker="w-other")
    known, *lost = mine
    found = app.backend.orphaned("w-lost", [known.id])
    assert set(found) == {Owned(j.id, j.claim_token or "") for j in lost}
    assert app.backend.orphaned("w-lost", [j.id for j in mine]) == []
    assert [o.id for o in app.backend.orphaned("w-other", [])] == [theirs.id]
    # Handed back with release: pending again, the attempt not counted, no error recorded.
    assert app.backend.release(found) == {j.id for j in lost}
    for job in lost:
        after = app.get_job(job.id)
        assert (after.status, after.attempts, after.errors) == (Status.PENDING, 0, ())
    assert app.backend.orphaned("w-lost", [known.id]) == []


def test_orphaned_leaves_expired_leases_to_the_reaper(app: App, clock: FakeClock) -> None:
    job = running(app, worker="w-lost", lease=LEASE)
    expire(clock)
    assert app.backend.orphaned("w-lost", []) == []
    assert app.get_job(job.id).status is Status.PROCESSING
