"""PostgreSQL backend on psycopg 3: SKIP LOCKED claims, its own schema, a connection pool."""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, NamedTuple

from claimq._pause import pause
from claimq._validate import NO_FLOW, Flow, NewJob
from claimq.backends._batches import PURGE_BATCH, all_batches
from claimq.backends._rows import (
    breaker_info,
    breaker_params,
    flow_params,
    flow_settings,
    job_from_row,
    loads_exact,
)
from claimq.backends._sqlfiles import load_migrations, load_queries
from claimq.backends._url import parse_postgres_url, redact, with_option
from claimq.backends.base import (
    KEY_RETENTION,
    UNSET,
    AuditEntry,
    BreakerInfo,
    CancelOutcome,
    Capabilities,
    ClaimRequest,
    Completion,
    DeadRow,
    Dependency,
    Edge,
    FailResult,
    Failure,
    HeartbeatResult,
    HistoryRow,
    JobFilter,
    LatencyRow,
    Limited,
    Listener,
    LiveRow,
    NewWorkflow,
    Notice,
    Owned,
    Planner,
    PriorityAging,
    Progress,
    PruneBatch,
    QueueInfo,
    QueueSettings,
    RateLimit,
    ReapResult,
    RecentRow,
    RetentionPolicy,
    RoleKind,
    ScheduleRow,
    Settled,
    Started,
    StateCount,
    StatsRows,
    Table,
    ThrottledKey,
    WorkerInfo,
    WorkerRecord,
    WorkflowAdded,
    WorkflowInfo,
    queue_settings,
)
from claimq.clock import Clock, SystemClock, is_system
from claimq.errors import (
    ClaimqError,
    DatabaseError,
    DatabaseUnavailable,
    InvalidInput,
    KeyHeld,
    SchemaMissing,
)
from claimq.job import Job, Status

try:
    import psycopg
    from psycopg.rows import dict_row, tuple_row
    from psycopg.types.json import set_json_loads
    from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

    from claimq.backends.postgres._errors import translate
    from claimq.backends.postgres._wire import KeptConnections, Statement, is_stale
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ClaimqError(
        "PostgreSQL support needs the postgres extra: pip install 'claimq[postgres]'"
    ) from exc

LIMITED_RECHECK = 1.0  # seconds between checks for max_workers limits on a claim's queues
COPY_CHUNK = 1000  # rows per write to a COPY
COPY_THRESHOLD = 200  # from this many jobs on, COPY beats one INSERT … SELECT unnest(…)
_MIGRATION_LOCK = 0x636C61696D71  # "claimq": one advisory lock id for every migrating process
# The namespace of the (two-int) advisory locks a workflow resurrect holds on the jobs it
# restores, and cancel() waits for (wf_lock_parents.sql).
_RESTORE_LOCK = 0x636C71
# FAST PATH (issue 13 item 6: kept only while a paired benchmark shows >= 5 % on the drain):
# the worker's asettle sends settle.sql straight through libpq (_wire.Statement) instead of
# psycopg's async cursor, for about 8 % of the drain's CPU when it was written. Same statement,
# same rows, same errors (mapped alike); the conformance tests run asettle on both paths
# (tests/conformance/test_combined_ops.py). Off (per backend: `raw_libpq_settle`; per process:
# CLAIMQ_RAW_LIBPQ_SETTLE=0, e.g. for a paired benchmark or a whole test run) takes the plain path.
RAW_LIBPQ_SETTLE = os.environ.get("CLAIMQ_RAW_LIBPQ_SETTLE", "1") != "0"


# The live statuses in which a key's holder refuses a new job, by the enqueue's `unique` scope.
_HOLDING = {
    "pending": "{pending}",
    "active": "{pending,fetched,processing}",
    "until_done": "{pending,fetched,processing}",
}


# settle.sql's columns, in its order: the sync path reads them as tuples too (as the async path
# does), and _settle_result unpacks each claimed row in this order.
_SETTLE_COLUMNS = (
    "completed", "id", "queue", "task", "payload", "tags", "idempotency_key", "priority",
    "attempts", "max_attempts", "claim_token", "lease_until", "updated_at", "run_at",
    "created_at", "errors", "timeout_seconds", "retry", "nth",
)


def _settle_params(
    done: Sequence[Completion], claim: ClaimRequest | None, now: datetime | None
) -> dict[str, Any] | None:
    """settle.sql's parameters (limit 0: no claim), or None when there is nothing to do."""
    wanted = claim is not None and claim.limit > 0
    if not done and not wanted:
        return None
    params = _complete_params(done)
    params.update(worker_id=None, queues=None, limit=0, lease=None, start=False, limited="{}",
                  now=now, skip=None)
    if claim is not None and wanted:
        params.update(worker_id=claim.worker_id, limit=claim.limit, lease=claim.lease,
                      start=claim.start,
                      queues=None if claim.queues is None else _texts(claim.queues),
                      skip=_texts(claim.skip_tasks) if claim.skip_tasks else None)
    return params


class _FlowSteps(NamedTuple):
    flow: dict[str, Any]  # claim_flow.sql's: the completions and the flow queues' claim
    plain: dict[str, Any] | None  # settle.sql's claim of the other queues (None: no others)


def _flow_steps(
    params: dict[str, Any], flow: list[str], claim: ClaimRequest | None
) -> _FlowSteps:
    """The parameters of the statements of a claim that has flow-controlled queues."""
    only_flow = claim is not None and claim.queues is not None and set(claim.queues) <= set(flow)
    plain = None if only_flow else {**params, **_complete_params(())}
    return _FlowSteps({**params, "flow": _texts(flow)}, plain)


def _as_settle_rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The rows of a claim's several statements as one settle.sql would give them: a row per
    claimed job (or one all NULL), the completed ids in the first."""
    completed = next((r[0] for r in rows if r[0] is not None), None)
    claimed = [r for r in rows if r[1] is not None]
    if not claimed:
        return [(completed,) + (None,) * (len(_SETTLE_COLUMNS) - 1)]
    claimed[0] = (completed, *claimed[0][1:])
    return claimed


def _settle_result(
    rows: list[tuple[Any, ...]], claim: ClaimRequest | None
) -> tuple[set[int], list[Job]]:
    """settle.sql's rows: the completed ids, and the claimed jobs in claim order."""
    completed = set(next((r[0] for r in rows if r[0] is not None), ()))
    if claim is None or rows[0][1] is None:
        return completed, []
    # What the statement leaves out is the claim's own: its status and worker, and (started)
    # started_at and heartbeat_at, which equal the claim's time, updated_at.
    status = Status.PROCESSING if claim.start else Status.FETCHED
    worker_id, start = claim.worker_id, claim.start
    jobs = []
    claimed: dict[str, Any] = {"status": status, "worker_id": worker_id, "finished_at": None,
                               "cancel_requested": False, "result": None, "reason": None}
    for values in rows:
        row = dict(zip(_SETTLE_COLUMNS, values, strict=True))
        started = row["updated_at"] if start else None
        jobs.append(job_from_row(row, heartbeat_at=started, started_at=started, **claimed))
    jobs.sort(key=lambda j: (-j.priority, j.run_at, j.id))
    return completed, jobs


def _count_failed(failed: FailResult, rows: list[dict[str, Any]]) -> None:
    for r in rows:
        (failed.dead if r["dead"] else failed.retried).add(r["id"])


def _settled(
    completed: set[int], failed: FailResult, failures: Sequence[Failure], jobs: list[Job]
) -> Settled:
    failed.lost.update(f.id for f in failures if f.id not in failed.dead | failed.retried)
    return Settled(completed, failed, jobs)


def _row_to_job(row: dict[str, Any], **claimed: Any) -> Job:
    """A live, archive, dead or claimed row as a Job (job_from_row: the driver decodes JSON,
    the connection's loader giving an Undecodable for what it cannot read exactly, and times
    are aware already)."""
    return job_from_row(row, **claimed)


def _three(values: Sequence[float] | None) -> tuple[float, float, float] | None:
    return None if not values else (float(values[0]), float(values[1]), float(values[2]))


def _schedule_row(r: dict[str, Any]) -> ScheduleRow:
    return ScheduleRow(
        name=r["name"], task=r["task"], payload_json=r["payload_json"], queue=r["queue"],
        priority=r["priority"], max_attempts=r["max_attempts"], timeout=r["timeout_seconds"],
        cron=r["cron"], every=r["every_seconds"], tz=r["tz"], missed=r["missed"],
        paused=r["paused"], next_run_at=r["next_run_at"], last_run_at=r["last_run_at"],
        last_job_id=r["last_job_id"], declared=r["declared"], created_at=r["created_at"],
        updated_at=r["updated_at"],
    )


def _schedule_params(row: ScheduleRow) -> dict[str, Any]:
    """insert_schedule.sql's and update_schedule.sql's parameters (both backends)."""
    return {
        "name": row.name, "task": row.task, "payload": row.payload_json, "queue": row.queue,
        "priority": row.priority, "max_attempts": row.max_attempts, "timeout": row.timeout,
        "cron": row.cron, "every": row.every, "tz": row.tz, "missed": row.missed,
        "paused": row.paused, "next_run_at": row.next_run_at, "declared": row.declared,
    }


_PRUNED_TABLES = {"archive": "archive", "dead": "dead"}
PARTITIONS_AHEAD = 3  # days of archive partitions made ahead of today
PARTITION_LOCK_TIMEOUT = "200ms"
# ensure_owned() waits this long on a row lock (a heartbeat's, the reaper's: milliseconds)
# before it answers from the job's last committed token instead
OWNED_LOCK_WAIT = "2s"


def _day(when: datetime) -> datetime:
    """Midnight UTC of `when`'s day: where an archive partition begins."""
    return when.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _with_limit(cache: dict[int, Statement], text: str, limit: int) -> Statement:
    """`text` with its claim's limit written in, kept in `cache` (up to 64 limits)."""
    statement = cache.get(limit)
    if statement is None:
        statement = Statement(text.replace("%(limit)s", str(int(limit))))
        if len(cache) < 64:
            cache[limit] = statement
    return statement


# lock_limited_queues.sql's columns, in its order
_LOCK_COLUMNS = ("name", "flow", "no_jit", "no_replan", "keys_only")


def _keys_only(locked: Iterable[dict[str, Any]]) -> bool:
    """Whether every flow queue locked for a claim needs only its concurrency keys
    (lock_limited_queues.sql's keys_only): then claim_keyed.sql claims from them."""
    return all(r["keys_only"] for r in locked if r["flow"])


def _limited_by_key(job: NewJob) -> bool:
    """Whether the job's queue must claim per key (a concurrency or a sequence key)."""
    return job.flow is not None and (job.flow.concurrency_key is not None
                                     or job.flow.sequence_key is not None
                                     or job.flow.rate_key is not None)


def _queue_info(row: dict[str, Any]) -> QueueInfo:
    flow = flow_settings(*(row.pop(c) for c in (
        "rate_count", "rate_period", "rate_burst", "aging_step", "aging_cap", "key_rate_count",
        "key_rate_period", "key_rate_burst")))
    age = row.pop("oldest_due_age")
    return QueueInfo(**row, **flow, oldest_due_age=None if age is None else float(age))


def _server_time() -> None:
    """The `now` parameter with the system clock: NULL, so the statement reads the server's."""
    return None


# Batch parameters go as array literals (text), cast by the SQL (`%(ids)s::bigint[]`):
# building them is a join, several times cheaper than adapting Python lists element by element.


def _configure(conn: psycopg.Connection[Any]) -> None:
    set_json_loads(loads_exact, conn)  # a value it cannot read exactly: an Undecodable
    # Timestamps come back in UTC (the same instants): psycopg's fast path, while a zone such as
    # 'Etc/UTC' or a local one costs a zoneinfo conversion per value, a third of a claim's rows.
    conn.execute("SET TimeZone TO 'UTC'")


# The worker's async connections. psycopg's own preparing stays off: once it has prepared a
# statement, any rollback on the connection makes it send DEALLOCATE ALL, which takes the settle
# statement _wire.py prepared with it (an aborted transaction in CI, and lost outcomes).
ASYNC_CONNECTION_KWARGS: dict[str, Any] = {
    "autocommit": True, "row_factory": dict_row, "prepare_threshold": None,
}


async def _configure_async(conn: psycopg.AsyncConnection[Any]) -> None:
    set_json_loads(loads_exact, conn)
    await conn.execute("SET TimeZone TO 'UTC'")  # as _configure


def _quote(item: str | None) -> str:
    if item is None:
        return "NULL"
    return '"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _texts(items: Iterable[str | None]) -> str:
    """An array literal of text (or JSON text) elements; None is NULL."""
    return "{" + ",".join(map(_quote, items)) + "}"


def _numbers(items: Iterable[float | int | None]) -> str:
    return "{" + ",".join("NULL" if x is None else repr(x) for x in items) + "}"


def _bools(items: Iterable[bool | None]) -> str:
    return "{" + ",".join("NULL" if x is None else "t" if x else "f" for x in items) + "}"


def _array_literal(items: Sequence[str]) -> str:
    """A text[] literal; unnest cannot take an array of arrays, so each row's tags go as one."""
    return _texts(items)


# COPY's text format: these four characters are escaped in every field (NULL is \\N).
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"})


_NULL = "\\N"  # NULL in COPY text


def _copy_field(value: str | None) -> str:
    return _NULL if value is None else value.translate(_COPY_ESCAPES)


def _copy_flow(flow: Flow) -> str:
    """A job's flow columns in COPY text: concurrency key and limit, sequence key and wait,
    rate key."""
    wait = _NULL if flow.sequence_wait is None else "t" if flow.sequence_wait else "f"
    limit = _NULL if flow.concurrency_limit is None else str(flow.concurrency_limit)
    return (f"\t{_copy_field(flow.concurrency_key)}\t{limit}"
            f"\t{_copy_field(flow.sequence_key)}\t{wait}\t{_copy_field(flow.rate_key)}")


def _copy_text(ids: Sequence[int], jobs: Sequence[NewJob], now: datetime) -> str:
    """Rows of copy_jobs.sql in COPY text format, built at once: several times cheaper than
    psycopg's write_row, which adapts every value of every row on its own. The fields that
    repeat from job to job (queue, task and options) are escaped once per distinct set."""
    default_run_at = now.isoformat()
    created = f"{default_run_at}\t{default_run_at}"  # created_at, updated_at
    shapes: dict[tuple[Any, ...], tuple[str, str, str]] = {}
    lines = []
    for job_id, j in zip(ids, jobs, strict=True):
        shape = (j.queue, j.task, j.tags, j.priority, j.max_attempts, j.timeout, j.retry_json,
                 j.trace_context)
        parts = shapes.get(shape)
        if parts is None:
            parts = shapes[shape] = _copy_shape(j)
        if j.run_at is not None:
            run_at = j.run_at.isoformat()
        elif j.delay:
            run_at = (now + timedelta(seconds=j.delay)).isoformat()
        else:
            run_at = default_run_at
        flow = "\t\\N\t\\N\t\\N\t\\N\t\\N" if j.flow is None else _copy_flow(j.flow)
        lines.append(f"{job_id}\t{parts[0]}\t{_copy_field(j.payload_json)}\t{parts[1]}\t"
                     f"{run_at}\t{created}\t{parts[2]}{flow}")
    lines.append("")
    return "\n".join(lines)


def _copy_shape(j: NewJob) -> tuple[str, str, str]:
    """The COPY fields of `j` around its payload and its run_at."""
    return (
        f"{_copy_field(j.queue)}\t{_copy_field(j.task)}",
        f"{_copy_field(_array_literal(j.tags))}\t{j.priority}\t{j.max_attempts}",
        ("\\N" if j.timeout is None else repr(j.timeout)) + "\t" + _copy_field(j.retry_json)
        + "\t" + _copy_field(j.trace_context),
    )


_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}$")
_NO_TOKEN = "00000000-0000-0000-0000-000000000000"  # gen_random_uuid() never makes this one


def _token(token: str) -> str:
    """A token that is not a UUID can own nothing: it becomes one that matches no row, so the
    caller sees a lost lease rather than a cast error."""
    return token if isinstance(token, str) and _UUID_RE.match(token) else _NO_TOKEN


_UUIDS_RE = re.compile(r"(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12},)*")


def _tokens(tokens: Iterable[str]) -> str:
    """Claim tokens as a uuid[] literal: each is UUID text (hex digits and dashes) after _token,
    so nothing needs quoting. The tokens a worker got from its claims are checked in one
    match for the whole batch; any other text goes through _token one by one."""
    listed = list(tokens)
    if all(type(t) is str for t in listed):
        joined = ",".join(listed)
        # 36 characters each: no token can hide a comma (two tokens in one).
        if len(joined) == 37 * len(listed) - 1 and _UUIDS_RE.fullmatch(joined + ","):
            return "{" + joined + "}"
    return "{" + ",".join([_token(t) for t in listed]) + "}"


def _complete_params(done: Sequence[Completion]) -> dict[str, Any]:
    return {
        "ids": "{" + ",".join([str(d.id) for d in done]) + "}",
        "tokens": _tokens(d.token for d in done),
        "results": _texts(d.result_json for d in done),
    }


def _fail_params(failures: Sequence[Failure], now: datetime | None) -> dict[str, Any]:
    return {
        "now": now,
        "ids": _numbers(f.id for f in failures),
        "tokens": _tokens(f.token for f in failures),
        "errors": _texts(json.dumps(f.error) for f in failures),
        "delays": _numbers(f.delay for f in failures),
        "reasons": _texts(f.reason for f in failures),
        "permanent": "{" + ",".join("t" if f.permanent else "f" for f in failures) + "}",
        "throttles": _numbers(f.throttle for f in failures),
    }


def _owned_params(owned: Sequence[Owned]) -> dict[str, Any]:
    return {
        "ids": _numbers(o.id for o in owned),
        "tokens": _tokens(o.token for o in owned),
    }


class _NewEdge(NamedTuple):
    child: int
    parent: int
    position: int  # the parent's index among the child's dependencies
    on_failure: str


def _workflow_edges(
    ids: Sequence[int], after: Sequence[Sequence[tuple[int, str | None]]], default: str
) -> tuple[list[_NewEdge], dict[int, int]]:
    """Edges from NewWorkflow.after-style indexes into `ids` (a dependency given twice counts
    once), each with its policy (its own, else `default`), and how many each held job waits
    for."""
    edges: list[_NewEdge] = []
    waiting: dict[int, int] = {}
    for i, deps in enumerate(after):
        child = ids[i]
        seen: dict[int, None] = {}
        for index, policy in deps:
            parent = ids[index]
            if parent in seen:
                continue
            seen[parent] = None
            edges.append(_NewEdge(child, parent, len(seen) - 1, policy or default))
        if seen:
            waiting[child] = len(seen)
    return edges, waiting


_LIVE_STATUSES = ("held", "pending", "fetched", "processing")


def _workflow_info(row: dict[str, Any]) -> WorkflowInfo:
    counts = {str(k): int(v) for k, v in (row["counts"] or {}).items() if v}
    live = any(counts.get(s) for s in _LIVE_STATUSES)
    return WorkflowInfo(id=row["id"], name=row["name"], key=row["key"],
                        on_failure=row["on_failure"], created_at=row["created_at"],
                        counts=counts, finished_at=None if live else row["last_finished"])


class _PgListener:
    """listen()'s connection: LISTENs on the schema's two channels (listen_results(): on its
    finished-jobs channel)."""

    def __init__(self, backend: PostgresBackend, channels: Sequence[str]) -> None:
        self._backend = backend
        self._kinds: dict[str, Literal["job", "cancel", "finished"]] = {
            backend.channel: "job", backend.cancel_channel: "cancel",
            backend.finished_channel: "finished"}
        try:
            self._conn = psycopg.connect(backend.conninfo, autocommit=True)
            for channel in channels:
                self._conn.execute(f"LISTEN {channel}")
        except psycopg.Error as exc:
            raise backend._error(exc) from exc

    def notices(self, timeout: float) -> Iterator[Notice]:
        kinds = self._kinds
        try:
            for note in self._conn.notifies(timeout=timeout):
                yield Notice(kinds.get(note.channel, "job"), note.payload)
        except psycopg.Error as exc:
            raise self._backend._error(exc) from exc

    def close(self) -> None:
        self._conn.close()


class PostgresBackend:
    """`postgresql://user@host:port/db?schema=claimq&pool_size=10` (other options go to libpq;
    claimq adds client-side deadlines the URL does not set: see backends/_url.py)."""

    kind = "postgresql"
    capabilities = Capabilities(
        listen_notify=True, async_settle=True, copy_streaming=True, async_connections=True,
        advisory_locks=True, row_locks=True, roles=True, partitions=True, flow_control=True,
        workflows=True,
    )

    def __init__(
        self, url: str, *, pool_size: int | None = None, clock: Clock | None = None
    ) -> None:
        parsed = parse_postgres_url(url, pool_size=pool_size)
        self.pooler = parsed.pooler
        # Behind a transaction-mode pooler each transaction may run on another server session:
        # nothing prepared by name (psycopg's nor _wire's) and no LISTEN (the worker polls).
        self._session_free = parsed.pooler == "transaction"
        if self._session_free:
            self.capabilities = replace(self.capabilities, listen_notify=False)
        self.schema = parsed.schema
        self.pool_size = parsed.pool_size
        self.url = url
        self.conninfo = parsed.conninfo  # every connection's: the pools' and the listener's
        self._where = redact(url)
        self.clock: Clock = clock if clock is not None else SystemClock()
        # Every statement's `now` parameter: NULL with the system clock (the server's now()).
        self._now: Callable[[], datetime | None] = (
            _server_time if is_system(self.clock) else self.clock.now
        )
        self.channel = f"{self.schema}_jobs"
        self._limited: dict[str | None, tuple[bool, float]] = {}  # by queues' array literal
        self.cancel_channel = f"{self.schema}_cancel"
        self.finished_channel = f"{self.schema}_finished"
        self._q = load_queries("claimq.backends.postgres", self.schema)
        self._settle_by_limit: dict[int, Statement] = {}
        self._flow_by_limit: dict[int, Statement] = {}
        self._keyed_by_limit: dict[int, Statement] = {}
        self._lock_statement = Statement(self._q.lock_limited_queues)
        self._async_pools: dict[asyncio.AbstractEventLoop, KeptConnections] = {}
        # Opened at first contact (_reach), not here: a pool only ever says PoolTimeout, after
        # 30 s, whatever stops it connecting; one plain connection first says why at once.
        self._pool = ConnectionPool(
            self.conninfo,
            min_size=1,
            max_size=self.pool_size,
            kwargs=self._connection_kwargs({"autocommit": True, "row_factory": dict_row}),
            configure=_configure,
            open=False,
            reconnect_timeout=60,
        )
        self._reached = False
        self._reach_lock = threading.Lock()
        self.raw_libpq_settle = RAW_LIBPQ_SETTLE and not self._session_free

    def _connection_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        return {**kwargs, "prepare_threshold": None} if self._session_free else kwargs

    def _reach(self) -> None:
        """First contact: one plain connection, so that a database that does not exist, a
        refused login or a server that is down raises its own error now; then the pool opens."""
        with self._reach_lock:
            if self._reached:
                return
            self._probe()
            self._pool.open()
            self._reached = True

    def _probe(self) -> None:
        try:
            psycopg.connect(self.conninfo, autocommit=True).close()
        except psycopg.Error as exc:
            raise translate(exc, self.schema, self._where) from exc

    def _error(self, exc: psycopg.Error) -> ClaimqError:
        """The claimq error for `exc`. A pool timeout says nothing of its cause: a probe finds
        a database that went missing (or a login now refused) rather than call it transient."""
        if isinstance(exc, PoolTimeout):
            try:
                self._probe()
            except DatabaseUnavailable:
                pass
            except ClaimqError as found:
                return found
        return translate(exc, self.schema, self._where)

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """A pooled connection; every psycopg error inside becomes claimq's (the one place the
        sync path maps them: nothing extra runs on success)."""
        if not self._reached:
            self._reach()
        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg.Error as exc:
            raise self._error(exc) from exc

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """A pooled connection inside a transaction, for the caller's business writes together
        with enqueue(conn=…) or a handler's ctx.complete_in(conn). Getting the connection maps
        errors like every method; the caller's own statements and the commit raise psycopg's."""
        if not self._reached:
            self._reach()
        try:
            conn = self._pool.getconn()
        except psycopg.Error as exc:
            raise self._error(exc) from exc
        try:
            with conn.transaction():
                yield conn
        finally:
            self._pool.putconn(conn)

    def close(self) -> None:
        self._pool.close()

    def now(self) -> datetime:
        if not is_system(self.clock):
            return self.clock.now()
        with self._conn() as conn:
            row = conn.execute("SELECT now() AS now").fetchone()
            assert row is not None
            return row["now"]  # type: ignore[no-any-return]

    # -- migrations ----------------------------------------------------------------------------

    def migrate(self) -> list[int]:
        """Applies the missing migrations in one transaction: all of them or none. A
        transaction-scoped advisory lock makes concurrent migrate() calls run one after another
        (a session lock would outlive its transaction's server session behind a pooler)."""
        applied: list[int] = []
        with self._conn() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self.schema}.migrations ("
                " version integer PRIMARY KEY, name text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {
                r["version"] for r in conn.execute(f"SELECT version FROM {self.schema}.migrations")
            }
            for version, name, text in load_migrations("claimq.backends.postgres", self.schema):
                if version in done:
                    continue
                conn.execute(text.encode())
                conn.execute(
                    f"INSERT INTO {self.schema}.migrations (version, name) VALUES (%s, %s)",
                    (version, name),
                )
                applied.append(version)
        return applied

    def schema_version(self) -> int:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL AS present", (f"{self.schema}.migrations",)
            ).fetchone()
            if not row or not row["present"]:
                return 0
            row = conn.execute(f"SELECT max(version) AS v FROM {self.schema}.migrations").fetchone()
            return int(row["v"] or 0) if row else 0

    def check_schema(self) -> None:
        latest = load_migrations("claimq.backends.postgres")[-1][0]
        found = self.schema_version()
        if found < latest:
            raise SchemaMissing(
                f"schema {self.schema!r} is at version {found}, claimq needs {latest}: "
                "run `claimq migrate` (or app.migrate())"
            )

    # -- enqueue -------------------------------------------------------------------------------

    def enqueue(self, jobs: Sequence[NewJob], retention: float, conn: Any = None) -> list[int]:
        with self._writing(conn) as cur:
            return self._insert(cur, jobs, retention)

    def enqueue_streaming(
        self, count: int, jobs: Iterator[NewJob], retention: float, conn: Any = None
    ) -> list[int]:
        """enqueue() for `count` jobs that are still being validated (an iterator that raises
        InvalidInput on a bad one). From COPY_THRESHOLD jobs on, COPY takes each chunk as it
        comes, so the server stores one while the next is checked; a bad job anywhere aborts
        the COPY and its transaction, so none of them is queued. Fewer are checked first."""
        if count < COPY_THRESHOLD:
            return self.enqueue(list(jobs), retention, conn)
        with self._writing(conn) as cur:
            return self._copy(cur, count, jobs, retention)

    @contextmanager
    def _writing(self, conn: Any) -> Iterator[Any]:
        """A cursor in the caller's transaction on `conn`, else in one of our own."""
        if conn is not None:
            if not isinstance(conn, psycopg.Connection):
                raise InvalidInput("conn must be a psycopg.Connection for a PostgreSQL database")
            try:
                with conn.cursor(row_factory=dict_row) as cur:
                    yield cur
            except psycopg.Error as exc:
                raise self._error(exc) from exc
            return
        with self._conn() as own, own.transaction(), own.cursor() as cur:
            yield cur

    def is_async_connection(self, conn: Any) -> bool:
        return isinstance(conn, psycopg.AsyncConnection)

    async def aenqueue(self, jobs: Sequence[NewJob], retention: float, conn: Any) -> list[int]:
        """enqueue() inside the caller's psycopg AsyncConnection (and its transaction): the
        same statements as the sync path, keyed jobs included."""
        if not isinstance(conn, psycopg.AsyncConnection):
            raise InvalidInput("conn must be a psycopg.AsyncConnection for a PostgreSQL database")
        if self._limited and any(_limited_by_key(j) for j in jobs):
            self._limited.clear()  # a queue may become keyed: this process's claims see it now
        plain = [j for j in jobs if j.idempotency_key is None]
        try:
            async with conn.cursor(row_factory=dict_row) as cur:
                plain_ids: Iterator[int] = iter(())
                if plain:
                    query, params = self.enqueue_params(plain)
                    names = sorted({j.queue for j in plain})
                    await cur.execute(self._q.ensure_queues,
                                      {"names": names, "now": params["now"]})
                    keyed = sorted({j.queue for j in plain if _limited_by_key(j)})
                    if keyed:  # their claims count per concurrency key from now on
                        await cur.execute(self._q.mark_keyed_queues,
                                          {"names": keyed, "now": params["now"]})
                    await cur.execute(query, params)
                    plain_ids = iter([row["id"] for row in await cur.fetchall()])
                ids: list[int] = []
                for job in jobs:
                    if job.idempotency_key is None:
                        ids.append(next(plain_ids))
                        continue
                    steps = self._keyed_steps(job, retention)
                    row = None
                    try:
                        while True:
                            query, params = steps.send(row)
                            await cur.execute(query, params)
                            row = await cur.fetchone() if cur.description is not None else None
                    except StopIteration as settled:
                        ids.append(settled.value)
                return ids
        except psycopg.Error as exc:
            raise self._error(exc) from exc

    def enqueue_params(self, jobs: Sequence[NewJob]) -> tuple[str, dict[str, Any]]:
        """The statement and parameters that insert un-keyed jobs (shared with async enqueue)."""
        return self._q.insert_jobs, {
            "now": self._now(),
            "queue": _texts(j.queue for j in jobs),
            "task": _texts(j.task for j in jobs),
            "payload": _texts(j.payload_json for j in jobs),
            "tags": _texts(_array_literal(j.tags) for j in jobs),
            "priority": _numbers(j.priority for j in jobs),
            "max_attempts": _numbers(j.max_attempts for j in jobs),
            "run_at": _texts(None if j.run_at is None else j.run_at.isoformat() for j in jobs),
            "delay": _numbers(j.delay for j in jobs),
            "timeout_seconds": _numbers(j.timeout for j in jobs),
            "retry": _texts(j.retry_json for j in jobs),
            "trace_context": _texts(j.trace_context for j in jobs),
            "concurrency_key": _texts((j.flow or NO_FLOW).concurrency_key for j in jobs),
            "concurrency_limit": _numbers((j.flow or NO_FLOW).concurrency_limit for j in jobs),
            "sequence_key": _texts((j.flow or NO_FLOW).sequence_key for j in jobs),
            "sequence_wait": _bools((j.flow or NO_FLOW).sequence_wait for j in jobs),
            "rate_key": _texts((j.flow or NO_FLOW).rate_key for j in jobs),
        }

    def _insert(self, cur: Any, jobs: Sequence[NewJob], retention: float) -> list[int]:
        if self._limited and any(_limited_by_key(j) for j in jobs):
            self._limited.clear()  # a queue may become keyed: this process's claims see it now
        plain = [j for j in jobs if j.idempotency_key is None]
        if len(plain) >= COPY_THRESHOLD:
            return self._copy(cur, len(jobs), iter(jobs), retention)
        plain_ids: Iterator[int] = iter(())
        if plain:
            # Keyed jobs create their queue only if they insert (insert_keyed_job).
            query, params = self.enqueue_params(plain)
            names = sorted({j.queue for j in plain})
            cur.execute(self._q.ensure_queues, {"names": names, "now": params["now"]})
            self._mark_keyed(cur, plain, params["now"])
            cur.execute(query, params)
            plain_ids = iter([r["id"] for r in cur.fetchall()])
        return [
            next(plain_ids) if j.idempotency_key is None else self._insert_keyed(cur, j, retention)
            for j in jobs
        ]

    def _copy(self, cur: Any, count: int, jobs: Iterator[NewJob], retention: float) -> list[int]:
        """Bulk insert with COPY: an id from the sequence for every position first (a keyed
        job's goes unused: a gap), the un-keyed jobs copied in chunks, then the keyed ones
        inserted one by one. The ids come back in the jobs' order."""
        cur.execute(self._q.allocate_ids, {"n": count, "now": self._now()})
        head = cur.fetchone()
        now, ids = head["now"], sorted(head["ids"])  # increasing in enqueue order
        keyed: list[tuple[int, NewJob]] = []
        queues: set[str] = set()
        limited: set[str] = set()  # queues of jobs with a concurrency key
        chunk: list[NewJob] = []
        chunk_ids: list[int] = []
        with cur.copy(self._q.copy_jobs) as copy:
            for position, job in enumerate(jobs):
                if job.idempotency_key is not None:
                    keyed.append((position, job))
                    continue
                queues.add(job.queue)
                if _limited_by_key(job):
                    limited.add(job.queue)
                chunk.append(job)
                chunk_ids.append(ids[position])
                if len(chunk) == COPY_CHUNK:
                    copy.write(_copy_text(chunk_ids, chunk, now))
                    chunk, chunk_ids = [], []
            if chunk:
                copy.write(_copy_text(chunk_ids, chunk, now))
        if queues:
            # No foreign key ties jobs to queues: their rows may follow in the same transaction.
            names = sorted(queues)
            cur.execute(self._q.ensure_queues, {"names": names, "now": now})
            if limited:
                cur.execute(self._q.mark_keyed_queues, {"names": sorted(limited), "now": now})
            cur.execute(self._q.notify_queues, {"names": names})
        for position, job in keyed:
            ids[position] = self._insert_keyed(cur, job, retention)
        return ids

    def _mark_keyed(self, cur: Any, jobs: Sequence[NewJob], now: datetime | None) -> None:
        """Flags the queues of jobs with a concurrency key (their claims count per key)."""
        names = {j.queue for j in jobs if _limited_by_key(j)}
        if names:
            cur.execute(self._q.mark_keyed_queues, {"names": sorted(names), "now": now})

    def _insert_keyed(self, cur: Any, job: NewJob, retention: float) -> int:
        steps = self._keyed_steps(job, retention)
        row = None
        try:
            while True:
                query, params = steps.send(row)
                cur.execute(query, params)
                row = cur.fetchone() if cur.description is not None else None
        except StopIteration as settled:
            return int(settled.value)

    def _keyed_steps(
        self, job: NewJob, retention: float
    ) -> Generator[tuple[str, dict[str, Any]], dict[str, Any] | None, int]:
        """The statements of one keyed enqueue, each sent back its first row (None: no row):
        run by the sync path on a cursor, by aenqueue on an async one. Returns the job's id
        (the holder's when the key is held)."""
        flow = job.flow or NO_FLOW
        params = {
            "key": job.idempotency_key,
            "queue": job.queue,
            "task": job.task,
            "payload": job.payload_json,
            "tags": list(job.tags),
            "priority": job.priority,
            "max_attempts": job.max_attempts,
            "run_at": job.run_at,
            "delay": job.delay,
            "timeout_seconds": job.timeout,
            "retry": job.retry_json,
            "trace_context": job.trace_context,
            "concurrency_key": flow.concurrency_key,
            "concurrency_limit": flow.concurrency_limit,
            "sequence_key": flow.sequence_key,
            "sequence_wait": flow.sequence_wait,
            "rate_key": flow.rate_key,
            "keyed": _limited_by_key(job),
            "statuses": _HOLDING[flow.unique],
            "period": None if flow.unique != "until_done" else (
                retention if flow.unique_for is None else flow.unique_for),
            "now": self._now(),
        }
        for _ in range(5):
            row = yield self._q.insert_keyed_job, params
            if row is not None:
                return int(row["id"])
            holder = yield self._q.key_holder, params
            pause("enqueue.key_checked")
            if holder is None:
                continue  # the holder vanished between the two statements: insert again
            if holder["holds"]:
                if flow.on_conflict == "replace" and holder["status"] == Status.PENDING:
                    pause("debounce.holder_read")
                    # Debounce. The key row's lock keeps other enqueues out; a claim that took
                    # the job meanwhile leaves zero rows, and the holder is looked at again.
                    replaced = yield self._q.replace_pending, {**params, "id": holder["job_id"]}
                    if replaced is None:
                        continue
                return int(holder["job_id"])
            # The key's job finished longer ago than the retention window: take the key over.
            yield self._q.drop_key, {"key": job.idempotency_key, "job_id": holder["job_id"]}
        raise ClaimqError(f"could not settle idempotency key {job.idempotency_key!r}")

    # -- claim and the owner's transitions -----------------------------------------------------

    def claim(
        self,
        worker_id: str,
        queues: Sequence[str] | None,
        limit: int,
        lease: float | None,
        start: bool = False,
    ) -> list[Job]:
        if limit <= 0:
            return []
        return self.settle((), (), ClaimRequest(worker_id, queues, limit, lease, start)).claimed

    def settle(
        self,
        done: Sequence[Completion],
        failures: Sequence[Failure],
        claim: ClaimRequest | None = None,
    ) -> Settled:
        """Failures, then completions and the next claim in one statement (one round trip, one
        commit), on one connection in one thread hop."""
        failed = FailResult()
        # Plain statements, not pipeline mode: on a local or LAN link psycopg's pipeline costs
        # more CPU than the round trips it saves.
        with self._conn() as conn:
            if failures:
                params = _fail_params(failures, self._now())
                _count_failed(failed, conn.execute(self._q.fail, params).fetchall())
                self._throttled(failures)
                pause("settle.failed")
            completed, jobs = self._settle(conn, done, claim)
        return _settled(completed, failed, failures, jobs)

    def _settle(
        self, conn: Any, done: Sequence[Completion], claim: ClaimRequest | None
    ) -> tuple[set[int], list[Job]]:
        """settle.sql: completes `done` and claims for `claim`; either may be empty."""
        params = _settle_params(done, claim, self._now())
        if params is None:
            return set(), []
        cur = conn.cursor(row_factory=tuple_row)
        sql = self._settle_sql(params["limit"])
        if not params["limit"] or not self._limited_queues(conn, params):
            # No limited queue asked for: one statement. (Were one limited meanwhile, the claim
            # skips it until the next check: never over its limit.)
            rows = cur.execute(sql, params).fetchall()
        else:
            with conn.transaction():
                locked = conn.execute(self._q.lock_limited_queues, params).fetchall()
                pause("claim.queues_locked")
                params["limited"] = _texts(r["name"] for r in locked)
                flow = [r["name"] for r in locked if r["flow"]]
                if not flow:
                    rows = cur.execute(sql, params).fetchall()
                else:
                    rows = self._settle_flow(cur, params, flow, claim, _keys_only(locked))
        return _settle_result(rows, claim)

    def _settle_flow(
        self, cur: Any, params: dict[str, Any], flow: list[str], claim: ClaimRequest | None,
        keys_only: bool,
    ) -> list[tuple[Any, ...]]:
        """The claim when some of its queues are flow-controlled (their rows locked by this
        transaction): claim_flow.sql (claim_keyed.sql when they use concurrency keys only)
        completes the batch and claims from the flow queues, then settle.sql claims from the
        others with the slots left (unless there are none)."""
        steps = _flow_steps(params, flow, claim)
        statement = self._flow_statement(params["limit"], keys_only)
        rows = cur.execute(statement.query, steps.flow).fetchall()
        left = params["limit"] - sum(1 for r in rows if r[1] is not None)
        if left > 0 and steps.plain is not None:
            pause("claim.flow_claimed")
            rows += cur.execute(self._settle_sql(left), steps.plain).fetchall()
        return _as_settle_rows(rows)

    # The worker's hot path, on its event loop: an AsyncConnection per writer, kept between
    # batches, and no thread hop per batch (a hop costs about as much CPU as the statement's own
    # Python work).

    async def open_async(self) -> None:
        """Opens this event loop's async pool for asettle (the worker calls it at start)."""
        loop = asyncio.get_running_loop()
        if loop in self._async_pools:
            return
        pool = AsyncConnectionPool(
            self.conninfo,
            min_size=1,
            max_size=4,
            kwargs=self._connection_kwargs(ASYNC_CONNECTION_KWARGS),
            configure=_configure_async,
            open=False,
            reconnect_timeout=60,
        )
        await pool.open(wait=False)  # a database that is away now is waited for later
        self._async_pools[loop] = KeptConnections(pool, keep=pool.max_size)

    async def close_async(self) -> None:
        kept = self._async_pools.pop(asyncio.get_running_loop(), None)
        if kept is not None:
            await kept.close()

    async def asettle(
        self,
        done: Sequence[Completion],
        failures: Sequence[Failure],
        claim: ClaimRequest | None = None,
    ) -> Settled:
        """settle() on this loop's async pool (open_async first): the same statements."""
        pool = self._async_pools.get(asyncio.get_running_loop())
        if pool is None:
            raise ClaimqError("asettle needs open_async() on this event loop first")
        try:
            return await self._asettle(pool, done, failures, claim)
        except psycopg.Error as exc:
            raise self._error(exc) from exc

    async def _asettle(
        self,
        pool: KeptConnections,
        done: Sequence[Completion],
        failures: Sequence[Failure],
        claim: ClaimRequest | None,
    ) -> Settled:
        failed = FailResult()
        async with pool.connection() as conn:
            if failures:
                cur = await conn.execute(self._q.fail, _fail_params(failures, self._now()))
                _count_failed(failed, await cur.fetchall())
                self._throttled(failures)
                pause("settle.failed")
            params = _settle_params(done, claim, self._now())
            if params is None:
                return _settled(set(), failed, failures, [])
            statement = self._settle_statement(params["limit"])
            if not params["limit"] or not await self._limited_queues_async(conn, params):
                rows = await self._settle_rows(conn, statement, params)
            else:
                for attempt in (1, 2):
                    try:
                        async with conn.transaction():
                            locked = await self._lock_limited_async(conn, params)
                            pause("claim.queues_locked")
                            params["limited"] = _texts(r["name"] for r in locked)
                            flow = [r["name"] for r in locked if r["flow"]]
                            if not flow:
                                rows = await self._settle_rows(conn, statement, params)
                            else:
                                rows = await self._asettle_flow(conn, params, flow, claim,
                                                                _keys_only(locked))
                        break
                    except psycopg.Error as exc:
                        # rolled back whole: the statement, prepared again, runs once more
                        if attempt == 2 or not is_stale(exc):
                            raise
        completed, jobs = _settle_result(rows, claim)
        return _settled(completed, failed, failures, jobs)

    async def _asettle_flow(
        self, conn: Any, params: dict[str, Any], flow: list[str], claim: ClaimRequest | None,
        keys_only: bool,
    ) -> list[tuple[Any, ...]]:
        """_settle_flow on the event loop."""
        steps = _flow_steps(params, flow, claim)
        statement = self._flow_statement(params["limit"], keys_only)
        rows = await self._settle_rows(conn, statement, steps.flow)
        left = params["limit"] - sum(1 for r in rows if r[1] is not None)
        if left > 0 and steps.plain is not None:
            pause("claim.flow_claimed")
            rows += await self._settle_rows(conn, self._settle_statement(left), steps.plain)
        return _as_settle_rows(rows)

    async def _lock_limited_async(
        self, conn: Any, params: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """lock_limited_queues.sql's rows on the event loop, prepared like settle.sql (a flow
        queue's claim runs it every batch)."""
        rows = await self._settle_rows(conn, self._lock_statement, params)
        return [dict(zip(_LOCK_COLUMNS, r, strict=True)) for r in rows]

    async def _settle_rows(
        self, conn: Any, statement: Statement, params: dict[str, Any]
    ) -> list[tuple[Any, ...]]:
        """settle.sql's rows on the event loop: through the raw libpq fast path (_wire.py) when
        raw_libpq_settle is on, else through psycopg's own async cursor (the plain path)."""
        if self.raw_libpq_settle:
            return await statement.rows(conn, params)
        cur = conn.cursor(row_factory=tuple_row)
        await cur.execute(statement.query, params)
        return await cur.fetchall()  # type: ignore[no-any-return]

    def _settle_sql(self, limit: int) -> str:
        return self._settle_statement(limit).query

    def _settle_statement(self, limit: int) -> Statement:
        """settle.sql with its claim's limit written in: a prepared statement's generic plan then
        knows how many rows the claim takes, so PostgreSQL keeps it rather than planning each
        batch anew (about 2 ms; it does so once statistics show many pending jobs). The sync
        path runs its text (`query`) through psycopg, the async one prepares it itself."""
        return _with_limit(self._settle_by_limit, self._q.settle, limit)

    def _flow_statement(self, limit: int, keys_only: bool = False) -> Statement:
        """claim_flow.sql (claim_keyed.sql: `keys_only`) with its limit written in, as
        _settle_statement."""
        if keys_only:
            return _with_limit(self._keyed_by_limit, self._q.claim_keyed, limit)
        return _with_limit(self._flow_by_limit, self._q.claim_flow, limit)

    def _throttled(self, failures: Sequence[Failure]) -> None:
        """A Throttled failure makes its queue flow-controlled: this process's next claim
        sees it at once (others within LIMITED_RECHECK, claiming nothing from it meanwhile)."""
        if self._limited and any(f.throttle for f in failures):
            self._limited.clear()

    def _limited_queues(self, conn: Any, params: dict[str, Any]) -> bool:
        """Whether the claim's queues include a limited one; asked at most once a second."""
        key, known = self._limited_known(params)
        if known is None:
            row = conn.execute(self._q.any_limited_queue, params).fetchone()
            known = self._limited_learned(key, bool(row["found"]))
        return known

    async def _limited_queues_async(self, conn: Any, params: dict[str, Any]) -> bool:
        key, known = self._limited_known(params)
        if known is None:
            row = await (await conn.execute(self._q.any_limited_queue, params)).fetchone()
            known = self._limited_learned(key, bool(row["found"]))
        return known

    def _limited_known(self, params: dict[str, Any]) -> tuple[str | None, bool | None]:
        key = params["queues"]
        known = self._limited.get(key)
        return key, None if known is None or known[1] < time.monotonic() else known[0]

    def _limited_learned(self, key: str | None, found: bool) -> bool:
        self._limited[key] = (found, time.monotonic() + LIMITED_RECHECK)
        return found

    def start(self, owned: Sequence[Owned], lease: float | None) -> list[Started]:
        if not owned:
            return []
        with self._conn() as conn:
            params = {**_owned_params(owned), "lease": lease, "now": self._now()}
            rows = conn.execute(self._q.start, params).fetchall()
        return [Started(r["id"], r["attempts"]) for r in rows]

    def heartbeat(self, owned: Sequence[Owned], lease: float | None) -> HeartbeatResult:
        result = HeartbeatResult()
        if not owned:
            return result
        with self._conn() as conn:
            rows = conn.execute(
                self._q.heartbeat, {**_owned_params(owned), "lease": lease, "now": self._now()}
            ).fetchall()
        for r in rows:
            if r["busy"]:
                result.busy.add(r["id"])
                continue
            result.alive.add(r["id"])
            if r["cancel_requested"]:
                result.cancel_requested.add(r["id"])
        result.lost.update(
            o.id for o in owned if o.id not in result.alive and o.id not in result.busy
        )
        return result

    def confirm_owned(self, owned: Owned, lease: float | None) -> HeartbeatResult:
        result = HeartbeatResult()
        params = {"id": owned.id, "token": owned.token, "lease": lease, "now": self._now()}
        with self._conn() as conn:
            pause("ensure_owned.read")
            try:
                with conn.transaction():
                    conn.execute(f"SET LOCAL lock_timeout = '{OWNED_LOCK_WAIT}'")
                    row = conn.execute(self._q.confirm_owned, params).fetchone()
            except psycopg.errors.LockNotAvailable:  # held on: answer from the token
                row = conn.execute(self._q.owner_read, params).fetchone()
        if row is None:
            result.lost.add(owned.id)
        else:
            result.alive.add(owned.id)
            if row["cancel_requested"]:
                result.cancel_requested.add(owned.id)
        return result

    def complete(self, done: Sequence[Completion], conn: Any = None) -> set[int]:
        if not done:
            return set()
        if conn is None:
            with self._conn() as own:
                return self._settle(own, done, None)[0]
        if not isinstance(conn, psycopg.Connection):
            raise InvalidInput("conn must be a psycopg.Connection for a PostgreSQL database")
        try:
            return self._settle(conn, done, None)[0]
        except psycopg.Error as exc:
            raise self._error(exc) from exc

    def fail(self, failures: Sequence[Failure]) -> FailResult:
        return self.settle((), failures).failed

    def tidy(self, min_dead: int) -> bool:
        """VACUUM the jobs table once it holds `min_dead` dead row versions: a busy queue makes
        them faster than autovacuum (at most once a minute) clears them, and claims slow down
        stepping over their index entries. Returns whether it vacuumed."""
        with self._conn() as conn:
            row = conn.execute(self._q.dead_jobs, {"schema": self.schema}).fetchone()
            if row is None or row["dead"] < min_dead:
                return False
            conn.execute(self._q.vacuum_jobs, prepare=False)
        return True

    def orphaned(self, worker_id: str, held: Sequence[int]) -> list[Owned]:
        params = {"worker_id": worker_id, "held": _numbers(held), "now": self._now()}
        with self._conn() as conn:
            rows = conn.execute(self._q.orphaned, params).fetchall()
        return [Owned(r["id"], r["claim_token"]) for r in rows]

    def release(self, owned: Sequence[Owned], delay: float = 0.0) -> set[int]:
        if not owned:
            return set()
        with self._conn() as conn:
            params = {**_owned_params(owned), "delay": delay, "now": self._now()}
            rows = conn.execute(self._q.release, params)
            return {r["id"] for r in rows.fetchall()}

    def reap(self, limit: int = 1000) -> ReapResult:
        result = ReapResult()
        with self._conn() as conn:
            params = {"limit": limit, "now": self._now()}
            for r in conn.execute(self._q.reap, params).fetchall():
                (result.dead if r["dead"] else result.requeued).append(r["id"])
        return result

    # -- operator ------------------------------------------------------------------------------

    def get_job(self, job_id: int, conn: Any = None) -> Job | None:
        if conn is not None:
            with self._writing(conn) as cur:  # the caller's connection and open transaction
                # claimq's JSON loads on this cursor: a caller's connection may load json(b)
                # as text (Django's does)
                set_json_loads(loads_exact, cur)
                row = cur.execute(self._q.get_job, {"id": job_id}).fetchone()
            return None if row is None else _row_to_job(row)
        with self._conn() as conn:
            row = conn.execute(self._q.get_job, {"id": job_id}).fetchone()
        return None if row is None else _row_to_job(row)

    def list_jobs(
        self,
        table: Table,
        *,
        queue: str | None = None,
        task: str | None = None,
        status: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Job]:
        query = {"live": self._q.list_live, "archive": self._q.list_archive,
                 "dead": self._q.list_dead}[table]
        params = {"queue": queue, "task": task, "status": status, "limit": limit, "offset": offset}
        with self._conn() as conn:
            return [_row_to_job(r) for r in conn.execute(query, params).fetchall()]

    def grant(self, role: str, kind: RoleKind) -> None:
        from psycopg import sql

        text = {"reader": self._q.grant_reader, "producer": self._q.grant_producer,
                "worker": self._q.grant_worker, "admin": self._q.grant_admin}[kind]
        with self._conn() as conn, conn.transaction():
            conn.execute(sql.SQL(text).format(role=sql.Identifier(role)))

    def find_jobs(
        self, table: Table, where: JobFilter, before: int | None, limit: int
    ) -> list[Job]:
        query = {"live": self._q.find_live, "archive": self._q.find_archive,
                 "dead": self._q.find_dead}[table]
        params = {"before": before, "queue": where.queue, "task": where.task,
                  "status": where.status, "tag": where.tag, "text": where.text,
                  "state": where.state, "now": self._now(), "limit": limit}
        if table == "live":
            return [_row_to_job(r) for r in self._read_no_jit(query, params)]
        with self._conn() as conn:
            return [_row_to_job(r) for r in conn.execute(query, params).fetchall()]

    def _read_no_jit(self, query: str, params: dict[str, Any]) -> list[Any]:
        """A read that asks flow control's rule (_limited.sql), without JIT (no_jit.sql)."""
        with self._conn() as conn, conn.transaction():
            conn.execute(self._q.no_jit)
            return conn.execute(query, params).fetchall()

    def count_states(self) -> list[StateCount]:
        rows = self._read_no_jit(self._q.count_states, {"now": self._now()})
        return [StateCount(r["queue"], r["state"], int(r["n"])) for r in rows]

    def delete_finished(self, table: Literal["archive", "dead"], ids: Sequence[int]) -> list[int]:
        query = {"archive": self._q.delete_archive_ids, "dead": self._q.delete_dead_ids}[table]
        with self._conn() as conn:
            return [r["id"] for r in conn.execute(query, {"ids": list(ids)}).fetchall()]

    def run_now(self, ids: Sequence[int]) -> list[int]:
        with self._conn() as conn:
            params = {"ids": list(ids), "now": self._now()}
            return [r["id"] for r in conn.execute(self._q.run_now, params).fetchall()]

    def record_audit(
        self, actor: str, action: str, target: str, detail_json: str, affected: int
    ) -> int:
        params = {"now": self._now(), "actor": actor, "action": action, "target": target,
                  "detail": detail_json, "affected": affected}
        with self._conn() as conn:
            row = conn.execute(self._q.record_audit, params).fetchone()
        if row is None:
            raise DatabaseError("the audit insert returned no row")
        return int(row["id"])

    def database_user(self) -> str | None:
        with self._conn() as conn:
            row = conn.execute(self._q.database_user).fetchone()
        return None if row is None else str(row["name"])

    def list_audit(self, before: int | None, limit: int) -> list[AuditEntry]:
        with self._conn() as conn:
            rows = conn.execute(self._q.list_audit, {"before": before, "limit": limit}).fetchall()
        return [
            AuditEntry(id=r["id"], at=r["at"], actor=r["actor"], action=r["action"],
                       target=r["target"], detail=r["detail"], affected=r["affected"])
            for r in rows
        ]

    def cancel(self, job_id: int) -> CancelOutcome:
        with self._conn() as conn, conn.transaction():
            # A workflow resurrect restoring this job holds its advisory lock: wait for it, so
            # that the statement's snapshot sees the job where the resurrect put it.
            conn.execute("SELECT pg_advisory_xact_lock_shared(%s, %s)",
                         (_RESTORE_LOCK, job_id % 2147483648))
            row = conn.execute(self._q.cancel, {"id": job_id, "now": self._now()}).fetchone()
            if row is None:
                # A held job released (held -> jobs) by a transaction that committed while
                # this statement ran is in neither table its snapshot saw: once more, with a
                # snapshot that sees it.
                row = conn.execute(self._q.cancel, {"id": job_id, "now": self._now()}).fetchone()
        return "not_found" if row is None else row["outcome"]

    def resurrect(
        self, job_id: int, payload_json: str | None = None, priority: int | None = None,
        retention: float = KEY_RETENTION,
    ) -> bool:
        params = {"id": job_id, "payload": payload_json, "priority": priority, "now": self._now(),
                  "statuses": _HOLDING["until_done"], "period": retention}
        with self._conn() as conn, conn.transaction():
            return self._resurrect(conn, job_id, params)

    def _resurrect(self, conn: Any, job_id: int, params: dict[str, Any]) -> bool:
        """resurrect() inside the caller's transaction on `conn`."""
        dead = conn.execute(self._q.lock_dead_key, params).fetchone()
        if dead is None:
            return False
        key = dead["idempotency_key"]
        if key is not None:
            self._take_dead_key(conn, job_id, key, params)
        pause("resurrect.key_checked")
        if dead["workflow_id"] is not None:
            self._resurrect_in_workflow(conn, params)
            return True
        if conn.execute(self._q.resurrect, params).fetchone() is None:
            raise ClaimqError(f"dead letter {job_id} vanished under its row lock")
        return True

    def _resurrect_in_workflow(self, conn: Any, params: dict[str, Any]) -> None:
        """A workflow job's resurrect continues its workflow (\"rerun from the failed step\"):
        it and the dead letters its death cancelled ('dependency_failed', reachable by edges)
        come back held, their in-edges resolved again as their parents stand, and the rule
        (wf_release) runs from there: what has nothing to wait for is released, what has a
        parent dead under 'cancel' is buried again. Archived jobs never run again."""
        ids = [r["id"] for r in conn.execute(self._q.wf_restore_set, params).fetchall()]
        restored = {**params, "ids": _numbers(ids), "lock": _RESTORE_LOCK}
        conn.execute(self._q.wf_lock_parents, restored).fetchall()
        conn.execute(self._q.wf_unbury, restored).fetchall()
        pause("resurrect.unburied")
        conn.execute(self._q.wf_continue, restored).fetchall()

    def _take_dead_key(self, conn: Any, job_id: int, key: str, params: dict[str, Any]) -> None:
        """Gives dead letter `job_id` a fresh row of its idempotency key (KeyHeld when another
        job holds the key). The way an enqueue takes a key over: the old row deleted and a new
        one inserted, never updated in place, so that an enqueue waiting on the old row's lock
        finds it gone and meets the new one on insert, after this transaction committed."""
        params = {**params, "key": key}
        for _ in range(5):
            if conn.execute(self._q.take_dead_key, params).fetchone() is not None:
                return
            # The row's lock first, then its holder read by a later statement (whose snapshot
            # sees what a writer that held the lock committed).
            if conn.execute(self._q.key_holder, params).fetchone() is None:
                continue  # the row vanished meanwhile: take the key again
            holder = conn.execute(self._q.key_holder, params).fetchone()
            if holder is None:
                continue
            if holder["job_id"] != job_id and holder["holds"]:
                raise KeyHeld(job_id, key, int(holder["job_id"]))
            conn.execute(self._q.drop_key, {"key": key, "job_id": holder["job_id"]})
        raise ClaimqError(f"could not settle idempotency key {key!r}")

    def purge(
        self,
        table: Literal["archive", "dead"],
        older_than: float | None = None,
        queue: str | None = None,
        task: str | None = None,
    ) -> int:
        query = {"archive": self._q.purge_archive, "dead": self._q.purge_dead}[table]
        params = {"older_than": older_than, "queue": queue, "task": task, "now": self._now()}
        with self._conn() as conn:
            row = conn.execute(query, params).fetchone()
            conn.execute(self._q.purge_progress)
            return int(row["n"]) if row else 0

    def purge_idempotency_keys(self, retention: float) -> int:
        return all_batches(lambda: self.prune_idempotency_keys(retention, PURGE_BATCH))

    def set_priority(self, job_id: int, priority: int) -> bool:
        with self._conn() as conn:
            params = {"id": job_id, "priority": priority, "now": self._now()}
            # held first: one released meanwhile is pending by the second statement
            return any(conn.execute(query, params).fetchone() is not None
                       for query in (self._q.set_priority_held, self._q.set_priority))

    def set_progress(self, owned: Owned, fraction: float, note: str | None) -> bool:
        params = {"id": owned.id, "token": _token(owned.token), "fraction": fraction,
                  "note": note, "now": self._now()}
        with self._conn() as conn:
            return conn.execute(self._q.set_progress, params).fetchone() is not None

    def get_progress(self, job_id: int) -> Progress | None:
        with self._conn() as conn:
            row = conn.execute(self._q.get_progress, {"id": job_id}).fetchone()
        if row is None:
            return None
        return Progress(row["fraction"], row["note"], row["attempt"], row["updated_at"])

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
        params = {
            **queue_settings(
                name, paused, active, max_workers, lease_seconds, timeout_seconds, self._now()),
            **flow_params(rate_limit, aging, key_rate_limit),
        }
        with self._conn() as conn, conn.transaction():
            conn.execute(self._q.update_queue, params)
            if params["set_key_rate"]:
                pause("configure_queue.updated")
                conn.execute(self._q.reset_rate_keys, params)
        self._limited.clear()  # this process's next claim sees a new limit at once
        return next(q for q in self.list_queues() if q.name == name)

    def configure_breaker(
        self, queue: str, task: str, failure_limit: int | None, window: float, cooldown: float
    ) -> BreakerInfo | None:
        params = breaker_params(queue, task, failure_limit, window, cooldown, self._now())
        with self._conn() as conn, conn.transaction():
            conn.execute(self._q.ensure_queues, {"names": [queue], "now": params["now"]})
            conn.execute(self._q.delete_breaker if failure_limit is None else self._q.set_breaker,
                         params)
            pause("breaker.set")
            conn.execute(self._q.mark_breaker_queue, params)
        self._limited.clear()  # this process's next claim sees the queue's flow at once
        return next((b for b in self.list_breakers() if (b.queue, b.task) == (queue, task)), None)

    def list_breakers(self) -> list[BreakerInfo]:
        with self._conn() as conn:
            rows = conn.execute(self._q.list_breakers, {"now": self._now()}).fetchall()
        return [breaker_info(r, lambda v: v) for r in rows]

    def list_limited(self) -> list[Limited]:
        rows = self._read_no_jit(self._q.list_limited, {"now": self._now()})
        return [Limited(r["queue"], r["reason"], r["held_key"], r["waiting"], r["running"],
                        r["cap"], r["until"]) for r in rows]

    def limit_reasons(self, ids: Sequence[int]) -> dict[int, tuple[str, str | None]]:
        rows = self._read_no_jit(self._q.limit_reasons, {"ids": list(ids), "now": self._now()})
        return {r["id"]: (r["reason"], r["held_key"]) for r in rows}

    def list_throttled_keys(self) -> list[ThrottledKey]:
        with self._conn() as conn:
            rows = conn.execute(self._q.list_throttled_keys, {"now": self._now()}).fetchall()
        return [ThrottledKey(r["queue"], r["key"], r["until"]) for r in rows]

    def list_queues(self) -> list[QueueInfo]:
        with self._conn() as conn:
            rows = conn.execute(self._q.list_queues, {"now": self._now()}).fetchall()
        return [_queue_info(r) for r in rows]

    # -- operating -----------------------------------------------------------------------------

    def register_worker(self, worker: WorkerRecord) -> None:
        params = {**worker._asdict(), "now": self._now(),
                  "queues": None if worker.queues is None else list(worker.queues),
                  "tasks": None if worker.tasks is None else list(worker.tasks)}
        with self._conn() as conn:
            conn.execute(self._q.register_worker, params)

    def worker_seen(self, worker_id: str, in_flight: int) -> bool:
        params = {"id": worker_id, "in_flight": in_flight, "now": self._now()}
        with self._conn() as conn:
            return conn.execute(self._q.worker_seen, params).fetchone() is not None

    def unregister_worker(self, worker_id: str) -> bool:
        with self._conn() as conn:
            return conn.execute(self._q.unregister_worker, {"id": worker_id}).fetchone() is not None

    def list_workers(self) -> list[WorkerInfo]:
        with self._conn() as conn:
            rows = conn.execute(self._q.list_workers, {"now": self._now()}).fetchall()
        return [
            WorkerInfo(
                id=r["id"], host=r["host"], pid=r["pid"],
                queues=None if r["queues"] is None else tuple(r["queues"]),
                concurrency=r["concurrency"], version=r["version"], started_at=r["started_at"],
                last_seen_at=r["last_seen_at"], in_flight=r["in_flight"],
                alive=r["dead_at"] is None, dead_at=r["dead_at"],
                silent_for=max(float(r["silent_for"]), 0.0),
                tasks=None if r["tasks"] is None else tuple(r["tasks"]),
            )
            for r in rows
        ]

    def prune_workers(self, dead_after: float, forget_after: float) -> tuple[int, int]:
        params = {"dead_after": dead_after, "forget_after": forget_after, "now": self._now()}
        with self._conn() as conn:
            row = conn.execute(self._q.prune_workers, params).fetchone()
        return (int(row["marked"]), int(row["deleted"])) if row else (0, 0)

    def stats(self, window: float) -> StatsRows:
        with self._conn() as conn:
            # One time for every part: the statements' `now` (the server's).
            now_row = conn.execute(self._q.stats_now, {"now": self._now()}).fetchone()
            assert now_row is not None
            params = {"now": now_row["now"], "window": window}
            queues = [QueueSettings(r["name"], r["paused"], r["active"], r["max_workers"],
                                    r["throttled_until"])
                      for r in conn.execute(self._q.stats_queues)]
            live = [LiveRow(r["queue"], r["task"], r["pending"], r["scheduled"], r["running"],
                            r["past_lease"],
                            None if r["oldest_due_age"] is None else float(r["oldest_due_age"]),
                            r["held"])
                    for r in conn.execute(self._q.stats_live, params)]
            dead = [DeadRow(r["queue"], r["task"], r["reason"], r["count"])
                    for r in conn.execute(self._q.stats_dead)]
            recent = [RecentRow(r["queue"], r["task"], r["completed"], r["failed"],
                                r["finished"], r["attempts"], r["first_created"])
                      for r in conn.execute(self._q.stats_recent, params)]
            covered_row = conn.execute(self._q.stats_covered, params).fetchone()
            latency = [
                LatencyRow("task" if r["queue"] is None else "queue",
                           r["task"] if r["queue"] is None else r["queue"], r["count"],
                           _three(r["wait"]), _three(r["run"]))
                for r in conn.execute(self._q.stats_latency, params)
            ]
        return StatsRows(now_row["now"], queues, live, dead, recent, latency,
                         bool(covered_row and covered_row["covered"]))

    def finished_history(self, buckets: int, bucket: float) -> tuple[datetime, list[HistoryRow]]:
        with self._conn() as conn:
            now_row = conn.execute(self._q.stats_now, {"now": self._now()}).fetchone()
            assert now_row is not None
            now = now_row["now"]
            params = {"now": now, "since": now - timedelta(seconds=buckets * bucket),
                      "bucket": bucket}
            rows = [HistoryRow(r["bucket"], r["queue"], r["task"], r["succeeded"], r["dead"])
                    for r in conn.execute(self._q.finished_history, params)]
        return now, rows

    def trace_contexts(self, ids: Sequence[int]) -> dict[int, str]:
        with self._conn() as conn:
            rows = conn.execute(self._q.trace_contexts, {"ids": _numbers(ids)}).fetchall()
        return {r["id"]: r["trace_context"] for r in rows}

    # -- notifications -------------------------------------------------------------------------

    def listen(self) -> Listener:
        """A dedicated connection (outside the pool) listening for new jobs and cancel requests
        on this schema's channels."""
        return _PgListener(self, (self.channel, self.cancel_channel))

    def listen_results(self) -> Listener:
        """A dedicated connection listening on this schema's finished-jobs channel."""
        return _PgListener(self, (self.finished_channel,))

    def watch_results(self, job_ids: Sequence[int], waiter: str) -> None:
        params = {"ids": _numbers(job_ids), "waiter": waiter, "now": self._now()}
        with self._conn() as conn:
            conn.execute(self._q.watch_results, params)

    def unwatch_results(self, job_ids: Sequence[int], waiter: str) -> None:
        with self._conn() as conn:
            conn.execute(self._q.unwatch_results, {"ids": _numbers(job_ids), "waiter": waiter})

    def wake_workers(self, queues: Sequence[str]) -> None:
        with self._conn() as conn:
            conn.execute(self._q.notify_queues, {"names": list(queues)}).fetchall()

    # -- schedules -----------------------------------------------------------------------------

    def list_schedules(self, name: str | None = None) -> list[ScheduleRow]:
        with self._conn() as conn:
            rows = conn.execute(self._q.list_schedules, {"name": name}).fetchall()
        return [_schedule_row(r) for r in rows]

    def insert_schedule(self, row: ScheduleRow) -> bool:
        with self._conn() as conn:
            params = {**_schedule_params(row), "now": self._now()}
            return conn.execute(self._q.insert_schedule, params).fetchone() is not None

    def update_schedule(self, row: ScheduleRow, read: ScheduleRow) -> bool:
        with self._conn() as conn:
            params = {**_schedule_params(row), "now": self._now(),
                      "read_next_run_at": read.next_run_at, "read_paused": read.paused}
            return conn.execute(self._q.update_schedule, params).fetchone() is not None

    def delete_schedule(self, name: str) -> bool:
        with self._conn() as conn:
            return conn.execute(self._q.delete_schedule, {"name": name}).fetchone() is not None

    def fire_schedules(self, plan: Planner, limit: int, retention: float) -> dict[str, list[int]]:
        fired: dict[str, list[int]] = {}
        with self._conn() as conn, conn.transaction(), conn.cursor() as cur:
            now = self._now()
            rows = cur.execute(self._q.due_schedules, {"now": now, "limit": limit}).fetchall()
            pause("schedule.fire_due")  # the due rows read and locked; none moved on yet
            for r in rows:
                planned = plan(_schedule_row(r), r["now"])
                if planned is None:
                    continue
                ids = self._insert(cur, planned.jobs, retention) if planned.jobs else []
                moved = cur.execute(self._q.schedule_fired, {
                    "name": r["name"], "old_next_run_at": r["next_run_at"],
                    "next_run_at": planned.next_run_at, "last_tick": planned.last_tick,
                    "last_job_id": ids[-1] if ids else None, "now": now,
                }).fetchone()
                if moved is None:  # the row is locked by this transaction: cannot happen
                    raise ClaimqError(f"schedule {r['name']!r} changed while locked")
                fired[r["name"]] = ids
        return fired

    def next_schedule_in(self) -> float | None:
        with self._conn() as conn:
            row = conn.execute(self._q.next_schedule_in, {"now": self._now()}).fetchone()
        assert row is not None
        return None if row["seconds"] is None else float(row["seconds"])

    # -- retention -----------------------------------------------------------------------------

    def list_retention(self) -> list[RetentionPolicy]:
        with self._conn() as conn:
            return [RetentionPolicy(**r) for r in conn.execute(self._q.list_retention)]

    def set_retention(self, policy: RetentionPolicy) -> None:
        params = {"queue": policy.queue, "archive_age": policy.archive_age,
                  "archive_rows": policy.archive_rows, "dead_age": policy.dead_age,
                  "dead_rows": policy.dead_rows, "now": self._now()}
        with self._conn() as conn:
            conn.execute(self._q.set_retention, params)

    def delete_retention(self, queue: str) -> bool:
        with self._conn() as conn:
            return conn.execute(self._q.delete_retention, {"queue": queue}).fetchone() is not None

    def take_lease(self, name: str, holder: str, seconds: float) -> bool:
        params = {"name": name, "holder": holder, "seconds": seconds, "now": self._now()}
        with self._conn() as conn:
            return conn.execute(self._q.take_lease, params).fetchone() is not None

    def drop_lease(self, name: str, holder: str) -> None:
        with self._conn() as conn:
            conn.execute(self._q.drop_lease, {"name": name, "holder": holder})

    def prune(self, batch: PruneBatch) -> int:
        query = self._q.prune.replace("{table}", _PRUNED_TABLES[batch.table])
        params = {"queue": batch.queue, "skip": _texts(batch.skip_queues),
                  "older_than": batch.older_than, "keep_rows": batch.keep_rows,
                  "batch": batch.limit, "now": self._now()}
        with self._conn() as conn:
            row = conn.execute(query, params).fetchone()
        return int(row["n"]) if row else 0

    def partition_archive(self) -> bool:
        """The archive partitioned by day of finished_at: the old table becomes the partition
        of everything up to tomorrow, the PARTITIONS_AHEAD days after today get partitions.
        Locks the archive meanwhile (its old rows are checked and indexed once)."""
        with self._conn() as conn:
            if conn.execute(self._q.archive_partitions, prepare=False).fetchall():
                return False
            # After every row it holds: the day after today's, or after the latest row's
            row = conn.execute(f"SELECT max(finished_at) AS m FROM {self.schema}.archive",
                               prepare=False).fetchone()
            now = self.now()
            latest = row["m"] if row is not None and row["m"] is not None else now
            bound = _day(max(now, latest)) + timedelta(days=1)
            with conn.transaction():
                conn.execute(self._q.partition_archive.replace("{bound}", bound.isoformat()),
                             prepare=False)
        self.maintain_partitions(PARTITIONS_AHEAD, None)
        return True

    def maintain_partitions(
        self, ahead_days: int, drop_before: datetime | None
    ) -> tuple[list[str], list[str]]:
        created: list[str] = []
        dropped: list[str] = []
        with self._conn() as conn:
            parts = conn.execute(self._q.archive_partitions, prepare=False).fetchall()
            if not parts:
                return created, dropped
            names = {r["name"] for r in parts}
            covered = max(r["upper_bound"] for r in parts if r["name"] == "archive_before")
            today = _day(self.now())
            for n in range(ahead_days + 1):
                lower = today + timedelta(days=n)
                name = f"archive_p{lower:%Y%m%d}"
                if name in names or lower < covered:
                    continue
                upper = lower + timedelta(days=1)
                if self._partition_ddl(conn, self._q.create_partition.replace(
                        "{name}", name).replace("{lower}", lower.isoformat()).replace(
                        "{upper}", upper.isoformat())):
                    created.append(name)
            for r in parts:
                if drop_before is None or r["upper_bound"] is None:
                    continue
                if r["upper_bound"] <= drop_before and self._partition_ddl(
                        conn, self._q.detach_partition.replace("{name}", r["name"])):
                    conn.execute(f"DROP TABLE {self.schema}.{r['name']}", prepare=False)
                    dropped.append(r["name"])
        return created, dropped

    def _partition_ddl(self, conn: Any, statement: str) -> bool:
        """A partition's DDL under a short lock_timeout: rather than queue the workers'
        completions behind a lock it waits for, it gives up (False) until the next pass."""
        try:
            with conn.transaction():
                conn.execute(f"SET LOCAL lock_timeout = '{PARTITION_LOCK_TIMEOUT}'")
                conn.execute(statement, prepare=False)
        except (psycopg.errors.LockNotAvailable, psycopg.errors.CheckViolation):
            return False  # locked, or the default partition holds rows of that day
        return True

    def prune_progress(self, batch: int) -> int:
        with self._conn() as conn:
            return conn.execute(self._q.prune_progress, {"batch": batch}).rowcount

    def prune_rate_keys(self, batch: int) -> int:
        with self._conn() as conn:
            return conn.execute(self._q.prune_rate_keys,
                                {"now": self._now(), "batch": batch}).rowcount

    def prune_audit(self, age: float, batch: int) -> int:
        with self._conn() as conn:
            return conn.execute(self._q.prune_audit,
                                {"now": self._now(), "age": age, "batch": batch}).rowcount

    def prune_idempotency_keys(self, retention: float, batch: int) -> int:
        params = {"period": retention, "batch": batch, "now": self._now(),
                  "statuses": _HOLDING["until_done"]}  # every live status
        with self._conn() as conn:
            deleted = conn.execute(self._q.prune_idempotency, params).rowcount
            conn.execute(self._q.prune_waiters, {"now": params["now"]})
        return deleted

    # -- workflows (docs/workflows.md; the rule itself: migration 014 and _settle_done.sql) -----

    def add_workflow(self, wf: NewWorkflow, retention: float, conn: Any = None) -> WorkflowAdded:
        if any(j.idempotency_key is not None for j in wf.jobs):
            raise InvalidInput("a workflow's jobs cannot have idempotency keys")
        with self._writing(conn) as cur:
            row = cur.execute(self._q.wf_insert, {
                "name": wf.name, "key": wf.key, "on_failure": wf.on_failure,
                "now": self._now()}).fetchone()
            if row is None:  # the key names a workflow already: nothing written
                existing = cur.execute(self._q.wf_existing, {"key": wf.key}).fetchone()
                if existing is None:
                    raise ClaimqError(f"workflow key {wf.key!r} vanished under its lock")
                return WorkflowAdded(int(existing["id"]), list(existing["job_ids"]), False)
            workflow = int(row["id"])
            edges, waiting = _workflow_edges(
                range(len(wf.jobs)), [[(i, p) for i, p in deps] for deps in wf.after],
                wf.on_failure)
            ids = self._insert_workflow_jobs(cur, workflow, wf.jobs, waiting.get, wf.run_if)
            self._add_edges(cur, workflow, [e._replace(child=ids[e.child], parent=ids[e.parent])
                                            for e in edges])
        return WorkflowAdded(workflow, ids, True)

    def _insert_workflow_jobs(
        self, cur: Any, workflow: int, jobs: Sequence[NewJob], waiting: Callable[[int], int | None],
        run_if: Sequence[str | None],
    ) -> list[int]:
        """insert_workflow_jobs.sql: `jobs` with ids drawn in their order, in `workflow`; job i
        held when waiting(i) is not None. Their queues are made and marked as enqueue does."""
        if not jobs:
            return []
        _, params = self.enqueue_params(jobs)
        head = cur.execute(self._q.allocate_ids, {"n": len(jobs), "now": params["now"]}).fetchone()
        ids = sorted(head["ids"])
        cur.execute(self._q.ensure_queues, {"names": sorted({j.queue for j in jobs}),
                                            "now": params["now"]})
        if self._limited and any(_limited_by_key(j) for j in jobs):
            self._limited.clear()  # a queue may become keyed: this process's claims see it now
        self._mark_keyed(cur, jobs, params["now"])
        cur.execute(self._q.insert_workflow_jobs, {
            **params, "id": _numbers(ids), "workflow": workflow,
            "waiting": _numbers(waiting(i) for i in range(len(jobs))),
            "run_if": _texts(run_if[i] if i < len(run_if) else None for i in range(len(jobs))),
        }).fetchall()
        return ids

    def _add_edges(self, cur: Any, workflow: int, edges: Sequence[_NewEdge]) -> None:
        if edges:
            cur.execute(self._q.wf_add_edges, {
                "workflow": workflow, "child": _numbers(e.child for e in edges),
                "parent": _numbers(e.parent for e in edges),
                "position": _numbers(e.position for e in edges),
                "on_failure": _texts(e.on_failure for e in edges)})

    def spawn(self, owned: Owned, jobs: Sequence[NewJob], after: Sequence[Sequence[int]],
              retention: float) -> list[int] | None:
        if any(j.idempotency_key is not None for j in jobs):
            raise InvalidInput("a workflow's jobs cannot have idempotency keys")
        now = self._now()
        with self._conn() as conn, conn.transaction(), conn.cursor() as cur:
            spawner = cur.execute(self._q.wf_spawner,
                                  {"id": owned.id, "token": _token(owned.token)}).fetchone()
            if spawner is None:
                return None
            workflow, policy = spawner["workflow_id"], spawner["on_failure"]
            if workflow is None:  # a one-job workflow of its own first, named after its task
                policy = "cancel"
                made = cur.execute(self._q.wf_insert, {
                    "name": spawner["task"], "key": None, "on_failure": policy,
                    "now": now}).fetchone()
                assert made is not None  # no key: no conflict
                workflow = int(made["id"])
                cur.execute(self._q.wf_adopt, {"workflow": workflow, "id": owned.id})
            edges, waiting = _workflow_edges(
                range(len(jobs)), [[(i, None) for i in deps] for deps in after], policy)
            ids = self._insert_workflow_jobs(cur, workflow, jobs, waiting.get, ())
            edges = [e._replace(child=ids[e.child], parent=ids[e.parent]) for e in edges]
            more: dict[int, int] = {}
            for d in cur.execute(self._q.wf_dependents, {"id": owned.id}).fetchall():
                for n, parent in enumerate(ids):
                    edges.append(_NewEdge(d["child"], parent, d["next_position"] + n,
                                          d["on_failure"]))
                if ids:
                    more[d["child"]] = len(ids)
            self._add_edges(cur, workflow, edges)
            if more:
                cur.execute(self._q.wf_wait_more, {
                    "ids": _numbers(more), "counts": _numbers(more.values()), "now": now})
        return ids

    def get_workflow(self, workflow_id: int) -> WorkflowInfo | None:
        with self._conn() as conn:
            row = conn.execute(self._q.get_workflow, {"id": workflow_id}).fetchone()
        return None if row is None else _workflow_info(row)

    def list_workflows(self, limit: int, before: int | None = None) -> list[WorkflowInfo]:
        with self._conn() as conn:
            rows = conn.execute(self._q.list_workflows,
                                {"limit": limit, "before": before}).fetchall()
        return [_workflow_info(r) for r in rows]

    def workflow_graph(self, workflow_id: int) -> tuple[list[Job], list[Edge]]:
        with self._conn() as conn, conn.transaction():  # one snapshot for both
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            jobs = [_row_to_job(r) for r in conn.execute(
                self._q.workflow_jobs, {"id": workflow_id}).fetchall()]
            edges = [Edge(r["parent"], r["child"], r["on_failure"], r["resolved"])
                     for r in conn.execute(self._q.workflow_edges, {"id": workflow_id})]
        return jobs, edges

    def dependencies(self, job_id: int) -> list[Dependency]:
        with self._conn() as conn:
            rows = conn.execute(self._q.dependencies, {"id": job_id}).fetchall()
        return [Dependency(r["id"], r["task"], r["status"], r["result"], r["reason"])
                for r in rows]

    def cancel_workflow(self, workflow_id: int) -> int:
        """cancel_workflow.sql, then once more in the same transaction: a held job released by
        a parent that finished while the first ran (its transaction committed meanwhile) is
        in jobs now, where the first statement's snapshot did not see it."""
        touched = 0
        with self._conn() as conn, conn.transaction():
            for _ in range(2):
                row = conn.execute(self._q.cancel_workflow,
                                   {"id": workflow_id, "now": self._now()}).fetchone()
                touched += int(row["n"]) if row else 0
        return touched

    def retry_workflow(self, workflow_id: int) -> list[int]:
        done: list[int] = []
        with self._conn() as conn, conn.transaction():
            failed = [r["id"] for r in conn.execute(self._q.wf_retryable,
                                                    {"id": workflow_id}).fetchall()]
            for job_id in failed:
                params = {"id": job_id, "payload": None, "priority": None, "now": self._now(),
                          "statuses": _HOLDING["until_done"], "period": KEY_RETENTION}
                if self._resurrect(conn, job_id, params):
                    done.append(job_id)
        return done

    def run_sql(
        self, sql: str, params: Sequence[Any] = (), conn: Any = None
    ) -> list[tuple[Any, ...]]:
        if conn is not None:
            if not isinstance(conn, psycopg.Connection):
                raise InvalidInput("conn must be a psycopg.Connection for a PostgreSQL database")
            try:
                cur = conn.cursor(row_factory=tuple_row)
                cur.execute(sql, tuple(params) if params else None)
                return cur.fetchall() if cur.description is not None else []
            except psycopg.Error as exc:
                raise self._error(exc) from exc
        with self._conn() as own:
            cur = own.cursor(row_factory=tuple_row)
            cur.execute(sql, tuple(params) if params else None)
            return cur.fetchall() if cur.description is not None else []

    placeholder = "%s"

    def table(self, name: str) -> str:
        return f"{self.schema}.{name}"

    def own_table(self, name: str) -> str:
        return f"{self.schema}.{name}"

    def seconds_between(self, later: str, earlier: str) -> str:
        return f"extract(epoch FROM {later} - {earlier})::float8"

    def analyze(self) -> None:
        for name in ("jobs", "archive", "queues"):
            self.run_sql(f"ANALYZE {self.table(name)}")

    def check_location(self, *, missing_ok: bool) -> None:
        """Nothing to check here: connecting tells (check_schema)."""

    @classmethod
    def fresh_url(cls, url: str, prefix: str, *, replace: bool = False) -> str:
        """The URL with a new schema `PREFIX_xxxxxxxx` (made by the first migrate)."""
        return with_option(url, "schema", f"{prefix}_{secrets.token_hex(4)}")

    def drop_all(self) -> None:
        """Drops the URL's schema with everything in it, then closes the backend."""
        try:
            self.run_sql(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")
        finally:
            self.close()

    def listen_connection(self) -> psycopg.Connection[Any]:
        """Deprecated alias of listen() (kept until the worker's notifier uses listen()): the
        listening psycopg connection itself, on channels `channel` and `cancel_channel`."""
        conn = psycopg.connect(self.conninfo, autocommit=True)
        conn.execute(f"LISTEN {self.channel}")
        conn.execute(f"LISTEN {self.cancel_channel}")
        return conn
