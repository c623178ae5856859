"""Issue 24, defect 5: `ctx.ensure_owned()` meets the worker's own heartbeat.

The heartbeat locks the rows it renews (PostgreSQL, MariaDB: row locks; SQLite: the writer
lock). An ensure_owned() that runs while it holds the job's lock must answer from the job's
token and status (still ours), never take the lock it could not skip as "lost".

Two ways to hold the lock: a transaction of the test's that runs the heartbeat's own locking
statement and stays open (every backend with row locks: the race as a worker meets it), and
the real heartbeat stopped at its pause point `heartbeat.locked` (MariaDB and SQLite, whose
heartbeat locks and writes in separate statements)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlparse

import pytest
from dbs import fresh_db_url

from claimq import App, LeaseLost
from claimq._pause import set_hook
from claimq._worker.inflight import Flight, InFlight
from claimq.backends.base import Owned
from claimq.job import Job
from claimq.worker import JobContext

pytestmark = pytest.mark.timeout(60)

WAIT = 20.0  # seconds any one step may take under load before the test gives up


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    yield from fresh_db_url(request, request.param, tmp_path)


@pytest.fixture
def app(url: str) -> Iterator[App]:
    app = App(url)
    app.migrate()
    yield app
    app.close()


def _running(app: App) -> Job:
    app.enqueue("t.owned", {})
    [job] = app.claim("w-1", limit=1, lease=30, start=True)
    return job


def _context(app: App, job: Job, loop: asyncio.AbstractEventLoop,
             abandoned: list[str]) -> JobContext:
    flight = InFlight(job, Owned(job.id, job.claim_token or ""), job.attempts, 30.0,
                      time.monotonic() + 30.0, state=Flight.RUNNING)
    return JobContext(job, job.attempts, "w-1", flight, app.backend, None, loop,
                      lambda f, why, cancel: abandoned.append(why))


def _wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


@contextmanager
def _heartbeat_transaction(app: App, job: Job) -> Iterator[Callable[[], bool]]:
    """The job's heartbeat, run by a transaction of the test's that stays open after its
    locking statement: yields a check "is a statement of another session waiting on that
    lock?"; on leaving, the heartbeat writes the lease and commits."""
    owned = Owned(job.id, job.claim_token or "")
    if app.url.startswith("postgresql"):
        import psycopg

        from claimq.backends.postgres.backend import _owned_params

        backend: Any = app.backend
        conn = psycopg.connect(backend.conninfo)
        try:
            # PostgreSQL's heartbeat is one statement: it holds its locks until it commits.
            rows = conn.execute(backend._q.heartbeat, {**_owned_params([owned]), "lease": None,
                                                      "now": None}).fetchall()
            assert [r[0] for r in rows] == [job.id]
            pid = conn.info.backend_pid

            def waiting() -> bool:
                blocked = app.backend.run_sql(
                    "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
                    [pid])
                return bool(blocked[0][0])

            yield waiting
            conn.commit()
        finally:
            conn.close()
        return
    assert app.url.startswith("mysql")
    import pymysql

    from claimq.backends.mysql.backend import _Q

    parsed = urlparse(app.url)
    database = parsed.path.lstrip("/")
    conn = pymysql.connect(host=parsed.hostname or "127.0.0.1", port=parsed.port or 3306,
                           user=parsed.username or "root", password=parsed.password or "",
                           database=database, autocommit=False)
    try:
        cur = conn.cursor()
        cur.execute("START TRANSACTION")
        cur.execute(_Q.heartbeat_lock, {"ids": (job.id,)})
        assert [r[0] for r in cur.fetchall()] == [job.id]

        def waiting_maria() -> bool:
            rows = app.backend.run_sql(
                "SELECT count(*) FROM information_schema.innodb_trx t "
                "JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id "
                "WHERE t.trx_state = 'LOCK WAIT' AND p.db = %s", [database])
            return rows[0][0] > 0

        yield waiting_maria
        cur.execute(_Q.heartbeat, {"ids": (job.id,), "lease": None, "now": None})
        conn.commit()
    finally:
        conn.close()


def _ensure_owned_in_thread(ctx: JobContext) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            ctx.ensure_owned()
            out["owned"] = True
        except LeaseLost as exc:
            out["lost"] = exc
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


@pytest.mark.parametrize("url", ["postgresql", "mariadb"], indirect=True)
def test_ensure_owned_waits_out_the_heartbeats_lock(app: App, url: str) -> None:
    """A heartbeat transaction holds the job's row lock (after its locking statement, before
    its commit) while the handler calls ctx.ensure_owned(): the job is still ours, so
    ensure_owned returns (having waited for the heartbeat), and nothing is abandoned."""
    job = _running(app)
    loop = asyncio.new_event_loop()
    abandoned: list[str] = []
    try:
        ctx = _context(app, job, loop, abandoned)
        with _heartbeat_transaction(app, job) as waiting:
            thread, out = _ensure_owned_in_thread(ctx)
            # ensure_owned must wait on the heartbeat's lock (or have answered: the parent's
            # SKIP LOCKED answers at once): either way the heartbeat then commits
            _wait_until(lambda: waiting() or not thread.is_alive(),
                        "ensure_owned to wait on the heartbeat's lock or to answer")
        thread.join(WAIT)
        assert not thread.is_alive()
        assert out.get("owned") is True, f"ensure_owned on a job still owned: {out}"
        assert not ctx.lease_lost and abandoned == []
        mine = app.get_job(job.id)
        assert (mine.status, mine.claim_token) == ("processing", job.claim_token)
    finally:
        loop.close()


@pytest.mark.parametrize("url", ["postgresql", "mariadb"], indirect=True)
def test_ensure_owned_answers_from_the_token_past_a_long_lock(app: App, url: str) -> None:
    """A lock held on past ensure_owned's short wait (an operator's SELECT … FOR UPDATE, a
    handler's own transaction): it answers from the job's last committed token and status,
    owned (its lease not renewed this time), rather than wait on or call the job lost."""
    job = _running(app)
    loop = asyncio.new_event_loop()
    abandoned: list[str] = []
    try:
        ctx = _context(app, job, loop, abandoned)
        with _heartbeat_transaction(app, job):
            thread, out = _ensure_owned_in_thread(ctx)
            thread.join(WAIT)  # the lock is held until ensure_owned has answered
            assert not thread.is_alive()
        assert out.get("owned") is True, f"ensure_owned on a job still owned: {out}"
        assert abandoned == []
    finally:
        loop.close()


@pytest.mark.parametrize("url", ["sqlite", "mariadb"], indirect=True)
def test_ensure_owned_meets_the_paused_heartbeat(app: App, url: str) -> None:
    """The worker's real heartbeat stopped at `heartbeat.locked` (it holds the job's lock, the
    lease not yet written) while ctx.ensure_owned() runs: it answers "owned" once the
    heartbeat goes on, on every backend whose heartbeat has that point."""
    job = _running(app)
    owned = Owned(job.id, job.claim_token or "")
    beating = threading.Event()
    at_lock = threading.Event()
    go_on = threading.Event()
    reading = threading.Event()

    def hook(point: str) -> None:
        if point == "heartbeat.locked" and beating.is_set() and not at_lock.is_set():
            at_lock.set()
            assert go_on.wait(WAIT)
        elif point == "ensure_owned.read":
            reading.set()

    beat: dict[str, Any] = {}

    def heartbeat() -> None:
        beating.set()
        beat["result"] = app.backend.heartbeat([owned], None)

    loop = asyncio.new_event_loop()
    abandoned: list[str] = []
    previous = set_hook(hook)
    try:
        beater = threading.Thread(target=heartbeat, daemon=True)
        beater.start()
        assert at_lock.wait(WAIT), "the heartbeat never stopped at heartbeat.locked"
        ctx = _context(app, job, loop, abandoned)
        thread, out = _ensure_owned_in_thread(ctx)
        assert reading.wait(WAIT) or not thread.is_alive()
        if url.startswith("mysql"):
            database = urlparse(url).path.lstrip("/")
            _wait_until(lambda: not thread.is_alive() or app.backend.run_sql(
                "SELECT count(*) FROM information_schema.innodb_trx t "
                "JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id "
                "WHERE t.trx_state = 'LOCK WAIT' AND p.db = %s", [database])[0][0] > 0,
                "ensure_owned to wait on the heartbeat's lock")
        go_on.set()
        beater.join(WAIT)
        thread.join(WAIT)
        assert not beater.is_alive() and not thread.is_alive()
        assert beat["result"].alive == {job.id}
        assert out.get("owned") is True, f"ensure_owned on a job still owned: {out}"
        assert not ctx.lease_lost and abandoned == []
    finally:
        go_on.set()
        set_hook(previous)
        loop.close()


def test_ensure_owned_still_refuses_a_job_taken_over(app: App) -> None:
    """The other side: an attempt whose token the job no longer has is lost for ensure_owned
    (here the job was given out again: its token changed)."""
    job = _running(app)
    stale = dataclasses.replace(job, claim_token=str(uuid.uuid4()))
    loop = asyncio.new_event_loop()
    abandoned: list[str] = []
    try:
        ctx = _context(app, stale, loop, abandoned)
        with pytest.raises(LeaseLost):
            ctx.ensure_owned()
        loop.run_until_complete(asyncio.sleep(0))  # the give-up it scheduled
        assert abandoned == ["ensure_owned found the job no longer ours"]
        assert app.get_job(job.id).claim_token == job.claim_token
    finally:
        loop.close()
