"""Jobs that another program inserts with plain SQL (issue 12, defect 13): a job written into
the jobs table, into a queue that has no queues row, is claimed like any other; the schema makes
the queue row (a trigger), for single inserts and bulk ones, and a database migrated before that
trigger existed gets it, and the rows of jobs inserted before, on `claimq migrate`."""

from __future__ import annotations

from typing import Any

import pytest
from app_support import CallerTransaction

from claimq import App
from claimq.clock import FakeClock


@pytest.fixture
def app(app: App, clock: FakeClock) -> App:
    """The other program writes its times from the database's own clock: the test's clock
    moves past them (a minute), so its jobs are due."""
    clock.advance(60)
    return app


def _insert_sql(app: App, rows: int) -> str:
    """One plain INSERT of `rows` jobs, as a program that knows only the table would write it."""
    backend: Any = app.backend
    if backend.kind == "sqlite":
        now = "(julianday('now') - 2440587.5) * 86400.0"
        values = ", ".join(
            f"('foreign', 'ext.task', '{{\"n\": {i}}}', {now}, {now}, {now})" for i in range(rows)
        )
        return ("INSERT INTO claimq_jobs (queue, task, payload, run_at, created_at, updated_at) "
                f"VALUES {values}")
    values = ", ".join(f"('foreign', 'ext.task', '{{\"n\": {i}}}')" for i in range(rows))
    return f"INSERT INTO {backend.schema}.jobs (queue, task, payload) VALUES {values}"


def _run(app: App, sql: str) -> None:
    with CallerTransaction(app) as tx:
        tx.conn.execute(sql)
        tx.commit()


def test_a_job_inserted_by_plain_sql_into_a_new_queue_is_claimed(app: App) -> None:
    _run(app, _insert_sql(app, 1))
    jobs = app.claim("w1", limit=10, start=True)
    assert [(j.queue, j.task, j.payload) for j in jobs] == [("foreign", "ext.task", {"n": 0})]
    app.complete(jobs[0])
    queue = next(q for q in app.queues() if q.name == "foreign")
    assert queue.active and not queue.paused and queue.archived == 1


def test_a_bulk_insert_by_plain_sql_makes_one_queue_row(app: App) -> None:
    _run(app, _insert_sql(app, 300))
    assert [q.name for q in app.queues()] == ["foreign"]
    claimed = app.claim("w1", ["foreign"], limit=500)
    assert sorted(j.payload["n"] for j in claimed) == list(range(300))


def test_the_queue_row_keeps_its_settings_when_more_jobs_arrive(app: App) -> None:
    app.configure_queue("foreign", paused=True, max_workers=2, lease=7)
    _run(app, _insert_sql(app, 3))
    (queue,) = app.queues()
    assert (queue.paused, queue.max_workers, queue.lease_seconds) == (True, 2, 7)
    assert app.claim("w1", limit=10) == []  # paused: the trigger did not reset the queue
    app.resume("foreign")
    assert len(app.claim("w1", limit=10)) == 2  # max_workers=2 holds


def test_claimq_own_enqueues_are_unchanged(app: App) -> None:
    ids = [app.enqueue("t", queue="mine")]
    ids += app.enqueue_many([{"task": "t", "queue": "bulk"}] * 250)  # PostgreSQL: COPY
    assert sorted(q.name for q in app.queues()) == ["bulk", "mine"]
    assert sorted(j.id for j in app.claim("w1", limit=500)) == sorted(ids)


def _undo_trigger(app: App) -> int:
    """Puts the database back to the schema before the trigger; returns that migration's
    version (the trigger's own: later migrations stay applied)."""
    backend: Any = app.backend
    version = 2 if backend.kind == "sqlite" else 3  # *_queue_rows_for_foreign_jobs.sql
    if backend.kind == "sqlite":
        statements = ["DROP TRIGGER claimq_jobs_queue_row",
                      f"DELETE FROM claimq_migrations WHERE version = {version}"]
    else:
        s = backend.schema
        statements = [f"DROP TRIGGER jobs_queue_rows ON {s}.jobs",
                      f"DROP FUNCTION {s}.jobs_queue_rows()",
                      f"DELETE FROM {s}.migrations WHERE version = {version}"]
    with CallerTransaction(app) as tx:
        for statement in statements:
            tx.conn.execute(statement)
        tx.commit()
    return version


def test_an_existing_database_migrates_and_its_stranded_jobs_get_claimed(db_url: str) -> None:
    with App(db_url) as app:
        app.migrate()
        version = _undo_trigger(app)
        _run(app, _insert_sql(app, 2))  # stranded: no queue row, nothing to make one
        assert app.claim("w1", limit=10) == []
    with App(db_url) as app:
        assert app.migrate() == [version]
        assert app.backend.schema_version() >= version
        assert sorted(j.payload["n"] for j in app.claim("w1", limit=10)) == [0, 1]
        _run(app, _insert_sql(app, 1))
        assert len(app.claim("w1", limit=10)) == 1
        assert app.migrate() == []
