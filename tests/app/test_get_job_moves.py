"""get_job() reads live, archive and dead letters in one statement (issue 24, suspected item):
a job that moves between the tables while it reads is found in one of them, never in none.

Three statements (live, then archive, then dead, as SQLite and MariaDB read) lost a job that
a resurrect moved from dead letters to live after the live read and before the dead one. The
test makes that move happen from another connection just before the statement that reads the
dead letters starts, wherever that statement is: three statements read JobNotFound, one
statement reads the job, live.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from app_support import running

from claimq import App, Permanent, Status


@contextmanager
def before_reading_dead_letters(app: App, move: Callable[[], None]) -> Iterator[None]:
    """Runs `move` once, in another thread (on its own connection), just before the first
    statement of this thread that reads the dead-letter table starts."""
    me = threading.current_thread()
    done: list[bool] = []

    def maybe_move(sql: str) -> None:
        if done or threading.current_thread() is not me or "'dead'" not in sql:
            return
        done.append(True)
        mover = threading.Thread(target=move)
        mover.start()
        mover.join(30)
        assert not mover.is_alive()

    backend: Any = app.backend
    if backend.kind == "sqlite":
        conn = backend._conn()  # this thread's: get_job reads on it
        conn.set_trace_callback(maybe_move)  # called as each statement starts, before its read
        try:
            yield
        finally:
            conn.set_trace_callback(None)
    else:
        if backend.kind == "mysql":
            import pymysql.cursors

            cursor_class: Any = pymysql.cursors.Cursor
        else:
            import psycopg

            cursor_class = psycopg.Cursor
        original = cursor_class.execute

        def execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            maybe_move(query if isinstance(query, str) else str(query))
            return original(self, query, *args, **kwargs)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cursor_class, "execute", execute)
            yield
    assert done, "no statement read the dead letters"


def test_get_job_finds_a_job_resurrected_while_it_reads(app: App) -> None:
    job = running(app)
    app.fail(job, Permanent("gone"))
    assert app.get_job(job.id).status is Status.DEAD

    with before_reading_dead_letters(app, lambda: app.resurrect(job.id)):
        found = app.get_job(job.id)  # JobNotFound when the tables are read one by one
    assert found.id == job.id and found.status is Status.PENDING


def test_get_job_reads_each_table_as_before(app: App) -> None:
    """The one statement gives each table's job as the three did."""
    done = running(app, payload={"n": 1})
    app.complete(done, {"ok": True})
    buried = running(app, payload={"n": 2})
    app.fail(buried, Permanent("no"))
    pending = app.enqueue("t", {"n": 3}, tags=["x"])

    archived = app.get_job(done.id)
    assert (archived.status, archived.result, archived.payload) == (
        Status.SUCCEEDED, {"ok": True}, {"n": 1})
    assert archived.finished_at is not None and archived.claim_token is None
    assert not archived.cancel_requested and archived.reason is None
    dead = app.get_job(buried.id)
    assert (dead.status, dead.reason, dead.payload) == (Status.DEAD, "permanent_error", {"n": 2})
    assert dead.finished_at is not None and dead.errors and dead.result is None
    live = app.get_job(pending)
    assert (live.status, live.tags, live.payload, live.finished_at, live.reason) == (
        Status.PENDING, ("x",), {"n": 3}, None, None)
    assert live.updated_at is not None and live.run_at is not None
