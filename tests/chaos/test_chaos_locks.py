"""Scenario 9: connection-pool exhaustion and long transactions holding locks elsewhere.

- PostgreSQL with `?pool_size=1`: the worker's loops and its handlers share one pooled
  connection, and some handlers keep it busy in an open transaction for 1.5 s. On SQLite the
  same handlers hold the single writer lock that long. Everything waits its turn; nothing fails,
  no lease is lost.
- Another session holds locks while workers run. PostgreSQL and MariaDB: FOR UPDATE on some
  pending jobs (claims skip them, the rest flows; once released they run too); PostgreSQL: a
  row lock on a limited queue's settings row (an operator's reconfiguration left open: the
  other queues keep flowing).
  SQLite: a long read transaction (WAL readers never block the writers).
"""

from __future__ import annotations

import sqlite3
import time

import psycopg
import pytest
from chaos_harness import ARCHIVE, check_invariants, live, wait_finished

from claimq import App

pytestmark = pytest.mark.timeout(120)

OPTIONS = {"concurrency": 4, "lease": 6.0, "poll_interval": 0.1, "grace": 2.0}


def test_pool_exhaustion_and_a_busy_connection(capp: App, spawn) -> None:
    url = capp.url
    if capp.backend.kind == "postgresql":
        url += "&pool_size=1"
    hogs = [capp.enqueue("chaos.work", {"n": i, "hold_conn": 1.5}) for i in range(3)]
    ids = capp.enqueue_many(
        {"task": "chaos.work", "payload": {"n": i, "mode": ("atomic", "separate")[i % 2]}}
        for i in range(40)
    )
    worker = spawn(url, **OPTIONS)
    worker.wait_started()
    worker.wait_log(r"chaos holding-connection", count=3, timeout=40)
    wait_finished(capp, hogs + ids, timeout=60)
    assert worker.stop() == 0
    check_invariants(capp, dict.fromkeys(hogs + ids, ARCHIVE))
    for job_id in hogs + ids:
        job = capp.get_job(job_id)
        assert (job.attempts, job.errors) == (1, ()), (job_id, job.errors)
    counters = worker.counters()
    assert counters.get("lease_lost", 0) == 0 and counters.get("completed") == 43, counters


def _pg_session(app: App) -> psycopg.Connection:
    return psycopg.connect(app.backend.conninfo)  # type: ignore[attr-defined]


def test_locked_rows_are_skipped_and_the_rest_flows(capp: App, spawn) -> None:
    ids = [capp.enqueue("chaos.work", {"n": i}) for i in range(60)]
    locked = ids[::12]  # five pending jobs, spread through the queue (the first one too)
    if capp.backend.kind == "postgresql":
        session = _pg_session(capp)
        rows = session.execute(
            f"SELECT id FROM {capp.backend.schema}.jobs WHERE id = ANY(%s) FOR UPDATE",  # type: ignore[attr-defined]
            (locked,),
        ).fetchall()
        assert len(rows) == len(locked)
        held_back = set(locked)
    elif capp.backend.kind == "mysql":
        session = capp.backend.connect()  # type: ignore[attr-defined]
        cur = session.cursor()
        cur.execute("START TRANSACTION")
        cur.execute("SELECT id FROM claimq_jobs WHERE id IN %s FOR UPDATE", (tuple(locked),))
        assert len(cur.fetchall()) == len(locked)
        held_back = set(locked)
    else:
        session = sqlite3.connect(capp.backend.path, isolation_level=None)  # type: ignore[attr-defined]
        session.execute("BEGIN")
        assert session.execute("SELECT count(*) FROM claimq_jobs").fetchone()[0] == 60
        held_back = set()
    try:
        worker = spawn(capp.url, **OPTIONS)
        worker.wait_started()
        more = [capp.enqueue("chaos.work", {"n": 100 + i}) for i in range(20)]
        flowing = set(ids + more) - held_back
        wait_finished(capp, flowing, timeout=40)
        if held_back:
            # Still pending, still locked: every claim skipped them.
            time.sleep(0.5)
            states = {j.id: j.status for j in live(capp)}
            assert {i: states.get(i) for i in held_back} == dict.fromkeys(held_back, "pending")
    finally:
        if isinstance(session, sqlite3.Connection):
            session.execute("ROLLBACK")
        else:
            session.rollback()
        session.close()
    wait_finished(capp, ids + more, timeout=40)
    assert worker.stop() == 0
    check_invariants(capp, dict.fromkeys(ids + more, ARCHIVE))


@pytest.mark.postgres
def test_open_transaction_on_a_limited_queue_does_not_stop_other_queues(
    pg_capp: App, spawn
) -> None:
    """Row locks on the queues table are a PostgreSQL matter (SQLite has one writer)."""
    capp = pg_capp
    capp.configure_queue("limited", max_workers=2)
    limited = [capp.enqueue("chaos.work", {"n": i}, queue="limited") for i in range(10)]
    other = [capp.enqueue("chaos.work", {"n": i}, queue="other") for i in range(30)]
    session = _pg_session(capp)
    # An operator changes the limited queue in a transaction and leaves it open.
    session.execute(
        f"UPDATE {capp.backend.schema}.queues SET max_workers = 1 WHERE name = 'limited'"  # type: ignore[attr-defined]
    )
    try:
        worker = spawn(capp.url, **OPTIONS)
        worker.wait_started()
        wait_finished(capp, other, timeout=30)
    finally:
        session.rollback()
        session.close()
    wait_finished(capp, limited, timeout=30)
    assert worker.stop() == 0
    check_invariants(capp, dict.fromkeys(limited + other, ARCHIVE))
