"""MariaDB/MySQL backend: SKIP LOCKED claims in short READ COMMITTED transactions, a small pool
of connections, deadlocks and lock-wait timeouts retried inside."""

from __future__ import annotations

import json
import math
import random
import secrets
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypeVar
from urllib.parse import urlparse

from claimq._pause import pause
from claimq._validate import NO_FLOW, NewJob
from claimq.backends import _rows, _workflow
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
from claimq.backends._rows import job_from_row, json_text, latency_rows, lease_expired_error
from claimq.backends._sqlfiles import load_migrations, load_queries, strip_comments
from claimq.backends._url import redact
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
from claimq.backends.mysql._errors import (
    BROKEN,
    DEADLOCK,
    DUPLICATE_KEY,
    LOCK_WAIT_TIMEOUT,
    RETRYABLE,
    error_code,
    translate,
)
from claimq.backends.mysql._server import check_server
from claimq.backends.mysql._url import parse_mysql_url
from claimq.clock import Clock, SystemClock, is_system
from claimq.errors import (
    ClaimqError,
    DatabaseUnavailable,
    InvalidInput,
    KeyHeld,
    SchemaMissing,
)
from claimq.job import DeadReason, Job, Status, ends_job, expired_lease_reason

_Q = load_queries("claimq.backends.mysql")
_MIGRATIONS = load_migrations("claimq.backends.mysql")
_FOUND_ROWS = 2  # CLIENT_FOUND_ROWS: an UPDATE's row count is the rows it matched
ATTEMPTS = 6  # tries of one transaction that meets lock-wait timeouts (each waits the timeout)
# Tries of one that meets deadlocks: the victim is rolled back at once, so a claim caught in a
# burst of them (issue 24: a worker's claim died of one after six) tries on, briefly paced.
DEADLOCK_ATTEMPTS = 30
RETRY_PAUSE = 0.05  # the longest pause between two tries (jittered, doubling from 4 ms)
LIMITED_RECHECK = 1.0  # seconds between checks for max_workers limits on a claim's queues
INSERT_CHUNK_ROWS = 1000  # rows per multi-row INSERT
INSERT_CHUNK_BYTES = 4 * 1024 * 1024  # payload bytes per multi-row INSERT (max_allowed_packet)
_LIVE = (Status.FETCHED.value, Status.PROCESSING.value)
R = TypeVar("R")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _aware(value: Any) -> datetime | None:
    """A DATETIME (naive, UTC) as the aware time claimq hands out."""
    return None if value is None else value.replace(tzinfo=UTC)


def _naive(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(tzinfo=None)


def _micros(seconds: float) -> int:
    return round(seconds * 1e6)


def _appended(history: Any, error: dict[str, Any]) -> str:
    """The errors column's text with `error` appended, the stored text kept as it is; a column
    another client broke becomes a fresh history that says what it held."""
    entry = _dumps(error)
    text = history if isinstance(history, str) else str(history)
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, list):
        body = text.strip()[:-1].rstrip()
        return f"{body}{',' if parsed else ''}{entry}]"
    note = {"error": "CorruptColumn",
            "message": f"errors column held {text[:200]!r}, not a JSON array"}
    return f"[{_dumps(note)},{entry}]"


def _text(value: Any) -> str | None:
    """A filter's value as plain text for the driver (a StrEnum member too)."""
    return None if value is None else str(value)


def _count(cur: Any, query: str, params: dict[str, Any]) -> int:
    """Runs one statement: the rows it changed (an UPDATE's: those it matched, FOUND_ROWS)."""
    cur.execute(query, params)
    return int(cur.rowcount)


def _keys(cur: Any, params: dict[str, Any]) -> Iterator[tuple[str, int | None]]:
    """A flow queue's concurrency keys in order, each with its first due pending job's limit
    (claim_flow_keys: one index probe per key)."""
    after = ""
    while True:
        cur.execute(_Q.claim_flow_keys, {**params, "after": after})
        row = cur.fetchone()
        if row is None:
            return
        after = row[0]
        yield row[0], row[1]


def _window(cur: Any, params: dict[str, Any], running: dict[str, int], limit: int) -> int | None:
    """How many jobs a flow queue's claim reads in claim order (claim_flow_candidates' scan):
    those it could take among the first rows of any kind (claim_flow_window), when those rows
    are all there is or hold at least `limit` jobs it may take (no sequence job, within its
    key's room counting `running`); else None: the claim reads on by key."""
    size = aging_scan(limit)
    cur.execute(_Q.claim_flow_window, {**params, "window": size})
    rows = cur.fetchall()
    if len(rows) < size:
        return size
    taken: dict[str, int] = {}
    passing = room = 0
    for _, key, key_limit, sequence in rows:
        if sequence is not None or (key is not None and running.get(key, 0) >= key_limit):
            continue
        passing += 1  # claim_flow_candidates reads it
        if key is not None:
            if running.get(key, 0) + taken.get(key, 0) >= key_limit:
                continue
            taken[key] = taken.get(key, 0) + 1
        room += 1
    return passing if room >= limit else None


def _dicts(cur: Any) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _row_to_job(row: dict[str, Any], **claimed: Any) -> Job:
    """A live, archive, dead or claimed row as a Job (job_from_row: times are naive UTC, JSON
    columns text)."""
    return job_from_row(row, json_text, _aware, **claimed)


def _schedule_row(r: dict[str, Any]) -> ScheduleRow:
    next_run_at = _aware(r["next_run_at"])
    assert next_run_at is not None  # NOT NULL
    return ScheduleRow(
        name=r["name"], task=r["task"], payload_json=r["payload_json"], queue=r["queue"],
        priority=r["priority"], max_attempts=r["max_attempts"], timeout=r["timeout_seconds"],
        cron=r["cron"], every=r["every_seconds"], tz=r["tz"], missed=r["missed"],
        paused=bool(r["paused"]), next_run_at=next_run_at, last_run_at=_aware(r["last_run_at"]),
        last_job_id=r["last_job_id"], declared=r["declared"], created_at=_aware(r["created_at"]),
        updated_at=_aware(r["updated_at"]),
    )


def _schedule_params(row: ScheduleRow, now: datetime | None) -> dict[str, Any]:
    return {
        "name": row.name, "task": row.task, "payload": row.payload_json, "queue": row.queue,
        "priority": row.priority, "max_attempts": row.max_attempts, "timeout": row.timeout,
        "cron": row.cron, "every": row.every, "tz": row.tz, "missed": row.missed,
        "paused": row.paused, "next_run_at": _naive(row.next_run_at),
        "declared": row.declared, "now": now,
    }


_PRUNED = {"archive": ("claimq_archive", _Q.delete_archive_ids),
           "dead": ("claimq_dead", _Q.delete_dead_ids)}


def _split_statements(script: str) -> list[str]:
    """A migration's statements: each ends with `;` at the end of a line."""
    text = strip_comments(script)
    parts, current = [], []
    for line in text.splitlines():
        current.append(line)
        if line.rstrip().endswith(";"):
            parts.append("\n".join(current).rstrip().rstrip(";"))
            current = []
    if "\n".join(current).strip():
        parts.append("\n".join(current))
    return parts


def _keyed(job: NewJob) -> bool:
    """Whether the job has a concurrency, sequence or rate key (its queue becomes `keyed`)."""
    flow = job.flow
    return flow is not None and (flow.concurrency_key is not None
                                 or flow.sequence_key is not None or flow.rate_key is not None)


def _key_buckets(cur: Any, queue: str, now: datetime, state: dict[str, Any]) -> KeyBuckets:
    """A flow queue's rate keys' buckets for one claim (KeyBuckets), on this cursor."""

    def read(key: str) -> Any:
        cur.execute(_Q.rate_key_state, {"queue": queue, "key": key})
        return cur.fetchone()

    def consume(key: str, tat: datetime, n: int) -> None:
        cur.execute(_Q.rate_key_consume, {
            "queue": queue, "key": key, "tat": tat, "n": n,
            "interval_us": _micros(buckets.interval), "now": now})

    buckets = KeyBuckets(state, now, read, consume, timedelta.total_seconds)
    return buckets


EDGE_CHUNK = 5000  # edges per INSERT (a JSON document of a few hundred KB)


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


class _Steps:
    """The workflow rules' statements (backends/_workflow.Steps) on the cursor of the write
    transaction that moved the jobs: every row they change was locked by it (the finishing
    job's row first, then its dependents' held rows by id), so two parents ending at once in
    two transactions count one after the other on the child's row lock."""

    def __init__(self, cur: Any, now: datetime | None) -> None:
        self.cur = cur
        self.now = now

    def _run(self, query: str, **params: Any) -> Any:
        self.cur.execute(query, {**params, "now": self.now})
        return self.cur

    def out_edges(self, parents: Sequence[int]) -> list[_workflow.OutEdge]:
        rows = self._run(_Q.out_edges, ids=tuple(parents)).fetchall()
        return [_workflow.OutEdge(r[0], r[1], r[2], bool(r[3]), r[4], r[5]) for r in rows]

    def resolve(self, edges: Sequence[tuple[int, int]]) -> None:
        if edges:
            self._run(_Q.resolve_edges, pairs=_pairs((c, p) for p, c in edges))

    def bury(self, jobs: Sequence[_workflow.Buried]) -> list[int]:
        errors = {j.id: json.loads(j.error_json) for j in jobs}
        return self.bury_held(errors, DeadReason.DEPENDENCY_FAILED.value)

    def bury_held(self, errors: dict[int, dict[str, Any] | None], reason: str) -> list[int]:
        """Held jobs to dead letters with `reason`, each error entry (if any) appended to its
        history; the ids it moved (one no longer held is not)."""
        if not errors:
            return []
        locked = self._run(_Q.lock_held, ids=tuple(sorted(errors))).fetchall()
        items = []
        for i, history, _ in locked:
            error = errors[i]
            items.append([i, reason, history if error is None else _appended(history, error)])
        if not items:
            return []
        ids = tuple(i for i, *_ in items)
        self._run(_Q.bury_held, items=_dumps(items), ids=ids)
        self._run(_Q.delete_held, ids=ids)
        return list(ids)

    def decrement(self, counts: Mapping[int, int]) -> None:
        items = sorted(counts.items())  # by child: rows locked in id order
        self._run(_Q.decrement_waiting, items=_dumps(items), ids=tuple(c for c, _ in items))

    def ready(self, children: Sequence[int]) -> list[_workflow.Ready]:
        rows = self._run(_Q.ready_held, ids=tuple(children)).fetchall()
        return [_workflow.Ready(r[0], r[1], bool(r[2])) for r in rows]

    def promote(self, ids: Sequence[int]) -> None:
        self._run(_Q.promote_held, ids=tuple(ids))

    def skip(self, ids: Sequence[int]) -> None:
        self._run(_Q.skip_held, ids=tuple(ids))

    def drop_held(self, ids: Sequence[int]) -> None:
        self._run(_Q.delete_held, ids=tuple(ids))

    def dead_dependents(self, parents: Sequence[int]) -> list[int]:
        return [r[0] for r in self._run(_Q.dead_dependents, ids=tuple(parents)).fetchall()]

    def unbury(self, job_id: int, payload_json: str | None, priority: int | None) -> bool:
        if self._run(_Q.lock_dead, id=job_id).fetchone() is None:
            return False
        self._run(_Q.unbury, id=job_id, payload=payload_json, priority=priority)
        if self.cur.rowcount != 1:
            raise ClaimqError(f"dead letter {job_id} vanished under its row lock")
        self._run(_Q.delete_dead, id=job_id)
        return True

    def in_edges(self, children: Sequence[int]) -> list[_workflow.InEdge]:
        edges = self._run(_Q.in_edges, ids=tuple(children)).fetchall()
        if not edges:
            return []
        places = {r[0]: r[1:] for r in self._run(
            _Q.parent_places, ids=tuple({e[0] for e in edges})).fetchall()}
        return [_workflow.InEdge(p, c, policy, *places.get(p, ("archive", "", None)))
                for p, c, policy in edges]

    def mark(self, edges: Sequence[tuple[int, int, bool]]) -> None:
        for value in (True, False):
            pairs = [(c, p) for p, c, resolved in edges if resolved is value]
            if pairs:
                self._run(_Q.mark_edges, resolved=value, pairs=_pairs(pairs))

    def set_waiting(self, counts: Mapping[int, int]) -> None:
        if counts:
            items = sorted(counts.items())
            self._run(_Q.set_waiting, items=_dumps(items), ids=tuple(i for i, _ in items))


def _pairs(pairs: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """(child, parent) keys for `(child, parent) IN %(pairs)s`, sorted (rows locked in key
    order), at least two of them (one alone would be read as a row, not a list: a full scan)."""
    found = tuple(sorted(set(pairs)))
    return found * 2 if len(found) == 1 else found


def _linked(rows: Any, ids: Any) -> list[int]:
    """Of `ids`, those whose locked row (in `rows`, by id) belongs to a workflow: the jobs whose
    end the release rule must see (none: the rule runs no statement at all)."""
    return [i for i in ids if rows[i]["workflow_id"] is not None]


class MySQLBackend(PlainOptionalParts):
    """`mysql://user:password@host:3306/database` or `mariadb://…` (MariaDB >= 10.6 or MySQL
    >= 8: SKIP LOCKED). Options: `driver=pymysql|mysqlclient`, `lock_wait_timeout` (seconds,
    default 10), `connect_timeout` (default 5), `pool_size` (idle connections kept, 16)."""

    kind = "mysql"
    engine = "MariaDB/MySQL"
    schema = ""  # the URL's database holds claimq's tables
    # No LISTEN/NOTIFY (workers poll with their bounded back-off), no async driver; rows lock one
    # by one, so a heartbeat may report `busy`. Flow control: a flow-controlled queue's claimers
    # lock its row and take turns (_flow_candidates), as max_workers' do.
    capabilities = Capabilities(row_locks=True, flow_control=True, workflows=True)

    def __init__(self, url: str, clock: Clock | None = None) -> None:
        self.url = url
        self.options = parse_mysql_url(url)
        self.database = self.options.database
        self._where = redact(url)
        self.clock: Clock = clock if clock is not None else SystemClock()
        self._system = is_system(self.clock)
        if self.options.driver == "pymysql":
            import pymysql

            self._driver: Any = pymysql
        else:
            import MySQLdb

            self._driver = MySQLdb
        self._error_types: type[BaseException] = self._driver.Error
        self._idle: list[Any] = []
        self._server_checked = False  # MariaDB >= 10.6, checked at the first connection
        self._lock = threading.Lock()
        self._limited: dict[str | None, tuple[bool, float]] = {}
        self.retries: Counter[str] = Counter()  # deadlocks and lock-wait timeouts retried

    # -- connections ---------------------------------------------------------------------------

    def connect(self) -> Any:
        """A new connection (the driver's) set up the way claimq needs: autocommit, READ
        COMMITTED, UTC, the URL's lock-wait timeout. The caller closes it."""
        return self._connect()

    def _connect(self) -> Any:
        o = self.options
        if o.driver == "pymysql":
            conn = self._driver.connect(
                host=o.host, port=o.port, user=o.user, password=o.password, database=o.database,
                autocommit=True, charset="utf8mb4", client_flag=_FOUND_ROWS,
                connect_timeout=o.connect_timeout, read_timeout=o.read_timeout,
                write_timeout=o.read_timeout)
        else:
            conn = self._driver.connect(
                host=o.host, port=o.port, user=o.user, passwd=o.password, db=o.database,
                autocommit=True, charset="utf8mb4", client_flag=_FOUND_ROWS,
                connect_timeout=o.connect_timeout, read_timeout=o.read_timeout,
                write_timeout=o.read_timeout)
        if not self._server_checked:
            try:
                check_server(conn.get_server_info(), self._where)
            except InvalidInput:
                conn.close()
                raise
            self._server_checked = True
        cur = conn.cursor()
        cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
        cur.execute(f"SET time_zone = '+00:00', innodb_lock_wait_timeout = {o.lock_wait_timeout}")
        cur.close()
        return conn

    @contextmanager
    def _connection(self, fresh: bool = False) -> Iterator[Any]:
        """A pooled connection (`fresh`: a new one); driver errors inside become claimq's. A
        connection that broke is closed rather than kept, and so are the idle ones (a server
        restart or a KILL broke them too, most likely)."""
        conn = None
        if not fresh:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
        keep = True
        try:
            if conn is None:
                conn = self._connect()
            yield conn
        except self._error_types as exc:
            keep = error_code(exc) not in BROKEN
            if not keep:
                self.close()
            raise translate(exc, self._where) from exc
        except Exception:
            raise
        except BaseException:
            keep = False  # interrupted mid-statement: its state is unknown
            raise
        finally:
            if conn is not None:
                self._put_back(conn, keep)

    def _put_back(self, conn: Any, keep: bool) -> None:
        if keep and conn.open:  # (a connection the driver closed after an error is not)
            with self._lock:
                if len(self._idle) < self.options.pool_size:
                    self._idle.append(conn)
                    return
        with suppress(Exception):  # closing a broken connection may fail too
            conn.close()

    def _write(self, work: Callable[[Any], R]) -> R:
        """`work(cursor)` in one short transaction of our own; a deadlock or a lock-wait timeout
        rolls it back and runs it again (counted in `retries`), so neither reaches the caller
        unless it keeps happening (then DatabaseUnavailable)."""
        fresh = False
        for attempt in range(1, DEADLOCK_ATTEMPTS + 1):
            with self._connection(fresh) as conn:
                cur = conn.cursor()
                begun = False
                try:
                    cur.execute("START TRANSACTION")
                    begun = True
                    result = work(cur)
                    conn.commit()
                    return result
                except self._error_types as exc:
                    code = error_code(exc)
                    if code not in BROKEN:
                        with suppress(self._error_types):
                            conn.rollback()
                    tries = DEADLOCK_ATTEMPTS if code == DEADLOCK else ATTEMPTS
                    if code in RETRYABLE and attempt < tries:
                        self._count_retry(code)
                        continue_after = random.uniform(  # noqa: S311
                            0, min(RETRY_PAUSE, 0.002 * 2**attempt))
                    elif code in BROKEN and not begun and not fresh:
                        # A pooled connection that died while idle: nothing was sent on it,
                        # so a new connection runs the transaction from the start.
                        with suppress(Exception):
                            conn.close()
                        fresh, continue_after = True, 0.0
                    else:
                        raise
                except BaseException:
                    with suppress(self._error_types):
                        conn.rollback()
                    raise
            time.sleep(continue_after)
        raise AssertionError("unreachable")  # pragma: no cover

    def _count_retry(self, code: int) -> None:
        with self._lock:
            self.retries["deadlock" if code == DEADLOCK else "lock_wait_timeout"] += 1

    def _read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """One reading statement (autocommit); on a pooled connection that died while idle,
        read again on a new one."""
        for fresh in (False, True):
            try:
                with self._connection(fresh) as conn:
                    cur = conn.cursor()
                    cur.execute(query, params)
                    return _dicts(cur)
            except ClaimqError as exc:
                cause = exc.__cause__
                if fresh or cause is None or error_code(cause) not in BROKEN:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def _callers(self, conn: Any) -> Iterator[Any]:
        """A cursor on the caller's connection, in the caller's transaction."""
        if not isinstance(conn, self._driver.connections.Connection):
            raise InvalidInput(
                f"conn must be a {self._driver.__name__} connection for a MySQL database")
        try:
            yield conn.cursor()
        except self._error_types as exc:
            raise translate(exc, self._where) from exc

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A pooled connection inside a transaction, for the caller's business writes together
        with enqueue(conn=…) or a handler's ctx.complete_in(conn). Getting the connection maps
        errors like every method (a pooled one that died while idle is replaced); the caller's
        own statements and the commit raise the driver's."""
        conn = self._begun()
        keep = False
        try:
            yield conn
            conn.commit()
            keep = True
        except self._error_types as exc:
            keep = error_code(exc) not in BROKEN
            if keep:
                conn.rollback()
            raise
        except BaseException:
            try:  # the caller's error stands, whatever the rollback meets
                conn.rollback()
                keep = True
            except self._error_types:
                keep = False
            raise
        finally:
            self._put_back(conn, keep)

    def _begun(self) -> Any:
        """A connection inside START TRANSACTION: a pooled one, else (or when the pooled one
        died while idle) a new one."""
        with self._lock:
            conn: Any = self._idle.pop() if self._idle else None
        for fresh in (conn is None, True):
            try:
                if fresh:
                    conn = self._connect()
                conn.cursor().execute("START TRANSACTION")
                return conn
            except self._error_types as exc:
                if conn is not None:
                    self._put_back(conn, False)
                if fresh or error_code(exc) not in BROKEN:
                    raise translate(exc, self._where) from exc
                self.close()  # the other idle ones died with it, most likely
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            self._put_back(conn, False)

    def _now(self) -> datetime | None:
        """The `now` parameter: the test clock's time, or None (the server's clock)."""
        return None if self._system else _naive(self.clock.now())

    def _now_sql(self) -> str:
        """`now` written into a statement (the multi-row INSERT): a literal or the server's."""
        now = self._now()
        return "UTC_TIMESTAMP(6)" if now is None else f"'{now.isoformat(' ', 'microseconds')}'"

    def now(self) -> datetime:
        if not self._system:
            return self.clock.now()
        [row] = self._read("SELECT UTC_TIMESTAMP(6) AS now", {})
        return row["now"].replace(tzinfo=UTC)  # type: ignore[no-any-return]

    # -- migrations ----------------------------------------------------------------------------

    def migrate(self) -> list[int]:
        applied: list[int] = []
        lock = f"claimq_migrate_{self.database}"
        with self._connection() as conn:
            cur = conn.cursor()
            # A named lock makes concurrent migrate() calls run one after another.
            cur.execute("SELECT GET_LOCK(%s, 120)", (lock,))
            if cur.fetchone()[0] != 1:
                raise DatabaseUnavailable(
                    f"another process has been migrating {self._where} for 120 s: try again")
            try:
                cur.execute(
                    "CREATE TABLE IF NOT EXISTS claimq_migrations ("
                    " version INT NOT NULL PRIMARY KEY, name VARCHAR(255) NOT NULL,"
                    " applied_at DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6))) ENGINE=InnoDB")
                cur.execute("SELECT version FROM claimq_migrations")
                done = {r[0] for r in cur.fetchall()}
                for version, name, text in _MIGRATIONS:
                    if version in done:
                        continue
                    # DDL commits as it goes in MariaDB: a migration is a list of statements
                    # that each stand on their own.
                    for statement in _split_statements(text):
                        cur.execute(statement)
                    cur.execute("INSERT INTO claimq_migrations (version, name) VALUES (%s, %s)",
                                (version, name))
                    applied.append(version)
            finally:
                cur.execute("SELECT RELEASE_LOCK(%s)", (lock,))
        return applied

    def schema_version(self) -> int:
        try:
            [row] = self._read("SELECT max(version) AS v FROM claimq_migrations", {})
        except SchemaMissing:
            return 0
        return int(row["v"] or 0)

    def check_schema(self) -> None:
        latest = _MIGRATIONS[-1][0]
        found = self.schema_version()
        if found < latest:
            raise SchemaMissing(
                f"database {self.database!r} is at schema version {found}, claimq needs "
                f"{latest}: run `claimq migrate` (or app.migrate())"
            )

    def grant(self, role: str, kind: RoleKind) -> None:
        """Not here (capabilities.roles is false): raises InvalidInput. MariaDB's and MySQL's
        own GRANT statements on the claimq_* tables give an account its rights."""
        raise InvalidInput(
            f"claimq grants roles on PostgreSQL only; on {self.engine} give {role!r} its rights "
            "with GRANT statements on the claimq_* tables")

    def run_sql(
        self, sql: str, params: Sequence[Any] = (), conn: Any = None
    ) -> list[tuple[Any, ...]]:
        if conn is not None:
            with self._callers(conn) as cur:
                cur.execute(sql, tuple(params) if params else None)
                return [tuple(r) for r in cur.fetchall()] if cur.description is not None else []
        with self._connection() as own:
            cur = own.cursor()
            cur.execute(sql, tuple(params) if params else None)
            return [tuple(r) for r in cur.fetchall()] if cur.description is not None else []

    placeholder = "%s"

    def table(self, name: str) -> str:
        return f"claimq_{name}"

    def own_table(self, name: str) -> str:
        return name  # the URL's database holds it

    def seconds_between(self, later: str, earlier: str) -> str:
        return f"TIMESTAMPDIFF(MICROSECOND, {earlier}, {later}) / 1e6"

    def analyze(self) -> None:
        self.run_sql("ANALYZE TABLE claimq_jobs, claimq_archive, claimq_queues")

    def check_location(self, *, missing_ok: bool) -> None:
        """Nothing to check here: connecting tells (check_schema)."""

    @classmethod
    def fresh_url(cls, url: str, prefix: str, *, replace: bool = False) -> str:
        """Creates a new, empty database `PREFIX_xxxxxxxx` on the server of `url` (through the
        database `url` names) and returns `url` naming it instead."""
        name = f"{prefix}_{secrets.token_hex(4)}"
        server = cls(url)
        try:
            server.run_sql(f"CREATE DATABASE {name}")
        finally:
            server.close()
        return urlparse(url)._replace(path=f"/{name}").geturl()

    def drop_all(self) -> None:
        """Drops the URL's database with everything in it, then closes the backend."""
        try:
            self.run_sql(f"DROP DATABASE IF EXISTS {self.database}")
        finally:
            self.close()

    # -- enqueue -------------------------------------------------------------------------------

    def enqueue(self, jobs: Sequence[NewJob], retention: float, conn: Any = None) -> list[int]:
        if conn is not None:
            with self._callers(conn) as cur:
                return self._insert(cur, jobs, retention)
        if not jobs:
            return []
        return self._write(lambda cur: self._insert(cur, jobs, retention))

    def _insert(self, cur: Any, jobs: Sequence[NewJob], retention: float) -> list[int]:
        plain = [j for j in jobs if j.idempotency_key is None]
        keyed = {j.queue for j in jobs if _keyed(j)}
        for queue in sorted(keyed):
            self._mark_keyed(cur, queue)
        plain_ids = iter(self._insert_rows(cur, plain))
        ids: list[int] = []
        inserted: list[bool] = []  # a held key's id is its holder's: the holder's keys stay
        for j in jobs:
            job_id, new = ((next(plain_ids), True) if j.idempotency_key is None
                           else self._insert_keyed(cur, j, retention))
            ids.append(job_id)
            inserted.append(new)
        items = [[i, j.flow.concurrency_key, j.flow.concurrency_limit, j.flow.sequence_key,
                  None if j.flow.sequence_wait is None else int(j.flow.sequence_wait),
                  j.flow.rate_key]
                 for i, j, new in zip(ids, jobs, inserted, strict=True)
                 if new and j.flow is not None and _keyed(j)]
        if items:
            cur.execute(_Q.set_job_keys, {"items": _dumps(items),
                                          "ids": tuple(item[0] for item in items)})
        return ids

    def _mark_keyed(self, cur: Any, queue: str) -> None:
        """A queue given jobs with a concurrency or sequence key claims them per key from now on
        (its row is written only the first time: a plain read says whether it must be)."""
        cur.execute(_Q.queue_keyed, {"name": queue})
        row = cur.fetchone()
        if row is None or not row[0]:
            cur.execute(_Q.mark_keyed_queue, {"name": queue, "now": self._now()})
            self._limited.clear()  # this process's next claim locks the queue's row at once

    def _insert_rows(self, cur: Any, jobs: Sequence[NewJob]) -> list[int]:
        """Multi-row INSERTs (RETURNING id, in the rows' order), in chunks that stay well under
        the server's max_allowed_packet."""
        ids: list[int] = []
        row = _Q.job_row.replace("{now_positional}", self._now_sql())
        start = 0
        while start < len(jobs):
            size, end = 0, start
            while end < len(jobs) and end - start < INSERT_CHUNK_ROWS and (
                    end == start or size < INSERT_CHUNK_BYTES):
                size += len(jobs[end].payload_json)
                end += 1
            chunk = jobs[start:end]
            params: list[Any] = []
            for j in chunk:
                params += (j.queue, j.task, j.payload_json, _dumps(list(j.tags)),
                           j.idempotency_key, j.priority, j.max_attempts,
                           None if j.run_at is None else _naive(j.run_at), _micros(j.delay),
                           j.timeout, j.retry_json, j.trace_context)
            cur.execute(_Q.insert_jobs.replace("{rows}", ",".join([row] * len(chunk))), params)
            ids += [r[0] for r in cur.fetchall()]
            start = end
        return ids

    def _insert_keyed(self, cur: Any, job: NewJob, retention: float) -> tuple[int, bool]:
        """`job`'s id and whether it was inserted: the id of the job still holding `job`'s
        idempotency key under its `unique` scope and False (with on_conflict="replace", a
        pending holder first takes `job`'s payload and run_at), else the id of `job`, inserted
        and made the key's holder, and True."""
        flow = job.flow or NO_FLOW
        if flow.unique_for is not None:
            retention = flow.unique_for  # unique="until_done" for this long after finishing
        params = {"key": job.idempotency_key, "now": self._now(),
                  "statuses": _rows.HOLDING_JSON[flow.unique],
                  "retention_us": _micros(retention) if flow.unique == "until_done" else None}
        for _ in range(5):
            # The key's row locked first (a taker not yet committed is waited for), the key taken
            # only when it has no row: many enqueuers of one key queue for its row's lock rather
            # than each take a shared lock from a refused INSERT and deadlock upgrading it.
            cur.execute(_Q.key_holder, params)
            holder = cur.fetchone()
            pause("enqueue.key_checked")
            if holder is None:
                cur.execute(_Q.claim_key, params)
                if cur.rowcount != 1:
                    continue  # another enqueue took the key meanwhile: read its holder
            elif holder[1]:
                if flow.on_conflict == "replace" and holder[2] == Status.PENDING:
                    pause("debounce.holder_read")
                    cur.execute(_Q.replace_pending, {
                        "id": holder[0], "payload": job.payload_json, "now": params["now"],
                        "run_at": None if job.run_at is None else _naive(job.run_at),
                        "delay_us": _micros(job.delay)})
                    if cur.rowcount != 1:
                        # A claim took the holder since key_holder read it (the key's row
                        # lock keeps enqueues out, not claims): look at the holder again.
                        continue
                return int(holder[0]), False
            # (else the key's job finished longer ago than the retention window: take it over)
            [job_id] = self._insert_rows(cur, [job])
            cur.execute(_Q.set_key_holder, {**params, "job_id": job_id})
            return job_id, True
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
        request = ClaimRequest(worker_id, queues, limit, lease, start)
        return self._write(lambda cur: self._claim(cur, request))

    def _claim(self, cur: Any, req: ClaimRequest) -> list[Job]:
        now = self._now()
        queues = None if req.queues is None else _dumps(list(req.queues))
        params: dict[str, Any] = {"queues": queues, "now": now, "limit": req.limit}
        limited: list[str] = []
        if self._any_limited(cur, params):
            cur.execute(_Q.lock_limited_queues, params)
            limited = [r[0] for r in cur.fetchall()]
            pause("claim.queues_locked")
        params["limited"] = _dumps(limited)
        cur.execute(_Q.open_queues, params)
        found = cur.fetchall()
        open_queues = [(name, free, flow) for name, free, _, flow in found if free > 0]
        leases = {name: req.lease if req.lease is not None else seconds
                  for name, _, seconds, _ in found}
        rows: list[dict[str, Any]] = []
        rated: dict[str, datetime] = {}  # a rate-limited queue's GCRA arrival time
        probes: list[Probe] = []  # circuit breakers' probes offered
        buckets: list[KeyBuckets] = []  # flow queues' rate keys met
        # tasks the claimer cannot run: a one-value dummy when none (IN () is no SQL)
        skip = {"skipping": bool(req.skip_tasks), "skip": tuple(req.skip_tasks) or ("",)}
        for name, free, flow in open_queues:
            query = {"queue": name, "now": now, "limit": min(free, req.limit)}
            if flow:
                rows += self._flow_candidates(cur, query, rated, probes, buckets)
                # one time for the rest of the claim: the rate limit's, the claim's writes'
                now = query["now"]
                continue
            cur.execute(_Q.claim_candidates, {**query, **skip})
            rows += _dicts(cur)
        if not rows:
            return []
        rows.sort(key=lambda r: claim_order(r.get("rank", r["priority"]), r["run_at"], r["id"]))
        rows = rows[: req.limit]  # the other rows' locks go at commit
        pause("claim.candidates")
        for queue, tat in rated.items():
            spent = sum(1 for r in rows if r["queue"] == queue)
            if spent:
                cur.execute(_Q.rate_consume, {"queue": queue, "tat": tat, "n": spent})
        chosen = {r["id"] for r in rows}
        for probe in probes:
            if probe.probe_id in chosen:  # the breaker is half_open while its probe is out
                cur.execute(_Q.breaker_probe, {**probe._asdict(), "now": now})
        for keys in buckets:
            keys.spend(chosen)
        at: datetime = max(r["now"] for r in rows)
        batch = uuid.uuid4().hex
        ids = tuple(r["id"] for r in rows)
        cur.execute(_Q.claim_update, {"start": req.start, "now": at, "worker_id": req.worker_id,
                                      "batch": batch, "lease": req.lease, "ids": ids})
        if cur.rowcount != len(ids):
            raise ClaimqError(f"claim took {cur.rowcount} of the {len(ids)} rows it locked")
        status = Status.PROCESSING if req.start else Status.FETCHED
        started = _aware(at) if req.start else None
        updated = _aware(at)
        assert updated is not None
        # the claim's own fields, as claim_update.sql wrote them
        return [_row_to_job(
            r, status=status, attempts=r["attempts"] + (1 if req.start else 0),
            worker_id=req.worker_id, claim_token=f"{batch}.{r['id']}",
            lease_until=updated + timedelta(microseconds=_micros(leases[r["queue"]])),
            heartbeat_at=started, started_at=started, updated_at=updated, finished_at=None,
            cancel_requested=False, result=None, reason=None) for r in rows]

    def _flow_candidates(
        self, cur: Any, params: dict[str, Any], rated: dict[str, datetime], probes: list[Probe],
        buckets: list[KeyBuckets],
    ) -> list[dict[str, Any]]:
        """A flow-controlled queue's claimable jobs (its row is locked: its claimers take turns,
        so the counts are exact), at most params["limit"]: none while it is throttled, no more
        than its rate limit's bucket holds, none whose concurrency key already runs its limit,
        of each ordered sequence only its head;
        with priority aging, each job's `rank` is its aged priority. A rate-limited queue's
        arrival time goes into `rated` (the claim spends tokens for the jobs it takes). No job
        of a task whose circuit breaker is open; one (its probe, into `probes`) of one that
        cooled down. A job with a rate key takes a token of its key's bucket (into `buckets`:
        the claim spends those of the jobs it takes)."""
        cur.execute(_Q.claim_flow_state, params)
        [state] = _dicts(cur)
        limit, now = params["limit"], state["now"]
        params["now"] = now  # (the caller's too) every statement of the claim at this time
        limit, tat = queue_room(state, now, limit, lambda: cur.execute(_Q.clear_throttle, params),
                                timedelta.total_seconds)
        if limit <= 0:
            return []
        if tat is not None:
            rated[params["queue"]] = tat
        cur.execute(_Q.claim_flow_running, params)
        running: dict[str, int] = {key: int(n) for key, n in cur.fetchall()}
        step, cap = state["aging_step"], state["aging_cap"]
        gates = self._gates(cur, params) if state["breakers"] else {}
        keys = _key_buckets(cur, params["queue"], now, state)
        buckets.append(keys)
        full = keys.full_ahead()
        scan = {**params, "level": None, "scan": aging_scan(limit), "task": None,
                "gated": _dumps(sorted(gates)) if gates else None, "key": None, "unkeyed": False,
                "key_full_us": None if full is None else math.ceil(full * 1e6)}
        picked: dict[int, dict[str, Any]] = {}
        window = _window(cur, params, running, limit)
        if window is not None:  # the first rows hold enough: no further than they go
            cur.execute(_Q.claim_flow_candidates, {**scan, "scan": window})
            picked.update((r["id"], r) for r in _dicts(cur))
        else:  # they hold too many back: read on by key, the jobs without one apart
            for key, first in _keys(cur, params):
                if first is not None and running.get(key, 0) < first:
                    cur.execute(_Q.claim_flow_candidates, {**scan, "key": key, "scan": limit})
                    picked.update((r["id"], r) for r in _dicts(cur))
            cur.execute(_Q.claim_flow_candidates, {**scan, "unkeyed": True})
            picked.update((r["id"], r) for r in _dicts(cur))
        for task in sorted(t for t, gate in gates.items() if gate.probe_id is None):
            cur.execute(_Q.claim_flow_candidates, {**scan, "task": task, "gated": None,
                                                   "scan": 1})  # the probe's candidate
            picked.update((r["id"], r) for r in _dicts(cur))
        if state["keyed"]:  # each ordered sequence's head (a plain read, then locked)
            cur.execute(_Q.claim_sequence_heads, params)
            heads = tuple(r[0] for r in cur.fetchall())
            if heads:
                cur.execute(_Q.claim_flow_rows, {**params, "ids": heads})
                picked.update((r["id"], r) for r in _dicts(cur))
        if step is not None and picked:  # a probe per level below the top that has jobs
            top = max(r["priority"] for r in picked.values())
            below = top
            while True:
                cur.execute(_Q.claim_flow_next_level,
                            {**params, "below": below, "floor": top - cap})
                found = cur.fetchone()
                if found is None:
                    break
                below = found[0]
                cur.execute(_Q.claim_flow_candidates,
                            {**scan, "level": below, "scan": level_scan(limit)})
                picked.update((r["id"], r) for r in _dicts(cur))
        for r in picked.values():
            r["rank"] = aged_priority(r["priority"], (now - r["run_at"]).total_seconds(), step,
                                      cap)
        ranked = sorted(picked.values(), key=lambda r: claim_order(r["rank"], r["run_at"],
                                                                   r["id"]))
        return within_keys(through_gates(((r, r) for r in ranked), gates, probes), running,
                           limit, keys.take)

    def _gates(self, cur: Any, params: dict[str, Any]) -> dict[str, Probe]:
        """The queue's circuit breakers that hold its tasks back, by task (breaker_gates)."""
        cur.execute(_Q.claim_breakers, params)
        return breaker_gates(
            _dicts(cur), params["queue"], params["now"],
            lambda probe: cur.execute(_Q.breaker_probe, {**probe._asdict(), "now": params["now"]}),
            Status.PENDING.value,
            lambda probe: cur.execute(_Q.breaker_reopen,
                                      {**probe._asdict(), "now": params["now"]}))

    def _any_limited(self, cur: Any, params: dict[str, Any]) -> bool:
        """Whether the claim's queues include a limited one; asked at most once a second. (Were
        one limited meanwhile, the claim skips it until the next check: never over its
        limit.)"""
        key = params["queues"]
        known = self._limited.get(key)
        if known is not None and known[1] >= time.monotonic():
            return known[0]
        cur.execute(_Q.any_limited_queue, params)
        found = bool(cur.fetchone()[0])
        self._limited[key] = (found, time.monotonic() + LIMITED_RECHECK)
        return found

    def settle(
        self,
        done: Sequence[Completion],
        failures: Sequence[Failure],
        claim: ClaimRequest | None = None,
    ) -> Settled:
        """Failures, completions and the next claim in one transaction."""
        wanted = claim is not None and claim.limit > 0
        if not done and not failures and not wanted:
            return Settled(set(), FailResult(), [])

        def work(cur: Any) -> Settled:
            failed = self._fail(cur, failures)
            completed = self._complete(cur, done)
            jobs = self._claim(cur, claim) if claim is not None and wanted else []
            pause("settle.claimed")  # written, not yet committed
            return Settled(completed, failed, jobs)

        return self._write(work)

    def _lock_owned(self, cur: Any, owned: Sequence[Owned | Completion | Failure],
                    statuses: Sequence[str]) -> dict[int, dict[str, Any]]:
        """The rows of `owned` whose token and status say the caller owns them, locked."""
        cur.execute(_Q.lock_owned, {"ids": tuple({o.id for o in owned})})
        tokens: dict[int, set[str]] = {}
        for o in owned:
            tokens.setdefault(o.id, set()).add(o.token)
        return {r["id"]: r for r in _dicts(cur)
                if r["status"] in statuses and r["claim_token"] in tokens[r["id"]]}

    def start(self, owned: Sequence[Owned], lease: float | None) -> list[Started]:
        if not owned:
            return []

        def work(cur: Any) -> list[Started]:
            rows = self._lock_owned(cur, owned, (Status.FETCHED.value,))
            ids = tuple(i for i, r in rows.items() if not r["cancel_requested"])
            if not ids:
                return []
            cur.execute(_Q.start, {"ids": ids, "lease": lease, "now": self._now()})
            return [Started(i, rows[i]["attempts"] + 1) for i in ids]

        return self._write(work)

    def heartbeat(self, owned: Sequence[Owned], lease: float | None) -> HeartbeatResult:
        result = HeartbeatResult()
        if not owned:
            return result

        def work(cur: Any) -> None:
            ids = tuple({o.id for o in owned})
            cur.execute(_Q.heartbeat_lock, {"ids": ids})
            locked = {r[0]: (r[1], r[2]) for r in cur.fetchall()}
            alive = {o.id for o in owned if o.id in locked and locked[o.id][0] == o.token}
            passed = tuple(i for i in ids if i not in locked)
            if passed:
                cur.execute(_Q.heartbeat_held, {"ids": passed})
                held = dict(cur.fetchall())
                result.busy.update(o.id for o in owned
                                   if o.id in held and held[o.id] == o.token)
            pause("heartbeat.locked")
            if alive:
                cur.execute(_Q.heartbeat, {"ids": tuple(alive), "lease": lease,
                                           "now": self._now()})
            result.alive.update(alive)
            result.cancel_requested.update(i for i in alive if locked[i][1])

        self._write(work)
        result.lost.update(
            o.id for o in owned if o.id not in result.alive and o.id not in result.busy)
        return result

    def confirm_owned(self, owned: Owned, lease: float | None) -> HeartbeatResult:
        result = HeartbeatResult()

        def work(cur: Any) -> None:
            result.alive.clear()
            result.cancel_requested.clear()
            pause("ensure_owned.read")
            locked = True
            try:
                cur.execute(_Q.confirm_owned_lock, {"id": owned.id})
            except self._error_types as exc:
                if error_code(exc) != LOCK_WAIT_TIMEOUT:
                    raise
                locked = False  # held on: answer from the token last committed
                cur.execute(_Q.owner_read, {"id": owned.id})
            row = cur.fetchone()
            if row is None or row[0] != owned.token or row[1] not in _LIVE:
                return
            if locked:
                cur.execute(_Q.heartbeat, {"ids": (owned.id,), "lease": lease,
                                           "now": self._now()})
            result.alive.add(owned.id)
            if row[2]:
                result.cancel_requested.add(owned.id)

        self._write(work)
        if owned.id not in result.alive:
            result.lost.add(owned.id)
        return result

    def complete(self, done: Sequence[Completion], conn: Any = None) -> set[int]:
        if not done:
            return set()
        if conn is not None:
            with self._callers(conn) as cur:
                return self._complete(cur, done)
        return self._write(lambda cur: self._complete(cur, done))

    def _complete(self, cur: Any, done: Sequence[Completion]) -> set[int]:
        if not done:
            return set()
        rows = self._lock_owned(cur, done, (Status.PROCESSING.value,))
        if not rows:
            return set()
        pause("settle.locked")
        results: dict[int, str | None] = {}  # one result per job, the first that owns it
        for d in done:
            if d.id in rows and d.id not in results and rows[d.id]["claim_token"] == d.token:
                results[d.id] = d.result_json
        items = _dumps(list(results.items()))
        ids = tuple(rows)
        cur.execute(_Q.complete_archive, {"items": items, "ids": ids, "now": self._now()})
        cur.execute(_Q.delete_ids, {"ids": ids})
        linked = _linked(rows, ids)
        if linked:  # workflow jobs: their dependents see the end in this transaction
            _workflow.release(_Steps(cur, self._now()), linked)
        return set(ids)

    def fail(self, failures: Sequence[Failure]) -> FailResult:
        if not failures:
            return FailResult()
        return self._write(lambda cur: self._fail(cur, failures))

    def _fail(self, cur: Any, failures: Sequence[Failure]) -> FailResult:
        result = FailResult()
        if not failures:
            return result
        rows = self._lock_owned(cur, failures, _LIVE)
        failed = dict(rows)
        if rows:
            pause("fail.locked")
        buried: list[list[Any]] = []
        retried: list[list[Any]] = []
        linked: list[int] = []  # buried workflow jobs
        for f in failures:
            row = rows.pop(f.id, None)
            if row is None or row["claim_token"] != f.token:
                if f.id not in result.dead and f.id not in result.retried:
                    result.lost.add(f.id)
                continue
            history = _appended(row["errors"], f.error)
            if ends_job(f.permanent, row["attempts"], row["max_attempts"]):
                buried.append([f.id, f.reason, history])
                result.dead.add(f.id)
                if row["workflow_id"] is not None:
                    linked.append(f.id)
            else:
                retried.append([f.id, _micros(f.delay), history])
                result.retried.add(f.id)
        self._bury(cur, buried, linked=linked)
        if retried:
            cur.execute(_Q.retry, {"items": _dumps(retried), "now": self._now(),
                                   "ids": tuple(r[0] for r in retried)})
        tasks: Counter[tuple[str, str]] = Counter()  # failed attempts per queue and task
        for f in failures:
            if f.id not in result.retried and f.id not in result.dead:
                continue
            if f.throttle > 0 and failed[f.id]["rate_key"] is not None:  # pauses its key only
                cur.execute(_Q.throttle_key, {
                    "queue": failed[f.id]["queue"], "key": failed[f.id]["rate_key"],
                    "after_us": _micros(f.throttle), "now": self._now()})
            elif f.throttle > 0:
                cur.execute(_Q.throttle_queue, {"id": f.id, "after_us": _micros(f.throttle),
                                                "now": self._now()})
                self._limited.clear()  # this process's next claim sees the throttle at once
            else:
                tasks[(failed[f.id]["queue"], failed[f.id]["task"])] += 1
        for (queue, task), n in sorted(tasks.items()):  # their circuit breakers, if any
            pause("fail.breaker")
            cur.execute(_Q.breaker_failed, {"queue": queue, "task": task, "n": n,
                                            "now": self._now()})
        return result

    def _bury(self, cur: Any, items: list[list[Any]], now: datetime | None = None,
              linked: Sequence[int] = ()) -> None:
        """Moves locked rows to dead letters: items are [id, reason, history]. `linked`: those
        of a workflow, whose dependents the release rule then updates in this transaction."""
        if not items:
            return
        ids = tuple(i[0] for i in items)
        cur.execute(_Q.bury, {"items": _dumps(items), "ids": ids,
                              "now": self._now() if now is None else now})
        cur.execute(_Q.delete_ids, {"ids": ids})
        if linked:
            _workflow.release(_Steps(cur, self._now() if now is None else now), linked)

    def release(self, owned: Sequence[Owned], delay: float = 0.0) -> set[int]:
        if not owned:
            return set()

        def work(cur: Any) -> set[int]:
            rows = self._lock_owned(cur, owned, _LIVE)
            cancelled = [i for i, r in rows.items() if r["cancel_requested"]]
            self._bury(cur, [[i, DeadReason.CANCELLED.value, rows[i]["errors"]]
                             for i in cancelled], linked=_linked(rows, cancelled))
            back = tuple(i for i, r in rows.items() if not r["cancel_requested"])
            if back:
                cur.execute(_Q.release, {"ids": back, "delay_us": _micros(delay),
                                         "now": self._now()})
            return set(rows)

        return self._write(work)

    def tidy(self, min_dead: int) -> bool:
        """Nothing to do: InnoDB's purge thread clears deleted rows' index entries."""
        return False

    def orphaned(self, worker_id: str, held: Sequence[int]) -> list[Owned]:
        known = set(held)
        rows = self._read(_Q.orphaned, {"worker_id": worker_id, "now": self._now()})
        return [Owned(r["id"], r["claim_token"]) for r in rows if r["id"] not in known]

    def reap(self, limit: int = 1000) -> ReapResult:
        def work(cur: Any) -> ReapResult:
            result = ReapResult()
            cur.execute(_Q.reap_expired, {"limit": limit, "now": self._now()})
            buried: list[list[Any]] = []
            requeued: list[list[Any]] = []
            linked: list[int] = []  # buried workflow jobs
            at = None
            expired = _dicts(cur)
            if expired:
                pause("reap.selected")
            for row in expired:
                at = row["now"]
                history = _appended(row["errors"],
                                    lease_expired_error(row, at.replace(tzinfo=UTC)))
                reason = expired_lease_reason(row["status"], row["attempts"], row["max_attempts"],
                                              row["cancel_requested"])
                if reason is not None:
                    buried.append([row["id"], reason.value, history])
                    result.dead.append(row["id"])
                    if row["workflow_id"] is not None:
                        linked.append(row["id"])
                else:
                    requeued.append([row["id"], history])
                    result.requeued.append(row["id"])
            self._bury(cur, buried, at, linked)
            if requeued:
                cur.execute(_Q.requeue, {"items": _dumps(requeued), "now": at,
                                         "ids": tuple(r[0] for r in requeued)})
            return result

        return self._write(work)

    # -- workflows (issue 26; the rules: backends/_workflow.py) --------------------------------

    def add_workflow(self, wf: NewWorkflow, retention: float, conn: Any = None) -> WorkflowAdded:
        if conn is not None:
            with self._callers(conn) as cur:
                return self._add_workflow(cur, wf, retention)
        return self._write(lambda cur: self._add_workflow(cur, wf, retention))

    def _add_workflow(self, cur: Any, wf: NewWorkflow, retention: float) -> WorkflowAdded:
        params = {"name": wf.name, "key": wf.key, "on_failure": wf.on_failure,
                  "now": self._now()}
        try:
            cur.execute(_Q.insert_workflow, params)
        except self._error_types as exc:
            if wf.key is None or error_code(exc) != DUPLICATE_KEY:
                raise
            # The key names a committed workflow (one still being written was waited for on
            # the unique index): nothing written, that one returned.
            cur.execute(_Q.workflow_by_key, params)
            [workflow_id] = cur.fetchone()
            cur.execute(_Q.workflow_job_ids, {"workflow_id": workflow_id})
            return WorkflowAdded(workflow_id, [r[0] for r in cur.fetchall()], False)
        [workflow_id] = cur.fetchone()
        ids = self._insert(cur, wf.jobs, retention) if wf.jobs else []
        edges, waiting = _workflow.workflow_edges(ids, wf.after, wf.on_failure)
        self._join(cur, workflow_id, ids, edges, waiting,
                   {i: flag for i, flag in zip(ids, wf.run_if, strict=True)})
        return WorkflowAdded(workflow_id, ids, True)

    def _join(self, cur: Any, workflow_id: int, ids: Sequence[int],
              edges: Sequence[_workflow.NewEdge], waiting: Mapping[int, int],
              run_if: Mapping[int, str | None]) -> None:
        """Jobs this transaction just inserted join workflow `workflow_id` with their edges;
        those with something to wait for move to held."""
        if not ids:
            return
        cur.execute(_Q.set_workflow, {"workflow_id": workflow_id, "ids": tuple(ids)})
        for chunk in _chunks(edges, EDGE_CHUNK):
            cur.execute(_Q.insert_deps, {"workflow_id": workflow_id, "items": _dumps(
                [[e.child, e.parent, e.position, e.on_failure] for e in chunk])})
        held = sorted(waiting)
        for chunk in _chunks(held, EDGE_CHUNK):
            cur.execute(_Q.hold_jobs, {"ids": tuple(chunk), "items": _dumps(
                [[i, waiting[i], run_if.get(i)] for i in chunk])})
            cur.execute(_Q.delete_ids, {"ids": tuple(chunk)})

    def spawn(self, owned: Owned, jobs: Sequence[NewJob], after: Sequence[Sequence[int]],
              retention: float) -> list[int] | None:
        def work(cur: Any) -> list[int] | None:
            rows = self._lock_owned(cur, [owned], (Status.PROCESSING.value,))
            row = rows.get(owned.id)
            if row is None:
                return None  # not the owner (or no longer running): nothing written
            if not jobs:
                return []
            now = self._now()
            workflow_id = row["workflow_id"]
            if workflow_id is None:  # a one-job workflow of its own first
                policy = _workflow.CANCEL
                cur.execute(_Q.insert_workflow, {"name": row["task"], "key": None,
                                                 "on_failure": policy, "now": now})
                [workflow_id] = cur.fetchone()
                cur.execute(_Q.set_workflow, {"workflow_id": workflow_id, "ids": (owned.id,)})
            else:
                cur.execute(_Q.workflow_policy, {"id": workflow_id})
                [policy] = cur.fetchone()
            # The spawner's dependents' held rows, locked by id: they wait for each new job too.
            cur.execute(_Q.lock_dependents, {"id": owned.id})
            cur.execute(_Q.spawn_dependents, {"id": owned.id})
            dependents = [_workflow.Dependent(r[0], r[1], int(r[2])) for r in cur.fetchall()]
            ids = self._insert(cur, jobs, retention)
            edges, waiting, more = _workflow.spawn_edges(ids, after, dependents, policy)
            self._join(cur, workflow_id, ids, edges, waiting, {})
            if more:
                items = sorted(more.items())
                cur.execute(_Q.add_waiting, {"items": _dumps(items),
                                             "ids": tuple(i for i, _ in items)})
            return ids

        return self._write(work)

    def _workflow_infos(self, rows: list[dict[str, Any]]) -> list[WorkflowInfo]:
        if not rows:
            return []
        counts: dict[int, dict[str, int]] = {r["id"]: {} for r in rows}
        ended: dict[int, datetime | None] = {}
        for c in self._read(_Q.workflow_counts, {"ids": tuple(counts)}):
            counts[c["workflow_id"]][c["status"]] = int(c["n"])
            if c["finished_at"] is not None:
                last = ended.get(c["workflow_id"])
                ended[c["workflow_id"]] = (c["finished_at"] if last is None
                                           else max(last, c["finished_at"]))
        live = {Status.HELD.value, *(s.value for s in (Status.PENDING, Status.FETCHED,
                                                       Status.PROCESSING))}
        infos = []
        for r in rows:
            created_at = _aware(r["created_at"])
            assert created_at is not None  # NOT NULL
            n = counts[r["id"]]
            infos.append(WorkflowInfo(
                id=r["id"], name=r["name"], key=r["idempotency_key"],
                on_failure=r["on_failure"], created_at=created_at, counts=n,
                finished_at=None if live & n.keys() else _aware(ended.get(r["id"]))))
        return infos

    def get_workflow(self, workflow_id: int) -> WorkflowInfo | None:
        infos = self._workflow_infos(self._read(_Q.get_workflow, {"id": workflow_id}))
        return infos[0] if infos else None

    def list_workflows(self, limit: int, before: int | None = None) -> list[WorkflowInfo]:
        return self._workflow_infos(
            self._read(_Q.list_workflows, {"limit": limit, "before": before}))

    def workflow_graph(self, workflow_id: int) -> tuple[list[Job], list[Edge]]:
        params = {"workflow_id": workflow_id}
        jobs = [_row_to_job(r) for r in self._read(_Q.workflow_jobs, params)]
        edges = [Edge(r["parent"], r["child"], r["on_failure"], bool(r["resolved"]))
                 for r in self._read(_Q.workflow_edges, params)]
        return jobs, edges

    def dependencies(self, job_id: int) -> list[Dependency]:
        found = []
        for r in self._read(_Q.dependencies, {"id": job_id}):
            result = json_text(r["result"])
            found.append(Dependency(r["id"], r["task"], Status(r["status"]),
                                    None if isinstance(result, _rows.Undecodable) else result,
                                    r["reason"]))
        return found

    def cancel_workflow(self, workflow_id: int) -> int:
        def work(cur: Any) -> int:
            params = {"workflow_id": workflow_id, "now": self._now()}
            cur.execute(_Q.lock_workflow_live, params)  # live rows before held ones
            live = _dicts(cur)
            cur.execute(_Q.lock_workflow_held, params)
            held = [r[0] for r in cur.fetchall()]
            waiting = [r for r in live if r["status"] in ("pending", "fetched")]
            running = tuple(r["id"] for r in live if r["status"] == "processing")
            self._bury(cur, [[r["id"], DeadReason.CANCELLED.value, r["errors"]]
                             for r in waiting])
            steps = _Steps(cur, self._now())
            moved = steps.bury_held(dict.fromkeys(held), DeadReason.CANCELLED.value)
            if running:
                cur.execute(_Q.cancel_requests, {**params, "ids": running})
            _workflow.release(steps, [r["id"] for r in waiting] + moved)
            return len(waiting) + len(moved) + len(running)

        return self._write(work)

    def retry_workflow(self, workflow_id: int) -> list[int]:
        def work(cur: Any) -> list[int]:
            params = {"workflow_id": workflow_id, "now": self._now(),
                      "statuses": _rows.HOLDING_JSON["until_done"],
                      "retention_us": _micros(KEY_RETENTION)}
            cur.execute(_Q.lock_workflow_failed, params)
            failed = cur.fetchall()
            steps = _Steps(cur, self._now())
            resurrected = []
            for job_id, key in failed:
                if key is not None:
                    self._take_dead_key(cur, job_id, key, params)
                if _workflow.resurrect(steps, job_id):
                    resurrected.append(job_id)
            return resurrected

        return self._write(work)

    def _drop_workflows(self, cur: Any, ids: Sequence[int]) -> None:
        """Of workflows `ids`, those with no job left anywhere lose their rows and edges."""
        if not ids:
            return
        cur.execute(_Q.finished_workflows, {"ids": tuple(ids)})
        done = tuple(r[0] for r in cur.fetchall())
        if done:
            cur.execute(_Q.delete_workflows, {"ids": done})

    # -- operator ------------------------------------------------------------------------------

    def get_job(self, job_id: int, conn: Any = None) -> Job | None:
        if conn is not None:  # the caller's connection and open transaction
            with self._callers(conn) as cur:
                cur.execute(_Q.get_job, {"id": job_id})
                rows = _dicts(cur)
            return _row_to_job(rows[0]) if rows else None
        rows = self._read(_Q.get_job, {"id": job_id})
        return _row_to_job(rows[0]) if rows else None

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
        return [_row_to_job(r) for r in self._read(query, params)]

    def find_jobs(
        self, table: Table, where: JobFilter, before: int | None, limit: int
    ) -> list[Job]:
        query = {"live": _Q.find_live, "archive": _Q.find_archive, "dead": _Q.find_dead}[table]
        params = {"before": before, "queue": where.queue, "task": where.task,
                  "status": _text(where.status), "tag": where.tag, "text": where.text,
                  "state": _text(where.state), "now": self._now(), "limit": limit}
        return [_row_to_job(r) for r in self._read(query, params)]

    def count_states(self) -> list[StateCount]:
        rows = self._read(_Q.count_states, {"now": self._now()})
        return [StateCount(r["queue"], r["state"], int(r["n"])) for r in rows]

    def delete_finished(self, table: Literal["archive", "dead"], ids: Sequence[int]) -> list[int]:
        if not ids:
            return []
        lock, delete = {"archive": (_Q.lock_archive_ids, _Q.delete_archive_ids),
                        "dead": (_Q.lock_dead_ids, _Q.delete_dead_ids)}[table]

        def work(cur: Any) -> list[int]:
            cur.execute(lock, {"ids": tuple(ids)})
            found = tuple(r[0] for r in cur.fetchall())
            if not found:
                return []
            cur.execute(delete, {"ids": found})
            if cur.rowcount != len(found):
                raise ClaimqError(f"deleted {cur.rowcount} of the {len(found)} rows it locked")
            return list(found)

        return self._write(work)

    def run_now(self, ids: Sequence[int]) -> list[int]:
        if not ids:
            return []

        def work(cur: Any) -> list[int]:
            now = self._now()
            cur.execute(_Q.lock_waiting, {"ids": tuple(ids), "now": now})
            found = tuple(r[0] for r in cur.fetchall())
            if not found:
                return []
            cur.execute(_Q.run_now, {"ids": found, "now": now})
            if cur.rowcount != len(found):
                raise ClaimqError(f"run_now changed {cur.rowcount} of the {len(found)} rows "
                                  "it locked")
            return list(found)

        return self._write(work)

    def record_audit(
        self, actor: str, action: str, target: str, detail_json: str, affected: int
    ) -> int:
        params = {"now": self._now(), "actor": actor, "action": action, "target": target,
                  "detail": detail_json, "affected": affected}

        def work(cur: Any) -> int:
            cur.execute(_Q.record_audit, params)
            return int(cur.lastrowid)

        return self._write(work)

    def database_user(self) -> str | None:
        rows = self._read(_Q.database_user, {})
        return str(rows[0]["name"]) if rows else None

    def list_audit(self, before: int | None, limit: int) -> list[AuditEntry]:
        return [
            AuditEntry(id=r["id"], at=_aware(r["at"]), actor=r["actor"], action=r["action"],
                       target=r["target"], detail=json.loads(r["detail"]),
                       affected=int(r["affected"]))
            for r in self._read(_Q.list_audit, {"before": before, "limit": limit})
        ]

    def cancel(self, job_id: int) -> CancelOutcome:
        def work(cur: Any) -> CancelOutcome:
            params = {"id": job_id, "now": self._now()}
            cur.execute(_Q.cancel_lock, params)
            row = cur.fetchone()
            if row is None:  # a held workflow job? (a plain live job never gets here)
                steps = _Steps(cur, self._now())
                if steps.bury_held({job_id: None}, DeadReason.CANCELLED.value):
                    _workflow.release(steps, [job_id])
                    return "cancelled"
                # A release that moved it held -> jobs since the first look committed before
                # held's row lock let this read go on: look in jobs once more.
                cur.execute(_Q.cancel_lock, params)
                row = cur.fetchone()
            if row is not None:
                pause("cancel.locked")
            if row is not None and row[1] in ("pending", "fetched"):
                self._bury(cur, [[job_id, DeadReason.CANCELLED.value, row[2]]],
                           linked=[job_id] if row[3] is not None else [])
                return "cancelled"
            if row is not None:
                cur.execute(_Q.cancel_request, params)
                return "cancel_requested"
            cur.execute(_Q.finished, params)
            return "finished" if cur.fetchone()[0] else "not_found"

        return self._write(work)

    def resurrect(
        self, job_id: int, payload_json: str | None = None, priority: int | None = None,
        retention: float = KEY_RETENTION,
    ) -> bool:
        def work(cur: Any) -> bool:
            params = {"id": job_id, "now": self._now(), "payload": payload_json,
                      "priority": priority, "statuses": _rows.HOLDING_JSON["until_done"],
                      "retention_us": _micros(retention)}
            cur.execute(_Q.lock_dead, params)
            dead = cur.fetchone()
            if dead is None:
                return False
            pause("resurrect.locked")
            if dead[1] is not None:
                self._take_dead_key(cur, job_id, dead[1], params)
            pause("resurrect.key_checked")
            if dead[2] is not None:  # a workflow's job: its dependents it cancelled come back
                return _workflow.resurrect(_Steps(cur, self._now()), job_id, payload_json,
                                           priority)
            cur.execute(_Q.resurrect, params)
            if cur.rowcount != 1:
                raise ClaimqError(f"dead letter {job_id} vanished under its row lock")
            cur.execute(_Q.delete_dead, params)
            return True

        return self._write(work)

    def _take_dead_key(self, cur: Any, job_id: int, key: str, params: dict[str, Any]) -> None:
        """Points the row of dead letter `job_id`'s idempotency key at it, its window cleared
        (KeyHeld when another job holds the key), as an enqueue takes a key: the key's row
        locked first, taken only when it has no row."""
        params = {**params, "key": key, "job_id": job_id}
        for _ in range(5):
            cur.execute(_Q.key_holder, params)
            if cur.fetchone() is None:
                cur.execute(_Q.claim_key, params)
                if cur.rowcount != 1:
                    continue  # another enqueue took the key meanwhile: read its holder
            else:
                # read again under the row's lock by a later statement, whose snapshot sees
                # what a writer that held the lock committed
                cur.execute(_Q.key_holder, params)
                holder = cur.fetchone()
                if holder[0] != job_id and holder[1]:
                    raise KeyHeld(job_id, key, int(holder[0]))
            cur.execute(_Q.set_key_holder, params)
            return
        raise ClaimqError(f"could not settle idempotency key {key!r}")

    def purge(
        self,
        table: Literal["archive", "dead"],
        older_than: float | None = None,
        queue: str | None = None,
        task: str | None = None,
    ) -> int:
        query = {"archive": _Q.purge_archive, "dead": _Q.purge_dead}[table]
        params = {"older_than_us": None if older_than is None else _micros(older_than),
                  "queue": queue, "task": task, "now": self._now()}

        def work(cur: Any) -> int:
            cur.execute(query, params)
            count = int(cur.rowcount)
            cur.execute(_Q.purge_progress)
            while True:  # workflows left without a job, with their edges
                cur.execute(_Q.empty_workflows, {"batch": PURGE_BATCH})
                empty = tuple(r[0] for r in cur.fetchall())
                if not empty:
                    return count
                cur.execute(_Q.delete_workflows, {"ids": empty})

        return self._write(work)

    def purge_idempotency_keys(self, retention: float) -> int:
        return all_batches(lambda: self.prune_idempotency_keys(retention, PURGE_BATCH))

    def set_priority(self, job_id: int, priority: int) -> bool:
        def work(cur: Any) -> bool:
            params = {"id": job_id, "priority": priority, "now": self._now()}
            # held first (its row lock, then the job's, as a release takes them): one released
            # meanwhile is pending by the second statement
            cur.execute(_Q.set_priority_held, params)
            if cur.rowcount == 1:
                return True
            cur.execute(_Q.set_priority, params)
            return bool(cur.rowcount == 1)

        return self._write(work)

    def set_progress(self, owned: Owned, fraction: float, note: str | None) -> bool:
        params = {"id": owned.id, "token": owned.token, "fraction": fraction, "note": note,
                  "now": self._now()}

        def work(cur: Any) -> bool:
            cur.execute(_Q.set_progress, params)
            return bool(cur.rowcount > 0)  # 1 inserted, 2 updated (1 unchanged: FOUND_ROWS)

        return self._write(work)

    def get_progress(self, job_id: int) -> Progress | None:
        rows = self._read(_Q.get_progress, {"id": job_id})
        if not rows:
            return None
        r = rows[0]
        return Progress(float(r["fraction"]), r["note"], int(r["attempt"]),
                        r["updated_at"].replace(tzinfo=UTC))

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
        params = {**queue_settings(name, paused, active, max_workers, lease_seconds,
                                   timeout_seconds, self._now()),
                  **_rows.flow_params(rate_limit, aging, key_rate_limit)}

        def work(cur: Any) -> None:
            cur.execute(_Q.update_queue, params)
            if params["set_key_rate"]:
                pause("configure_queue.updated")
                cur.execute(_Q.reset_rate_keys, params)

        self._write(work)
        self._limited.clear()  # this process's next claim sees a new limit at once
        return next(q for q in self.list_queues() if q.name == name)

    def configure_breaker(
        self, queue: str, task: str, failure_limit: int | None, window: float, cooldown: float
    ) -> BreakerInfo | None:
        params = _rows.breaker_params(queue, task, failure_limit, window, cooldown, self._now())

        def work(cur: Any) -> None:
            cur.execute(_Q.delete_breaker if failure_limit is None else _Q.set_breaker, params)
            pause("breaker.set")
            cur.execute(_Q.mark_breaker_queue, params)

        self._write(work)
        self._limited.clear()  # this process's next claim gates the task at once
        return next((b for b in self.list_breakers() if (b.queue, b.task) == (queue, task)), None)

    def list_breakers(self) -> list[BreakerInfo]:
        return [_rows.breaker_info(r, _aware)
                for r in self._read(_Q.list_breakers, {"now": self._now()})]

    def list_limited(self) -> list[Limited]:
        return [Limited(r["queue"], r["reason"], r["held_key"], int(r["waiting"]),
                        int(r["running"]), r["cap"],
                        None if r["until"] is None else r["until"].replace(tzinfo=UTC))
                for r in self._read(_Q.list_limited, {"now": self._now()})]

    def limit_reasons(self, ids: Sequence[int]) -> dict[int, tuple[str, str | None]]:
        if not ids:
            return {}
        rows = self._read(_Q.limit_reasons, {"ids": tuple(ids), "now": self._now()})
        return {int(r["id"]): (r["reason"], r["held_key"]) for r in rows}

    def list_throttled_keys(self) -> list[ThrottledKey]:
        return [ThrottledKey(r["queue"], r["rate_key"], r["throttled_until"].replace(tzinfo=UTC))
                for r in self._read(_Q.list_throttled_keys, {"now": self._now()})]

    def list_queues(self) -> list[QueueInfo]:
        return [
            QueueInfo(
                name=r["name"],
                paused=bool(r["paused"]),
                active=bool(r["active"]),
                max_workers=r["max_workers"],
                lease_seconds=r["lease_seconds"],
                timeout_seconds=r["timeout_seconds"],
                pending=int(r["pending"]),
                scheduled=int(r["scheduled"]),
                fetched=int(r["fetched"]),
                processing=int(r["processing"]),
                past_lease=int(r["past_lease"]),
                oldest_due_age=None if r["oldest_due_age"] is None
                else float(r["oldest_due_age"]),
                archived=int(r["archived"]),
                dead=int(r["dead"]),
                **_rows.flow_settings(r["rate_count"], r["rate_period"], r["rate_burst"],
                                r["aging_step"], r["aging_cap"], r["key_rate_count"],
                                r["key_rate_period"], r["key_rate_burst"]),
                throttled_until=_aware(r["throttled_until"]),
                keyed=bool(r["keyed"]),
            )
            for r in self._read(_Q.list_queues, {"now": self._now()})
        ]

    # -- schedules -----------------------------------------------------------------------------

    def list_schedules(self, name: str | None = None) -> list[ScheduleRow]:
        return [_schedule_row(r) for r in self._read(_Q.list_schedules, {"name": name})]

    def insert_schedule(self, row: ScheduleRow) -> bool:
        params = _schedule_params(row, self._now())

        def work(cur: Any) -> bool:
            try:
                cur.execute(_Q.insert_schedule, params)
            except self._error_types as exc:
                if error_code(exc) != DUPLICATE_KEY:
                    raise
                return False  # the name is taken (only the statement was rolled back)
            return True

        return self._write(work)

    def update_schedule(self, row: ScheduleRow, read: ScheduleRow) -> bool:
        params = {**_schedule_params(row, self._now()),
                  "read_next_run_at": _naive(read.next_run_at), "read_paused": read.paused}
        return self._write(lambda cur: _count(cur, _Q.update_schedule, params) == 1)

    def delete_schedule(self, name: str) -> bool:
        return self._write(lambda cur: _count(cur, _Q.delete_schedule, {"name": name}) == 1)

    def fire_schedules(self, plan: Planner, limit: int, retention: float) -> dict[str, list[int]]:
        def work(cur: Any) -> dict[str, list[int]]:
            fired: dict[str, list[int]] = {}
            cur.execute(_Q.due_schedules, {"now": self._now(), "limit": limit})
            rows = _dicts(cur)
            pause("schedule.fire_due")  # the due rows read and locked; none moved on yet
            for r in rows:
                now = r["now"]  # the transaction's time: the plan's and the writes'
                planned = plan(_schedule_row(r), now.replace(tzinfo=UTC))
                if planned is None:
                    continue
                ids = self._insert(cur, planned.jobs, retention) if planned.jobs else []
                last = planned.last_tick
                moved = _count(cur, _Q.schedule_fired, {
                    "name": r["name"], "old_next_run_at": r["next_run_at"],
                    "next_run_at": _naive(planned.next_run_at),
                    "last_tick": None if last is None else _naive(last),
                    "last_job_id": ids[-1] if ids else None, "now": now,
                })
                if moved != 1:  # the row is locked by this transaction: cannot happen
                    raise ClaimqError(f"schedule {r['name']!r} changed while locked")
                fired[r["name"]] = ids
            return fired

        return self._write(work)

    def next_schedule_in(self) -> float | None:
        [row] = self._read(_Q.next_schedule_in, {"now": self._now()})
        return None if row["seconds"] is None else float(row["seconds"])

    # -- retention -----------------------------------------------------------------------------

    def list_retention(self) -> list[RetentionPolicy]:
        return [
            RetentionPolicy(
                queue=r["queue"], archive_age=r["archive_age"],
                archive_rows=None if r["archive_rows"] is None else int(r["archive_rows"]),
                dead_age=r["dead_age"],
                dead_rows=None if r["dead_rows"] is None else int(r["dead_rows"]))
            for r in self._read(_Q.list_retention, {})
        ]

    def set_retention(self, policy: RetentionPolicy) -> None:
        params = {"queue": policy.queue, "archive_age": policy.archive_age,
                  "archive_rows": policy.archive_rows, "dead_age": policy.dead_age,
                  "dead_rows": policy.dead_rows, "now": self._now()}
        self._write(lambda cur: cur.execute(_Q.set_retention, params))

    def delete_retention(self, queue: str) -> bool:
        return self._write(lambda cur: _count(cur, _Q.delete_retention, {"queue": queue}) == 1)

    def take_lease(self, name: str, holder: str, seconds: float) -> bool:
        # Two statements, not one upsert whose assignments would depend on their order.
        params = {"name": name, "holder": holder, "seconds_us": _micros(seconds),
                  "now": self._now()}

        def work(cur: Any) -> bool:
            if _count(cur, _Q.renew_lease, params) == 1:
                return True
            return _count(cur, _Q.take_lease, params) == 1

        return self._write(work)

    def drop_lease(self, name: str, holder: str) -> None:
        self._write(lambda cur: cur.execute(_Q.drop_lease, {"name": name, "holder": holder}))

    def prune(self, batch: PruneBatch) -> int:
        table, delete = _PRUNED[batch.table]
        params: dict[str, Any] = {
            "queue": batch.queue, "skip": _dumps(list(batch.skip_queues)),
            "older_than_us": None if batch.older_than is None else _micros(batch.older_than),
            "keep_rows": batch.keep_rows, "beyond_at": None, "beyond_id": None,
            "batch": batch.limit, "now": self._now()}
        if batch.older_than is None and batch.keep_rows is None:
            return 0

        def work(cur: Any) -> int:
            found = dict(params)  # (a retried transaction reads its `beyond` row again)
            if batch.keep_rows is not None:
                cur.execute(_Q.prune_beyond.replace("{table}", table), found)
                beyond = cur.fetchone()
                if beyond is not None:
                    found["beyond_at"], found["beyond_id"] = beyond
                elif batch.older_than is None:
                    return 0  # no more rows than the queue keeps
            cur.execute(_Q.prune.replace("{table}", table), found)
            rows = cur.fetchall()
            ids = tuple(r[0] for r in rows)
            if not ids:
                return 0
            pause("prune.selected")
            deleted = _count(cur, delete, {"ids": ids})
            if deleted != len(ids):
                raise ClaimqError(f"pruned {deleted} of the {len(ids)} rows it locked")
            # a workflow whose last rows these were goes with them (its row and edges)
            self._drop_workflows(cur, sorted({r[1] for r in rows if r[1] is not None}))
            return deleted

        return self._write(work)

    def partition_archive(self) -> bool:
        """Not here (capabilities.partitions is false): raises InvalidInput."""
        raise InvalidInput("a partitioned archive needs PostgreSQL")

    def maintain_partitions(
        self, ahead_days: int, drop_before: datetime | None
    ) -> tuple[list[str], list[str]]:
        """Nothing to maintain: the archive is one table."""
        return [], []

    def prune_idempotency_keys(self, retention: float, batch: int) -> int:
        params = {"retention_us": _micros(retention), "batch": batch, "now": self._now(),
                  "statuses": _rows.HOLDING_JSON["until_done"]}  # every live status

        def work(cur: Any) -> int:
            cur.execute(_Q.prune_idempotency, params)
            keys = tuple(r[0] for r in cur.fetchall())
            if not keys:
                return 0
            pause("prune.selected")
            return _count(cur, _Q.delete_keys, {**params, "keys": keys})

        return self._write(work)

    def prune_progress(self, batch: int) -> int:
        def work(cur: Any) -> int:
            cur.execute(_Q.prune_progress, {"batch": batch})
            ids = tuple(r[0] for r in cur.fetchall())
            if not ids:
                return 0
            pause("prune.selected")
            return _count(cur, _Q.delete_progress_ids, {"ids": ids})

        return self._write(work)

    def prune_rate_keys(self, batch: int) -> int:
        def work(cur: Any) -> int:
            cur.execute(_Q.prune_rate_keys, {"batch": batch, "now": self._now()})
            keys = [list(r) for r in cur.fetchall()]
            if not keys:
                return 0
            pause("prune.selected")
            return _count(cur, _Q.delete_rate_keys, {"keys": _dumps(keys)})

        return self._write(work)

    def prune_audit(self, age: float, batch: int) -> int:
        params = {"age_us": _micros(age), "batch": batch, "now": self._now()}
        return self._write(lambda cur: _count(cur, _Q.prune_audit, params))

    # -- operating: the worker registry, stats, trace contexts ----------------------------------

    def register_worker(self, worker: WorkerRecord) -> None:
        params = {**worker._asdict(), "now": self._now(),
                  "queues": None if worker.queues is None else _dumps(list(worker.queues)),
                  "tasks": None if worker.tasks is None else _dumps(list(worker.tasks))}
        self._write(lambda cur: cur.execute(_Q.register_worker, params))

    def worker_seen(self, worker_id: str, in_flight: int) -> bool:
        params = {"id": worker_id, "in_flight": in_flight, "now": self._now()}
        return self._write(lambda cur: _count(cur, _Q.worker_seen, params)) == 1

    def unregister_worker(self, worker_id: str) -> bool:
        def work(cur: Any) -> bool:
            cur.execute(_Q.unregister_worker, {"id": worker_id})
            return cur.fetchone() is not None

        return self._write(work)

    def list_workers(self) -> list[WorkerInfo]:
        rows = self._read(_Q.list_workers, {"now": self._now()})
        workers = []
        for r in rows:
            started_at, last_seen_at = _aware(r["started_at"]), _aware(r["last_seen_at"])
            assert started_at is not None and last_seen_at is not None  # NOT NULL
            workers.append(WorkerInfo(
                id=r["id"], host=r["host"], pid=r["pid"],
                queues=None if r["queues"] is None else tuple(json.loads(r["queues"])),
                concurrency=r["concurrency"], version=r["version"], started_at=started_at,
                last_seen_at=last_seen_at, in_flight=r["in_flight"],
                alive=r["dead_at"] is None, dead_at=_aware(r["dead_at"]),
                silent_for=max(float(r["silent_for"]), 0.0),
                tasks=None if r["tasks"] is None else tuple(json.loads(r["tasks"]))))
        return workers

    def prune_workers(self, dead_after: float, forget_after: float) -> tuple[int, int]:
        def work(cur: Any) -> tuple[int, int]:
            # One time for both statements; deleted first: a row marked now is deleted at the
            # earliest by the next call.
            now = self._now() or _naive(self.now())
            deleted = _count(cur, _Q.forget_workers,
                             {"now": now, "forget_after_us": _micros(forget_after)})
            marked = _count(cur, _Q.mark_dead_workers,
                            {"now": now, "dead_after_us": _micros(dead_after)})
            return marked, deleted

        return self._write(work)

    def stats(self, window: float) -> StatsRows:
        # One time for every part (the server's, unless on a test's clock).
        now = self._now() or _naive(self.now())
        params = {"now": now, "since": now - timedelta(seconds=window)}
        queues = [QueueSettings(r["name"], bool(r["paused"]), bool(r["active"]),
                                r["max_workers"], _aware(r["throttled_until"]))
                  for r in self._read(_Q.stats_queues, {})]
        live = [LiveRow(r["queue"], r["task"], int(r["pending"]), int(r["scheduled"]),
                        int(r["running"]), int(r["past_lease"]),
                        None if r["oldest_due_age"] is None else float(r["oldest_due_age"]),
                        int(r["held"]))
                for r in self._read(_Q.stats_live, params)]
        dead = [DeadRow(r["queue"], r["task"], r["reason"], int(r["count"]))
                for r in self._read(_Q.stats_dead, {})]
        recent = [RecentRow(r["queue"], r["task"], int(r["completed"]), int(r["failed"]),
                            int(r["finished"]), int(r["attempts"]), _aware(r["first_created"]))
                  for r in self._read(_Q.stats_recent, params)]
        covered = any(bool(r["covered"]) for r in self._read(_Q.stats_covered, params))
        latency = latency_rows((r["queue"], r["task"], r["wait"], r["run"])
                               for r in self._read(_Q.stats_latency, params))
        return StatsRows(now.replace(tzinfo=UTC), queues, live, dead, recent, latency, covered)

    def finished_history(self, buckets: int, bucket: float) -> tuple[datetime, list[HistoryRow]]:
        now = self._now() or _naive(self.now())
        params = {"now": now, "since": now - timedelta(seconds=buckets * bucket),
                  "bucket": _micros(bucket)}
        rows = [HistoryRow(int(r["bucket"]), r["queue"], r["task"], int(r["succeeded"]),
                           int(r["dead"]))
                for r in self._read(_Q.finished_history, params)]
        return now.replace(tzinfo=UTC), rows

    def trace_contexts(self, ids: Sequence[int]) -> dict[int, str]:
        if not ids:
            return {}
        rows = self._read(_Q.trace_contexts, {"ids": tuple(ids)})
        return {r["id"]: r["trace_context"] for r in rows}
