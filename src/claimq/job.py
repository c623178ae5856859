"""The job record as the public API sees it, wherever it lives (live, archive, dead)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    PENDING = "pending"
    FETCHED = "fetched"
    PROCESSING = "processing"
    SUCCEEDED = "succeeded"  # lives in the archive table
    DEAD = "dead"  # lives in the dead-letter table


class DeadReason(StrEnum):
    RETRIES_EXHAUSTED = "retries_exhausted"
    PERMANENT_ERROR = "permanent_error"
    CANCELLED = "cancelled"
    LEASE_EXPIRED = "lease_expired"
    TIMEOUT = "timeout"
    UNKNOWN_TASK = "unknown_task"
    TOO_OLD = "too_old"


class CorruptRow(str):
    """Stands in for the payload of a job row whose stored JSON cannot be read back exactly
    (another client broke the text, or stored a number beyond every float or an integer beyond
    64 bits); the text says which column held what. A worker dead-letters the job."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Job:
    id: int
    queue: str
    task: str
    payload: dict[str, Any]
    status: Status
    priority: int = 0
    attempts: int = 0
    max_attempts: int = 20
    tags: tuple[str, ...] = ()
    idempotency_key: str | None = None
    worker_id: str | None = None
    claim_token: str | None = None
    lease_until: datetime | None = None
    heartbeat_at: datetime | None = None
    run_at: datetime | None = None
    created_at: datetime | None = None
    started_at: datetime | None = None
    updated_at: datetime | None = None
    finished_at: datetime | None = None
    cancel_requested: bool = False
    timeout: float | None = None
    retry: dict[str, Any] | None = None
    errors: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    result: Any = None
    reason: str | None = None  # dead letters only

    @property
    def effective_key(self) -> str:
        """The stable key handlers pass downstream: the caller's key, or one derived from the id."""
        return self.idempotency_key or f"claimq-job-{self.id}"


class _Filling:
    """Job's slots without its frozen __setattr__: new_job fills one with plain attribute
    stores, then makes it a Job (allowed between classes of the same layout). The frozen
    dataclass __init__ sets each of the 25 fields through object.__setattr__, several times
    slower, and a worker builds one Job per claimed job (paired on the drain: see
    benchmarks/README.md)."""

    __slots__ = Job.__slots__


def new_job(  # noqa: PLR0913 - one parameter per field, in field order
    id: int, queue: str, task: str, payload: Any, status: Status, priority: int,  # noqa: A002
    attempts: int, max_attempts: int, tags: tuple[str, ...], idempotency_key: str | None,
    worker_id: str | None, claim_token: str | None, lease_until: datetime | None,
    heartbeat_at: datetime | None, run_at: datetime | None, created_at: datetime | None,
    started_at: datetime | None, updated_at: datetime | None, finished_at: datetime | None,
    cancel_requested: bool, timeout: float | None, retry: dict[str, Any] | None,
    errors: tuple[dict[str, Any], ...], result: Any, reason: str | None,
) -> Job:
    """A Job from values already of its fields' types (a backend's row mapper): no checks."""
    job: Any = object.__new__(_Filling)
    job.id = id
    job.queue = queue
    job.task = task
    job.payload = payload
    job.status = status
    job.priority = priority
    job.attempts = attempts
    job.max_attempts = max_attempts
    job.tags = tags
    job.idempotency_key = idempotency_key
    job.worker_id = worker_id
    job.claim_token = claim_token
    job.lease_until = lease_until
    job.heartbeat_at = heartbeat_at
    job.run_at = run_at
    job.created_at = created_at
    job.started_at = started_at
    job.updated_at = updated_at
    job.finished_at = finished_at
    job.cancel_requested = cancel_requested
    job.timeout = timeout
    job.retry = retry
    job.errors = errors
    job.result = result
    job.reason = reason
    job.__class__ = Job
    return job  # type: ignore[no-any-return]
