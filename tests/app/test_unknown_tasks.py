"""Two Apps on one database (issue 24, defect 10): a worker never runs, fails or dead-letters a
job of a task it does not register. It hands the job back to pending, its attempt not counted,
due again a little later, with one warning per task name; the worker of the App that registers
the task runs it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest

from claimq import App
from claimq.backends.base import ClaimRequest, WorkerRecord
from claimq.clock import FakeClock
from claimq.testing import drain
from claimq.worker import Worker

AFTER_THE_DELAY = 60  # seconds: past the short delay a handed-back job waits (2 s)


@pytest.fixture
def other(db_url: str, clock: FakeClock) -> Iterator[App]:
    """A second App on the same database, with tasks of its own."""
    instance = App(db_url, clock=clock)
    yield instance
    instance.close()


def test_a_foreign_job_is_handed_back_uncounted_and_run_by_its_own_app(
    app: App, other: App, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    mine, theirs = [], []

    @app.task(name="mine.work")
    def work(n: int) -> None:
        mine.append(n)

    @other.task(name="other.work")
    def other_work(n: int) -> None:
        theirs.append(n)

    foreign = [other_work.enqueue(n=n) for n in range(3)]
    own = work.enqueue(n=7)
    with caplog.at_level(logging.WARNING, logger="claimq.worker"):
        drained = drain(app, concurrency=4)
    assert (drained.succeeded, drained.retried, drained.dead) == (1, 0, 0)
    assert mine == [7] and app.get_job(own).status == "succeeded"
    for job_id in foreign:
        job = app.get_job(job_id)
        assert (job.status, job.attempts, job.errors, job.worker_id) == ("pending", 0, (), None)
        assert job.run_at > clock.now(), "handed back with a short delay, for the others"
    warned = [r for r in caplog.records if "other.work" in r.getMessage()]
    assert len(warned) == 1, [r.getMessage() for r in warned]
    assert "handed back" in warned[0].getMessage() and warned[0].levelno == logging.WARNING

    # Once due again, the App that registers the task runs every one of them, first attempt.
    clock.advance(AFTER_THE_DELAY)
    drained = drain(other, concurrency=4)
    assert (drained.succeeded, drained.retried, drained.dead) == (3, 0, 0)
    assert sorted(theirs) == [0, 1, 2]
    for job_id in foreign:
        job = other.get_job(job_id)
        assert (job.status, job.attempts) == ("succeeded", 1)
    assert mine == [7]


def test_a_foreign_job_keeps_its_attempts_however_often_it_is_met(
    app: App, other: App, clock: FakeClock
) -> None:
    @other.task(name="other.once")
    def once() -> None:
        pass

    job_id = other.enqueue("other.once", max_attempts=1)
    for _ in range(3):  # three workers of the wrong App meet it in turn
        drain(app)
        clock.advance(AFTER_THE_DELAY)
    job = app.get_job(job_id)
    assert (job.status, job.attempts, job.errors) == ("pending", 0, ())
    assert drain(other).succeeded == 1
    assert other.get_job(job_id).status == "succeeded"


def test_the_worker_registry_keeps_the_task_names_each_worker_runs(app: App) -> None:
    """What `claimq enqueue` without --app checks a name against (issue 24)."""
    app.backend.register_worker(WorkerRecord("w:1:a", "w", 1, None, 4, "9.9",
                                             tasks=("a.one", "a.two")))
    app.backend.register_worker(WorkerRecord("w:2:b", "w", 2, ("q",), 4, "9.9"))
    assert {w.id: w.tasks for w in app.workers()} == {"w:1:a": ("a.one", "a.two"), "w:2:b": None}
    # registering again (a restart that kept its id) writes the new names
    app.backend.register_worker(WorkerRecord("w:1:a", "w", 1, None, 4, "9.9", tasks=("a.three",)))
    assert {w.id: w.tasks for w in app.workers()}["w:1:a"] == ("a.three",)


def test_a_claim_passes_over_the_tasks_it_is_told_to_skip(app: App) -> None:
    foreign = app.enqueue("other.work", {}, priority=5)  # first in claim order
    mine = app.enqueue("mine.work", {})
    request = ClaimRequest("w", None, 5, 30.0, True, ("other.work", "other.more"))
    assert [j.id for j in app.backend.settle([], [], request).claimed] == [mine]
    job = app.get_job(foreign)
    assert (job.status, job.attempts) == ("pending", 0)
    request = ClaimRequest("w", None, 5, 30.0, True)  # no filter: taken as before
    assert [j.id for j in app.backend.settle([], [], request).claimed] == [foreign]


def test_a_worker_passes_over_a_task_it_met_and_handed_back(
    app: App, other: App, clock: FakeClock
) -> None:
    """After the first hand-back the worker's claims skip the name: the foreign job, due again,
    is not claimed (and handed back) over and over while this worker runs."""

    @app.task(name="mine.work")
    def work(n: int) -> None:
        pass

    @other.task(name="other.work")
    def other_work() -> None:
        pass

    foreign = other_work.enqueue()

    async def scenario() -> dict[str, int]:
        worker = Worker(app, concurrency=4, poll_interval=0.01, worker_id="mine")
        running = asyncio.create_task(worker.arun(install_signals=False))
        try:
            await _finished(app, work.enqueue(n=1), running)
            clock.advance(AFTER_THE_DELAY)  # the foreign job is due again, ahead of the next
            await _finished(app, work.enqueue(n=2), running)
        finally:
            worker.stop()
        return await running

    counters = asyncio.run(scenario())
    assert counters["handed_back"] == 1, counters
    job = app.get_job(foreign)
    assert (job.status, job.attempts, job.errors) == ("pending", 0, ())
    assert drain(other).succeeded == 1


async def _finished(app: App, job_id: int, running: asyncio.Task[dict[str, int]]) -> None:
    """Waits (polling the database, as drain() does) until the job succeeded."""
    while (await asyncio.to_thread(app.get_job, job_id)).status != "succeeded":
        assert not running.done(), "the worker stopped"
        await asyncio.sleep(0.01)
