"""Awaitable results on both backends: app.result / aresult and the JobHandle enqueue returns.

The job's owner is the test itself (claim, start, complete or fail through the App) or, for the
end-to-end cases, a real Worker in a thread. On PostgreSQL the safety re-check is pushed out of
reach, so a waiter that returns was woken by NOTIFY."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest
from app_support import worker_running

from claimq import App, InvalidInput, JobFailed, JobHandle, JobNotFound, Permanent, Worker, _results

WAIT = 30.0  # a waiter's timeout: reached only when the wake-up is broken


@pytest.fixture(autouse=True)
def notify_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No safety re-check within a test's life: a PostgreSQL waiter must be woken by NOTIFY."""
    monkeypatch.setattr(_results, "SAFETY_RECHECK", 3600.0)
    monkeypatch.setattr(_results, "RECHECK_FIRST", 3600.0)


def _waiting(app: App, job_id: int, *, count: int = 1) -> None:
    """Until `count` waits are registered for the job (PostgreSQL: its watch rows exist)."""
    waiter = app._results()
    for _ in range(2000):
        with waiter._lock:
            registered = len(waiter._wakers.get(job_id, ())) >= count
        if registered and (app.backend.kind != "postgresql" or app.backend.run_sql(
                f"SELECT count(*) FROM {app.backend.schema}.result_waiters"  # type: ignore[attr-defined]
                " WHERE job_id = %s", [job_id]) != [(0,)]):
            return
        threading.Event().wait(0.005)
    raise AssertionError(f"{count} waiter(s) never registered for job {job_id}")


def _in_thread(fn: Callable[[], Any]) -> Callable[[], Any]:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()

    def join() -> Any:
        thread.join(WAIT + 10)
        assert not thread.is_alive(), "the waiter never returned"
        if "error" in box:
            raise box["error"]
        return box["value"]

    return join


def _finish(app: App, result: Any = None) -> None:
    job = app.claim("w1", limit=1)[0]
    app.start(job)
    app.complete(job, result)


def test_enqueue_returns_a_handle_that_is_the_id(app: App) -> None:
    handle = app.enqueue("t", {"a": 1})
    assert isinstance(handle, JobHandle) and isinstance(handle, int)
    assert app.get_job(handle).id == handle == int(handle)
    assert str(handle) == str(int(handle)) and f"{handle}" == str(int(handle))
    assert json.dumps([handle]) == json.dumps([int(handle)])
    assert orjson.dumps(handle) == orjson.dumps(int(handle))
    assert type(pickle.loads(pickle.dumps(handle))) is int
    assert copy.deepcopy(handle) == handle
    # usable as a parameter by the drivers, as a plain id is
    assert app.get_job(app.enqueue("t").__index__()).task == "t"


def test_sync_waiter_gets_the_result(app: App) -> None:
    handle = app.enqueue("t", {})
    join = _in_thread(lambda: handle.result(timeout=WAIT))
    _waiting(app, handle)
    _finish(app, {"answer": 42, "list": [1, 2]})
    assert join() == {"answer": 42, "list": [1, 2]}
    assert app.result(handle, timeout=0) == {"answer": 42, "list": [1, 2]}


def test_async_waiter_gets_the_result(app: App) -> None:
    handle = app.enqueue("t", {})

    async def main() -> Any:
        waiting = asyncio.create_task(handle.aresult(timeout=WAIT))
        await asyncio.to_thread(_waiting, app, handle)
        await asyncio.to_thread(_finish, app, "done")
        return await waiting

    assert asyncio.run(main()) == "done"


def test_many_waiters_on_one_job_share_one_listener(app: App) -> None:
    handle = app.enqueue("t", {})
    joins = [_in_thread(lambda: app.result(handle, timeout=WAIT)) for _ in range(8)]

    async def some_async() -> list[Any]:
        return list(await asyncio.gather(*(app.aresult(handle, timeout=WAIT)
                                           for _ in range(4))))

    async_join = _in_thread(lambda: asyncio.run(some_async()))
    _waiting(app, handle, count=12)
    if app.backend.kind == "postgresql":
        schema = app.backend.schema
        # one watch row for the App, however many wait; one listening connection
        assert app.backend.run_sql(
            f"SELECT count(*) FROM {schema}.result_waiters WHERE job_id = %s", [handle]
        ) == [(1,)]
        assert app.backend.run_sql(
            "SELECT count(*) FROM pg_stat_activity WHERE query = %s",
            [f"LISTEN {schema}_finished"],
        ) == [(1,)]
    _finish(app, [1, 2, 3])
    assert [j() for j in joins] == [[1, 2, 3]] * 8
    assert async_join() == [[1, 2, 3]] * 4
    if app.backend.kind == "postgresql":
        assert app.backend.run_sql(
            f"SELECT count(*) FROM {app.backend.schema}.result_waiters") == [(0,)]


def test_a_dead_job_raises_job_failed_with_reason_and_last_error(app: App) -> None:
    handle = app.enqueue("t", {})
    join = _in_thread(lambda: handle.result(timeout=WAIT))
    _waiting(app, handle)
    job = app.claim("w1", limit=1)[0]
    app.start(job)
    assert app.fail(job, Permanent("the disk is on fire")) == "dead"
    with pytest.raises(JobFailed) as raised:
        join()
    assert raised.value.job_id == handle
    assert raised.value.reason == "permanent_error"
    assert raised.value.error is not None
    assert raised.value.error["message"] == "the disk is on fire"
    assert "permanent_error" in str(raised.value) and "the disk is on fire" in str(raised.value)
    # and at once, when already dead; a cancelled job has no error to carry
    with pytest.raises(JobFailed):
        app.result(handle, timeout=0)
    other = app.enqueue("t", {})
    assert app.cancel(other) == "cancelled"
    with pytest.raises(JobFailed) as cancelled:
        asyncio.run(other.aresult(timeout=WAIT))
    assert cancelled.value.reason == "cancelled" and cancelled.value.error is None


def test_timeout_raises_timeout_error_and_leaves_the_job(app: App) -> None:
    handle = app.enqueue("t", {})
    with pytest.raises(TimeoutError):
        handle.result(timeout=0.05)
    with pytest.raises(TimeoutError):
        asyncio.run(handle.aresult(timeout=0.05))
    assert app.get_job(handle).status == "pending"
    if app.backend.kind == "postgresql":  # the wait left no registration behind
        assert app.backend.run_sql(
            f"SELECT count(*) FROM {app.backend.schema}.result_waiters") == [(0,)]
    _finish(app, 7)
    assert handle.result(timeout=WAIT) == 7


def test_unknown_job_and_bad_timeout(app: App) -> None:
    with pytest.raises(JobNotFound):
        app.result(999_999, timeout=WAIT)
    with pytest.raises(InvalidInput):
        app.result(app.enqueue("t"), timeout=-1)
    with pytest.raises(InvalidInput):
        app.result("1", timeout=1)  # type: ignore[arg-type]


def test_result_limit_refused_at_complete(db_url: str) -> None:
    app = App(db_url, result_limit=100)
    app.migrate()
    try:
        app.enqueue("t")
        job = app.claim("w1", limit=1)[0]
        app.start(job)
        with pytest.raises(InvalidInput, match="over the limit of 100 bytes"):
            app.complete(job, "x" * 200)
        assert app.get_job(job.id).status == "processing"  # nothing written
        app.complete(job, "small")
        assert app.result(job.id, timeout=0) == "small"
    finally:
        app.close()


@pytest.fixture
def worker_app(db_url: str) -> Iterator[App]:
    app = App(db_url, result_limit=1000)
    app.migrate()

    @app.task(name="res.add")
    def add(a: int, b: int) -> int:
        return a + b

    @app.task(name="res.big")
    async def big() -> str:
        return "y" * 5000

    yield app
    app.close()


def test_with_a_real_worker(worker_app: App) -> None:
    """End to end: a Worker runs the jobs; a too-large result sends its job to dead letters
    with a reason that says so."""
    add, big = worker_app.tasks["res.add"], worker_app.tasks["res.big"]
    with worker_running(Worker(worker_app, concurrency=2, poll_interval=0.05)):
        assert add.enqueue(a=2, b=3).result(timeout=WAIT) == 5
        handle = big.enqueue()
        with pytest.raises(JobFailed) as raised:
            handle.result(timeout=WAIT)
        assert raised.value.reason == "permanent_error"
        assert raised.value.error is not None
        assert "over the limit of 1000 bytes" in raised.value.error["message"]


@pytest.fixture
def pg_app(pg_base_url: str) -> Iterator[App]:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    app = App(f"{pg_base_url}?schema={schema}")
    app.migrate()
    yield app
    app.backend.run_sql(f"DROP SCHEMA {schema} CASCADE")
    app.close()


@pytest.mark.postgres
def test_postgres_notifies_only_for_jobs_someone_waits_for(pg_app: App) -> None:
    """The settle path's commits send no NOTIFY for results nobody waits for; a watched job's
    archive insert sends one notice with its id."""
    import psycopg

    app = pg_app
    backend: Any = app.backend
    with psycopg.connect(backend.conninfo, autocommit=True) as listener:
        listener.execute(f"LISTEN {backend.finished_channel}")
        unwatched = app.enqueue("t", queue="a")
        _finish(app)
        assert app.get_job(unwatched).status == "succeeded"
        assert list(listener.notifies(timeout=0.5)) == []
        watched = app.enqueue("t", queue="a")
        backend.watch_results([watched], "00000000-0000-0000-0000-00000000000a")
        _finish(app)
        notes = list(listener.notifies(timeout=5, stop_after=1))
        assert [n.payload for n in notes] == [str(watched)]
