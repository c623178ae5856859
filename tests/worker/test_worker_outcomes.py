"""What a real worker process makes of each kind of handler outcome, on SQLite and PostgreSQL
(and on PostgreSQL under least-privilege roles, see conftest.py): success (sync and async),
timeout, retry then success, permanent failure, a task the worker does not register, and a
cancel requested from another process while the job runs."""

from __future__ import annotations

import re

import pytest
from worker_harness import archived, dead, live, wait_finished, wait_until

from claimq import App, RetryPolicy
from claimq.testing import drain

pytestmark = pytest.mark.timeout(90)

FAST_RETRY = RetryPolicy(base=0.1, factor=1.0, cap=0.1, jitter=0.0)
OPTIONS = {"concurrency": 4, "lease": 3.0, "poll_interval": 0.2, "grace": 5.0}


def test_sync_and_async_handlers_complete_into_the_archive(app: App, spawn_worker) -> None:
    ids = {app.enqueue("t.echo_sync", {"x": i}): ("sync", i) for i in range(3)}
    ids |= {app.enqueue("t.echo_async", {"x": i}): ("async", i) for i in range(3)}
    worker = spawn_worker(app.url, **OPTIONS)
    worker_id = worker.wait_started()
    wait_finished(app, ids)
    assert worker.stop() == 0

    done = {j.id: j for j in archived(app)}
    assert set(done) == set(ids)
    for job_id, (kind, x) in ids.items():
        job = done[job_id]
        assert job.result == {"x": x, "kind": kind}
        assert job.attempts == 1
        assert job.errors == ()
        assert job.worker_id == worker_id
        assert job.started_at is not None and job.finished_at is not None
    assert live(app) == [] and dead(app) == []
    counters = worker.counters()
    assert counters["started"] == 6
    assert counters["completed"] == 6


def test_task_and_job_timeouts_dead_letter_as_timeout(app: App, spawn_worker) -> None:
    # The task's own timeout (async handler), and a per-job timeout on a sync handler.
    by_task = app.enqueue("t.slow_with_timeout", {"seconds": 30}, max_attempts=1)
    # A sync handler cannot be interrupted: its attempt fails at the timeout, but the job stays
    # held (slot, lease, max_workers) until the thread returns, so no retry overlaps it.
    by_job = app.enqueue("t.sleep_sync", {"seconds": 1.5}, max_attempts=1, timeout=0.3)
    worker = spawn_worker(app.url, **OPTIONS)
    worker.wait_started()
    wait_finished(app, [by_task, by_job])
    assert f"handler-end {by_job} " in worker.log()  # it ran to its end before it was settled

    for job_id in (by_task, by_job):
        job = app.get_job(job_id)
        assert job.status == "dead"
        assert job.reason == "timeout"
        assert job.attempts == 1
        assert [e["error"] for e in job.errors] == ["JobTimeout"]
        assert job.errors[0]["attempt"] == 1
    assert worker.stop(timeout=15) == 0
    assert worker.counters()["dead"] == 2


def test_timeout_with_attempts_left_retries_then_dead_letters(app: App, spawn_worker) -> None:
    job_id = app.enqueue("t.slow_with_timeout", {"seconds": 30}, max_attempts=2,
                         retry=FAST_RETRY)
    worker = spawn_worker(app.url, **OPTIONS)
    worker.wait_started()
    wait_finished(app, [job_id])
    assert worker.stop() == 0

    job = app.get_job(job_id)
    assert (job.status, job.reason, job.attempts) == ("dead", "timeout", 2)
    assert [(e["attempt"], e["error"]) for e in job.errors] == [
        (1, "JobTimeout"), (2, "JobTimeout")
    ]


def test_failures_then_success(app: App, spawn_worker) -> None:
    flaky = app.enqueue("t.flaky", {"fail_times": 2}, max_attempts=5, retry=FAST_RETRY)
    explicit = app.enqueue("t.retry_once", {}, max_attempts=5)
    worker = spawn_worker(app.url, **OPTIONS)
    worker_id = worker.wait_started()
    wait_finished(app, [flaky, explicit])
    assert worker.stop() == 0

    job = app.get_job(flaky)
    assert job.status == "succeeded"
    assert job.attempts == 3
    assert job.result == {"attempt": 3}
    assert [(e["attempt"], e["error"]) for e in job.errors] == [
        (1, "RuntimeError"), (2, "RuntimeError")
    ]
    assert all(e["worker"] == worker_id for e in job.errors)
    assert "fails on purpose" in job.errors[0]["message"]

    job = app.get_job(explicit)
    assert job.status == "succeeded"
    assert job.attempts == 2
    assert job.result == {"attempt": 2}
    assert [(e["attempt"], e["error"]) for e in job.errors] == [(1, "Retry")]

    counters = worker.counters()
    assert counters["retried"] == 3
    assert counters["completed"] == 2
    assert counters["started"] == 5


def test_permanent_error_goes_straight_to_dead_letters(app: App, spawn_worker) -> None:
    job_id = app.enqueue("t.permanent", {}, max_attempts=5)
    worker = spawn_worker(app.url, **OPTIONS)
    worker.wait_started()
    wait_finished(app, [job_id])
    assert worker.stop() == 0

    job = app.get_job(job_id)
    assert (job.status, job.reason, job.attempts) == ("dead", "permanent_error", 1)
    assert [e["error"] for e in job.errors] == ["Permanent"]
    assert "can never work" in job.errors[0]["message"]
    assert worker.counters()["dead"] == 1


def test_a_job_of_a_task_the_worker_does_not_register_is_handed_back_uncounted(
    app: App, operator: App, worker_db_url: str, spawn_worker
) -> None:
    """Issue 24, defect 10: two Apps on one database. The worker (whose App lacks the task)
    hands the job back, its attempt not counted, with one warning; the App that registers it
    runs it, first attempt."""
    jobs = [app.enqueue("no.such.task", {"a": n}, max_attempts=1) for n in range(2)]
    known = app.enqueue("t.echo_sync", {"x": 7})
    worker = spawn_worker(app.url, **OPTIONS)
    worker.wait_started()
    # the registry says what it runs (what `claimq enqueue` without --app checks names against)
    wait_until(lambda: any(w.tasks for w in app.workers()), 15, "the worker's registry row")
    [row] = app.workers()
    assert row.tasks is not None and "t.echo_sync" in row.tasks and "no.such.task" not in row.tasks
    wait_finished(app, [known])
    worker.wait_log(r"task\.unknown: job \d+: no task 'no\.such\.task'")
    wait_until(lambda: all(app.get_job(j).status == "pending" for j in jobs), 15,
               "the foreign jobs to be handed back")
    assert worker.stop() == 0
    assert len(re.findall(r"task\.unknown", worker.log())) == 1, "one warning per task name"

    for job_id in jobs:
        job = app.get_job(job_id)
        assert (job.status, job.attempts, job.errors) == ("pending", 0, ())
    assert app.get_job(known).status == "succeeded"
    counters = worker.counters()
    assert counters["handed_back"] >= 2
    assert counters.get("retried", 0) == 0 and counters.get("dead", 0) == 0

    other = App(worker_db_url)  # the App that registers the task, in its own worker
    ran = []

    @other.task(name="no.such.task")
    def handler(a: int) -> None:
        ran.append(a)

    try:
        operator.run_now(jobs)  # due now rather than after the hand-back's short delay
        assert drain(other).succeeded == 2
        assert sorted(ran) == [0, 1]
        assert [other.get_job(j).attempts for j in jobs] == [1, 1]
    finally:
        other.close()


def test_cancel_of_a_running_job_from_another_process(app: App, operator: App,
                                                      spawn_worker) -> None:
    long_async = app.enqueue("t.sleep_async", {"seconds": 60}, max_attempts=3)
    polling_sync = app.enqueue("t.poll_cancel_sync", {"seconds": 60}, max_attempts=3)
    worker = spawn_worker(app.url, **{**OPTIONS, "lease": 1.5})
    worker.wait_started()
    for job_id in (long_async, polling_sync):
        worker.wait_handler(job_id)
        assert app.get_job(job_id).status == "processing"

    assert operator.cancel(long_async) == "cancel_requested"
    assert operator.cancel(polling_sync) == "cancel_requested"
    wait_finished(app, [long_async, polling_sync], timeout=15)

    for job_id in (long_async, polling_sync):
        job = app.get_job(job_id)
        assert (job.status, job.reason, job.attempts) == ("dead", "cancelled", 1)
        assert [e["error"] for e in job.errors] == ["JobCancelled"]
    # Each handler really stopped: the async one was cancelled, the sync one saw ctx.cancelled.
    worker.wait_handler(long_async, "handler-cancelled")
    worker.wait_handler(polling_sync, "handler-saw-cancel")
    assert worker.stop() == 0
    assert worker.counters().get("completed", 0) == 0
    assert live(app) == []
