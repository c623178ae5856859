"""The backend interface: everything above the backends speaks only this Protocol, never SQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, NamedTuple, Protocol

from claimq._validate import NewJob
from claimq.job import Job

# The idempotency-key window a backend call assumes when its caller gives none (App's default
# idempotency_retention, 24 h).
KEY_RETENTION = 86400.0

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
    # Task names the claimer cannot run (met before and handed back): its plain queues' claims
    # pass over their jobs, for another worker. Empty: no filter (the usual case, free).
    skip_tasks: tuple[str, ...] = ()


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
    past_lease: int = 0  # fetched or processing, lease run out (the reaper's next work)
    oldest_due_age: float | None = None  # seconds the oldest due pending job has waited
    archived: int = 0
    dead: int = 0
    rate_limit: RateLimit | None = None
    aging: PriorityAging | None = None
    throttled_until: datetime | None = None  # a handler raised Throttled: no claims until then
    keyed: bool = False  # jobs with a concurrency key were queued here: its claims count per key
    key_rate_limit: RateLimit | None = None  # per rate key (a job's rate_key) apart


@dataclass(frozen=True, slots=True)
class BreakerInfo:
    """A task's circuit breaker in one queue (`app.breakers()`, `claimq stats`). `state`:
    "closed" (claims as usual; `failures` counted in the current window), "open" (no claims of
    the task until `open_until`, then one probe), "half_open" (the probe, job `probe_id`, is
    out: its success closes the breaker, its failure opens it again)."""

    queue: str
    task: str
    failure_limit: int  # this many failures within `window` seconds open it
    window: float
    cooldown: float  # seconds open before the probe
    state: str = "closed"
    failures: int = 0
    opened_at: datetime | None = None
    open_until: datetime | None = None
    probe_id: int | None = None


@dataclass(frozen=True, slots=True)
class ThrottledKey:
    """A rate key of a queue paused by a handler's Throttled (`app.throttled_keys()`)."""

    queue: str
    key: str
    until: datetime


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """One worker process in the registry (`app.workers()`). `alive` is false once the row
    went silent for longer than the dead threshold (the worker was killed or cut off); such a
    row is pruned later. `silent_for`: seconds since the worker last refreshed its row."""

    id: str
    host: str
    pid: int
    queues: tuple[str, ...] | None  # None: every queue
    concurrency: int
    version: str
    started_at: datetime
    last_seen_at: datetime
    in_flight: int
    alive: bool
    dead_at: datetime | None
    silent_for: float
    tasks: tuple[str, ...] | None = None  # the task names it runs (None: it did not say)


class WorkerRecord(NamedTuple):
    """What a worker writes about itself when it registers."""

    id: str
    host: str
    pid: int
    queues: tuple[str, ...] | None
    concurrency: int
    version: str
    in_flight: int = 0
    tasks: tuple[str, ...] | None = None  # the task names its App registers


class LiveRow(NamedTuple):
    queue: str
    task: str
    pending: int  # due now
    scheduled: int  # due later
    running: int  # fetched or processing
    past_lease: int  # running with their lease run out
    oldest_due_age: float | None  # seconds the oldest due job has waited
    held: int = 0  # workflow jobs waiting for their dependencies (the held table)


class DeadRow(NamedTuple):
    queue: str
    task: str
    reason: str
    jobs: int


class RecentRow(NamedTuple):
    """Jobs of one queue and task that finished within the stats window."""

    queue: str
    task: str
    completed: int  # to the archive
    failed: int  # to dead letters (cancelled ones not counted)
    finished: int  # both, cancelled included
    attempts: int  # summed over `finished`
    first_created: datetime | None = None  # the earliest created_at of those jobs


class LatencyRow(NamedTuple):
    """Percentiles (p50, p95, p99; seconds) of the jobs completed within the window, for one
    queue (kind "queue") or one task (kind "task"): `wait` from due to start, `run` from start
    to finish."""

    kind: Literal["queue", "task"]
    name: str
    jobs: int
    wait: tuple[float, float, float] | None
    run: tuple[float, float, float] | None


class HistoryRow(NamedTuple):
    """Jobs of one queue and task that finished within one bucket of a history: `bucket`
    counts buckets from the history's start (0: the oldest); `succeeded` archived, `dead`
    dead-lettered (cancels included)."""

    bucket: int
    queue: str
    task: str
    succeeded: int
    dead: int


class QueueSettings(NamedTuple):
    name: str
    paused: bool
    active: bool
    max_workers: int | None
    throttled_until: datetime | None = None  # flow control: paused by Throttled until then


class StatsRows(NamedTuple):
    """What backend.stats() reads, in a few indexed queries; App.stats() shapes it."""

    now: datetime
    queues: list[QueueSettings]
    live: list[LiveRow]
    dead: list[DeadRow]
    recent: list[RecentRow]
    latency: list[LatencyRow]
    # Something finished before the window: the window is measured in full. Else the rates
    # cover the time since the first of the jobs that finished within it was created.
    covered: bool = True


@dataclass(frozen=True, slots=True)
class JobFilter:
    """Which jobs find_jobs() returns: every field that is not None must match. `status` is a
    live job's status, or a dead letter's reason; `tag` one of the job's tags; `text` a
    lower-case substring of the payload's or the attempt history's JSON text; `state` (live jobs
    only) one of LIVE_STATES: running, held, due, limited, retrying or scheduled
    (_live_state.sql, _limited.sql)."""

    queue: str | None = None
    task: str | None = None
    status: str | None = None
    tag: str | None = None
    text: str | None = None
    state: str | None = None


# A live job's state (find_jobs' JobFilter.state, count_states): running (claimed), held (a
# workflow job waiting for its dependencies), due (pending, its run_at come), limited (due, but
# flow control holds it back now: LIMIT_REASONS, _limited.sql; not also counted as due),
# retrying (pending after an attempt, waiting for its run_at: a retry's backoff), scheduled
# (pending, never attempted, its run_at ahead).
LIVE_STATES = ("running", "due", "limited", "scheduled", "retrying", "held")

# Why a limited job waits, the first that holds in this order: its queue is inactive, paused,
# throttled (a handler's Throttled pauses it) or at max_workers; its concurrency key has its
# concurrency_limit jobs running; its rate key is paused by a Throttled. An empty rate limit
# bucket, a sequence's later jobs and an open circuit breaker do not make a job limited.
LIMIT_REASONS = ("inactive", "paused", "throttled", "max_workers", "concurrency", "rate_key")


@dataclass(frozen=True, slots=True)
class Limited:
    """What holds due jobs back now (`app.limited()`): `waiting` due jobs of `queue` are
    limited for `reason` (one of LIMIT_REASONS; each job counted once, under its first reason).
    `key`: the concurrency key or the rate key (None for a reason of the whole queue).
    `running`: jobs fetched or processing, of that key (concurrency, rate_key) or else of the
    queue. `limit`: the queue's max_workers (max_workers), or the key's concurrency_limit (the
    highest among its waiting jobs'), else None. `until`: when a throttle ends (throttled,
    rate_key), else None."""

    queue: str
    reason: str
    key: str | None
    waiting: int
    running: int
    limit: int | None = None
    until: datetime | None = None


class StateCount(NamedTuple):
    """How many live jobs of `queue` are in `state` (one of LIVE_STATES)."""

    queue: str
    state: str
    jobs: int


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


@dataclass(frozen=True, slots=True)
class Progress:
    """A job's last reported progress (ctx.progress): a fraction from 0 to 1, an optional
    note, the attempt that reported it and when."""

    fraction: float
    note: str | None
    attempt: int
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class ScheduleRow:
    """A row of the schedules table. `next_run_at` is the first tick not enqueued yet;
    `declared` the definition code declared (None: added at runtime)."""

    name: str
    task: str
    payload_json: str
    queue: str
    priority: int
    max_attempts: int
    timeout: float | None
    cron: str | None
    every: float | None
    tz: str
    missed: str
    paused: bool
    next_run_at: datetime
    last_run_at: datetime | None = None
    last_job_id: int | None = None
    declared: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class SchedulePlan(NamedTuple):
    """What a due schedule does now: the jobs of its due ticks (none: the ticks are skipped),
    the tick it fired last, and its next tick."""

    jobs: Sequence[NewJob]
    last_tick: datetime | None
    next_run_at: datetime


# fire_schedules' callback: a locked, due row and the transaction's time -> its plan (None:
# leave the row as it is, e.g. a definition that cannot be read; the caller says so).
Planner = Callable[[ScheduleRow, datetime], SchedulePlan | None]


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """How long finished jobs of `queue` ('*': every queue without a policy of its own) stay:
    at most `archive_age` seconds and `archive_rows` rows in the archive, likewise for dead
    letters. None: no limit of that kind."""

    queue: str
    archive_age: float | None = None
    archive_rows: int | None = None
    dead_age: float | None = None
    dead_rows: int | None = None


class PruneBatch(NamedTuple):
    """At most `limit` rows of `table`: those of `queue` (None: of every queue but
    `skip_queues`) finished more than `older_than` seconds ago, or older than its `keep_rows`
    newest rows."""

    table: Literal["archive", "dead"]
    queue: str | None
    skip_queues: Sequence[str]
    older_than: float | None
    keep_rows: int | None
    limit: int


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
    partitions: bool = False  # partition_archive() makes the archive time-partitioned
    workflows: bool = False  # add_workflow() and the other workflow methods (docs/workflows.md)
    flow_control: bool = False  # uniqueness scopes, debounce, concurrency keys, rate limits,
    # priority aging and Throttled's queue pause (otherwise enqueue/configure_queue refuse them)


EdgePolicy = Literal["cancel", "run", "wait"]


@dataclass(frozen=True, slots=True)
class NewWorkflow:
    """A validated workflow, ready for a backend to write (docs/workflows.md). `after[i]`:
    job i's dependencies, as (index in `jobs`, edge policy or None for the workflow's);
    `run_if[i]`: None, or "failed" (job i runs only if one of its dependencies ended dead)."""

    name: str
    key: str | None
    on_failure: str
    jobs: Sequence[NewJob]
    after: Sequence[Sequence[tuple[int, str | None]]]
    run_if: Sequence[str | None]


@dataclass(frozen=True, slots=True)
class WorkflowAdded:
    id: int
    job_ids: list[int]  # in the order of NewWorkflow.jobs (an existing one's: by id)
    created: bool  # False: the key named an existing workflow, and nothing was written


@dataclass(frozen=True, slots=True)
class WorkflowInfo:
    id: int
    name: str
    key: str | None
    on_failure: str
    created_at: datetime
    counts: dict[str, int]  # job status -> how many (non-zero only)
    finished_at: datetime | None  # the last job's end once none is live, else None


class Edge(NamedTuple):
    parent: int
    child: int
    on_failure: str
    resolved: bool


class Dependency(NamedTuple):
    """One of a job's dependencies as the job sees it (ctx.dependencies())."""

    id: int
    task: str
    status: str  # a claimq.job.Status value
    result: Any  # the archived result, else None
    reason: str | None  # the dead letter's reason, else None


class Notice(NamedTuple):
    """One notification from listen(): `kind` "job" (payload: the queue that got jobs) or
    "cancel" (payload: the id of a job whose cancel was requested, as text); from
    listen_results(): "finished" (payload: ids of jobs just archived or dead, comma-separated)."""

    kind: Literal["job", "cancel", "finished"]
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
    kind: str  # "sqlite", "postgresql" or "mysql" (MariaDB >= 10.6)
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
    def run_sql(
        self, sql: str, params: Sequence[Any] = (), conn: Any = None
    ) -> list[tuple[Any, ...]]:
        """A statement of the caller's own, outside claimq's operations (tools such as the
        benchmark and the demo, which read claimq's tables or keep their own): autocommit, or
        in the transaction of `conn` (a connection from transaction()); the driver's
        placeholders (`placeholder`); its rows as tuples ([] when it returns none). Its errors
        are mapped like every other."""
        ...

    # For the caller's own SQL in run_sql (tools: the benchmark, the demo), so that no code
    # above the backends spells a dialect.
    placeholder: str  # the driver's parameter mark: "?" (SQLite) or "%s"

    def table(self, name: str) -> str:
        """The SQL name of claimq's table `name` ("jobs", "archive", "dead", "queues", ...)."""
        ...
    def own_table(self, name: str) -> str:
        """The SQL name of a table of the caller's own named `name`, beside claimq's: in its
        schema (PostgreSQL), its database (MySQL), its file (SQLite)."""
        ...
    def seconds_between(self, later: str, earlier: str) -> str:
        """SQL for `later - earlier` in seconds (float), two of claimq's time columns."""
        ...
    def analyze(self) -> None:
        """Brings the planner's statistics of claimq's tables up to date (as autovacuum or
        the engine would, a little later)."""
        ...
    def check_location(self, *, missing_ok: bool) -> None:
        """Without connecting or creating anything: raises DatabaseMissing where the URL names
        a place on this machine that is not there (SQLite: the file's directory; the file
        itself unless `missing_ok`, as for migrate, which creates it). A server's database
        is checked by connecting (check_schema)."""
        ...
    def drop_all(self) -> None:
        """Removes the place the URL names, everything in it, and closes the backend: the
        schema (PostgreSQL), the database (MySQL), the file (SQLite). Only for a tool's
        throwaway database (claimq.backends.fresh_url)."""
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
    async def aenqueue(self, jobs: Sequence[NewJob], retention: float, conn: Any) -> list[int]:
        """enqueue() inside the caller's async connection and transaction.
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
    def confirm_owned(self, owned: Owned, lease: float | None) -> HeartbeatResult:
        """ctx.ensure_owned(): renews one job's lease, answering from its token and status,
        never `busy`. A row another transaction holds locked (this worker's own heartbeat, the
        reaper) is waited on, briefly; still locked after that, the job is read without the
        lock: alive (not renewed) while its token and status say the caller owns it."""
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

    # Results (app.result): with listen_notify, a waiter registers the jobs it waits for and
    # listens; the archive or dead-letter insert of such a job notifies it.
    def listen_results(self) -> Listener:
        """A new connection listening for "finished" notices of watched jobs. Without
        capabilities.listen_notify: raises NotImplementedError (waiters poll)."""
        ...
    def watch_results(self, job_ids: Sequence[int], waiter: str) -> None:
        """Registers `waiter` (a uuid) as waiting for these jobs (no-op without listen_notify)."""
        ...
    def unwatch_results(self, job_ids: Sequence[int], waiter: str) -> None: ...

    def get_job(self, job_id: int, conn: Any = None) -> Job | None:
        """The job wherever it lives; with `conn` (the caller's connection), read through it,
        inside its open transaction."""
        ...
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
    def count_states(self) -> list[StateCount]:
        """Live jobs by queue and state (LIVE_STATES: a limited job is not also due); a state
        with no job has no row."""
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
    def database_user(self) -> str | None:
        """The user this backend's connections act as in the database (None where the database
        has no users: SQLite), for the audit table's `actor`."""
        ...
    def cancel(self, job_id: int) -> CancelOutcome: ...
    def resurrect(
        self, job_id: int, payload_json: str | None = None, priority: int | None = None,
        retention: float = KEY_RETENTION,
    ) -> bool:
        """Dead letter `job_id` back to pending (False: no such dead letter, nothing written).
        A keyed job takes its idempotency key back (the key's row points at it, finished_at
        cleared) when the key is free or still its own; when another job holds the key
        (_key_held.sql: live in any status, or finished less than `retention` seconds ago) it
        raises KeyHeld and writes nothing. The check and the move are one transaction under
        the key's lock."""
        ...
    def purge(
        self,
        table: Literal["archive", "dead"],
        older_than: float | None = None,
        queue: str | None = None,
        task: str | None = None,
    ) -> int: ...
    def purge_idempotency_keys(self, retention: float) -> int: ...
    def set_priority(self, job_id: int, priority: int) -> bool: ...
    def set_progress(self, owned: Owned, fraction: float, note: str | None) -> bool:
        """Records a running job's progress, if `owned` still holds it in processing (False:
        it does not, and nothing is written). purge() drops the progress of purged jobs."""
        ...
    def get_progress(self, job_id: int) -> Progress | None:
        """The job's last recorded progress (kept after it finished, until it is purged)."""
        ...

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
        key_rate_limit: RateLimit | None = UNSET,
    ) -> QueueInfo:
        """Creates or changes a queue; UNSET leaves a setting as it is. `rate_limit`: a
        RateLimit, or None to lift it; a new one starts with a full bucket. `aging`: a
        PriorityAging (the claim orders the queue's jobs by their aged priority, then run_at and
        id), or None to lift it. `key_rate_limit`: a RateLimit for each rate key of the
        queue's jobs apart (NewJob.flow.rate_key), or None to lift it. A queue with a rate
        limit or aging, or `keyed` (given a job with a concurrency, sequence or rate key:
        NewJob.flow), is claimed by flow control: at most the bucket's
        tokens per claim, and no job whose concurrency key already has concurrency_limit jobs
        fetched or processing in the queue. A backend must make both hold across every client
        (PostgreSQL: under the queue row's lock, as max_workers)."""
        ...
    def list_queues(self) -> list[QueueInfo]: ...
    def configure_breaker(
        self, queue: str, task: str, failure_limit: int | None, window: float, cooldown: float
    ) -> BreakerInfo | None:
        """Sets the task's circuit breaker in the queue (its state, if it had one, stays), or
        with failure_limit None removes it. A queue with a breaker is flow-controlled: a
        failure of the task counts towards opening it, and while open the claim takes none of
        the task's jobs from the queue (cooled down: one, the probe). Without
        capabilities.flow_control: raises InvalidInput."""
        ...
    def list_breakers(self) -> list[BreakerInfo]: ...
    def list_throttled_keys(self) -> list[ThrottledKey]:
        """The rate keys paused now by a Throttled (at most 1000, by queue and key)."""
        ...
    def list_limited(self) -> list[Limited]:
        """What holds due jobs back now, per queue, reason and key (at most 1000, the most
        waiting first): the jobs find_jobs(state="limited") finds, grouped."""
        ...
    def limit_reasons(self, ids: Sequence[int]) -> dict[int, tuple[str, str | None]]:
        """Of these jobs, each limited one's reason (LIMIT_REASONS) and key (its concurrency
        or rate key when that is the reason, else None); a job that is not limited is left
        out."""
        ...
    def now(self) -> datetime: ...

    # -- operating: the worker registry, stats, trace contexts ----------------------------------

    def register_worker(self, worker: WorkerRecord) -> None:
        """Writes the worker's row (started and last seen: now); an existing row of that id is
        refreshed and counts as alive again."""
        ...
    def worker_seen(self, worker_id: str, in_flight: int) -> bool:
        """Refreshes the worker's row (last seen: now; alive again if marked dead); False when
        it has no row (pruned while the worker was away: it registers again)."""
        ...
    def unregister_worker(self, worker_id: str) -> bool:
        """Deletes the worker's row (a clean stop); whether there was one."""
        ...
    def list_workers(self) -> list[WorkerInfo]: ...
    def prune_workers(self, dead_after: float, forget_after: float) -> tuple[int, int]:
        """Marks dead the rows silent for more than `dead_after` seconds and deletes those
        silent for more than `forget_after`; returns (marked, deleted)."""
        ...
    def trace_contexts(self, ids: Sequence[int]) -> dict[int, str]:
        """The enqueuers' trace contexts (W3C traceparent) of these live jobs, where stored."""
        ...
    def stats(self, window: float) -> StatsRows:
        """Live counts, dead letters by reason, and what finished in the last `window` seconds
        (counts, attempts, latency percentiles), grouped by queue and task."""
        ...
    def finished_history(self, buckets: int, bucket: float) -> tuple[datetime, list[HistoryRow]]:
        """The database's time `now`, and the jobs that finished (archived, dead-lettered) in
        the `buckets` buckets of `bucket` seconds before it, per bucket, queue and task
        (bucket 0 starts at now - buckets * bucket; a job finished at `now` itself has bucket
        `buckets`; only buckets with jobs): a range of the finished_at indexes of the archive
        and dead letters."""
        ...

    # -- schedules -----------------------------------------------------------------------------
    def list_schedules(self, name: str | None = None) -> list[ScheduleRow]: ...
    def insert_schedule(self, row: ScheduleRow) -> bool:
        """Adds the schedule; False (and nothing written) when its name is taken."""
        ...
    def update_schedule(self, row: ScheduleRow, read: ScheduleRow) -> bool:
        """Writes every field of the schedule named `row.name` if its stored next_run_at and
        paused are still those of `read` (the row the edit was made from); False, and nothing
        written, when a scheduler fired it or another edit changed it since, or there is none."""
        ...
    def delete_schedule(self, name: str) -> bool: ...
    def fire_schedules(self, plan: Planner, limit: int, retention: float) -> dict[str, list[int]]:
        """One transaction: up to `limit` due, unpaused schedules locked (rows another
        transaction holds are skipped), `plan` asked for each, its jobs enqueued and its
        next_run_at moved on. Returns the ids enqueued per schedule name."""
        ...
    def next_schedule_in(self) -> float | None:
        """Seconds from the database's time (the clock's, on a test's FakeClock) until the
        earliest next_run_at of the unpaused schedules, taken in SQL so that a worker's own
        clock does not matter; 0 or less when one is due; None when there is none. One indexed
        read: the scheduler's wait until the next tick."""
        ...

    # -- retention -----------------------------------------------------------------------------
    def list_retention(self) -> list[RetentionPolicy]: ...
    def set_retention(self, policy: RetentionPolicy) -> None: ...
    def delete_retention(self, queue: str) -> bool: ...
    def take_lease(self, name: str, holder: str, seconds: float) -> bool:
        """Takes (or renews) the named lease for `holder` unless another holder's is running."""
        ...
    def drop_lease(self, name: str, holder: str) -> None: ...
    def prune(self, batch: PruneBatch) -> int:
        """Deletes one bounded batch (one short transaction); returns how many rows."""
        ...
    def partition_archive(self) -> bool:
        """Makes the archive partitioned by day of finished_at (False: it is already).
        Without capabilities.partitions: raises InvalidInput."""
        ...
    def maintain_partitions(
        self, ahead_days: int, drop_before: datetime | None
    ) -> tuple[list[str], list[str]]:
        """A partitioned archive: creates the partitions of today and `ahead_days` days after,
        drops (whole) those that end at or before `drop_before`. Returns (created, dropped);
        ([], []) for an archive that is not partitioned, or without capabilities.partitions."""
        ...
    def prune_idempotency_keys(self, retention: float, batch: int) -> int:
        """purge_idempotency_keys in batches of at most `batch` rows; also drops result waits
        of jobs long finished. Returns how many keys it deleted."""
        ...
    def prune_progress(self, batch: int) -> int:
        """Deletes at most `batch` progress rows of jobs gone from every table."""
        ...
    def prune_rate_keys(self, batch: int) -> int:
        """Deletes at most `batch` per-key rate rows whose bucket is full again and whose
        throttle has passed (a row that means what no row means)."""
        ...
    def prune_audit(self, age: float, batch: int) -> int:
        """Deletes at most `batch` audit entries older than `age` seconds, oldest first."""
        ...

    # Workflows (docs/workflows.md; Capabilities.workflows)
    def add_workflow(self, wf: NewWorkflow, retention: float, conn: Any = None) -> WorkflowAdded:
        """One transaction (or the caller's `conn`): the workflow's row (or, for a key that
        names one already, nothing written and that one returned), its jobs through enqueue's
        own path, its edges, and every job with a dependency moved to `held` with `waiting`
        set to its number of dependencies."""
        ...
    def spawn(self, owned: Owned, jobs: Sequence[NewJob], after: Sequence[Sequence[int]],
              retention: float) -> list[int] | None:
        """A running job adds `jobs` to its workflow (a job in none gets a one-job workflow
        first). Only while `owned` holds it in processing (None: nothing written). Every job
        that waits for the spawner also waits for each new job (its edge's policy)."""
        ...
    def get_workflow(self, workflow_id: int) -> WorkflowInfo | None: ...
    def list_workflows(self, limit: int, before: int | None = None) -> list[WorkflowInfo]:
        """Newest first: ids below `before`."""
        ...
    def workflow_graph(self, workflow_id: int) -> tuple[list[Job], list[Edge]]:
        """Every job of the workflow wherever it is, by id, and its edges."""
        ...
    def dependencies(self, job_id: int) -> list[Dependency]:
        """The job's dependencies in the order they were given."""
        ...
    def cancel_workflow(self, workflow_id: int) -> int:
        """Held, pending and fetched jobs to dead letters ('cancelled'), processing ones
        flagged; how many jobs it touched."""
        ...
    def retry_workflow(self, workflow_id: int) -> list[int]:
        """Resurrects every dead job of the workflow that failed itself (not
        'dependency_failed'); its cancelled dependents come back held with it."""
        ...

def queue_settings(
    name: str,
    paused: bool | None,
    active: bool | None,
    max_workers: int | None,
    lease_seconds: float | None,
    timeout_seconds: float | None,
    now: Any,
) -> dict[str, Any]:
    """configure_queue()'s arguments as every backend's update_queue.sql takes them: None
    leaves paused, active and the lease as they are; UNSET leaves max_workers and the timeout
    (whose None means "clear it")."""
    return {
        "name": name,
        "now": now,
        "paused": paused,
        "active": active,
        "set_max_workers": max_workers is not UNSET,
        "max_workers": None if max_workers is UNSET else max_workers,
        "lease_seconds": lease_seconds,
        "set_timeout": timeout_seconds is not UNSET,
        "timeout_seconds": None if timeout_seconds is UNSET else timeout_seconds,
    }
