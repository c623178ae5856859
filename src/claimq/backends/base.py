"""The backend interface: everything above the backends speaks only this Protocol, never SQL."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, NamedTuple, Protocol

from claimq._validate import NewJob
from claimq.job import Job

Table = Literal["live", "archive", "dead"]
RoleKind = Literal["reader", "producer", "worker", "admin"]
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
    throttle: float = 0.0  # seconds the job's whole queue pauses, for every worker (Throttled)


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
    """What one batched heartbeat found. `busy`: jobs still held with this token whose row
    another transaction has locked (a handler's own transaction, an operator's query): their
    leases were not renewed this time, and they are not lost either; the next beat tries again."""

    alive: set[int] = field(default_factory=set)
    cancel_requested: set[int] = field(default_factory=set)
    lost: set[int] = field(default_factory=set)
    busy: set[int] = field(default_factory=set)


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
class RateLimit:
    """At most `count` claims per `period` seconds from a queue, for all workers together,
    with bursts of up to `burst` (default `count`) after a quiet spell: a GCRA bucket whose
    state is the queue's row, spent by the claim."""

    count: int
    period: float
    burst: int | None = None

    def __str__(self) -> str:
        period = f"{self.period:g}s" if self.period != 1 else "s"
        burst = "" if self.burst is None else f" (burst {self.burst})"
        return f"{self.count}/{period}{burst}"


@dataclass(frozen=True, slots=True)
class PriorityAging:
    """A waiting job's priority counts one more for every `step` seconds it has been due, at
    most `cap` more: a bound on how long a flood of higher-priority work can hold it back."""

    step: float
    cap: int

    def __str__(self) -> str:
        return f"+1/{self.step:g}s (max +{self.cap})"


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
    rate_limit: RateLimit | None = None
    aging: PriorityAging | None = None
    throttled_until: datetime | None = None  # a handler raised Throttled: no claims until then
    keyed: bool = False  # jobs with a concurrency key were queued here: its claims count per key


@dataclass(frozen=True, slots=True)
class JobFilter:
    """Which jobs find_jobs() returns: every field that is not None must match. `status` is a
    live job's status, or a dead letter's reason; `tag` one of the job's tags; `text` a
    lower-case substring of the payload's or the attempt history's JSON text."""

    queue: str | None = None
    task: str | None = None
    status: str | None = None
    tag: str | None = None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One recorded operator action: who (`actor`), what (`action`, on `target`), its
    `detail` (the filter, the ids asked for, the new value) and how many rows it changed."""

    id: int
    at: datetime | None
    actor: str
    action: str
    target: str
    detail: dict[str, Any]
    affected: int


CancelOutcome = Literal["cancelled", "cancel_requested", "finished", "not_found"]


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can do beyond the plain interface. Every method of `Backend` exists on
    every backend; a flag says whether the optional ones do the real thing (otherwise they do
    the plain thing or raise NotImplementedError, as each method says), so callers test a flag
    instead of probing for attributes."""

    listen_notify: bool = False  # listen() delivers new-job and cancel notices
    async_settle: bool = False  # open_async()/asettle() run on the event loop itself
    copy_streaming: bool = False  # enqueue_streaming() stores chunks while the rest is checked
    async_connections: bool = False  # aenqueue() writes inside a caller's async connection
    advisory_locks: bool = False  # the database has advisory locks (PostgreSQL)
    row_locks: bool = False  # rows lock one by one (heartbeat may report `busy`)
    roles: bool = False  # grant() gives database roles least-privilege rights (PostgreSQL)


class Notice(NamedTuple):
    """One notification from listen(): `kind` "job" (payload: the queue that got jobs) or
    "cancel" (payload: the id of a job whose cancel was requested, as text)."""

    kind: Literal["job", "cancel"]
    payload: str


class Listener(Protocol):
    """A dedicated connection listening for notices (a thread of its own waits on it)."""

    def notices(self, timeout: float) -> Iterator[Notice]:
        """The notices that arrive within `timeout` seconds (raises when the link breaks)."""
        ...

    def close(self) -> None: ...


class Backend(Protocol):
    """One SQL database holding claimq's tables. Every method is one short transaction.

    Errors: a backend raises claimq's own (claimq.errors), never its driver's, with the
    driver's exception as `__cause__`: DatabaseUnavailable (transient: connection refused or
    lost, busy or locked, deadlock, serialization failure, pool timeout), SchemaMissing
    (unmigrated: run `claimq migrate`), DatabaseMissing (the URL names a database or
    directory that does not exist), DatabaseError (anything else). Errors of the caller's own
    statements inside transaction() are the caller's and pass through unchanged."""

    url: str
    kind: str  # "sqlite" or "postgresql"
    schema: str  # PostgreSQL: the schema holding claimq's tables; "" where there is none
    capabilities: Capabilities

    def transaction(self) -> AbstractContextManager[Any]: ...
    def migrate(self) -> list[int]: ...
    def schema_version(self) -> int: ...
    def check_schema(self) -> None:
        """Raises SchemaMissing unless the schema is migrated to this claimq's version."""
        ...
    def close(self) -> None: ...
    def grant(self, role: str, kind: RoleKind) -> None:
        """Grants the database role `role` what one kind of client needs on claimq's tables
        and nothing more: "reader" (looks), "producer" (enqueues), "worker" (runs jobs),
        "admin" (also purges, resurrects, writes the audit table). Run by the schema's owner,
        again after each migrate. Without capabilities.roles: raises InvalidInput."""
        ...
    def run_sql(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """A statement of the caller's own, outside claimq's operations (tools such as the
        benchmark and the demo, which read claimq's tables or keep their own): autocommit, the
        driver's placeholders (`?` SQLite, `%s` PostgreSQL); its rows as tuples ([] when it
        returns none). Its errors are mapped like every other."""
        ...

    def enqueue(self, jobs: Sequence[NewJob], retention: float, conn: Any = None) -> list[int]: ...
    def enqueue_streaming(
        self, count: int, jobs: Iterator[NewJob], retention: float, conn: Any = None
    ) -> list[int]:
        """enqueue() of `count` jobs still being validated (the iterator raises InvalidInput
        on a bad one: nothing is queued). With capabilities.copy_streaming the backend stores
        chunks while later ones are checked; otherwise it checks them all, then enqueues."""
        ...
    def is_async_connection(self, conn: Any) -> bool:
        """Whether `conn` is an async connection of this backend's driver (for aenqueue)."""
        ...
    async def aenqueue(self, jobs: Sequence[NewJob], conn: Any) -> list[int]:
        """enqueue() inside the caller's async connection and transaction (un-keyed jobs).
        Without capabilities.async_connections: raises InvalidInput."""
        ...

    def claim(
        self,
        worker_id: str,
        queues: Sequence[str] | None,
        limit: int,
        lease: float | None,
        start: bool = False,
    ) -> list[Job]: ...
    def start(self, owned: Sequence[Owned], lease: float | None) -> list[Started]: ...
    def heartbeat(self, owned: Sequence[Owned], lease: float | None) -> HeartbeatResult:
        """Renews every lease in one statement; never waits on a row another transaction
        holds locked (such jobs come back in `busy`, neither renewed nor lost)."""
        ...
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

    # The worker's event-loop path. With capabilities.async_settle, asettle runs settle() on
    # this loop's own connections (open_async first, close_async at the end); without it,
    # open_async and close_async do nothing and asettle runs settle() in a thread.
    async def open_async(self) -> None: ...
    async def asettle(
        self,
        done: Sequence[Completion],
        failures: Sequence[Failure],
        claim: ClaimRequest | None = None,
    ) -> Settled: ...
    async def close_async(self) -> None: ...

    def listen(self) -> Listener:
        """A new connection listening for new jobs and cancel requests. Without
        capabilities.listen_notify: raises NotImplementedError (the worker polls)."""
        ...
    def wake_workers(self, queues: Sequence[str]) -> None:
        """Tells listening workers that `queues` got jobs (no-op without listen_notify)."""
        ...

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
    def find_jobs(
        self, table: Table, where: JobFilter, before: int | None, limit: int
    ) -> list[Job]:
        """Jobs of `table` matching `where`, newest id first, with ids below `before` (keyset
        paging: pass the last id of one page to get the next)."""
        ...
    def delete_finished(self, table: Literal["archive", "dead"], ids: Sequence[int]) -> list[int]:
        """Deletes exactly these jobs from archive or dead letters; the ids it deleted."""
        ...
    def run_now(self, ids: Sequence[int]) -> list[int]:
        """Pending jobs among `ids` that wait for a later run_at (a retry's backoff, a schedule)
        become due now; the ids it changed."""
        ...
    def record_audit(
        self, actor: str, action: str, target: str, detail_json: str, affected: int
    ) -> int:
        """Appends one operator action to the audit table; its id."""
        ...
    def list_audit(self, before: int | None, limit: int) -> list[AuditEntry]:
        """Audit entries, newest first, with ids below `before`."""
        ...
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
        rate_limit: RateLimit | None = UNSET,
        aging: PriorityAging | None = UNSET,
    ) -> QueueInfo:
        """Creates or changes a queue; UNSET leaves a setting as it is. `rate_limit`: a
        RateLimit, or None to lift it; a new one starts with a full bucket. `aging`: a
        PriorityAging (the claim orders the queue's jobs by their aged priority, then run_at and
        id), or None to lift it. A queue with a rate limit or aging, or `keyed` (given a job
        with a concurrency key: NewJob.flow), is claimed by flow control: at most the bucket's
        tokens per claim, and no job whose concurrency key already has concurrency_limit jobs
        fetched or processing in the queue. A backend must make both hold across every client
        (PostgreSQL: under the queue row's lock, as max_workers)."""
        ...
    def list_queues(self) -> list[QueueInfo]: ...
    def now(self) -> datetime: ...
