"""Every enqueue entry point, on every backend where it applies (issue 24, defect 11).

Entry points: task.enqueue, app.enqueue, app.enqueue_many, and their async forms
task.aenqueue, app.aenqueue, app.aenqueue_many; bulk ones with a few jobs and with a batch
large enough for PostgreSQL's COPY path. Connections: claimq's own (no `conn=`), the caller's
own driver connection inside its transaction (a plain sqlite3.Connection, a psycopg
Connection, a PyMySQL connection), the connection of `app.transaction()`, and on PostgreSQL a
psycopg AsyncConnection (the async entry points' own form). Each with and without idempotency
keys. Each case checks that the jobs exist once the transaction commits, that a key held
returns the same ids, and that a rollback of the caller's transaction leaves no job and no key.

Why no test caught defect 11: nothing ran `aenqueue(conn=AsyncConnection)`. The async
entry points were tested only without `conn=`, and the injectable clock's `now` parameter
added to ensure_queues.sql reached every sync caller but not the async path's own copy.

One database per backend for the module (each case uses queues and keys of its own), on the
system clock: the production default (the other App tests run on a FakeClock).
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from dbs import fresh_db_url

from claimq import App, JobNotFound, Status

ENTRY_POINTS = ["task.enqueue", "app.enqueue", "app.enqueue_many", "app.enqueue_many[copy]",
                "task.aenqueue", "app.aenqueue", "app.aenqueue_many", "app.aenqueue_many[copy]"]
CONNECTIONS = ["own", "caller", "app.transaction", "caller-async"]
COPY_BATCH = 250  # PostgreSQL copies from 200 jobs on
TASK = "ep.job"


BACKENDS = ["sqlite", "postgresql", "mariadb"]
# Every case that applies (an async caller's connection: PostgreSQL's async entry points only),
# so none is collected only to be skipped.
CASES = [pytest.param(kind, entry, how, keyed, id=f"{kind}-{entry}-{how}-{kind_of_key}")
         for kind in BACKENDS for entry in ENTRY_POINTS for how in CONNECTIONS
         for keyed, kind_of_key in ((False, "unkeyed"), (True, "keyed"))
         if how != "caller-async" or (kind == "postgresql" and ".a" in entry)]


@pytest.fixture(scope="module")
def shared_app(request: pytest.FixtureRequest,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    urls = fresh_db_url(request, request.param, tmp_path_factory.mktemp("ep"))
    url = next(urls)
    app = App(url)
    app.migrate()

    @app.task(name=TASK)
    def job(n: int) -> int:
        return n

    yield app
    app.close()
    next(urls, None)


class Caller:
    """The caller's own driver connection, inside a transaction of its own."""

    def __init__(self, app: App) -> None:
        backend: Any = app.backend
        self.kind = backend.kind
        if self.kind == "sqlite":
            # As an application opens it: default isolation (a DML statement opens the
            # transaction), same-thread check on, no row factory.
            self.conn: Any = sqlite3.connect(backend.path, timeout=10)
        elif self.kind == "mysql":
            import pymysql

            o = backend.options
            self.conn = pymysql.connect(host=o.host, port=o.port, user=o.user,
                                        password=o.password, database=o.database)
            self.conn.begin()
        else:
            import psycopg

            self.conn = psycopg.connect(backend.conninfo)  # autocommit off: a transaction

    def end(self, commit: bool) -> None:
        if commit:
            self.conn.commit()
        else:
            self.conn.rollback()
        self.conn.close()


def _jobs(entry: str, keyed: bool, tag: str) -> list[tuple[int, str | None]]:
    count = COPY_BATCH if entry.endswith("[copy]") else 3 if "many" in entry else 1
    # A copy batch with keys mixes keyed and un-keyed jobs (the keyed ones go one by one).
    return [(n, f"{tag}-{n}" if keyed and (n % 50 == 0 or count < 50) else None)
            for n in range(count)]


def _enqueue(app: App, entry: str, jobs: list[tuple[int, str | None]], queue: str,
             conn: Any) -> list[int]:
    task = app.tasks[TASK].with_options(queue=queue)
    if entry == "task.enqueue":
        [(n, key)] = jobs
        return [task.with_options(idempotency_key=key).enqueue(n=n, conn=conn)]
    if entry == "app.enqueue":
        [(n, key)] = jobs
        return [app.enqueue(TASK, {"n": n}, queue=queue, idempotency_key=key, conn=conn)]
    specs = [{"task": TASK, "payload": {"n": n}, "queue": queue, "idempotency_key": key}
             for n, key in jobs]
    return app.enqueue_many(specs, conn=conn)


async def _aenqueue(app: App, entry: str, jobs: list[tuple[int, str | None]], queue: str,
                    conn: Any) -> list[int]:
    task = app.tasks[TASK].with_options(queue=queue)
    if entry == "task.aenqueue":
        [(n, key)] = jobs
        return [await task.with_options(idempotency_key=key).aenqueue(n=n, conn=conn)]
    if entry == "app.aenqueue":
        [(n, key)] = jobs
        return [await app.aenqueue(TASK, {"n": n}, queue=queue, idempotency_key=key,
                                   conn=conn)]
    specs = [{"task": TASK, "payload": {"n": n}, "queue": queue, "idempotency_key": key}
             for n, key in jobs]
    return await app.aenqueue_many(specs, conn=conn)


def _run(app: App, entry: str, how: str, jobs: list[tuple[int, str | None]], queue: str,
         commit: bool) -> list[int]:
    """Enqueue `jobs` through `entry` on the connection `how`; commit or roll back the
    caller's transaction (claimq's own connection always commits)."""
    is_async = ".a" in entry
    if how == "caller-async":
        return asyncio.run(_async_caller(app, entry, jobs, queue, commit))
    if how == "own":
        return (asyncio.run(_aenqueue(app, entry, jobs, queue, None)) if is_async
                else _enqueue(app, entry, jobs, queue, None))
    if how == "caller":
        caller = Caller(app)
        try:
            ids = (asyncio.run(_aenqueue(app, entry, jobs, queue, caller.conn)) if is_async
                   else _enqueue(app, entry, jobs, queue, caller.conn))
        except BaseException:
            caller.end(False)
            raise
        caller.end(commit)
        return ids

    class Rollback(Exception):
        pass

    ids = []
    try:
        with app.transaction() as conn:
            ids = (asyncio.run(_aenqueue(app, entry, jobs, queue, conn)) if is_async
                   else _enqueue(app, entry, jobs, queue, conn))
            if not commit:
                raise Rollback
    except Rollback:
        pass
    return ids


async def _async_caller(app: App, entry: str, jobs: list[tuple[int, str | None]], queue: str,
                        commit: bool) -> list[int]:
    import psycopg

    backend: Any = app.backend
    conn = await psycopg.AsyncConnection.connect(backend.conninfo)
    try:
        ids = await _aenqueue(app, entry, jobs, queue, conn)
        await (conn.commit() if commit else conn.rollback())
        return ids
    finally:
        await conn.close()


@pytest.mark.parametrize(("shared_app", "entry", "how", "keyed"), CASES, indirect=["shared_app"])
def test_every_enqueue_entry_point(shared_app: App, entry: str, how: str, keyed: bool) -> None:
    app = shared_app
    tag = uuid.uuid4().hex[:10]
    jobs = _jobs(entry, keyed, tag)
    keys = [key for _, key in jobs if key is not None]

    if how != "own":
        # Rolled back with the caller's transaction: no job, no queue row, no key held.
        gone_queue = f"rb-{tag}"
        gone = _run(app, entry, how, jobs, gone_queue, commit=False)
        assert len(gone) == len(jobs)
        for job_id in gone:
            with pytest.raises(JobNotFound):
                app.get_job(job_id)
        assert app.list_jobs("live", queue=gone_queue) == []
        assert gone_queue not in {q.name for q in app.queues()}

    queue = f"ok-{tag}"
    ids = _run(app, entry, how, jobs, queue, commit=True)
    assert len(ids) == len(set(ids)) == len(jobs)
    for job_id, (n, key) in zip(ids, jobs, strict=True):
        job = app.get_job(job_id)
        assert (job.task, job.queue, job.payload, job.status, job.idempotency_key) == (
            TASK, queue, {"n": n}, Status.PENDING, key)
    assert sorted(j.id for j in app.list_jobs("live", queue=queue, limit=1000)) == sorted(ids)
    if keys:
        # The keys are held by the committed jobs: the same entry point returns their ids and
        # writes nothing (the rolled-back attempt held none).
        keyed_ids = [i for i, (_, key) in zip(ids, jobs, strict=True) if key is not None]
        again = _run(app, entry, how, [(n, k) for n, k in jobs if k is not None], queue,
                     commit=True) if "many" in entry else _run(app, entry, how, jobs, queue,
                                                              commit=True)
        assert again == keyed_ids
        assert len(app.list_jobs("live", queue=queue, limit=1000)) == len(ids)
