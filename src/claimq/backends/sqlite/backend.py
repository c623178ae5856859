"""SQLite backend: one machine, any number of processes; one writer at a time (BEGIN IMMEDIATE)."""

from __future__ import annotations

import heapq
import itertools
import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar
from urllib.parse import parse_qs, urlparse

from claimq._pause import pause
from claimq._validate import NO_FLOW, NewJob
from claimq.backends import _workflow
from claimq.backends._batches import PURGE_BATCH, all_batches
from claimq.backends._flow import (
    KeyBuckets,
    Probe,
    aged_priority,
    aging_scan,
    breaker_gates,
    claim_order,
    level_scan,
    queue_room,
    through_gates,
    within_keys,
)
from claimq.backends._plain import PlainOptionalParts
from claimq.backends._rows import (
    HOLDING_JSON,
    breaker_info,
    breaker_params,
    flow_params,
    flow_settings,
    job_from_row,
    json_text,
    latency_rows,
    lease_expired_error,
)
from claimq.backends._sqlfiles import load_migrations, load_queries
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
    Limited,
    LiveRow,
    NewWorkflow,
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
from claimq.backends.sqlite._errors import mapped, translate
from claimq.clock import Clock, SystemClock, is_system
from claimq.errors import (
    ClaimqError,
    DatabaseError,
    DatabaseMissing,
    DatabaseUnavailable,
    InvalidInput,
    KeyHeld,
    MigrationError,
    SchemaMissing,
)
from claimq.job import Job, Status, ends_job, expired_lease_reason

_T = TypeVar("_T")
_Q = load_queries("claimq.backends.sqlite")
_MIGRATIONS = load_migrations("claimq.backends.sqlite")
_SYNCHRONOUS = {"off", "normal", "full", "extra"}


def _ts(value: Any, name: str, corrupt: list[str]) -> datetime | None:
    """A stored time (seconds since the epoch); one that is no time at all is noted as corrupt
    and read as None."""
    if value is None:
        return None
    try:
        return datetime.fromtimestamp(value, UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        corrupt.append(f"{name} holds {str(value)[:50]!r}, not a time")
        return None


def _pairs(owned: Sequence[Owned]) -> str:
    return json.dumps([[o.id, o.token] for o in owned])


def _valid_errors(text: Any) -> str:
    """SQL function claimq_errors(errors): the history itself when it is a JSON array, else (a
    column another client broke) a fresh history that says what it held, so that a failure or
    the reaper can still append to it."""
    try:
        if isinstance(json.loads(text), list):
            return str(text)
    except (TypeError, ValueError):
        pass
    return json.dumps([{"error": "CorruptColumn",
                        "message": f"errors column held {str(text)[:200]!r}, not a JSON array"}])


def _key_buckets(conn: sqlite3.Connection, params: dict[str, Any], state: Any) -> KeyBuckets:
    """A flow queue's rate keys' buckets for one claim (KeyBuckets), on this connection."""
    queue, now = params["queue"], params["now"]

    def read(key: str) -> Any:
        return conn.execute(_Q.rate_key_state, {"queue": queue, "key": key}).fetchone()

    def consume(key: str, tat: float, n: int) -> None:
        conn.execute(_Q.rate_key_consume, {"queue": queue, "key": key, "tat": tat, "n": n,
                                           "interval": buckets.interval, "now": now})

    buckets = KeyBuckets(state, now, read, consume)
    return buckets


class _FlowBook:
    """What one claim's flow queues spend once its jobs are chosen: rate-limited queues' tokens
    (their tat and the jobs they offered), breakers' probes, rate keys' tokens."""

    def __init__(self) -> None:
        self.rated: dict[str, tuple[float, set[int]]] = {}
        self.probes: list[Probe] = []
        self.buckets: list[KeyBuckets] = []

    def spend(self, conn: sqlite3.Connection, chosen: set[int], now: float) -> None:
        for queue, (tat, offered) in self.rated.items():
            spent = len(offered.intersection(chosen))
            if spent:
                conn.execute(_Q.rate_consume, {"queue": queue, "tat": tat, "n": spent})
        for probe in self.probes:
            if probe.probe_id in chosen:  # the breaker is half_open while its probe is out
                conn.execute(_Q.breaker_probe, {**probe._asdict(), "now": now})
        for buckets in self.buckets:
            buckets.spend(chosen)


def _autocommits(conn: sqlite3.Connection) -> bool:
    """Whether the caller's connection commits each statement by itself (Python 3.12's
    autocommit=True, or isolation_level None), rather than opening a transaction at the first
    write (the default) or keeping one open (autocommit=False)."""
    mode = getattr(conn, "autocommit", None)
    if mode is True or mode is False:
        return mode
    return conn.isolation_level is None


def _claim_order(row: sqlite3.Row) -> tuple[int, float, int]:
    return claim_order(row["priority"], row["run_at"], row["id"])


class _Beyond:
    """A flow queue's candidates after the claim's first rows (`last`: the last of them, None
    when they were all there is), in claim order, read only if the claim gets that far: per
    concurrency key its first jobs (no more than the claim can take of one key), and the jobs
    without a key, merged. One index probe per key, never a row-by-row read of the jobs held
    back (a key at its limit, sequence jobs). A key's read passes over the jobs the claim would
    drop for their task's breaker (`gates`, as the claim has met them so far) or their rate key
    (`buckets`: throttled, or its bucket empty), so that a run of them at the key's head does not
    hold back its jobs behind."""

    def __init__(
        self, conn: sqlite3.Connection, params: dict[str, Any], last: sqlite3.Row | None,
        gates: dict[str, Probe], buckets: KeyBuckets,
    ) -> None:
        self.conn, self.params, self.last = conn, params, last
        self.gates, self.buckets = gates, buckets

    def __iter__(self) -> Iterator[sqlite3.Row]:
        if self.last is None:
            return
        conn, params, after = self.conn, self.params, _claim_order(self.last)
        # tasks shut, or whose one probe is already offered (through_gates drops their jobs)
        gated = sorted(t for t, gate in self.gates.items() if gate.probe_id is not None)
        per_key = {**params, "gated": json.dumps(gated) if gated else None,
                   "key_full": self.buckets.full_ahead()}
        keyed = [conn.execute(_Q.claim_flow_key_jobs, {**per_key, "key": k}).fetchall()
                 for (k,) in conn.execute(_Q.claim_flow_keys, params).fetchall()]
        rest = conn.execute(_Q.claim_flow_unkeyed, params)
        for row in heapq.merge(rest, *keyed, key=_claim_order):
            if _claim_order(row) > after:
                yield row


def _epoch(value: Any) -> datetime:
    """A stored time: seconds since the epoch."""
    return datetime.fromtimestamp(value, UTC)


def _row_to_job(row: sqlite3.Row) -> Job:
    """A live, archive, dead or claimed row as a Job (job_from_row: times are seconds since the
    epoch, JSON columns text)."""
    return job_from_row(dict(zip(row.keys(), row, strict=True)), json_text, _epoch)


def _schedule_row(r: sqlite3.Row) -> ScheduleRow:
    def at(name: str) -> datetime | None:
        return None if r[name] is None else datetime.fromtimestamp(r[name], UTC)

    next_run_at = at("next_run_at")
    assert next_run_at is not None  # NOT NULL
    return ScheduleRow(
        name=r["name"], task=r["task"], payload_json=r["payload_json"], queue=r["queue"],
        priority=r["priority"], max_attempts=r["max_attempts"], timeout=r["timeout_seconds"],
        cron=r["cron"], every=r["every_seconds"], tz=r["tz"], missed=r["missed"],
        paused=bool(r["paused"]), next_run_at=next_run_at, last_run_at=at("last_run_at"),
        last_job_id=r["last_job_id"], declared=r["declared"], created_at=at("created_at"),
        updated_at=at("updated_at"),
    )


def _schedule_params(row: ScheduleRow, now: float) -> dict[str, Any]:
    return {
        "name": row.name, "task": row.task, "payload": row.payload_json, "queue": row.queue,
        "priority": row.priority, "max_attempts": row.max_attempts, "timeout": row.timeout,
        "cron": row.cron, "every": row.every, "tz": row.tz, "missed": row.missed,
        "paused": int(row.paused), "next_run_at": row.next_run_at.timestamp(),
        "declared": row.declared, "now": now,
    }


_PRUNED_TABLES = {"archive": "claimq_archive", "dead": "claimq_dead"}


def _ids(ids: Iterable[int]) -> str:
    return json.dumps(list(ids))


class _Steps:
    """The release rule's statements (backends/_workflow.Steps) on one write transaction's
    connection."""

    def __init__(self, conn: sqlite3.Connection, now: float) -> None:
        self.conn = conn
        self.now = now

    def _run(self, query: str, **params: Any) -> list[Any]:
        return self.conn.execute(query, {"now": self.now, **params}).fetchall()

    def out_edges(self, parents: Sequence[int]) -> list[_workflow.OutEdge]:
        return [_workflow.OutEdge(r[0], r[1], r[2], bool(r[3]), r[4], r[5])
                for r in self._run(_Q.wf_out_edges, ids=_ids(parents))]

    def resolve(self, edges: Sequence[tuple[int, int]]) -> None:
        if edges:
            self._run(_Q.wf_resolve, edges=json.dumps(edges))

    def bury(self, jobs: Sequence[_workflow.Buried]) -> list[int]:
        items = "[" + ",".join(f"[{b.id},{b.error_json}]" for b in jobs) + "]"
        ids = [r[0] for r in self._run(_Q.wf_bury, items=items, reason="dependency_failed")]
        if ids:
            self._run(_Q.wf_drop_held, ids=_ids(ids))
        return ids

    def decrement(self, counts: Mapping[int, int]) -> None:
        self._run(_Q.wf_decrement, counts=json.dumps(list(counts.items())))

    def ready(self, children: Sequence[int]) -> list[_workflow.Ready]:
        return [_workflow.Ready(r[0], r[1], bool(r[2]))
                for r in self._run(_Q.wf_ready, ids=_ids(children))]

    def promote(self, ids: Sequence[int]) -> None:
        self._run(_Q.wf_promote, ids=_ids(ids))

    def skip(self, ids: Sequence[int]) -> None:
        self._run(_Q.wf_skip, ids=_ids(ids))

    def drop_held(self, ids: Sequence[int]) -> None:
        self._run(_Q.wf_drop_held, ids=_ids(ids))

    def dead_dependents(self, parents: Sequence[int]) -> list[int]:
        return [r[0] for r in self._run(_Q.wf_dead_dependents, ids=_ids(parents))]

    def unbury(self, job_id: int, payload_json: str | None, priority: int | None) -> bool:
        if not self._run(_Q.wf_unbury, id=job_id, payload=payload_json, priority=priority):
            return False
        self._run(_Q.delete_dead, id=job_id)
        return True

    def in_edges(self, children: Sequence[int]) -> list[_workflow.InEdge]:
        return [_workflow.InEdge(*r) for r in self._run(_Q.wf_in_edges, ids=_ids(children))]

    def mark(self, edges: Sequence[tuple[int, int, bool]]) -> None:
        if edges:
            self._run(_Q.wf_mark, marks=json.dumps(edges))

    def set_waiting(self, counts: Mapping[int, int]) -> None:
        if counts:
            self._run(_Q.wf_set_waiting, counts=json.dumps(list(counts.items())))


class SQLiteBackend(PlainOptionalParts):
    """`sqlite:///relative.db`, `sqlite:////absolute.db`; options `?busy_timeout=SECONDS`,
    `&synchronous=off|normal|full|extra` (default full: a committed job survives power loss)."""

    kind = "sqlite"
    engine = "SQLite"
    schema = ""  # one file, no schemas
    # One writer at a time and no server: nothing optional. Where the interface has an optional
    # method, this backend does the plain thing or raises NotImplementedError (each says which).
    capabilities = Capabilities(flow_control=True, workflows=True)

    def __init__(self, url: str, clock: Clock | None = None) -> None:
        parsed = urlparse(url)
        if parsed.scheme != "sqlite" or not parsed.path.startswith("/") or parsed.path == "/":
            raise InvalidInput(f"not a SQLite URL (want sqlite:///path.db): {url!r}")
        self.url = url
        self.path = parsed.path[1:]
        options = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
        unknown = set(options) - {"busy_timeout", "synchronous"}
        if unknown:
            raise InvalidInput(f"unknown SQLite URL option(s): {sorted(unknown)}")
        try:
            self.busy_timeout = float(options.get("busy_timeout", "60"))
        except ValueError:
            raise InvalidInput("busy_timeout must be a number of seconds") from None
        if not 0 <= self.busy_timeout < 2**31 / 1000:  # also rejects nan and inf
            raise InvalidInput("busy_timeout must be a number of seconds >= 0")
        self.synchronous = options.get("synchronous", "full").lower()
        if self.synchronous not in _SYNCHRONOUS:
            raise InvalidInput(f"synchronous must be one of {sorted(_SYNCHRONOUS)}")
        self.clock: Clock = clock if clock is not None else SystemClock()
        # Seconds since the epoch, as the tables store times: time.time itself for the system
        # clock (every statement takes its time from Python, the one clock of one machine).
        self._time: Callable[[], float] = (
            time.time if is_system(self.clock) else lambda: self.clock.now().timestamp()
        )
        self._local = threading.local()
        # every connection made, with the thread it belongs to (close() needs to know)
        self._all: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._all_lock = threading.Lock()
        self._writer = threading.Lock()

    # -- connections ---------------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self.connect()
            self._local.conn = conn
            with self._all_lock:
                self._all.append((threading.current_thread(), conn))
        return conn

    def connect(self) -> sqlite3.Connection:
        """A new connection set up the way claimq needs (WAL, busy timeout, autocommit)."""
        conn = sqlite3.connect(
            self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
        )
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={self.synchronous}")
        conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
        conn.create_function("claimq_errors", 1, _valid_errors, deterministic=True)
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction; BEGIN IMMEDIATE takes the writer lock up front so two
        claimers can never interleave."""
        # Every sqlite3 error inside becomes claimq's (the one place the write path maps them;
        # nothing extra runs on success).
        try:
            conn = self._conn()
            # Threads of one process queue here rather than in SQLite's busy handler, whose
            # sleeps grow to 100 ms; only other processes contend for the file lock.
            self._take_writer()
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            finally:
                self._writer.release()
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    def _take_writer(self) -> None:
        """This process's writer lock, for one write transaction. Never waits for ever: a
        thread inside app.transaction() holds it (a write of claimq's own there would wait for
        the transaction that waits for it: refused at once), and another thread waits at most
        busy_timeout, as for another process's writer."""
        if getattr(self._local, "transaction", False):
            raise InvalidInput(
                "this thread is inside app.transaction(), which holds SQLite's one writer: pass "
                "its connection as conn= to write in it (enqueue(..., conn=conn)), or write "
                "after it ends")
        if not self._writer.acquire(timeout=self.busy_timeout):
            raise DatabaseUnavailable(
                f"database is locked ({self.path}): another thread of this process held the "
                f"write lock (an app.transaction()?) for the busy_timeout of "
                f"{self.busy_timeout:g} s")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction on claimq's own connection, for the caller's business writes
        together with enqueue(conn=…) or a handler's ctx.complete_in(conn). Opening it maps
        errors like every method; the caller's own statements and the commit raise sqlite3's."""
        self._take_writer()
        try:
            try:
                conn = self._conn()
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise translate(exc, self.path) from exc
            self._local.transaction = True
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            finally:
                self._local.transaction = False
            conn.execute("COMMIT")
        finally:
            self._writer.release()

    def close(self) -> None:
        """Closes this thread's connection and those of threads that have ended. A connection
        of a thread still running may be inside a statement at this moment (a worker's database
        call abandoned at its timeout), and closing it under that thread crashes the process
        (CPython's sqlite3): it is only let go, and closes when its thread drops it."""
        me = threading.current_thread()
        with self._all_lock:
            for owner, conn in self._all:
                if owner is me or not owner.is_alive():
                    conn.close()
            self._all.clear()
        self._local = threading.local()

    def now(self) -> datetime:
        return self.clock.now()

    def grant(self, role: str, kind: RoleKind) -> None:
        raise InvalidInput("SQLite has no database roles: the file's permissions decide who may "
                           "read or write it")

    # -- migrations ----------------------------------------------------------------------------

    def migrate(self) -> list[int]:
        applied: list[int] = []
        with self._write() as conn:  # the writer lock makes concurrent migrate() calls queue up
            conn.execute(
                "CREATE TABLE IF NOT EXISTS claimq_migrations ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
            )
            done = {r[0] for r in conn.execute("SELECT version FROM claimq_migrations")}
            for version, name, text in _MIGRATIONS:
                if version in done:
                    continue
                for statement in _split_statements(text):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO claimq_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, self._time()),
                )
                applied.append(version)
        return applied

    @mapped
    def schema_version(self) -> int:
        try:
            row = self._conn().execute("SELECT max(version) FROM claimq_migrations").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return 0
            raise
        return int(row[0] or 0)

    def check_schema(self) -> None:
        latest = _MIGRATIONS[-1][0]
        found = self.schema_version()
        if found < latest:
            raise SchemaMissing(
                f"database schema is at version {found}, claimq needs {latest}: "
                "run `claimq migrate` (or app.migrate())"
            )

    # -- enqueue -------------------------------------------------------------------------------

    def enqueue(self, jobs: Sequence[NewJob], retention: float, conn: Any = None) -> list[int]:
        if conn is not None:
            if not isinstance(conn, sqlite3.Connection):
                raise InvalidInput("conn must be a sqlite3.Connection for a SQLite database")
            try:
                return self._insert_callers(conn, jobs, retention)
            except sqlite3.Error as exc:
                raise translate(exc, self.path) from exc
        with self._write() as own:
            return self._insert(own, jobs, retention)

    def _insert_callers(
        self, conn: sqlite3.Connection, jobs: Sequence[NewJob], retention: float
    ) -> list[int]:
        """enqueue() on the caller's connection, with SQLite's write lock taken before any key
        is read (else two callers could both read a key free and both insert)."""
        keyed = any(j.idempotency_key is not None for j in jobs)
        return self._callers(conn, lambda c: self._insert(c, jobs, retention), keyed)

    def _callers(
        self, conn: sqlite3.Connection, write: Callable[[sqlite3.Connection], _T], lock: bool
    ) -> _T:
        """`write` on the caller's connection. Inside the caller's transaction: with `lock`, a
        write that changes nothing takes SQLite's write lock first (before any key is read).
        Outside one: BEGIN IMMEDIATE, then COMMIT here when the connection autocommits (all or
        nothing), else the transaction stays open for the caller, as the first INSERT would
        have left it."""
        if conn.in_transaction:
            if lock:
                conn.execute(_Q.take_writer)
            return write(conn)
        conn.execute("BEGIN IMMEDIATE")
        if not _autocommits(conn):
            return write(conn)
        try:
            done = write(conn)
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return done

    def _insert(
        self, conn: sqlite3.Connection, jobs: Sequence[NewJob], retention: float
    ) -> list[int]:
        now = self._time()
        ids: list[int] = []
        seen_queues: set[str] = set()
        for job in jobs:
            run_at = job.run_at.timestamp() if job.run_at is not None else now + job.delay
            if job.idempotency_key is not None:
                held = self._held(conn, job, now, retention, run_at)
                if held is not None:
                    ids.append(held)
                    continue  # a held key writes nothing, not even its queue
            if job.queue not in seen_queues:
                conn.execute(_Q.ensure_queue, {"name": job.queue, "now": now})
                seen_queues.add(job.queue)
            flow = job.flow or NO_FLOW
            if (flow.concurrency_key is not None or flow.sequence_key is not None
                    or flow.rate_key is not None):
                conn.execute(_Q.mark_keyed_queue, {"name": job.queue, "now": now})
            job_id = conn.execute(
                _Q.insert_job,
                {
                    "queue": job.queue,
                    "task": job.task,
                    "payload": job.payload_json,
                    "tags": json.dumps(list(job.tags)),
                    "idempotency_key": job.idempotency_key,
                    "priority": job.priority,
                    "max_attempts": job.max_attempts,
                    "run_at": run_at,
                    "now": now,
                    "timeout_seconds": job.timeout,
                    "retry": job.retry_json,
                    "trace_context": job.trace_context,
                    "concurrency_key": flow.concurrency_key,
                    "concurrency_limit": flow.concurrency_limit,
                    "sequence_key": flow.sequence_key,
                    "sequence_wait": flow.sequence_wait,
                    "rate_key": flow.rate_key,
                },
            ).fetchone()[0]
            if job.idempotency_key is not None:
                conn.execute(
                    _Q.set_key_holder, {"key": job.idempotency_key, "job_id": job_id, "now": now}
                )
            ids.append(job_id)
        return ids

    def _held(
        self, conn: sqlite3.Connection, job: NewJob, now: float, retention: float, run_at: float
    ) -> int | None:
        """The id of the job still holding `job`'s idempotency key under its `unique` scope
        (with on_conflict="replace", a pending holder first takes `job`'s payload and run_at),
        or None when the key is free for `job`."""
        flow = job.flow or NO_FLOW
        period = retention if flow.unique_for is None else flow.unique_for
        params = {"key": job.idempotency_key, "statuses": HOLDING_JSON[flow.unique],
                  "since": now - period if flow.unique == "until_done" else None}
        # by position: the caller's connection (conn=) may have no row factory
        holder = conn.execute(_Q.key_holder, params).fetchone()
        pause("enqueue.key_checked")
        if holder is None or not holder[1]:
            return None
        job_id, _, status = holder
        if flow.on_conflict == "replace" and status == Status.PENDING:
            pause("debounce.holder_read")  # (the writer lock keeps claims out until commit)
            conn.execute(_Q.replace_pending, {"id": job_id, "payload": job.payload_json,
                                              "run_at": run_at, "now": now}).fetchall()
        return int(job_id)

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
        with self._write() as conn:
            return self._claim(conn, ClaimRequest(worker_id, queues, limit, lease, start))

    def _claim(self, conn: sqlite3.Connection, req: ClaimRequest) -> list[Job]:
        now = self._time()
        queues = None if req.queues is None else json.dumps(list(req.queues))
        caps = conn.execute(_Q.claim_capacity, {"limit": req.limit, "queues": queues}).fetchall()
        candidates: list[tuple[int, float, int]] = []
        book = _FlowBook()  # what the flow queues' claims spend once the jobs are chosen
        skip = json.dumps(req.skip_tasks) if req.skip_tasks else None
        for name, free, flow in caps:
            if free <= 0:
                continue
            params = {"queue": name, "now": now, "limit": min(free, req.limit), "skip": skip}
            if flow:
                candidates.extend(self._flow_candidates(conn, params, book))
                continue
            for row in conn.execute(_Q.claim_candidates, params):
                candidates.append((-row["priority"], row["run_at"], row["id"]))
        if not candidates:
            return []
        chosen = [c[2] for c in sorted(candidates)[: req.limit]]
        pause("claim.candidates")
        book.spend(conn, set(chosen), now)
        rows = conn.execute(
            _Q.claim_update,
            {"worker_id": req.worker_id, "now": now, "lease": req.lease,
             "ids": json.dumps(chosen), "start": req.start},
        ).fetchall()
        order = {job_id: n for n, job_id in enumerate(chosen)}  # priority, run_at, id
        return sorted((_row_to_job(r) for r in rows), key=lambda j: order[j.id])

    def _flow_candidates(
        self, conn: sqlite3.Connection, params: dict[str, Any],
        book: _FlowBook,
    ) -> list[tuple[int, float, int]]:
        """A flow-controlled queue's claimable jobs, at most params["limit"]: no more than its
        rate limit's bucket holds, none whose concurrency key already runs its limit. The
        single writer's transaction makes the counts exact. A rate-limited queue's offer goes
        into `book` (the claim spends tokens for those it takes). No job of a task whose
        circuit breaker is open; one (its probe, into `book`) of one that cooled down. A job
        with a rate key takes a token of its key's bucket."""
        state = conn.execute(_Q.claim_flow_state, params).fetchone()
        limit, now = params["limit"], params["now"]
        limit, tat = queue_room(state, now, limit,
                                lambda: conn.execute(_Q.clear_throttle, params))
        if limit <= 0:
            return []
        running: dict[str, int] = json.loads(state["running"] or "{}")
        gates = self._gates(conn, params) if state["breakers"] else {}
        buckets = _key_buckets(conn, params, state)
        book.buckets.append(buckets)
        window = aging_scan(limit)
        first = conn.execute(_Q.claim_flow_candidates, {**params, "window": window}).fetchall()
        rows = [r for r in first if r["sequence_key"] is None]
        # each ordered sequence's head (none without keyed jobs), in the same order
        heads = conn.execute(_Q.claim_sequence_heads, params).fetchall() if state["keyed"] else []
        beyond = iter(_Beyond(conn, params, first[-1] if len(first) >= window else None, gates,
                              buckets))
        ranked: Iterable[tuple[int, sqlite3.Row]]
        if state["aging_step"] is not None:  # the first `window` jobs that are not sequence jobs
            head = rows + list(itertools.islice(beyond, window - len(rows)))
            ranked = self._aged(conn, params, head, limit, state["aging_step"], state["aging_cap"],
                                heads)
        else:
            ranked = ((r["priority"], r) for r in heapq.merge(
                itertools.chain(rows, beyond), heads, key=_claim_order))
        skip = set(json.loads(params["skip"])) if params["skip"] else ()
        # (row, its claim order), but a task the claimer cannot run (ClaimRequest.skip_tasks)
        offered = ((row, claim_order(rank, row["run_at"], row["id"]))
                   for rank, row in ranked if row["task"] not in skip)
        found = within_keys(through_gates(offered, gates, book.probes), running, limit,
                            buckets.take)
        if state["rate_count"] is not None:
            book.rated[params["queue"]] = (tat, {c[2] for c in found})
        return found

    def _gates(self, conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Probe]:
        """The queue's circuit breakers that hold its tasks back, by task (breaker_gates)."""
        now = params["now"]
        return breaker_gates(
            conn.execute(_Q.claim_breakers, params).fetchall(), params["queue"], now,
            lambda probe: conn.execute(_Q.breaker_probe, {**probe._asdict(), "now": now}),
            Status.PENDING.value,
            lambda probe: conn.execute(_Q.breaker_reopen, {**probe._asdict(), "now": now}))

    def _aged(
        self, conn: sqlite3.Connection, params: dict[str, Any], head: list[sqlite3.Row],
        limit: int, step: float, cap: int, heads: list[sqlite3.Row],
    ) -> list[tuple[int, sqlite3.Row]]:
        """Priority aging: candidates in the order of priority plus one for every `step`
        seconds due (at most `cap` more): the first of the plain order (`head`), and the oldest
        of each priority level below the top one that aging can lift to it."""
        now = params["now"]
        picked = {r["id"]: r for r in head}
        picked.update((r["id"], r) for r in heads)
        if picked:
            top = max(r["priority"] for r in picked.values())
            for level in range(top - cap, top):
                picked.update((r["id"], r) for r in conn.execute(
                    _Q.claim_level_heads, {**params, "level": level, "limit": level_scan(limit)}))
        aged = [(aged_priority(r["priority"], now - r["run_at"], step, cap), r)
                for r in picked.values()]
        return sorted(aged, key=lambda a: claim_order(a[0], a[1]["run_at"], a[1]["id"]))

    def settle(
        self,
        done: Sequence[Completion],
        failures: Sequence[Failure],
        claim: ClaimRequest | None = None,
    ) -> Settled:
        """Completions, failures and the next claim in one write transaction."""
        with self._write() as conn:
            completed = self._complete(conn, done)
            failed = self._fail(conn, failures)
            jobs = self._claim(conn, claim) if claim is not None and claim.limit > 0 else []
            pause("settle.claimed")  # written, not yet committed
        return Settled(completed, failed, jobs)

    def start(self, owned: Sequence[Owned], lease: float | None) -> list[Started]:
        if not owned:
            return []
        with self._write() as conn:
            params = {"items": _pairs(owned), "now": self._time(), "lease": lease}
            return [Started(r["id"], r["attempts"]) for r in conn.execute(_Q.start, params)]

    def heartbeat(self, owned: Sequence[Owned], lease: float | None) -> HeartbeatResult:
        return self._renew(owned, lease, confirming=False)

    def confirm_owned(self, owned: Owned, lease: float | None) -> HeartbeatResult:
        # One writer at a time: a heartbeat under way is waited for (the busy timeout) like
        # any write, and a heartbeat never answers busy here.
        pause("ensure_owned.read")
        return self._renew([owned], lease, confirming=True)

    def _renew(self, owned: Sequence[Owned], lease: float | None, *, confirming: bool
               ) -> HeartbeatResult:
        result = HeartbeatResult()
        if not owned:
            return result
        with self._write() as conn:
            if confirming:
                pause("ensure_owned.locked")
            else:
                pause("heartbeat.locked")
            params = {"items": _pairs(owned), "now": self._time(), "lease": lease}
            for row in conn.execute(_Q.heartbeat, params).fetchall():
                result.alive.add(row["id"])
                if row["cancel_requested"]:
                    result.cancel_requested.add(row["id"])
        result.lost.update(o.id for o in owned if o.id not in result.alive)
        return result

    def complete(self, done: Sequence[Completion], conn: Any = None) -> set[int]:
        if conn is not None:
            if not isinstance(conn, sqlite3.Connection):
                raise InvalidInput("conn must be a sqlite3.Connection for a SQLite database")
            try:
                return self._complete(conn, done)
            except sqlite3.Error as exc:
                raise translate(exc, self.path) from exc
        with self._write() as own:
            return self._complete(own, done)

    def _complete(self, conn: sqlite3.Connection, done: Sequence[Completion]) -> set[int]:
        if not done:
            return set()
        items = json.dumps([[d.id, d.token, d.result_json] for d in done])
        now = self._time()
        rows = conn.execute(_Q.complete_archive, {"items": items, "now": now}).fetchall()
        archived = [r[0] for r in rows]
        if archived:
            pause("settle.archived")
            conn.execute(_Q.delete_ids, {"ids": json.dumps(archived)})
            ended = [r[0] for r in rows if r[1] is not None]
            if ended:  # workflow jobs: their dependents, in the same transaction
                _workflow.release(_Steps(conn, now), ended)
        return set(archived)

    def fail(self, failures: Sequence[Failure]) -> FailResult:
        with self._write() as conn:
            return self._fail(conn, failures)

    def _fail(self, conn: sqlite3.Connection, failures: Sequence[Failure]) -> FailResult:
        result = FailResult()
        now = self._time()
        ended: list[int] = []  # buried workflow jobs
        for item in failures:
            params = {
                "id": item.id,
                "token": item.token,
                "now": now,
                "error": json.dumps(item.error),
                "delay": item.delay,
                "reason": item.reason,
            }
            owned = conn.execute(_Q.fail_owned, params).fetchone()
            if owned is None:
                result.lost.add(item.id)
                continue
            if ends_job(item.permanent, owned["attempts"], owned["max_attempts"]):
                buried = conn.execute(_Q.fail_bury, params).fetchall()  # (the writer lock:
                if buried and buried[0][0] is not None:  # the row read is there)
                    ended.append(item.id)
                pause("fail.buried")
                conn.execute(_Q.delete_owned, params)
                result.dead.add(item.id)
            else:
                conn.execute(_Q.fail_retry, params).fetchall()
                result.retried.add(item.id)
            # a throttle pauses the job's rate key, if it has one, else its queue
            if item.throttle and owned["rate_key"] is not None:
                conn.execute(_Q.throttle_key, {"queue": owned["queue"], "key": owned["rate_key"],
                                               "until": now + item.throttle})
            elif item.throttle > 0:
                conn.execute(_Q.throttle_queue, {"id": item.id, "until": now + item.throttle})
            else:
                pause("fail.breaker")
                conn.execute(_Q.breaker_failed, params)
        if ended:
            _workflow.release(_Steps(conn, now), ended)
        return result

    def release(self, owned: Sequence[Owned], delay: float = 0.0) -> set[int]:
        released: set[int] = set()
        with self._write() as conn:
            now = self._time()
            ended: list[int] = []
            for item in owned:
                params = {"id": item.id, "token": item.token, "now": now, "delay": delay}
                if conn.execute(_Q.release, params).fetchone() is not None:
                    released.add(item.id)
                    continue
                buried = conn.execute(_Q.bury_cancelled_owned, params).fetchall()
                if buried:
                    conn.execute(_Q.delete_owned, params)
                    released.add(item.id)
                    if buried[0][0] is not None:
                        ended.append(item.id)
            if ended:
                _workflow.release(_Steps(conn, now), ended)
        return released

    def tidy(self, min_dead: int) -> bool:
        """Nothing to do: SQLite removes a row's index entries when the row goes."""
        return False

    @mapped
    def orphaned(self, worker_id: str, held: Sequence[int]) -> list[Owned]:
        params = {"worker_id": worker_id, "held": json.dumps(list(held)), "now": self._time()}
        rows = self._conn().execute(_Q.orphaned, params).fetchall()
        return [Owned(r["id"], r["claim_token"]) for r in rows]

    def reap(self, limit: int = 1000) -> ReapResult:
        result = ReapResult()
        with self._write() as conn:
            now = self._time()
            ended: list[int] = []
            expired = conn.execute(_Q.reap_expired, {"now": now, "limit": limit}).fetchall()
            if expired:
                pause("reap.selected")
            at = datetime.fromtimestamp(now, UTC)
            for row in expired:
                error = json.dumps(lease_expired_error(row, at))
                reason = expired_lease_reason(row["status"], row["attempts"], row["max_attempts"],
                                              row["cancel_requested"])
                if reason is not None:
                    params = {"id": row["id"], "now": now, "reason": reason, "error": error}
                    buried = conn.execute(_Q.reap_bury, params).fetchall()
                    if buried:
                        conn.execute(_Q.delete_job, params)
                        result.dead.append(row["id"])
                        if buried[0][0] is not None:
                            ended.append(row["id"])
                else:
                    params = {"id": row["id"], "now": now, "error": error}
                    if conn.execute(_Q.reap_requeue, params).fetchone() is not None:
                        result.requeued.append(row["id"])
            if ended:
                _workflow.release(_Steps(conn, now), ended)
        return result

    @mapped
    def run_sql(
        self, sql: str, params: Sequence[Any] = (), conn: Any = None
    ) -> list[tuple[Any, ...]]:
        if conn is not None and not isinstance(conn, sqlite3.Connection):
            raise InvalidInput("conn must be a sqlite3.Connection for a SQLite database")
        cur = (conn or self._conn()).execute(sql, tuple(params))
        return [tuple(r) for r in cur.fetchall()] if cur.description is not None else []

    placeholder = "?"

    def table(self, name: str) -> str:
        return f"claimq_{name}"

    def own_table(self, name: str) -> str:
        return name  # one file, one namespace

    def seconds_between(self, later: str, earlier: str) -> str:
        return f"({later} - {earlier})"  # seconds since the epoch, as REAL

    def analyze(self) -> None:
        self.run_sql("ANALYZE")

    def check_location(self, *, missing_ok: bool) -> None:
        if self.path == ":memory:":
            return
        folder = os.path.dirname(self.path)
        if folder and not os.path.isdir(folder):
            raise DatabaseMissing(
                f"the directory of database {self.path} does not exist: {folder}")
        if not missing_ok and not os.path.exists(self.path):
            raise DatabaseMissing(f"database {self.path} does not exist: run `claimq migrate` "
                                  "first")

    @classmethod
    def fresh_url(cls, url: str, prefix: str, *, replace: bool = False) -> str:
        """A new file beside the URL's (`stem-xxxxxxxx.db`), or with `replace` the URL's own
        file emptied (removed with its -wal and -shm)."""
        parsed = urlparse(url)
        path = parsed.path[1:]
        if replace:
            cls._remove(path.split("?")[0], ("", "-wal", "-shm"))
            return url
        stem, ext = os.path.splitext(path)
        path = f"{stem}-{secrets.token_hex(4)}{ext or '.db'}"
        return f"sqlite:///{path}" + (f"?{parsed.query}" if parsed.query else "")

    def drop_all(self) -> None:
        """Closes the backend and removes its file (with -wal, -shm and -journal)."""
        self.close()
        self._remove(self.path, ("", "-wal", "-shm", "-journal"))

    @staticmethod
    def _remove(path: str, suffixes: Sequence[str]) -> None:
        for suffix in suffixes:
            if os.path.exists(path + suffix):
                os.remove(path + suffix)

    # -- operator ------------------------------------------------------------------------------

    @mapped
    def get_job(self, job_id: int, conn: Any = None) -> Job | None:
        if conn is not None and not isinstance(conn, sqlite3.Connection):
            raise InvalidInput("conn must be a sqlite3.Connection for a SQLite database")
        # The caller's connection (and its open transaction) reads with its own row factory
        cur = (conn or self._conn()).cursor()
        cur.row_factory = sqlite3.Row
        row = cur.execute(_Q.get_job, {"id": job_id}).fetchone()
        return None if row is None else _row_to_job(row)

    @mapped
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
        query = {"live": _Q.list_live, "archive": _Q.list_archive, "dead": _Q.list_dead}[table]
        params = {"queue": queue, "task": task, "status": status, "limit": limit, "offset": offset}
        return [_row_to_job(r) for r in self._conn().execute(query, params)]

    @mapped
    def find_jobs(
        self, table: Table, where: JobFilter, before: int | None, limit: int
    ) -> list[Job]:
        query = {"live": _Q.find_live, "archive": _Q.find_archive, "dead": _Q.find_dead}[table]
        params = {"before": before, "queue": where.queue, "task": where.task,
                  "status": where.status, "tag": where.tag, "text": where.text,
                  "state": where.state, "now": self._time(), "limit": limit}
        return [_row_to_job(r) for r in self._conn().execute(query, params)]

    @mapped
    def count_states(self) -> list[StateCount]:
        rows = self._conn().execute(_Q.count_states, {"now": self._time()})
        return [StateCount(r[0], r[1], int(r[2])) for r in rows]

    def delete_finished(self, table: Literal["archive", "dead"], ids: Sequence[int]) -> list[int]:
        query = {"archive": _Q.delete_archive_ids, "dead": _Q.delete_dead_ids}[table]
        with self._write() as conn:
            return [r[0] for r in conn.execute(query, {"ids": json.dumps(list(ids))})]

    def run_now(self, ids: Sequence[int]) -> list[int]:
        with self._write() as conn:
            params = {"ids": json.dumps(list(ids)), "now": self._time()}
            return [r[0] for r in conn.execute(_Q.run_now, params)]

    def record_audit(
        self, actor: str, action: str, target: str, detail_json: str, affected: int
    ) -> int:
        with self._write() as conn:
            params = {"now": self._time(), "actor": actor, "action": action, "target": target,
                      "detail": detail_json, "affected": affected}
            row = conn.execute(_Q.record_audit, params).fetchone()
            return int(row[0])

    def database_user(self) -> str | None:
        return None  # SQLite has no users: the file's permissions decide

    @mapped
    def list_audit(self, before: int | None, limit: int) -> list[AuditEntry]:
        rows = self._conn().execute(_Q.list_audit, {"before": before, "limit": limit})
        return [
            AuditEntry(id=r["id"], at=_ts(r["at"], "at", []), actor=r["actor"],
                       action=r["action"], target=r["target"], detail=json.loads(r["detail"]),
                       affected=r["affected"])
            for r in rows
        ]

    def cancel(self, job_id: int) -> CancelOutcome:
        with self._write() as conn:
            now = self._time()
            params = {"id": job_id, "now": now}
            buried = conn.execute(_Q.cancel_bury, params).fetchall()
            if buried:
                pause("cancel.buried")
                conn.execute(_Q.delete_job, params)
                if buried[0][0] is not None:
                    _workflow.release(_Steps(conn, now), [job_id])
                return "cancelled"
            if conn.execute(_Q.cancel_request, params).fetchone() is not None:
                return "cancel_requested"
            if conn.execute(_Q.wf_cancel_held, {"ids": _ids([job_id]), "now": now}).fetchall():
                conn.execute(_Q.wf_drop_held, {"ids": _ids([job_id])})
                _workflow.release(_Steps(conn, now), [job_id])
                return "cancelled"
            if conn.execute(_Q.get_job, params).fetchone() is not None:
                return "finished"
        return "not_found"

    def resurrect(
        self, job_id: int, payload_json: str | None = None, priority: int | None = None,
        retention: float = KEY_RETENTION,
    ) -> bool:
        with self._write() as conn:  # the writer lock: the key checked is the key taken
            now = self._time()
            params = {"id": job_id, "now": now, "payload": payload_json, "priority": priority,
                      "statuses": HOLDING_JSON["until_done"], "since": now - retention}
            dead = conn.execute(_Q.resurrect_key, params).fetchone()
            if dead is None:
                return False
            key, holder, holds, workflow_id = dead
            if key is not None and holder is not None and holder != job_id and holds:
                raise KeyHeld(job_id, key, int(holder))
            pause("resurrect.key_checked")
            if workflow_id is not None:  # its workflow continues from it
                return _workflow.resurrect(_Steps(conn, now), job_id, payload_json, priority)
            row = conn.execute(_Q.resurrect, params).fetchone()
            if row is None:
                raise ClaimqError(f"dead letter {job_id} vanished under the writer lock")
            pause("resurrect.copied")
            conn.execute(_Q.delete_dead, params)
            conn.execute(_Q.ensure_queue, {"name": row["queue"], "now": now})
            if key is not None:  # the key's row points at the job again, its window cleared
                conn.execute(_Q.set_key_holder, {"key": key, "job_id": job_id, "now": now})
        return True

    def purge(
        self,
        table: Literal["archive", "dead"],
        older_than: float | None = None,
        queue: str | None = None,
        task: str | None = None,
    ) -> int:
        query = {"archive": _Q.purge_archive, "dead": _Q.purge_dead}[table]
        with self._write() as conn:
            before = None if older_than is None else self._time() - older_than
            params = {"before": before, "queue": queue, "task": task}
            count = conn.execute(query, params).rowcount
            conn.execute(_Q.purge_progress)
            self._forget_workflows(conn, None)
            return count

    def purge_idempotency_keys(self, retention: float) -> int:
        return all_batches(lambda: self.prune_idempotency_keys(retention, PURGE_BATCH))

    def set_priority(self, job_id: int, priority: int) -> bool:
        with self._write() as conn:
            params = {"id": job_id, "priority": priority, "now": self._time()}
            return any(conn.execute(query, params).fetchone() is not None
                       for query in (_Q.set_priority_held, _Q.set_priority))

    def set_progress(self, owned: Owned, fraction: float, note: str | None) -> bool:
        with self._write() as conn:
            params = {"id": owned.id, "token": owned.token, "fraction": fraction, "note": note,
                      "now": self._time()}
            return conn.execute(_Q.set_progress, params).fetchone() is not None

    @mapped
    def get_progress(self, job_id: int) -> Progress | None:
        row = self._conn().execute(_Q.get_progress, {"id": job_id}).fetchone()
        if row is None:
            return None
        return Progress(row[0], row[1], row[2], datetime.fromtimestamp(row[3], UTC))

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
        with self._write() as conn:
            now = self._time()
            conn.execute(_Q.ensure_queue, {"name": name, "now": now})
            params = {
                **queue_settings(name, paused, active, max_workers, lease_seconds,
                                 timeout_seconds, now),
                **flow_params(rate_limit, aging, key_rate_limit),
            }
            conn.execute(_Q.update_queue, params)
            if params["set_key_rate"]:
                pause("configure_queue.updated")
                conn.execute(_Q.reset_rate_keys, params)
        return next(q for q in self.list_queues() if q.name == name)

    def configure_breaker(
        self, queue: str, task: str, failure_limit: int | None, window: float, cooldown: float
    ) -> BreakerInfo | None:
        with self._write() as conn:
            params = breaker_params(queue, task, failure_limit, window, cooldown, self._time())
            conn.execute(_Q.ensure_queue, {"name": queue, "now": params["now"]})
            conn.execute(_Q.delete_breaker if failure_limit is None else _Q.set_breaker, params)
            pause("breaker.set")
            conn.execute(_Q.mark_breaker_queue, params)
        return next((b for b in self.list_breakers() if (b.queue, b.task) == (queue, task)), None)

    def list_throttled_keys(self) -> list[ThrottledKey]:
        rows = self._conn().execute(_Q.list_throttled_keys, {"now": self._time()}).fetchall()
        return [ThrottledKey(r["queue"], r["key"], datetime.fromtimestamp(r["until"], UTC))
                for r in rows]

    @mapped
    def list_limited(self) -> list[Limited]:
        rows = self._conn().execute(_Q.list_limited, {"now": self._time()}).fetchall()
        return [Limited(r["queue"], r["reason"], r["held_key"], int(r["waiting"]),
                        int(r["running"]), r["cap"],
                        None if r["until"] is None else datetime.fromtimestamp(r["until"], UTC))
                for r in rows]

    @mapped
    def limit_reasons(self, ids: Sequence[int]) -> dict[int, tuple[str, str | None]]:
        params = {"ids": json.dumps(list(ids)), "now": self._time()}
        return {r["id"]: (r["reason"], r["held_key"])
                for r in self._conn().execute(_Q.limit_reasons, params)}

    def list_breakers(self) -> list[BreakerInfo]:
        rows = self._conn().execute(_Q.list_breakers, {"now": self._time()}).fetchall()
        return [breaker_info(r, lambda v: _ts(v, "breaker", [])) for r in rows]

    # -- workflows (issue 26; the rules in backends/_workflow.py) ------------------------------

    def add_workflow(self, wf: NewWorkflow, retention: float, conn: Any = None) -> WorkflowAdded:
        if conn is not None:
            if not isinstance(conn, sqlite3.Connection):
                raise InvalidInput("conn must be a sqlite3.Connection for a SQLite database")
            try:
                return self._callers(conn, lambda c: self._add_workflow(c, wf, retention),
                                     wf.key is not None)
            except sqlite3.Error as exc:
                raise translate(exc, self.path) from exc
        with self._write() as own:
            return self._add_workflow(own, wf, retention)

    def _add_workflow(
        self, conn: sqlite3.Connection, wf: NewWorkflow, retention: float
    ) -> WorkflowAdded:
        now = self._time()
        if wf.key is not None:  # under the writer lock: the key read is the key kept
            found = conn.execute(_Q.wf_by_key, {"key": wf.key}).fetchone()
            if found is not None:
                ids = [r[0] for r in conn.execute(_Q.wf_job_ids, {"id": found[0]})]
                return WorkflowAdded(found[0], ids, False)
        workflow_id = conn.execute(_Q.wf_insert, {"name": wf.name, "key": wf.key,
                                                  "on_failure": wf.on_failure,
                                                  "now": now}).fetchone()[0]
        ids = self._insert(conn, wf.jobs, retention)
        conn.execute(_Q.wf_tag_jobs, {"workflow_id": workflow_id, "ids": _ids(ids)})
        edges, waiting = _workflow.workflow_edges(ids, wf.after, wf.on_failure)
        run_if = dict(zip(ids, wf.run_if, strict=True))
        self._hold(conn, workflow_id, edges, [(i, n, run_if[i]) for i, n in waiting.items()])
        return WorkflowAdded(workflow_id, ids, True)

    def _hold(self, conn: sqlite3.Connection, workflow_id: int,
              edges: Sequence[_workflow.NewEdge], held: Sequence[tuple[int, int, str | None]]
              ) -> None:
        """Writes new edges and moves the new jobs that wait (id, waiting, run_if) to held."""
        if edges:
            conn.execute(_Q.wf_insert_edges, {"workflow_id": workflow_id, "edges": json.dumps(
                [[e.child, e.parent, e.position, e.on_failure] for e in edges])})
        if held:
            conn.execute(_Q.wf_hold, {"items": json.dumps(held)})
            conn.execute(_Q.delete_ids, {"ids": _ids(h[0] for h in held)})

    def spawn(self, owned: Owned, jobs: Sequence[NewJob], after: Sequence[Sequence[int]],
              retention: float) -> list[int] | None:
        with self._write() as conn:
            now = self._time()
            spawner = conn.execute(_Q.wf_owner, {"id": owned.id, "token": owned.token}
                                   ).fetchone()
            if spawner is None:
                return None
            if not jobs:  # nothing to add: nothing written (not even a workflow of its own)
                return []
            task, workflow_id, default = spawner
            if workflow_id is None:  # a one-job workflow, named after its task, first
                default = "cancel"
                workflow_id = conn.execute(_Q.wf_insert, {
                    "name": task, "key": None, "on_failure": default, "now": now}).fetchone()[0]
                conn.execute(_Q.wf_tag_one, {"workflow_id": workflow_id, "id": owned.id})
            ids = self._insert(conn, jobs, retention)
            conn.execute(_Q.wf_tag_jobs, {"workflow_id": workflow_id, "ids": _ids(ids)})
            dependents = [_workflow.Dependent(*r)
                          for r in conn.execute(_Q.wf_dependents, {"id": owned.id})]
            edges, waiting, more = _workflow.spawn_edges(ids, after, dependents, default)
            if more:
                conn.execute(_Q.wf_add_waiting, {"counts": json.dumps(list(more.items())),
                                                 "now": now})
            self._hold(conn, workflow_id, edges, [(i, n, None) for i, n in waiting.items()])
            return ids

    def _workflow_info(self, conn: sqlite3.Connection, row: sqlite3.Row) -> WorkflowInfo:
        counts: dict[str, int] = {}
        last: float | None = None
        for status, count, finished in conn.execute(_Q.wf_counts, {"id": row[0]}):
            counts[status] = count
            if finished is not None:
                last = finished if last is None else max(last, finished)
        live = any(s not in (Status.SUCCEEDED, Status.DEAD) for s in counts)
        return WorkflowInfo(
            id=row[0], name=row[1], key=row[2], on_failure=row[3],
            created_at=_epoch(row[4]), counts=counts,
            finished_at=None if live or last is None else _epoch(last))

    @mapped
    def get_workflow(self, workflow_id: int) -> WorkflowInfo | None:
        conn = self._conn()
        row = conn.execute(_Q.wf_get, {"id": workflow_id}).fetchone()
        return None if row is None else self._workflow_info(conn, row)

    @mapped
    def list_workflows(self, limit: int, before: int | None = None) -> list[WorkflowInfo]:
        conn = self._conn()
        rows = conn.execute(_Q.wf_list, {"before": before, "limit": limit}).fetchall()
        return [self._workflow_info(conn, r) for r in rows]

    @mapped
    def workflow_graph(self, workflow_id: int) -> tuple[list[Job], list[Edge]]:
        conn = self._conn()
        own = not conn.in_transaction  # (inside app.transaction(): its snapshot already)
        if own:
            conn.execute("BEGIN")  # one snapshot for both reads
        try:
            jobs = [_row_to_job(r) for r in conn.execute(_Q.wf_graph_jobs, {"id": workflow_id})]
            edges = [Edge(r[0], r[1], r[2], bool(r[3]))
                     for r in conn.execute(_Q.wf_edges, {"id": workflow_id})]
        finally:
            if own:
                conn.execute("COMMIT")
        return jobs, edges

    @mapped
    def dependencies(self, job_id: int) -> list[Dependency]:
        rows = self._conn().execute(_Q.wf_dependencies, {"id": job_id}).fetchall()
        return [Dependency(r[0], r[1], r[2], json_text(r[3]), r[4]) for r in rows]

    def cancel_workflow(self, workflow_id: int) -> int:
        with self._write() as conn:
            now = self._time()
            params = {"id": workflow_id, "now": now}
            held = [r[0] for r in conn.execute(_Q.wf_held_ids, params)]
            buried = [r[0] for r in conn.execute(
                _Q.wf_cancel_held, {"ids": _ids(held), "now": now}).fetchall()]
            if buried:
                conn.execute(_Q.wf_drop_held, {"ids": _ids(buried)})
            live = [r[0] for r in conn.execute(_Q.wf_cancel_live, params).fetchall()]
            if live:
                conn.execute(_Q.delete_ids, {"ids": _ids(live)})
            flagged = conn.execute(_Q.wf_cancel_request, params).fetchall()
            if buried or live:
                _workflow.release(_Steps(conn, now), buried + live)
            return len(buried) + len(live) + len(flagged)

    def retry_workflow(self, workflow_id: int) -> list[int]:
        with self._write() as conn:
            now = self._time()
            roots = [r[0] for r in conn.execute(_Q.wf_retry_roots, {"id": workflow_id})]
            steps = _Steps(conn, now)
            return [r for r in roots if _workflow.resurrect(steps, r)]

    # -- schedules -----------------------------------------------------------------------------

    @mapped
    def list_schedules(self, name: str | None = None) -> list[ScheduleRow]:
        rows = self._conn().execute(_Q.list_schedules, {"name": name}).fetchall()
        return [_schedule_row(r) for r in rows]

    def insert_schedule(self, row: ScheduleRow) -> bool:
        with self._write() as conn:
            params = _schedule_params(row, self._time())
            return conn.execute(_Q.insert_schedule, params).fetchone() is not None

    def update_schedule(self, row: ScheduleRow, read: ScheduleRow) -> bool:
        with self._write() as conn:
            params = {**_schedule_params(row, self._time()),
                      "read_next_run_at": read.next_run_at.timestamp(),
                      "read_paused": int(read.paused)}
            return conn.execute(_Q.update_schedule, params).fetchone() is not None

    def delete_schedule(self, name: str) -> bool:
        with self._write() as conn:
            return conn.execute(_Q.delete_schedule, {"name": name}).fetchone() is not None

    def fire_schedules(self, plan: Planner, limit: int, retention: float) -> dict[str, list[int]]:
        fired: dict[str, list[int]] = {}
        with self._write() as conn:
            now = self._time()
            rows = conn.execute(_Q.due_schedules, {"now": now, "limit": limit}).fetchall()
            pause("schedule.fire_due")  # the due rows read and locked; none moved on yet
            for r in rows:
                planned = plan(_schedule_row(r), datetime.fromtimestamp(now, UTC))
                if planned is None:
                    continue
                ids = self._insert(conn, planned.jobs, retention) if planned.jobs else []
                last = planned.last_tick
                moved = conn.execute(_Q.schedule_fired, {
                    "name": r["name"], "old_next_run_at": r["next_run_at"],
                    "next_run_at": planned.next_run_at.timestamp(),
                    "last_tick": None if last is None else last.timestamp(),
                    "last_job_id": ids[-1] if ids else None, "now": now,
                }).fetchone()
                if moved is None:  # inside the write transaction: cannot happen
                    raise DatabaseError(f"schedule {r['name']!r} changed while being fired")
                fired[r["name"]] = ids
        return fired

    @mapped
    def next_schedule_in(self) -> float | None:
        row = self._conn().execute(_Q.next_schedule_in, {"now": self._time()}).fetchone()
        return None if row["seconds"] is None else float(row["seconds"])

    # -- retention -----------------------------------------------------------------------------

    @mapped
    def list_retention(self) -> list[RetentionPolicy]:
        return [RetentionPolicy(**dict(r)) for r in self._conn().execute(_Q.list_retention)]

    def set_retention(self, policy: RetentionPolicy) -> None:
        with self._write() as conn:
            conn.execute(_Q.set_retention, {
                "queue": policy.queue, "archive_age": policy.archive_age,
                "archive_rows": policy.archive_rows, "dead_age": policy.dead_age,
                "dead_rows": policy.dead_rows, "now": self._time()})

    def delete_retention(self, queue: str) -> bool:
        with self._write() as conn:
            return conn.execute(_Q.delete_retention, {"queue": queue}).fetchone() is not None

    def take_lease(self, name: str, holder: str, seconds: float) -> bool:
        params = {"name": name, "holder": holder, "seconds": seconds, "now": self._time()}
        with self._write() as conn:
            return conn.execute(_Q.take_lease, params).fetchone() is not None

    def drop_lease(self, name: str, holder: str) -> None:
        with self._write() as conn:
            conn.execute(_Q.drop_lease, {"name": name, "holder": holder})

    def prune(self, batch: PruneBatch) -> int:
        query = _Q.prune.replace("{table}", _PRUNED_TABLES[batch.table])
        with self._write() as conn:
            age = batch.older_than
            rows = conn.execute(query, {
                "queue": batch.queue, "skip": json.dumps(list(batch.skip_queues)),
                "before": None if age is None else self._time() - age,
                "keep_rows": batch.keep_rows, "batch": batch.limit}).fetchall()
            ended = {r[0] for r in rows if r[0] is not None}
            if ended:
                self._forget_workflows(conn, sorted(ended))
            return len(rows)

    @staticmethod
    def _forget_workflows(conn: sqlite3.Connection, ids: Sequence[int] | None) -> None:
        """Workflows among `ids` (None: all) with no job left anywhere: row and edges gone."""
        gone = (conn.execute(_Q.wf_forget_all) if ids is None
                else conn.execute(_Q.wf_forget, {"ids": _ids(ids)})).fetchall()
        if gone:
            conn.execute(_Q.wf_forget_edges, {"ids": _ids(r[0] for r in gone)})

    def partition_archive(self) -> bool:
        """Not on SQLite (capabilities.partitions is false): raises InvalidInput."""
        raise InvalidInput("a partitioned archive needs PostgreSQL")

    def maintain_partitions(
        self, ahead_days: int, drop_before: datetime | None
    ) -> tuple[list[str], list[str]]:
        """Nothing to maintain: SQLite's archive is one table."""
        return [], []

    def prune_idempotency_keys(self, retention: float, batch: int) -> int:
        with self._write() as conn:
            since = self._time() - retention
            return conn.execute(_Q.prune_idempotency, {
                "since": since, "batch": batch,
                "statuses": HOLDING_JSON["until_done"]}).rowcount  # every live status

    def prune_progress(self, batch: int) -> int:
        with self._write() as conn:
            return conn.execute(_Q.prune_progress, {"batch": batch}).rowcount

    def prune_rate_keys(self, batch: int) -> int:
        with self._write() as conn:
            return conn.execute(_Q.prune_rate_keys, {"now": self._time(), "batch": batch}).rowcount

    def prune_audit(self, age: float, batch: int) -> int:
        with self._write() as conn:
            return conn.execute(_Q.prune_audit,
                                {"before": self._time() - age, "batch": batch}).rowcount

    @mapped
    def list_queues(self) -> list[QueueInfo]:
        rows = self._conn().execute(_Q.list_queues, {"now": self._time()}).fetchall()
        return [
            QueueInfo(
                name=r["name"],
                paused=bool(r["paused"]),
                active=bool(r["active"]),
                max_workers=r["max_workers"],
                lease_seconds=r["lease_seconds"],
                timeout_seconds=r["timeout_seconds"],
                pending=r["pending"],
                scheduled=r["scheduled"],
                fetched=r["fetched"],
                processing=r["processing"],
                past_lease=r["past_lease"],
                oldest_due_age=r["oldest_due_age"],
                archived=r["archived"],
                dead=r["dead"],
                **flow_settings(r["rate_count"], r["rate_period"], r["rate_burst"],
                                r["aging_step"], r["aging_cap"], r["key_rate_count"],
                                r["key_rate_period"], r["key_rate_burst"]),
                throttled_until=_ts(r["throttled_until"], "throttled_until", []),
                keyed=bool(r["keyed"]),
            )
            for r in rows
        ]

    # -- operating -----------------------------------------------------------------------------

    def register_worker(self, worker: WorkerRecord) -> None:
        params = {**worker._asdict(), "now": self._time(),
                  "queues": None if worker.queues is None else json.dumps(list(worker.queues)),
                  "tasks": None if worker.tasks is None else json.dumps(list(worker.tasks))}
        with self._write() as conn:
            conn.execute(_Q.register_worker, params)

    def worker_seen(self, worker_id: str, in_flight: int) -> bool:
        with self._write() as conn:
            params = {"id": worker_id, "in_flight": in_flight, "now": self._time()}
            return conn.execute(_Q.worker_seen, params).fetchone() is not None

    def unregister_worker(self, worker_id: str) -> bool:
        with self._write() as conn:
            return conn.execute(_Q.unregister_worker, {"id": worker_id}).fetchone() is not None

    @mapped
    def list_workers(self) -> list[WorkerInfo]:
        rows = self._conn().execute(_Q.list_workers, {"now": self._time()}).fetchall()
        return [
            WorkerInfo(
                id=r["id"], host=r["host"], pid=r["pid"],
                queues=None if r["queues"] is None else tuple(json.loads(r["queues"])),
                concurrency=r["concurrency"], version=r["version"],
                started_at=datetime.fromtimestamp(r["started_at"], UTC),
                last_seen_at=datetime.fromtimestamp(r["last_seen_at"], UTC),
                in_flight=r["in_flight"], alive=r["dead_at"] is None,
                dead_at=None if r["dead_at"] is None else datetime.fromtimestamp(r["dead_at"], UTC),
                silent_for=max(float(r["silent_for"]), 0.0),
                tasks=None if r["tasks"] is None else tuple(json.loads(r["tasks"])),
            )
            for r in rows
        ]

    def prune_workers(self, dead_after: float, forget_after: float) -> tuple[int, int]:
        with self._write() as conn:
            now = self._time()
            # Deleted first: a row marked now is deleted at the earliest by the next call.
            deleted = conn.execute(
                _Q.forget_workers, {"now": now, "forget_after": forget_after}).rowcount
            marked = conn.execute(
                _Q.mark_dead_workers, {"now": now, "dead_after": dead_after}).rowcount
        return marked, deleted

    @mapped
    def stats(self, window: float) -> StatsRows:
        conn = self._conn()
        now = self._time()
        params = {"now": now, "since": now - window}
        queues = [QueueSettings(r["name"], bool(r["paused"]), bool(r["active"]),
                                r["max_workers"], _ts(r["throttled_until"], "throttled_until", []))
                  for r in conn.execute(_Q.stats_queues)]
        live = [LiveRow(*r) for r in conn.execute(_Q.stats_live, params)]
        dead = [DeadRow(*r) for r in conn.execute(_Q.stats_dead)]
        recent = [RecentRow(r[0], r[1], r[2], r[3], r[4], r[5],
                            None if r[6] is None else datetime.fromtimestamp(r[6], UTC))
                  for r in conn.execute(_Q.stats_recent, params)]
        latency = latency_rows(conn.execute(_Q.stats_latency, params))
        covered = bool(conn.execute(_Q.stats_covered, params).fetchone()[0])
        return StatsRows(datetime.fromtimestamp(now, UTC), queues, live, dead, recent, latency,
                         covered)

    @mapped
    def finished_history(self, buckets: int, bucket: float) -> tuple[datetime, list[HistoryRow]]:
        now = self._time()
        params = {"now": now, "since": now - buckets * bucket, "bucket": bucket}
        rows = [HistoryRow(*r) for r in self._conn().execute(_Q.finished_history, params)]
        return datetime.fromtimestamp(now, UTC), rows

    @mapped
    def trace_contexts(self, ids: Sequence[int]) -> dict[int, str]:
        rows = self._conn().execute(_Q.trace_contexts, {"ids": json.dumps(list(ids))})
        return {r[0]: r[1] for r in rows}


def _split_statements(script: str) -> Iterator[str]:
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statement = buffer.strip()
            if statement and not all(
                part.strip().startswith("--") or not part.strip() for part in statement.splitlines()
            ):
                yield statement
            buffer = ""
    if buffer.strip() and not all(
        p.strip().startswith("--") or not p.strip() for p in buffer.splitlines()
    ):
        raise MigrationError(f"incomplete SQL statement in migration: {buffer[:80]!r}")
