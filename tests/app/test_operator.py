"""Operator operations: get_job, cancel, resurrect, purge, set_priority, list_jobs, queues."""

from __future__ import annotations

import pytest
from app_support import (
    archived,
    claim_one,
    counts,
    dead,
    live,
    running,
    state,
)

from claimq import App, DeadReason, JobNotFound, Permanent, Retry, Status
from claimq.clock import FakeClock


def test_get_job_finds_the_job_wherever_it_lives(app: App) -> None:
    pending = app.enqueue("t", {"n": 1})
    fetched = app.enqueue("t", {"n": 2}, queue="f")
    claim_one(app, queue="f")
    proc = running(app, payload={"n": 3})
    done = running(app, payload={"n": 4})
    app.complete(done, {"r": 4})
    buried = running(app, payload={"n": 5})
    app.fail(buried, Permanent("no"))
    assert app.get_job(pending).status is Status.PENDING
    assert app.get_job(fetched).status is Status.FETCHED
    assert app.get_job(proc.id).status is Status.PROCESSING
    archived_job = app.get_job(done.id)
    assert archived_job.status is Status.SUCCEEDED and archived_job.result == {"r": 4}
    assert archived_job.payload == {"n": 4} and archived_job.claim_token is None
    dead_job = app.get_job(buried.id)
    assert dead_job.status is Status.DEAD and dead_job.reason == DeadReason.PERMANENT_ERROR
    assert dead_job.payload == {"n": 5}
    with pytest.raises(JobNotFound):
        app.get_job(999_999)


# -- cancel -----------------------------------------------------------------------------------


def test_cancel_pending_goes_to_dead_letters(app: App) -> None:
    job_id = app.enqueue("t", {"x": 1}, idempotency_key="c")
    assert app.cancel(job_id) == "cancelled"
    gone = app.get_job(job_id)
    assert gone.status is Status.DEAD and gone.reason == DeadReason.CANCELLED
    assert gone.payload == {"x": 1}
    assert counts(app) == (0, 0, 1)
    assert app.claim("w", limit=10) == []


def test_cancel_fetched_goes_to_dead_letters(app: App) -> None:
    app.enqueue("t")
    job = claim_one(app)
    assert app.cancel(job.id) == "cancelled"
    assert app.get_job(job.id).reason == DeadReason.CANCELLED


def test_cancel_processing_requests_it_and_the_worker_sees_it(app: App) -> None:
    job = running(app)
    assert app.cancel(job.id) == "cancel_requested"
    now = app.get_job(job.id)
    assert now.status is Status.PROCESSING and now.cancel_requested
    assert app.heartbeat(job) is True
    # Asking again changes nothing more.
    assert app.cancel(job.id) == "cancel_requested"


def test_cancel_finished_is_finished(app: App) -> None:
    done = running(app)
    app.complete(done)
    buried = app.enqueue("t")
    app.cancel(buried)
    before = state(app)
    assert app.cancel(done.id) == "finished"
    assert app.cancel(buried) == "finished"
    assert state(app) == before


def test_cancel_unknown_is_job_not_found(app: App) -> None:
    with pytest.raises(JobNotFound):
        app.cancel(123_456)


# -- resurrect --------------------------------------------------------------------------------


def test_resurrect_with_edits_resets_attempts_and_keeps_history(app: App) -> None:
    job = running(app, payload={"v": 1}, priority=2, max_attempts=2, queue="res")
    app.fail(job, Retry(after=0, reason="first"))
    again = claim_one(app, queue="res")
    app.start(again)
    app.fail(again, RuntimeError("second"))
    assert app.get_job(job.id).reason == DeadReason.RETRIES_EXHAUSTED
    app.resurrect(job.id, payload={"v": 2}, priority=9)
    back = app.get_job(job.id)
    assert back.status is Status.PENDING
    assert back.attempts == 0 and back.max_attempts == 2
    assert back.payload == {"v": 2} and back.priority == 9
    assert [e["message"] for e in back.errors] == ["first", "second"]
    assert back.claim_token is None
    assert dead(app) == []
    third = claim_one(app, queue="res")
    assert third.id == job.id and app.start(third) == 1


def test_resurrect_without_edits_keeps_payload_and_priority(app: App) -> None:
    job_id = app.enqueue("t", {"keep": True}, priority=-3, queue="gone-q")
    app.cancel(job_id)
    app.resurrect(job_id)
    back = app.get_job(job_id)
    assert (back.payload, back.priority, back.status) == ({"keep": True}, -3, Status.PENDING)
    assert "gone-q" in {q.name for q in app.queues()}
    assert claim_one(app).id == job_id


def test_resurrect_needs_a_dead_letter(app: App) -> None:
    pending = app.enqueue("t")
    done = running(app)
    app.complete(done)
    before = state(app)
    for job_id in (pending, done.id, 999_999):
        with pytest.raises(JobNotFound):
            app.resurrect(job_id, priority=5)
    assert state(app) == before


# -- purge ------------------------------------------------------------------------------------


def _finish(app: App, *, queue: str, task: str, ok: bool) -> int:
    job = running(app, task, queue=queue)
    if ok:
        app.complete(job)
    else:
        app.fail(job, Permanent("x"))
    return job.id


@pytest.mark.parametrize("table", ["archive", "dead"])
def test_purge_by_age(app: App, clock: FakeClock, table: str) -> None:
    ok = table == "archive"
    old = _finish(app, queue="a", task="t", ok=ok)
    clock.advance(0.8)
    young = _finish(app, queue="a", task="t", ok=ok)
    assert app.purge(table, older_than=3600) == 0  # type: ignore[arg-type]
    # A cut-off halfway between the two finish times, on the backend's own clock.
    old_at, young_at = app.get_job(old).finished_at, app.get_job(young).finished_at
    assert old_at is not None and young_at is not None
    gap = (young_at - old_at).total_seconds()
    assert gap >= 0.7
    older_than = (app.backend.now() - young_at).total_seconds() + gap / 2
    assert app.purge(table, older_than=older_than) == 1  # type: ignore[arg-type]
    remaining = archived(app) if ok else dead(app)
    assert [j.id for j in remaining] == [young]
    with pytest.raises(JobNotFound):
        app.get_job(old)


@pytest.mark.parametrize("table", ["archive", "dead"])
def test_purge_by_queue_and_task(app: App, table: str) -> None:
    ok = table == "archive"
    a_t = _finish(app, queue="a", task="t", ok=ok)
    a_u = _finish(app, queue="a", task="u", ok=ok)
    b_t = _finish(app, queue="b", task="t", ok=ok)
    other = _finish(app, queue="a", task="t", ok=not ok)  # lives in the other table
    live_id = app.enqueue("t", queue="a")
    assert app.purge(table, queue="a", task="t") == 1  # type: ignore[arg-type]
    assert app.purge(table, queue="nope") == 0  # type: ignore[arg-type]
    assert app.purge(table, task="u") == 1  # type: ignore[arg-type]
    finished = archived(app) if ok else dead(app)
    assert [j.id for j in finished] == [b_t]
    assert app.purge(table) == 1  # type: ignore[arg-type]
    assert app.get_job(other).id == other and app.get_job(live_id).status is Status.PENDING
    for gone in (a_t, a_u, b_t):
        with pytest.raises(JobNotFound):
            app.get_job(gone)


# -- set_priority -----------------------------------------------------------------------------


def test_set_priority_reorders_pending_jobs(app: App) -> None:
    first = app.enqueue("t")
    second = app.enqueue("t")
    app.set_priority(second, 10)
    assert app.get_job(second).priority == 10
    assert [j.id for j in app.claim("w", limit=2)] == [second, first]


def test_set_priority_only_on_pending(app: App) -> None:
    app.enqueue("t")
    fetched = claim_one(app)
    proc = running(app)
    done = running(app)
    app.complete(done)
    before = state(app)
    for job_id in (fetched.id, proc.id, done.id, 424_242):
        with pytest.raises(JobNotFound):
            app.set_priority(job_id, 5)
    assert state(app) == before


# -- list_jobs and queues ---------------------------------------------------------------------


def test_list_jobs_filters_and_pages(app: App) -> None:
    ids = [app.enqueue("t" if i % 2 else "u", queue="q1" if i < 4 else "q2") for i in range(6)]
    claim_one(app, queue="q2")
    assert [j.id for j in live(app)] == ids
    assert [j.id for j in app.list_jobs(queue="q1")] == ids[:4]
    assert [j.id for j in app.list_jobs(task="t")] == ids[1::2]
    assert [j.id for j in app.list_jobs(status="fetched")] == [ids[4]]
    assert [j.id for j in app.list_jobs(queue="q2", status="pending")] == [ids[5]]
    assert [j.id for j in app.list_jobs(limit=2, offset=1)] == ids[1:3]
    assert app.list_jobs(offset=6) == []


def test_list_jobs_in_archive_and_dead(app: App) -> None:
    done = [running(app, queue="l") for _ in range(2)]
    for job in done:
        app.complete(job)
    perm = running(app, queue="l")
    app.fail(perm, Permanent("p"))
    cancelled = app.enqueue("t", queue="m")
    app.cancel(cancelled)
    assert {j.id for j in app.list_jobs("archive")} == {j.id for j in done}
    assert {j.status for j in app.list_jobs("archive")} == {Status.SUCCEEDED}
    assert {j.id for j in app.list_jobs("dead")} == {perm.id, cancelled}
    assert [j.id for j in app.list_jobs("dead", status="cancelled")] == [cancelled]
    assert [j.id for j in app.list_jobs("dead", status="permanent_error")] == [perm.id]
    assert [j.id for j in app.list_jobs("dead", queue="m")] == [cancelled]
    assert len(app.list_jobs("archive", limit=1)) == 1


def test_queues_report_settings_and_counts(app: App) -> None:
    app.configure_queue("stats", max_workers=5, lease=12, timeout=3)
    done = running(app, queue="stats")
    app.complete(done)
    buried = app.enqueue("t", queue="stats")
    app.cancel(buried)
    proc_id = app.enqueue("t", queue="stats")
    proc = claim_one(app, queue="stats")
    app.start(proc)
    app.enqueue("t", queue="stats")
    app.enqueue("t", queue="stats")
    app.enqueue("t", queue="stats", delay=300)
    claimed = claim_one(app, queue="stats")
    app.enqueue("t", queue="other")
    by_name = {q.name: q for q in app.queues()}
    assert set(by_name) == {"stats", "other"}
    info = by_name["stats"]
    assert (info.max_workers, info.lease_seconds, info.timeout_seconds) == (5, 12, 3)
    assert (info.paused, info.active) == (False, True)
    assert (info.pending, info.scheduled, info.fetched, info.processing) == (1, 1, 1, 1)
    assert (info.archived, info.dead, info.past_lease) == (1, 1, 0)
    assert info.oldest_due_age is not None and info.oldest_due_age >= 0
    assert by_name["other"].pending == 1
    assert claimed.id != proc.id and proc.id == proc_id
    assert [q.name for q in app.queues()] == sorted(by_name)


def test_the_queue_figures_and_the_stats_use_the_same_terms() -> None:
    """app.queues() and app.stats() (and so the page and `claimq stats`) name a figure alike."""
    from dataclasses import fields

    from claimq.backends.base import QueueInfo
    from claimq.stats import TaskStats

    queue_terms = {f.name for f in fields(QueueInfo)}
    stats_terms = {f.name for f in fields(TaskStats)}
    assert {"pending", "scheduled", "past_lease", "oldest_due_age"} <= queue_terms & stats_terms
    assert not {"expired", "oldest_ready_age"} & queue_terms
