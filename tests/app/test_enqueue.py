"""enqueue -> pending: single, bulk, delayed, tags, idempotency keys, the caller's transaction."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from app_support import (
    CallerTransaction,
    archived,
    claim_one,
    counts,
    dead,
    live,
    running,
    seconds_until,
    state,
)

from claimq import App, JobNotFound, Permanent, Status
from claimq.clock import FakeClock


def test_enqueue_one_job_writes_a_pending_row(app: App) -> None:
    job_id = app.enqueue("mail.send", {"to": "a@example.com", "n": [1, 2.5, None]})
    job = app.get_job(job_id)
    assert job.id == job_id
    assert job.status is Status.PENDING
    assert job.queue == "default"
    assert job.task == "mail.send"
    assert job.payload == {"to": "a@example.com", "n": [1, 2.5, None]}
    assert (job.priority, job.attempts, job.max_attempts) == (0, 0, app.default_max_attempts)
    assert job.tags == ()
    assert job.claim_token is None and job.worker_id is None and job.lease_until is None
    assert job.errors == ()
    assert not job.cancel_requested
    assert job.run_at == job.created_at, "an undelayed job is due when it is created"
    assert abs(seconds_until(app, job.run_at)) < 5
    assert counts(app) == (1, 0, 0)


def test_enqueue_creates_its_queue_on_first_use(app: App) -> None:
    assert "fresh" not in {q.name for q in app.queues()}
    app.enqueue("t", queue="fresh")
    app.enqueue("t", queue="fresh")
    [info] = [q for q in app.queues() if q.name == "fresh"]
    assert info.pending == 2
    assert (info.paused, info.active, info.max_workers) == (False, True, None)


def test_enqueue_keeps_every_option(app: App) -> None:
    job_id = app.enqueue(
        "t", {"k": "v"}, queue="opts", priority=7, max_attempts=3, tags=["a", "b c"],
        timeout=12.5, idempotency_key="key-1",
    )
    job = app.get_job(job_id)
    assert (job.queue, job.priority, job.max_attempts) == ("opts", 7, 3)
    assert job.tags == ("a", "b c")
    assert job.timeout == 12.5
    assert job.idempotency_key == "key-1"
    assert job.effective_key == "key-1"
    other = app.get_job(app.enqueue("t"))
    assert other.effective_key == f"claimq-job-{other.id}"


def test_enqueue_many_inserts_in_order_in_one_call(app: App) -> None:
    ids = app.enqueue_many(
        [
            {"task": "a", "payload": {"i": 0}},
            {"task": "b", "payload": {"i": 1}, "queue": "other", "priority": 3},
            {"task": "c", "payload": {"i": 2}, "idempotency_key": "many-k", "tags": ["x"]},
            {"task": "d", "payload": {"i": 3}, "delay": 60},
        ]
    )
    assert len(ids) == len(set(ids)) == 4
    jobs = [app.get_job(i) for i in ids]
    assert [j.task for j in jobs] == ["a", "b", "c", "d"]
    assert [j.payload["i"] for j in jobs] == [0, 1, 2, 3]
    assert jobs[1].queue == "other" and jobs[1].priority == 3
    assert jobs[2].idempotency_key == "many-k" and jobs[2].tags == ("x",)
    assert seconds_until(app, jobs[3].run_at) > 50
    assert app.enqueue_many([]) == []
    assert counts(app) == (4, 0, 0)


def test_bulk_enqueue_keeps_awkward_values_exactly(app: App) -> None:
    """Enough jobs for PostgreSQL's COPY path (and several of its chunks): every value that
    COPY's text format must escape comes back as it went in."""
    awkward = ["tab\there", "new\nline", "cr\rx", "back\\slash", "\\N", "quote\"s", "{a,b}",
               "comma,", "NULL", "ünïcødé ✓", ""]
    specs = [
        {
            "task": "t.bulk",
            "queue": ["q1", "q2"][i % 2],
            "payload": {"i": i, "s": awkward[i % len(awkward)], "nested": {"k": awkward}},
            "tags": [awkward[i % len(awkward)] or "empty", "x y"],
            "priority": i % 7,
            "max_attempts": 1 + i % 5,
            "timeout": 1.5 if i % 3 else None,
            "delay": 120 if i % 4 == 0 else None,
            "retry": {"base": 0.5, "cap": 9} if i % 5 == 0 else None,
        }
        for i in range(2500)
    ]
    ids = app.enqueue_many(specs)
    assert len(ids) == len(set(ids)) == 2500
    for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1234, 2499):
        job, spec = app.get_job(ids[i]), specs[i]
        assert job.payload == spec["payload"]
        assert job.tags == tuple(spec["tags"])  # type: ignore[arg-type]
        assert (job.queue, job.priority, job.max_attempts) == (
            spec["queue"], spec["priority"], spec["max_attempts"])
        assert job.timeout == spec["timeout"]
        assert (job.retry is not None) == (spec["retry"] is not None)
        delayed = seconds_until(app, job.run_at) > 100
        assert delayed == (spec["delay"] is not None)
    assert counts(app) == (2500, 0, 0)


def test_large_batch_with_keyed_jobs_returns_ids_in_order(app: App) -> None:
    """Keyed jobs inside a batch large enough for COPY: each position gets its job's id (an
    existing holder's for a key already used), un-keyed ones are all new."""
    held = app.enqueue("t", {"old": True}, idempotency_key="held")
    specs: list[dict[str, object]] = [{"task": "t", "payload": {"i": i}} for i in range(1200)]
    specs[0] = {"task": "t", "payload": {"i": 0}, "idempotency_key": "k-first"}
    specs[500] = {"task": "t", "payload": {"i": 500}, "idempotency_key": "held"}
    specs[700] = {"task": "t", "payload": {"i": 700}, "idempotency_key": "k-twice"}
    specs[1199] = {"task": "t", "payload": {"i": 1199}, "idempotency_key": "k-twice"}
    ids = app.enqueue_many(specs)
    assert len(ids) == 1200
    assert ids[500] == held and ids[700] == ids[1199]
    assert len(set(ids)) == 1199, "one repeated key"
    for i in (0, 1, 499, 501, 700, 1000, 1198):
        assert app.get_job(ids[i]).payload == {"i": i}
    assert app.get_job(held).payload == {"old": True}
    assert counts(app) == (1 + 1200 - 2, 0, 0)


def test_enqueue_many_repeating_a_key_in_one_batch_makes_one_job(app: App) -> None:
    ids = app.enqueue_many(
        [{"task": "t", "idempotency_key": "same"}, {"task": "t", "idempotency_key": "same"}]
    )
    assert ids[0] == ids[1]
    assert counts(app) == (1, 0, 0)


def test_delayed_jobs_are_not_due_until_their_time(app: App) -> None:
    later = app.enqueue("t", delay=60)
    at = app.enqueue("t", run_at=app.backend.now() + timedelta(seconds=120))
    by_td = app.enqueue("t", delay=timedelta(minutes=3))
    past = app.enqueue("t", run_at=datetime.now(UTC) - timedelta(seconds=30))
    assert 55 < seconds_until(app, app.get_job(later).run_at) <= 60.5
    assert 115 < seconds_until(app, app.get_job(at).run_at) <= 120.5
    assert 175 < seconds_until(app, app.get_job(by_td).run_at) <= 180.5
    [info] = app.queues()
    assert (info.pending, info.scheduled) == (1, 3)
    assert [j.id for j in app.claim("w", limit=10)] == [past]
    assert app.claim("w", limit=10) == []


def test_a_short_delay_becomes_due(app: App, clock: FakeClock) -> None:
    job_id = app.enqueue("t", delay=0.3)
    assert app.claim("w") == []
    clock.advance(0.29)
    assert app.claim("w") == []
    clock.advance(0.01)
    assert [j.id for j in app.claim("w")] == [job_id]


def test_run_at_in_another_timezone_means_the_same_instant(app: App) -> None:
    # From the app's (fake) clock: the wall clock has moved on since the fixture made it.
    when = app.backend.now().astimezone(timezone(timedelta(hours=5))) + timedelta(seconds=90)
    job = app.get_job(app.enqueue("t", run_at=when))
    assert job.run_at is not None
    assert abs((job.run_at - when).total_seconds()) < 0.01
    assert 85 < seconds_until(app, job.run_at) <= 90.5


# -- idempotency keys --------------------------------------------------------------------------


def test_idempotency_key_returns_the_live_job_and_writes_nothing(app: App) -> None:
    first = app.enqueue("t", {"v": 1}, idempotency_key="order-42")
    before = state(app)
    assert app.enqueue("t", {"v": 2}, idempotency_key="order-42") == first
    assert app.enqueue("other", {"v": 3}, queue="q2", idempotency_key="order-42") == first
    assert app.enqueue_many([{"task": "t", "idempotency_key": "order-42"}]) == [first]
    assert state(app) == before, "a held key must not write anything (not even a queue)"
    assert app.get_job(first).payload == {"v": 1}
    # While the job runs the key is still held.
    job = claim_one(app)
    app.start(job)
    assert app.enqueue("t", idempotency_key="order-42") == first
    assert counts(app) == (1, 0, 0)


def test_idempotency_key_is_held_after_success_within_retention(app: App) -> None:
    job = running(app, idempotency_key="k-archive")
    app.complete(job, {"ok": True})
    assert app.enqueue("t", idempotency_key="k-archive") == job.id
    assert counts(app) == (0, 1, 0)


def test_idempotency_key_is_held_after_dead_letter_within_retention(app: App) -> None:
    job = running(app, idempotency_key="k-dead")
    app.fail(job, Permanent("no"))
    assert app.enqueue("t", idempotency_key="k-dead") == job.id
    assert counts(app) == (0, 0, 1)


def test_idempotency_key_is_free_again_after_the_retention_window(
    db_url: str, clock: FakeClock
) -> None:
    with App(db_url, idempotency_retention=0.05, clock=clock) as short:
        short.migrate()
        # A live job holds its key however long it waits.
        held = short.enqueue("t", idempotency_key="k-live")
        clock.advance(0.2)
        assert short.enqueue("t", idempotency_key="k-live") == held
        # A finished job holds it only for the retention window.
        done = running(short, idempotency_key="k-done")
        short.complete(done)
        buried = running(short, idempotency_key="k-buried")
        short.fail(buried, Permanent("x"))
        clock.advance(0.3)
        fresh_done = short.enqueue("t", {"again": 1}, idempotency_key="k-done")
        fresh_buried = short.enqueue("t", idempotency_key="k-buried")
        assert fresh_done not in (done.id, held) and fresh_buried != buried.id
        assert short.get_job(fresh_done).status is Status.PENDING
        assert short.get_job(fresh_done).payload == {"again": 1}
        # The new jobs now hold the keys; the finished ones stay where they are.
        assert short.enqueue("t", idempotency_key="k-done") == fresh_done
        assert short.get_job(done.id).status is Status.SUCCEEDED
        assert short.get_job(buried.id).status is Status.DEAD
        assert counts(short) == (3, 1, 1)


def test_purge_forgets_expired_keys_only(db_url: str, clock: FakeClock) -> None:
    with App(db_url, idempotency_retention=0.05, clock=clock) as short:
        short.migrate()
        job = running(short, idempotency_key="k")
        short.complete(job)
        clock.advance(0.2)
        assert short.purge("archive") == 1
        new = short.enqueue("t", idempotency_key="k")
        assert new != job.id
        assert short.enqueue("t", idempotency_key="k") == new


# -- enqueue inside the caller's own transaction ------------------------------------------------


def test_enqueue_in_caller_transaction_exists_once_committed(app: App) -> None:
    with CallerTransaction(app) as tx:
        job_id = app.enqueue("t", {"tx": True}, queue="txq", conn=tx.conn)
        many = app.enqueue_many([{"task": "t"}, {"task": "u", "queue": "txq2"}], conn=tx.conn)
        with pytest.raises(JobNotFound):
            app.get_job(job_id)  # not visible to others before the commit
        assert counts(app) == (0, 0, 0)
        tx.commit()
    assert app.get_job(job_id).payload == {"tx": True}
    assert {j.id for j in live(app)} == {job_id, *many}
    assert {"txq", "txq2"} <= {q.name for q in app.queues()}
    assert claim_one(app, queue="txq").id == job_id


def test_enqueue_in_caller_transaction_never_exists_after_rollback(app: App) -> None:
    before = state(app)
    with CallerTransaction(app) as tx:
        job_id = app.enqueue("t", queue="rolled", idempotency_key="tx-key", conn=tx.conn)
        many = app.enqueue_many([{"task": "t"}, {"task": "t"}], conn=tx.conn)
        tx.rollback()
    for gone in (job_id, *many):
        with pytest.raises(JobNotFound):
            app.get_job(gone)
    assert state(app) == before, "a rolled-back enqueue leaves no job and no queue"
    assert app.claim("w", limit=10) == []
    # The key was never held: a new enqueue creates a new job.
    again = app.enqueue("t", idempotency_key="tx-key")
    assert app.get_job(again).status is Status.PENDING
    assert counts(app) == (1, 0, 0)


def test_caller_transaction_sees_its_own_key(app: App) -> None:
    with CallerTransaction(app) as tx:
        first = app.enqueue("t", idempotency_key="own", conn=tx.conn)
        assert app.enqueue("t", idempotency_key="own", conn=tx.conn) == first
        tx.commit()
    assert app.enqueue("t", idempotency_key="own") == first
    assert counts(app) == (1, 0, 0)


def test_complete_in_caller_transaction_commits_with_it(app: App) -> None:
    job = running(app)
    with CallerTransaction(app) as tx:
        app.complete(job, {"r": 1}, conn=tx.conn)
        tx.rollback()
    assert app.get_job(job.id).status is Status.PROCESSING
    with CallerTransaction(app) as tx:
        app.complete(job, {"r": 2}, conn=tx.conn)
        tx.commit()
    done = app.get_job(job.id)
    assert done.status is Status.SUCCEEDED and done.result == {"r": 2}
    assert [j.id for j in archived(app)] == [job.id] and dead(app) == []
