"""Issue 24, defects 6 and 7, on every backend and the FakeClock: retention keeps an
idempotency key held for its whole `until_done` window whether or not the finished job's row
is still there, and every table claimq writes has a bound that the pruner enforces."""

from __future__ import annotations

import threading

import pytest

from claimq import App, InvalidInput, JobNotFound, Throttled, _pause
from claimq.backends.base import Completion, Owned
from claimq.clock import FakeClock

DAY = 86400.0


def _finish(app: App, queue: str = "q", ok: bool = True) -> int:
    """Claims the queue's one job and archives it (ok), or cancels the pending job into the
    dead letters."""
    if not ok:
        job_id = app.list_jobs("live", queue=queue)[0].id
        assert app.cancel(job_id) == "cancelled"
        return job_id
    job = app.claim("w", [queue], limit=1, start=True)[0]
    assert app.backend.complete([Completion(job.id, job.claim_token or "", None)]) == {job.id}
    return job.id


@pytest.mark.parametrize("policy", [{"archive_age": 1.0, "dead_age": 1.0},
                                    {"archive_rows": 1, "dead_rows": 1}],
                         ids=["age", "rows"])
@pytest.mark.parametrize("ok", [True, False], ids=["archived", "dead"])
def test_a_pruned_job_keeps_its_key_for_the_window(app: App, clock: FakeClock,
                                                   policy: dict[str, float], ok: bool) -> None:
    """Defect 6: archive_age shorter than the 24 h window, or a row limit, pruned the finished
    job's row, then the key was taken as free (and pruned): a duplicate was accepted."""
    app.set_retention(**policy)  # type: ignore[arg-type]
    first = app.enqueue("t", idempotency_key="k", queue="q", unique_for=DAY)
    assert _finish(app, ok=ok) == first
    if "archive_rows" in policy:  # a newer finished job pushes the key's job out
        clock.advance(1)
        app.enqueue("t", queue="q")
        _finish(app, ok=ok)
    clock.advance(10)
    counts = app.prune()
    assert counts is not None and counts["archive" if ok else "dead"] == 1  # the row is gone
    assert counts["idempotency_keys"] == 0  # ... its key is not
    assert app.enqueue("t", idempotency_key="k", queue="q", unique_for=DAY) == first
    clock.advance(DAY - 20)  # still inside the window
    app.prune()
    assert app.enqueue("t", idempotency_key="k", queue="q", unique_for=DAY) == first
    clock.advance(20)  # past it: the key is free, then pruned
    assert app.enqueue("t", idempotency_key="k2", queue="q") != first
    counts = app.prune()
    assert counts is not None and counts["idempotency_keys"] == 1
    assert app.enqueue("t", idempotency_key="k", queue="q", unique_for=DAY) != first


def test_a_key_taken_over_holds_for_its_new_job(app: App, clock: FakeClock) -> None:
    """The finished time belongs to the job that held the key: a new holder starts live."""
    first = app.enqueue("t", idempotency_key="k", queue="q", unique_for=60)
    _finish(app)
    clock.advance(120)
    second = app.enqueue("t", idempotency_key="k", queue="q", unique_for=60)
    assert second != first
    clock.advance(DAY * 2)  # the new holder is live (pending): held, never pruned
    app.prune()
    assert app.enqueue("t", idempotency_key="k", queue="q", unique_for=60) == second


def test_progress_goes_with_its_job(app: App, clock: FakeClock) -> None:
    """Defect 7: the pruner never removed progress rows, and get_progress answered for a
    pruned job."""
    app.set_retention(archive_age=60)
    done, kept = (app.enqueue("t", queue="q") for _ in range(2))
    jobs = app.claim("w", ["q"], limit=2, start=True)
    for job in jobs:
        assert app.backend.set_progress(Owned(job.id, job.claim_token or ""), 0.5, "half")
    (job,) = (j for j in jobs if j.id == done)
    assert app.backend.complete([Completion(job.id, job.claim_token or "", None)]) == {done}
    assert app.get_progress(done) is not None  # the archived job keeps its progress
    clock.advance(120)
    counts = app.prune()
    assert counts is not None and counts["archive"] == 1 and counts["progress"] == 1
    with pytest.raises(JobNotFound):
        app.get_progress(done)
    progress = app.get_progress(kept)  # a live job's stays
    assert progress is not None and progress.fraction == 0.5
    assert app.get_progress(app.enqueue("t", queue="q")) is None  # none reported yet
    counts = app.prune()
    assert counts is not None and counts["progress"] == 0


def test_rate_key_rows_go_once_their_bucket_is_full_again(app: App, clock: FakeClock) -> None:
    """Defect 7: a row per rate key ever used, for ever. A full, unthrottled bucket is what no
    row means: it goes, and the limit holds as before."""
    app.configure_queue("api", key_rate_limit="2/s")
    for key in ("a", "a", "b", "c"):
        app.enqueue("call", {}, queue="api", rate_key=key)
    assert len(app.claim("w", ["api"], limit=10)) == 4
    throttled = app.enqueue("call", {}, queue="api", rate_key="d")
    job = app.claim("w", ["api"], limit=1, start=True)[0]
    assert job.id == throttled
    assert app.fail(job, Throttled(after=600), attempt=1) == "retried"
    counts = app.prune()
    assert counts is not None and counts["rate_keys"] == 0  # every bucket in use
    clock.advance(60)  # buckets full again; d still throttled
    counts = app.prune()
    assert counts is not None and counts["rate_keys"] == 3
    assert [k.key for k in app.throttled_keys()] == ["d"]
    for _ in range(3):
        app.enqueue("call", {}, queue="api", rate_key="a")
    assert len(app.claim("w", ["api"], limit=10)) == 2  # a full bucket: its burst, no more
    clock.advance(600)
    counts = app.prune()
    assert counts is not None and counts["rate_keys"] == 2  # a's bucket refilled, d's throttle over
    assert app.throttled_keys() == []


def test_audit_entries_go_after_audit_age(app: App, clock: FakeClock) -> None:
    """Defect 7: the audit table was never pruned. App(audit_age=...), default 30 days."""
    assert app.audit_age == 30 * DAY
    old = [app.backend.record_audit("op", "cancel", "ids", "{}", 1) for _ in range(3)]
    clock.advance(20 * DAY)
    new = app.backend.record_audit("op", "resurrect", "ids", "{}", 2)
    clock.advance(11 * DAY)
    counts = app.prune(batch=2)
    assert counts is not None and counts["audit"] == 3
    # left: the new one and this prune()'s own row (an operator's pass is audited)
    [own, kept] = app.backend.list_audit(None, 100)
    assert (own.action, kept.id) == ("prune", new)
    assert old  # ids of the pruned ones, for the reader


def test_audit_age_none_keeps_the_audit(db_url: str, clock: FakeClock) -> None:
    app = App(db_url, clock=clock, audit_age=None)
    app.migrate()
    try:
        app.backend.record_audit("op", "cancel", "ids", "{}", 1)
        clock.advance(400 * DAY)
        counts = app.prune()
        assert counts is not None and counts["audit"] == 0
        assert [e.action for e in app.backend.list_audit(None, 100)] == ["prune", "cancel"]
        with pytest.raises(InvalidInput):
            App(db_url, audit_age=-1)
    finally:
        app.close()


@pytest.mark.parametrize("db_url", ["mariadb"], indirect=True)
def test_a_key_pruner_paused_after_its_selection_spares_a_resurrected_holder(
        app: App, clock: FakeClock) -> None:
    """pause('prune.selected'): the pruner has picked a dead job's expired key; the job is
    resurrected meanwhile. A resurrect takes its key under the key row's lock, so it waits for
    the pruner (the key deleted, then taken again) or the pruner's delete, checking the rule
    again, spares the key it took: either way the key stays the job's and a duplicate is
    refused. (The interleaving spec "prune keys x resurrect" resumes the pruner only once the
    resurrect waits on it. SQLite and PostgreSQL prune keys in one statement: no point
    between.)"""
    job_id = app.enqueue("t", idempotency_key="k", queue="q")
    assert app.cancel(job_id) == "cancelled"
    clock.advance(2 * DAY)  # past the 24 h window: the key is free, the pruner may take it
    reached, go = threading.Event(), threading.Event()
    pruner = threading.current_thread()

    def hook(point: str) -> None:
        if point == "prune.selected" and threading.current_thread() is not pruner:
            reached.set()
            assert go.wait(10), "the test never resumed the pruner"

    deleted: list[int] = []
    previous = _pause.set_hook(hook)
    try:
        thread = threading.Thread(target=lambda: deleted.append(
            app.backend.prune_idempotency_keys(app.idempotency_retention, 100)))
        thread.start()
        assert reached.wait(10), "the pruner never reached prune.selected"
        resurrect = threading.Thread(target=app.resurrect, args=(job_id,))
        resurrect.start()  # the key's row is locked by the pruner: it waits, or comes after
        go.set()
        for t in (thread, resurrect):
            t.join(30)
            assert not t.is_alive()
    finally:
        _pause.set_hook(previous)
    assert deleted in ([0], [1])
    assert app.get_job(job_id).status == "pending"
    assert app.enqueue("t", idempotency_key="k", queue="q") == job_id  # still its holder
