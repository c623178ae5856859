"""Graceful shutdown of a real worker process on SIGTERM, on SQLite and PostgreSQL: no new
claims, nothing left fetched, running jobs finish within the grace period or go back to pending
without using an attempt, and a second signal exits at once, leaving the job to its lease."""

from __future__ import annotations

import re
import signal

import pytest
from worker_harness import archived, dead, live, wait_finished

from claimq import App, Job

pytestmark = pytest.mark.timeout(90)


def _started_ids(log: str) -> set[int]:
    return {int(m) for m in re.findall(r"handler-start (\d+) ", log)}


def _by_status(app: App) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for job in live(app):
        out.setdefault(str(job.status), set()).add(job.id)
    return out


def _assert_untouched(job: Job) -> None:
    """Back to pending as if never claimed: no owner, no attempt used, no error recorded."""
    assert job.status == "pending"
    assert job.attempts == 0
    assert job.worker_id is None and job.claim_token is None and job.lease_until is None
    assert job.errors == ()


def test_sigterm_finishes_running_jobs_and_leaves_the_rest_pending(
    app: App, spawn_worker
) -> None:
    tasks = ["t.sleep_sync", "t.sleep_async"] * 3
    ids = [app.enqueue(task, {"seconds": 1.5}) for task in tasks]
    worker = spawn_worker(app.url, concurrency=2, lease=3.0, poll_interval=0.1, grace=10.0)
    worker_id = worker.wait_started()
    worker.wait_log(r"handler-start \d+ ", count=2)
    running = _started_ids(worker.log())
    assert len(running) == 2

    worker.signal(signal.SIGTERM)
    worker.wait_log(r"stopping \(grace")
    # At once: nothing is held fetched, the two handlers still run, the rest waits in pending.
    statuses = _by_status(app)
    assert "fetched" not in statuses
    assert statuses.get("pending") == set(ids) - running
    assert worker.alive()

    assert worker.wait(timeout=15) == 0
    # The running jobs finished within the grace period; no other job was started after the
    # signal, though slots came free.
    assert _started_ids(worker.log()) == running
    done = {j.id: j for j in archived(app)}
    assert set(done) == running
    for job_id in running:
        assert done[job_id].worker_id == worker_id
        assert done[job_id].attempts == 1
        assert done[job_id].result == {"slept": 1.5}
    rest = live(app)
    assert {j.id for j in rest} == set(ids) - running
    for job in rest:
        _assert_untouched(job)
    # Nothing lost, nothing doubled.
    assert dead(app) == []
    assert len(done) + len(rest) == len(ids)
    counters = worker.counters()
    assert counters["started"] == 2
    assert counters["completed"] == 2
    assert counters.get("released", 0) == 0


def test_grace_shorter_than_the_handler_hands_running_jobs_back(app: App, spawn_worker) -> None:
    ids = [app.enqueue("t.sleep_sync", {"seconds": 60}),
           app.enqueue("t.sleep_async", {"seconds": 60})]
    worker = spawn_worker(app.url, concurrency=2, lease=3.0, poll_interval=0.1, grace=0.5)
    worker.wait_started()
    for job_id in ids:
        worker.wait_handler(job_id)
        assert app.get_job(job_id).attempts == 1

    worker.signal(signal.SIGTERM)
    # The process ends soon after the grace period, though a sync handler is still sleeping
    # in its thread.
    assert worker.wait(timeout=10) == 0
    assert "grace period over" in worker.log()
    worker.wait_handler(ids[1], "handler-cancelled", timeout=1)

    for job_id in ids:
        _assert_untouched(app.get_job(job_id))
    assert archived(app) == [] and dead(app) == []
    counters = worker.counters()
    assert counters["started"] == 2
    assert counters["released"] == 2
    assert counters.get("completed", 0) == 0


def test_second_signal_exits_at_once_and_the_lease_recovers_the_job(
    app: App, spawn_worker
) -> None:
    job_id = app.enqueue("t.sleep_on_first", {"seconds": 60}, max_attempts=3)
    first = spawn_worker(app.url, concurrency=1, lease=1.0, poll_interval=0.1, grace=30.0)
    first_id = first.wait_started()
    first.wait_handler(job_id)

    first.signal(signal.SIGTERM)
    first.wait_log(r"stopping \(grace")
    assert first.alive()  # the graceful stop is waiting on the running job
    first.signal(signal.SIGINT)
    assert first.wait(timeout=5) == 130
    assert "stopping at once" in first.log()

    # Nothing was handed back: the job still belongs to the dead process...
    job = app.get_job(job_id)
    assert (job.status, job.worker_id, job.attempts) == ("processing", first_id, 1)

    # ...until its lease runs out and another worker's reaper recovers it.
    second = spawn_worker(app.url, concurrency=1, lease=1.0, poll_interval=0.1, grace=5.0)
    second_id = second.wait_started()
    wait_finished(app, [job_id], timeout=20)
    assert second.stop() == 0

    job = app.get_job(job_id)
    assert job.status == "succeeded"
    assert job.worker_id == second_id
    assert job.attempts == 2  # the interrupted run counted as an attempt
    assert job.result == {"attempt": 2}
    assert [(e["attempt"], e["error"], e["worker"]) for e in job.errors] == [
        (1, "LeaseExpired", first_id)
    ]
    assert second.counters().get("reaped", 0) == 1

