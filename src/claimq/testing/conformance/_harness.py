"""What the suite's tests stand on: the factory a backend's conftest provides, and the subject
each test gets (a fresh migrated backend on a FakeClock, with a few short helpers)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from claimq._validate import NewJob, new_job
from claimq.backends.base import Backend, Completion, Failure, Owned, Table
from claimq.clock import Clock, FakeClock
from claimq.job import Job

START = datetime(2031, 3, 4, 5, 6, 7, tzinfo=UTC)  # the FakeClock's time when a test begins
RETENTION = 3600.0  # seconds an idempotency key outlives its job, in the tests' enqueues
ALL = 100_000


@dataclass(frozen=True)
class BackendFactory:
    """What a backend gives the suite, as the pytest fixture `conformance_backend_factory`
    (one per test, each on a fresh, empty database).

    - `open(clock)`: a migrated Backend on that database whose every time comes from `clock`.
      It may be called more than once in a test: each call is another client of the same
      database (another worker's process, as far as the tables can tell).
    - `store_json(backend, job_id, column, text)`: optional, for the corrupt-row tests. Writes
      `text` as the stored JSON of `column` (payload, result, errors or tags) of the row of
      `job_id`, in whichever table holds it, by plain SQL as another program would; returns
      False when the database cannot hold that text in that column (PostgreSQL's jsonb
      refuses broken JSON; its tags are text[]), and those cases are skipped.
    """

    open: Callable[[Clock], Backend]
    store_json: Callable[[Backend, int, str, str], bool] | None = None


class Subject:
    """One test's backend, its clock, and short forms of the calls the tests make."""

    def __init__(self, factory: BackendFactory) -> None:
        self.factory = factory
        self.clock = FakeClock(start=START)
        self.backend = factory.open(self.clock)
        self._others: list[Backend] = []
        self._queues = 0

    def close(self) -> None:
        for backend in (*self._others, self.backend):
            backend.close()

    def other_client(self) -> Backend:
        """Another Backend on the same database and the same clock."""
        backend = self.factory.open(self.clock)
        self._others.append(backend)
        return backend

    # -- time ----------------------------------------------------------------------------------

    def at(self, seconds: float) -> datetime:
        """The time `seconds` after the test's start."""
        return START + timedelta(seconds=seconds)

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    # -- writes --------------------------------------------------------------------------------

    def enqueue(self, task: str = "t", payload: dict[str, Any] | None = None,
                **options: Any) -> int:
        [job_id] = self.backend.enqueue([job_spec(task, payload, **options)], RETENTION)
        return job_id

    def enqueue_many(self, specs: Sequence[NewJob]) -> list[int]:
        return self.backend.enqueue(specs, RETENTION)

    def claim(self, worker: str = "w1", queues: Sequence[str] | None = None, limit: int = 1,
              lease: float | None = 30.0, start: bool = False) -> list[Job]:
        return self.backend.claim(worker, queues, limit, lease, start)

    def claim_one(self, worker: str = "w1", queue: str | None = None,
                  lease: float | None = 30.0, start: bool = False) -> Job:
        jobs = self.claim(worker, None if queue is None else [queue], 1, lease, start)
        assert len(jobs) == 1, f"expected one claimable job, got {jobs}"
        return jobs[0]

    def running(self, task: str = "t", worker: str = "w1", lease: float | None = 30.0,
                **options: Any) -> Job:
        """A job enqueued on its own queue (unless given one), claimed and started."""
        self._queues += 1
        options.setdefault("queue", f"own-{self._queues}")
        job_id = self.enqueue(task, **options)
        job = self.claim_one(worker, options["queue"], lease, start=True)
        assert job.id == job_id
        return job

    def complete(self, job: Job, result_json: str | None = None) -> set[int]:
        return self.backend.complete([Completion(job.id, token(job), result_json)])

    # -- reads ---------------------------------------------------------------------------------

    def job(self, job_id: int) -> Job:
        found = self.backend.get_job(job_id)
        assert found is not None, f"job {job_id} not found"
        return found

    def jobs(self, table: Table, **filters: Any) -> list[Job]:
        return self.backend.list_jobs(table, limit=ALL, **filters)

    def counts(self) -> tuple[int, int, int]:
        """How many jobs are live, archived and dead."""
        return len(self.jobs("live")), len(self.jobs("archive")), len(self.jobs("dead"))

    def state(self) -> tuple[Any, ...]:
        """Everything a write could change: every job of every table, every queue."""
        return (
            tuple(self.jobs("live")),
            tuple(sorted(self.jobs("archive"), key=lambda j: j.id)),
            tuple(sorted(self.jobs("dead"), key=lambda j: j.id)),
            tuple(self.backend.list_queues()),
        )


def job_spec(task: str = "t", payload: dict[str, Any] | None = None, **options: Any) -> NewJob:
    """A validated job to enqueue (enqueue()'s options: queue, priority, delay, run_at, …)."""
    return new_job(task=task, payload=payload, **options)


def token(job: Job) -> str:
    assert job.claim_token is not None, f"job {job.id} has no claim token"
    return job.claim_token


def owned(*jobs: Job) -> list[Owned]:
    return [Owned(j.id, token(j)) for j in jobs]


def failure(job: Job, *, delay: float = 10.0, permanent: bool = False,
            reason: str = "retries_exhausted", message: str = "boom") -> Failure:
    error = {"attempt": job.attempts, "error": "RuntimeError", "message": message}
    return Failure(job.id, token(job), error, delay, reason, permanent)


STALE = "ffffffff-ffff-4fff-bfff-ffffffffffff"  # a well-formed token no claim ever made


def stale(job: Job) -> Job:
    """The same job with a token that is not its current one (a stale worker's view)."""
    from dataclasses import replace

    return replace(job, claim_token=STALE)


@pytest.fixture
def subject(conformance_backend_factory: BackendFactory) -> Iterator[Subject]:
    """A migrated backend on a fresh database and a FakeClock at START."""
    s = Subject(conformance_backend_factory)
    try:
        yield s
    finally:
        s.close()
