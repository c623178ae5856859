"""Helpers of the conformance suite. They speak only claimq's public API and the backend
interface, so every test runs unchanged on every backend."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from claimq import App, Job, Worker
from claimq.clock import FakeClock

# A lease, and how far the tests' FakeClock moves to pass it.
LEASE = 0.2
EXPIRE = LEASE + 0.25
ALL = 100_000


def live(app: App, **filters: Any) -> list[Job]:
    return app.list_jobs("live", limit=ALL, **filters)


def archived(app: App, **filters: Any) -> list[Job]:
    return app.list_jobs("archive", limit=ALL, **filters)


def dead(app: App, **filters: Any) -> list[Job]:
    return app.list_jobs("dead", limit=ALL, **filters)


def counts(app: App) -> tuple[int, int, int]:
    return len(live(app)), len(archived(app)), len(dead(app))


def state(app: App) -> tuple[Any, ...]:
    """Everything a write could change: every job of every table, every queue's settings."""
    return (
        tuple(live(app)),
        tuple(sorted(archived(app), key=lambda j: j.id)),
        tuple(sorted(dead(app), key=lambda j: j.id)),
        tuple(
            (q.name, q.paused, q.active, q.max_workers, q.lease_seconds, q.timeout_seconds)
            for q in app.queues()
        ),
    )


def seconds_until(app: App, when: datetime | None) -> float:
    """How far `when` lies ahead of the backend's own clock (negative: in the past)."""
    assert when is not None
    return (when - app.backend.now()).total_seconds()


def expire(clock: FakeClock) -> None:
    """Move the clock past a lease of LEASE seconds."""
    clock.advance(EXPIRE)


def claim_one(app: App, worker: str = "w1", *, queue: str | None = None,
              lease: float | None = None) -> Job:
    jobs = app.claim(worker, None if queue is None else [queue], limit=1, lease=lease)
    assert len(jobs) == 1, f"expected one claimable job, got {jobs}"
    return jobs[0]


def running(app: App, task: str = "t", *, worker: str = "w1", lease: float | None = None,
            **options: Any) -> Job:
    """Enqueue one job on its own queue, claim it and start it; returns the claimed Job."""
    queue = options.pop("queue", f"q{time.monotonic_ns()}")
    job_id = app.enqueue(task, options.pop("payload", {}), queue=queue, **options)
    job = claim_one(app, worker, queue=queue, lease=lease)
    assert job.id == job_id
    app.start(job)
    return job


def table(app: App, name: str) -> str:
    """The name of claimq's table `name` (jobs, archive, dead, queues) in SQL of one's own."""
    backend: Any = app.backend
    if backend.kind in ("sqlite", "mysql"):
        return f"claimq_{name}"
    return f"{backend.schema}.{name}"


def execute(conn: Any, sql: str, params: Any = ()) -> Any:
    """A statement on a driver connection of any backend (PyMySQL's go through a cursor)."""
    if hasattr(conn, "execute"):
        return conn.execute(sql, params)
    cur = conn.cursor()
    cur.execute(sql, params or None)
    return cur


DRIVER_MODULES = ("sqlite3", "psycopg", "psycopg_pool", "pymysql", "MySQLdb")


class CallerTransaction:
    """A transaction the caller owns on the same database: a sqlite3.Connection from
    backend.connect() inside BEGIN, a psycopg.Connection with autocommit off, or a PyMySQL
    connection from backend.connect() inside START TRANSACTION."""

    def __init__(self, app: App) -> None:
        backend: Any = app.backend
        self.kind = backend.kind
        if self.kind == "sqlite":
            self.conn: Any = backend.connect()
            self.conn.execute("BEGIN")
        elif self.kind == "mysql":
            self.conn = backend.connect()
            self.conn.cursor().execute("START TRANSACTION")
        else:
            import psycopg

            self.conn = psycopg.connect(backend.conninfo)
            assert not self.conn.autocommit

    def execute(self, sql: str, params: Any = ()) -> Any:
        """A statement of the test's own on the transaction's connection."""
        return execute(self.conn, sql, params)

    def commit(self) -> None:
        if self.kind == "sqlite":
            self.conn.execute("COMMIT")
        else:
            self.conn.commit()

    def rollback(self) -> None:
        if self.kind == "sqlite":
            self.conn.execute("ROLLBACK")
        else:
            self.conn.rollback()

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> CallerTransaction:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def worker_running(worker: Worker) -> Iterator[Worker]:
    """`worker` running in a thread of this process for the block; stopped (and checked to
    have stopped) after it."""
    thread = threading.Thread(target=worker.run, kwargs={"install_signals": False},
                              daemon=True)
    thread.start()
    try:
        yield worker
    finally:
        worker.stop()
        thread.join(60)
    assert not thread.is_alive(), "the worker did not stop"


def run_threads(target: Callable[..., None], args: Sequence[tuple[Any, ...]],
                timeout: float = 120) -> None:
    """One thread per entry of `args`, all started, then all joined."""
    threads = [threading.Thread(target=target, args=a) for a in args]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
