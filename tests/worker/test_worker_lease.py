"""A worker process that stalls past its lease loses the job and must drop its result.

The stall is real: SIGSTOP freezes the whole worker (heartbeats included) for longer than the
lease. Meanwhile the test process reaps the expired lease and claims the job itself; after
SIGCONT, the worker's handler finishes, its guarded write matches no row, and the job stays
with the test's claim, which the test then completes with its own token.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from urllib.parse import urlparse

import pytest
from worker_harness import WorkerProcess, archived, dead, finished_ids, wait_until

from claimq import App

pytestmark = pytest.mark.timeout(90)

LEASE = 1.0


def _freeze(worker: WorkerProcess, app: App) -> None:
    """SIGSTOP the worker, never while it holds SQLite's write lock (the test could not write
    until it resumed). PostgreSQL statements of the worker are single autocommit statements
    that complete on the server whether or not the client reads the answer."""
    for _ in range(50):
        os.kill(worker.pid, signal.SIGSTOP)
        if app.backend.kind != "sqlite":
            return
        probe = sqlite3.connect(urlparse(app.url).path[1:], timeout=0.2, isolation_level=None)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
            return
        except sqlite3.OperationalError:
            os.kill(worker.pid, signal.SIGCONT)
            time.sleep(0.03)
        finally:
            probe.close()
    raise AssertionError("could not stop the worker outside a write transaction")


@pytest.mark.parametrize("task", ["t.sleep_async", "t.sleep_sync"])
def test_a_stalled_worker_loses_its_lease_and_drops_its_result(
    app: App, spawn_worker, task: str
) -> None:
    job_id = app.enqueue(task, {"seconds": 1.0}, max_attempts=3)
    worker = spawn_worker(app.url, concurrency=1, lease=LEASE, poll_interval=0.1, grace=5.0)
    worker_id = worker.wait_started()
    worker.wait_handler(job_id)

    _freeze(worker, app)
    try:
        running = app.get_job(job_id)
        assert (running.status, running.worker_id) == ("processing", worker_id)
        # Frozen, the worker cannot heartbeat: wait out its lease on the database's clock.
        wait_until(lambda: app.get_job(job_id).lease_until < app.backend.now(), 5,
                   "the frozen worker's lease to expire")
        reaped = app.reap()
        assert reaped.requeued == [job_id] and reaped.dead == []
        [mine] = app.claim("test-claimer", limit=1, lease=60)
        assert mine.id == job_id
        assert app.start(mine) == 2
        time.sleep(LEASE)  # the handler's sleep (1 s) is over by now: it returns at once
    finally:
        os.kill(worker.pid, signal.SIGCONT)

    # The worker notices it lost the job and reports nothing for it.
    worker.wait_log(rf"job {job_id}.*(lease lost|lease was lost)", timeout=10)
    if task == "t.sleep_async":
        # Its handler had finished: the completion was written and matched no row.
        worker.wait_log(rf"job {job_id}: \w+ matched no row: lease lost, outcome dropped")
    job = app.get_job(job_id)
    assert job.status == "processing"
    assert job.worker_id == "test-claimer"
    assert job.claim_token == mine.claim_token
    assert job.attempts == 2
    assert archived(app) == [] and dead(app) == []

    # The new owner's token still works; the archive records the test as the finisher.
    app.complete(mine, {"by": "test"})
    assert worker.stop() == 0
    done = app.get_job(job_id)
    assert done.status == "succeeded"
    assert (done.worker_id, done.result, done.attempts) == ("test-claimer", {"by": "test"}, 2)
    assert [(e["attempt"], e["error"], e["worker"]) for e in done.errors] == [
        (1, "LeaseExpired", worker_id)
    ]
    counters = worker.counters()
    assert counters["started"] == 1
    assert counters["lease_lost"] >= 1
    assert counters.get("completed", 0) == 0


def test_heartbeats_keep_a_long_job_past_its_lease(app: App, spawn_worker) -> None:
    """The other side: a live worker's heartbeats extend the lease, so a job running several
    leases long is never reaped, even by a reaper that runs all the while."""
    ids = [app.enqueue("t.sleep_sync", {"seconds": 3.5}, max_attempts=1),
           app.enqueue("t.sleep_async", {"seconds": 3.5}, max_attempts=1)]
    worker = spawn_worker(app.url, concurrency=2, lease=LEASE, poll_interval=0.1, grace=5.0)
    worker_id = worker.wait_started()
    for job_id in ids:
        worker.wait_handler(job_id)
    reaped: list[int] = []

    def reap_until_finished() -> bool:
        result = app.reap()
        reaped.extend(result.requeued + result.dead)
        assert worker.alive()
        return set(ids) <= finished_ids(app)

    wait_until(reap_until_finished, 20, "the long jobs to finish", interval=0.1)
    assert reaped == []
    assert worker.stop() == 0

    for job_id in ids:
        job = app.get_job(job_id)
        assert (job.status, job.worker_id, job.attempts, job.errors) == (
            "succeeded", worker_id, 1, ()
        )
    counters = worker.counters()
    assert counters["heartbeats"] >= 3
    assert counters.get("lease_lost", 0) == 0
