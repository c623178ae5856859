"""The job record as the public API sees it, wherever it lives (live, archive, dead)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
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
    """Stands in for the payload of a job row whose stored JSON another client broke (SQLite
    keeps JSON as text); the text says which column held what. A worker dead-letters the job."""

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


# The same slots as Job, without its frozen __setattr__: an instance is filled with plain
# attribute stores, then becomes a Job by __class__ assignment (allowed between classes of the
# same layout). Three times faster than calling each slot's descriptor.
_JobTwin = type("_JobTwin", (), {"__slots__": Job.__slots__})


def assembler(name: str, params: str, values: dict[str, str]) -> Callable[..., Job]:
    """A function `name(params)` that builds a Job from one Python expression per field (over
    its parameters), with no defaults and no checks, and without the frozen dataclass
    __init__, which sets each of its 25 fields through object.__setattr__ (several times
    slower; the worker runs this once per claimed job)."""
    names = {f.name for f in fields(Job)}
    if names != set(values):
        raise ValueError(f"an expression for every Job field and no other: missing "
                         f"{sorted(names - set(values))}, unknown {sorted(set(values) - names)}")
    stores = "\n".join(f"    job.{f.name} = {values[f.name]}" for f in fields(Job))
    namespace: dict[str, Any] = {"new": object.__new__, "Job": Job, "Twin": _JobTwin}
    exec(  # noqa: S102 - our own fixed source, as dataclasses does
        f"def {name}({params}):\n    job = new(Twin)\n{stores}\n"
        f"    job.__class__ = Job\n    return job\n",
        namespace)
    return namespace[name]  # type: ignore[no-any-return]
