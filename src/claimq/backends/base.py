"""The backend interface: everything above the backends speaks only this Protocol, never SQL."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, NamedTuple, Protocol

from claimq._validate import NewJob
from claimq.job import Job

Table = Literal["live", "archive", "dead"]
UNSET: Any = object()  # "leave this setting as it is", distinct from None ("clear it")


class Owned(NamedTuple):
    """A job the caller believes it owns: the pair every guarded write matches on (a named
    tuple: the worker makes one per claimed job and keys its claims by it)."""

    id: int
    token: str


class Completion(NamedTuple):
    """A finished attempt's result, written if the job still has this token (one per job a
    busy worker finishes: a named tuple is cheaper to build than a frozen dataclass)."""

    id: int
    token: str
    result_json: str | None = None


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed attempt. It goes to dead letters (with `reason`) when `permanent` is true or the
    job has no attempts left; otherwise back to pending after `delay` seconds."""

    id: int
    token: str
    error: dict[str, Any]
    delay: float
    reason: str
    permanent: bool = False


@dataclass(frozen=True, slots=True)
class ClaimRequest:
    worker_id: str
    queues: Sequence[str] | None
    limit: int
    lease: float | None
    start: bool = False


@dataclass(frozen=True, slots=True)
class Settled:
    """What one settle() call did: completions written, failures written, jobs claimed."""

    completed: set[int]
    failed: FailResult
    claimed: list[Job]


@dataclass(frozen=True, slots=True)
class Started:
    id: int
    attempts: int


@dataclass(frozen=True, slots=True)
class HeartbeatResult:
    alive: set[int] = field(default_factory=set)
    cancel_requested: set[int] = field(default_factory=set)
    lost: set[int] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class FailResult:
    retried: set[int] = field(default_factory=set)
    dead: set[int] = field(default_factory=set)
    lost: set[int] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class ReapResult:
    requeued: list[int] = field(default_factory=list)
    dead: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class QueueInfo:
    name: str
    paused: bool
    active: bool
    max_workers: int | None
    lease_seconds: float
    timeout_seconds: float | None
    pending: int = 0
    scheduled: int = 0
    fetched: int = 0
    processing: int = 0
    expired: int = 0
    oldest_ready_age: float | None = None
    archived: int = 0
    dead: int = 0


CancelOutcome = Literal["cancelled", "cancel_requested", "finished", "not_found"]


class Backend(Protocol):
    """One SQL database holding claimq's tables. Every method is one short transaction."""

    url: str
    kind: str  # "sqlite" or "postgresql"

    def transaction(self) -> AbstractContextManager[Any]: ...
    def migrate(self) -> list[int]: ...
    def schema_version(self) -> int: ...
    def close(self) -> None: ...

    def enqueue(self, jobs: Sequence[NewJob], retention: float, conn: Any = None) -> list[int]: ...

    def claim(
        self,
        worker_id: str,
        queues: Sequence[str] | None,
        limit: int,
        lease: float | None,
        start: bool = False,
    ) -> list[Job]: ...
    def start(self, owned: Sequence[Owned], lease: float | None) -> list[Started]: ...
    def heartbeat(self, owned: Sequence[Owned], lease: float | None) -> HeartbeatResult: ...
    def complete(self, done: Sequence[Completion], conn: Any = None) -> set[int]: ...
    def fail(self, failures: Sequence[Failure]) -> FailResult: ...
    def release(self, owned: Sequence[Owned], delay: float = 0.0) -> set[int]: ...
    def tidy(self, min_dead: int) -> bool:
        """Clean up after busy claiming when the database needs it (PostgreSQL: VACUUM jobs)."""
        ...
    def orphaned(self, worker_id: str, held: Sequence[int]) -> list[Owned]:
        """Jobs `worker_id` holds in the database, leases running, that are not in `held`."""
        ...
    def settle(
        self,
        done: Sequence[Completion],
        failures: Sequence[Failure],
        claim: ClaimRequest | None = None,
    ) -> Settled: ...
    def reap(self, limit: int = 1000) -> ReapResult: ...

    def get_job(self, job_id: int) -> Job | None: ...
    def list_jobs(
        self,
        table: Table,
        *,
        queue: str | None = None,
        task: str | None = None,
        status: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Job]: ...
    def cancel(self, job_id: int) -> CancelOutcome: ...
    def resurrect(
        self, job_id: int, payload_json: str | None = None, priority: int | None = None
    ) -> bool: ...
    def purge(
        self,
        table: Literal["archive", "dead"],
        older_than: float | None = None,
        queue: str | None = None,
        task: str | None = None,
    ) -> int: ...
    def purge_idempotency_keys(self, retention: float) -> int: ...
    def set_priority(self, job_id: int, priority: int) -> bool: ...

    def configure_queue(
        self,
        name: str,
        *,
        paused: bool | None = None,
        active: bool | None = None,
        max_workers: int | None = UNSET,
        lease_seconds: float | None = None,
        timeout_seconds: float | None = UNSET,
    ) -> QueueInfo: ...
    def list_queues(self) -> list[QueueInfo]: ...
    def now(self) -> datetime: ...
