"""The job record as the public API sees it, wherever it lives (live, archive, dead)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    HELD = "held"  # lives in the held table: a workflow job waiting for its dependencies
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
    DEPENDENCY_FAILED = "dependency_failed"  # a workflow dependency ended in dead letters


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
    workflow_id: int | None = None  # the workflow it belongs to (not filled by the claim)

    @property
    def effective_key(self) -> str:
        """The stable key handlers pass downstream: the caller's key, or one derived from the id."""
        return self.idempotency_key or f"claimq-job-{self.id}"



def ends_job(permanent: bool, attempt: int, max_attempts: int) -> bool:
    """The dead-or-retry rule of a failed attempt: the job goes to dead letters when the failure
    is permanent or `attempt` was the last of its `max_attempts`; else it is retried. (PostgreSQL's
    fail.sql writes the same rule in SQL, set-based.)"""
    return permanent or attempt >= max_attempts


def expired_lease_reason(
    status: str, attempts: int, max_attempts: int, cancel_requested: bool
) -> DeadReason | None:
    """The reaper's rule for a job whose lease expired: to dead letters, for this reason, when a
    cancel was requested or the attempt it started was its last (a fetched job never started, so
    it has used none); None: back to pending. (PostgreSQL's reap.sql writes it in SQL.)"""
    if cancel_requested:
        return DeadReason.CANCELLED
    if status == Status.PROCESSING and ends_job(False, attempts, max_attempts):
        return DeadReason.LEASE_EXPIRED
    return None
