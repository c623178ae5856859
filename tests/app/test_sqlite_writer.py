"""SQLite's one writer (issue 24): a write inside app.transaction() without its connection
never waits for ever (defect 9), and a keyed enqueue on a caller's connection reads the key
under the write lock, so two callers cannot both take one key."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from claimq import App, DatabaseUnavailable, InvalidInput, JobNotFound
from claimq._pause import set_hook

BOUND = 15.0  # seconds a call may take before the test calls it hung (the fix answers at once)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    instance = App(f"sqlite:///{tmp_path}/claimq.db?busy_timeout=1")
    instance.migrate()
    yield instance
    instance.close()


def outcome_of(call: Callable[[], Any]) -> Any:
    """`call()`'s result or exception, from a daemon thread given BOUND seconds."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(call())
        except BaseException as exc:  # noqa: BLE001 - the test looks at what it was
            box.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND)
    assert not thread.is_alive(), f"the call hung for {BOUND} s"
    return box[0]


def test_enqueue_without_conn_inside_app_transaction_fails_at_once(app: App) -> None:
    def inside() -> tuple[Any, int]:
        with app.transaction() as conn:
            try:
                app.enqueue("t", {"n": 1})
            except InvalidInput as exc:
                refused: Any = exc
            else:
                refused = None
            # the transaction goes on: a write on its connection joins it
            joined = app.enqueue("t", {"n": 2}, conn=conn)
        return refused, joined

    result = outcome_of(inside)
    assert not isinstance(result, BaseException), result
    refused, joined = result
    assert isinstance(refused, InvalidInput) and "conn=" in str(refused)
    assert app.get_job(joined).payload == {"n": 2}
    assert [j.payload for j in app.list_jobs("live")] == [{"n": 2}]


def test_other_writes_and_a_nested_transaction_inside_app_transaction_fail_at_once(
        app: App) -> None:
    job_id = app.enqueue("t")

    def inside() -> list[Any]:
        seen: list[Any] = []
        with app.transaction():
            for write in (lambda: app.claim("w", limit=1), lambda: app.cancel(job_id),
                          lambda: app.enqueue_many([{"task": "t"}]), app.transaction().__enter__):
                try:
                    write()
                except InvalidInput as exc:
                    seen.append(exc)
        return seen

    seen = outcome_of(inside)
    assert not isinstance(seen, BaseException), seen
    assert len(seen) == 4
    assert app.get_job(job_id).status == "pending"
    assert len(app.list_jobs("live")) == 1


def test_a_write_in_another_thread_waits_at_most_busy_timeout(app: App) -> None:
    """aenqueue without conn writes in a thread of its own: inside app.transaction() it waits
    for the writer that this thread holds, and gives up after busy_timeout (1 s here)."""

    def inside() -> Any:
        with app.transaction():
            try:
                asyncio.run(app.aenqueue("t"))
            except DatabaseUnavailable as exc:
                return exc
        return None

    result = outcome_of(inside)
    assert isinstance(result, DatabaseUnavailable), result
    assert app.list_jobs("live") == []


def test_two_callers_connections_cannot_both_take_one_key(app: App) -> None:
    """Caller A reads the key free and stops before its insert; caller B enqueues the same key
    and commits; A goes on. Without the key read under the write lock both inserted (two live
    holders of one key). With it, B waits for A's transaction: one job, both get its id."""
    backend: Any = app.backend
    a = sqlite3.connect(backend.path, timeout=10, check_same_thread=False)
    b = sqlite3.connect(backend.path, timeout=BOUND, check_same_thread=False)
    at_point, go_on = threading.Event(), threading.Event()

    def hook(point: str) -> None:
        if point == "enqueue.key_checked" and threading.current_thread() is a_thread:
            at_point.set()
            assert go_on.wait(BOUND)

    ids: dict[str, Any] = {}

    def enqueue_a() -> None:
        try:
            ids["a"] = app.enqueue("t", {"by": "a"}, idempotency_key="k", conn=a)
            a.commit()
        except BaseException as exc:  # noqa: BLE001
            ids["a"] = exc

    def enqueue_b() -> None:
        try:
            ids["b"] = app.enqueue("t", {"by": "b"}, idempotency_key="k", conn=b)
            b.commit()
        except BaseException as exc:  # noqa: BLE001
            ids["b"] = exc

    previous = set_hook(hook)
    try:
        a_thread = threading.Thread(target=enqueue_a, daemon=True)
        a_thread.start()
        assert at_point.wait(BOUND), "A never reached its key read"
        b_thread = threading.Thread(target=enqueue_b, daemon=True)
        b_thread.start()
        b_thread.join(0.5)  # B runs to its end, or waits for A's write lock
        go_on.set()
        a_thread.join(BOUND)
        b_thread.join(BOUND)
        assert not a_thread.is_alive() and not b_thread.is_alive()
    finally:
        set_hook(previous)
        a.close()
        b.close()
    assert isinstance(ids["a"], int) and isinstance(ids["b"], int), ids
    live = app.list_jobs("live")
    assert len(live) == 1, f"two live holders of one key: {live}"
    assert ids["a"] == ids["b"] == live[0].id


def test_a_rolled_back_callers_keyed_enqueue_holds_nothing(app: App) -> None:
    backend: Any = app.backend
    conn = sqlite3.connect(backend.path, isolation_level=None)  # autocommit: claimq's own BEGIN
    job_id = app.enqueue("t", idempotency_key="auto", conn=conn)
    assert not conn.in_transaction
    conn.close()
    assert app.get_job(job_id).idempotency_key == "auto"
    legacy = sqlite3.connect(backend.path)
    gone = app.enqueue("t", idempotency_key="legacy", conn=legacy)
    assert legacy.in_transaction
    legacy.rollback()
    legacy.close()
    with pytest.raises(JobNotFound):
        app.get_job(gone)
    again = app.enqueue("t", {"new": 1}, idempotency_key="legacy")
    assert app.get_job(again).payload == {"new": 1}
    assert len(app.list_jobs("live")) == 2
