"""Operating claimq on both backends: app.stats() over a known job mix (on the FakeClock, so
every age, rate and latency is exact) and the worker registry's rows."""

from __future__ import annotations

import pytest

from claimq import App, Permanent, Retry
from claimq.backends.base import WorkerRecord
from claimq.clock import FakeClock
from claimq.errors import InvalidInput


def _run(app: App, clock: FakeClock, queue: str, task: str, wait: float, run: float,
         outcome: str = "complete", priority: int = 0) -> int:
    """Enqueue one job, let it wait `wait` seconds, start it, run it `run` seconds, settle it."""
    job_id = app.enqueue(task, {}, queue=queue, priority=priority)
    clock.advance(wait)
    (job,) = app.claim("w1", [queue], limit=1, start=True)
    assert job.id == job_id
    clock.advance(run)
    if outcome == "complete":
        app.complete(job)
    elif outcome == "dead":
        app.fail(job, Permanent("broken"))
    elif outcome == "retry":
        app.fail(job, Retry(after=0))
    return job_id


def test_stats_of_a_known_mix(app: App, clock: FakeClock) -> None:
    # Long before the window: finished, so it counts in no rate (its dead letter still shows).
    _run(app, clock, "bulk", "t.old", 1, 1, "dead")
    clock.advance(3600)
    # The single stuck high-priority job: due ten minutes ago, never claimed (its queue is
    # paused), while everything else flows.
    stuck = app.enqueue("t.urgent", {}, queue="urgent", priority=100)
    app.pause("urgent")
    clock.advance(600)
    # Completed in the window: waits 1..10 s, runs 0.5..5 s.
    for i in range(1, 11):
        _run(app, clock, "bulk", "t.work", float(i), i / 2)
    # One job retried once, then completed: 2 attempts.
    retried = _run(app, clock, "bulk", "t.flaky", 0, 1, "retry")
    (again,) = app.claim("w1", ["bulk"], limit=1, start=True)
    assert again.id == retried
    app.complete(again)
    # Two failures in the window, one cancel (not a failure).
    _run(app, clock, "bulk", "t.bad", 0, 1, "dead")
    _run(app, clock, "bulk", "t.bad", 0, 1, "dead")
    app.cancel(app.enqueue("t.work", {}, queue="bulk"))
    # Live: two due, one scheduled, one running within its lease, one past it.
    app.enqueue("t.work", {}, queue="bulk")
    app.enqueue("t.work", {}, queue="bulk")
    app.enqueue("t.work", {}, queue="bulk", delay=3600)
    app.enqueue("t.slow", {}, queue="slow")
    (expired,) = app.claim("w1", ["slow"], limit=1, lease=5, start=True)
    clock.advance(10)  # past its lease (the reaper has not run)
    app.enqueue("t.slow", {}, queue="slow")
    app.claim("w1", ["slow"], limit=1, lease=60, start=True)
    app.configure_queue("bulk", max_workers=7)

    stats = app.stats(window=900)
    assert [q.name for q in stats.queues] == ["bulk", "slow", "urgent"]
    assert stats.window == 900 and stats.at == clock.now()

    urgent = stats.queue("urgent")
    assert urgent is not None and urgent.paused and urgent.active
    # ten minutes and every second the others took since: the stuck job stands out
    assert urgent.pending == 1 and urgent.oldest_due_age is not None
    assert urgent.oldest_due_age >= 600
    assert urgent.oldest_due_age == pytest.approx(
        (clock.now() - app.get_job(stuck).run_at).total_seconds()  # type: ignore[operator]
    )
    task = stats.task("t.urgent")
    assert task is not None and task.oldest_due_age == urgent.oldest_due_age

    bulk = stats.queue("bulk")
    assert bulk is not None and not bulk.paused and bulk.max_workers == 7
    assert (bulk.pending, bulk.scheduled, bulk.running, bulk.past_lease) == (2, 1, 0, 0)
    assert bulk.oldest_due_age is not None and bulk.oldest_due_age < 600
    # dead letters held now: the old failure, the two new ones, the cancel
    assert bulk.dead_by_reason == {"cancelled": 1, "permanent_error": 3}
    assert bulk.dead == 4
    # in the window (15 min): 11 completed, 2 failed (the cancel is no failure)
    assert bulk.completed_per_minute == pytest.approx(11 / 15)
    assert bulk.failed_per_minute == pytest.approx(2 / 15)
    # attempts over the 14 finished in the window: 10 x 1, the flaky one 2, 2 x 1, cancel 0
    assert bulk.attempts_per_job == pytest.approx(14 / 14)
    work = stats.task("t.work")
    assert work is not None
    assert work.wait.count == 10 and work.run.count == 10
    # percentile_cont over 1..10: p50 5.5, p95 9.55, p99 9.91 (runs are half of those)
    assert (work.wait.p50, work.wait.p95, work.wait.p99) == pytest.approx((5.5, 9.55, 9.91))
    assert (work.run.p50, work.run.p95, work.run.p99) == pytest.approx((2.75, 4.775, 4.955))
    assert work.completed_per_minute == pytest.approx(10 / 15)
    flaky = stats.task("t.flaky")
    assert flaky is not None and flaky.attempts_per_job == 2
    assert bulk.wait.count == 11  # the queue's percentiles cover its every task

    slow = stats.queue("slow")
    assert slow is not None
    assert (slow.pending, slow.running, slow.past_lease) == (0, 2, 1)
    assert expired.id in {j.id for j in app.list_jobs("live", queue="slow")}

    old = stats.task("t.old")
    assert old is not None and old.dead_by_reason == {"permanent_error": 1}
    assert old.failed_per_minute == 0 and old.attempts_per_job is None


def test_stats_of_an_empty_database_and_bad_window(app: App) -> None:
    stats = app.stats()
    assert stats.queues == [] and stats.tasks == []
    for bad in (0, -1, "soon", float("nan")):
        with pytest.raises(InvalidInput, match="window"):
            app.stats(window=bad)  # type: ignore[arg-type]


def _record(worker_id: str, **changes: object) -> WorkerRecord:
    return WorkerRecord(worker_id, "host-a", 4242, ("a", "b"), 8, "0.1.0")._replace(**changes)


def test_registry_rows_live_go_silent_die_and_are_pruned(app: App, clock: FakeClock) -> None:
    backend = app.backend
    backend.register_worker(_record("w-1"))
    backend.register_worker(_record("w-2", queues=None, pid=7))
    (w1, w2) = app.workers()
    assert (w1.id, w1.host, w1.pid, w1.queues, w1.concurrency, w1.version) == (
        "w-1", "host-a", 4242, ("a", "b"), 8, "0.1.0")
    assert w1.alive and w1.dead_at is None and w1.started_at == clock.now()
    assert w2.queues is None and w2.pid == 7

    clock.advance(20)
    assert backend.worker_seen("w-1", 5)
    assert backend.prune_workers(dead_after=10, forget_after=100) == (1, 0)  # w-2 went silent
    by_id = {w.id: w for w in app.workers()}
    assert by_id["w-1"].alive and by_id["w-1"].in_flight == 5
    assert by_id["w-1"].last_seen_at == clock.now() and by_id["w-1"].silent_for == 0
    assert not by_id["w-2"].alive and by_id["w-2"].dead_at == clock.now()
    assert by_id["w-2"].silent_for == pytest.approx(20)
    assert backend.prune_workers(dead_after=10, forget_after=100) == (0, 0)  # marked once

    # A worker marked dead that speaks again is alive again.
    assert backend.worker_seen("w-2", 0)
    assert all(w.alive for w in app.workers())

    clock.advance(150)
    assert backend.worker_seen("w-1", 1)
    assert backend.prune_workers(dead_after=10, forget_after=100) == (1, 0)
    assert backend.prune_workers(dead_after=10, forget_after=100) == (0, 1)  # then pruned
    assert [w.id for w in app.workers()] == ["w-1"]
    assert not backend.worker_seen("w-2", 0)  # no row: the worker registers again

    backend.register_worker(_record("w-1", concurrency=3))  # the same id again: refreshed
    (again,) = app.workers()
    assert again.concurrency == 3 and again.started_at == w1.started_at
    assert backend.unregister_worker("w-1")
    assert not backend.unregister_worker("w-1")
    assert app.workers() == []


def test_metrics_text_and_the_mountable_asgi_app(app: App, clock: FakeClock) -> None:
    import asyncio

    from prometheus_client.parser import text_string_to_metric_families

    from claimq.metrics import metrics_app, metrics_text

    app.enqueue("t.urgent", {}, queue="urgent", priority=9)
    clock.advance(42)
    _run(app, clock, "bulk", "t.bad", 0, 1, "dead")

    def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for f in text_string_to_metric_families(text) for s in f.samples}

    found = samples(metrics_text(app).decode())
    # 42 s, and the 1 s the other job ran
    assert found[("claimq_queue_oldest_due_age_seconds", (("queue", "urgent"),))] == 43
    assert found[("claimq_task_pending", (("task", "t.urgent"),))] == 1
    assert found[("claimq_queue_dead", (("queue", "bulk"), ("reason", "permanent_error")))] == 1
    assert not any(name.startswith("claimq_worker_") for name, _ in found)  # no worker here

    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/metrics", "query_string": b"",
             "headers": [], "root_path": ""}
    asyncio.run(metrics_app(app)(scope, receive, send))
    assert sent[0]["status"] == 200
    body = b"".join(m.get("body", b"") for m in sent[1:])  # type: ignore[misc]
    assert samples(body.decode())[("claimq_task_pending", (("task", "t.urgent"),))] == 1
