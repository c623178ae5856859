"""Issue 24, defects 1-3 (MariaDB): an idempotent enqueue that meets its key's holder, and a
debounce that meets a claim of the holder between its statements. The races are forced with the
pause points (claimq._pause): one operation stops at its point, the other runs in another thread
to its end (or is seen waiting for a lock the paused one holds), then the first goes on. The
tests run on every backend where the interleaving can happen (SQLite's writer lock keeps a claim
out of an enqueue's transaction)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar
from urllib.parse import parse_qs, urlparse

import pytest

from claimq import App, _pause
from claimq.job import Status

T = TypeVar("T")
DEADLINE = 15.0  # seconds; only a hang ever comes near it


class Gate:
    """A pause hook that stops the first thread reaching `point` until `release()`."""

    def __init__(self, point: str) -> None:
        self.point = point
        self.reached = threading.Event()
        self.released = threading.Event()
        self._taken = False
        self._lock = threading.Lock()

    def __call__(self, point: str) -> None:
        if point != self.point:
            return
        with self._lock:
            if self._taken:
                return
            self._taken = True
        self.reached.set()
        assert self.released.wait(DEADLINE), f"{point} never released"

    def release(self) -> None:
        self.released.set()


@contextmanager
def paused_at(point: str) -> Iterator[Gate]:
    gate = Gate(point)
    previous = _pause.set_hook(gate)
    try:
        yield gate
    finally:
        gate.release()
        _pause.set_hook(previous)


def _lock_waits(app: App) -> int:
    """Statements on this test's database (other tests share the server) now waiting for a row
    lock; 0 on SQLite, where none can be seen. (MariaDB's innodb_trx may leave transactions out
    when the server is busy: a statement of this database running for a second counts too.)"""
    url = app.url
    if url.startswith("mysql"):
        rows = app.backend.run_sql(
            "SELECT COUNT(*) FROM information_schema.processlist p"
            " LEFT JOIN information_schema.innodb_trx t ON t.trx_mysql_thread_id = p.id"
            " WHERE p.db = DATABASE() AND p.id <> CONNECTION_ID() AND p.command = 'Query'"
            " AND (t.trx_state = 'LOCK WAIT' OR p.time_ms >= 1000)")
    elif url.startswith("postgresql"):
        [schema] = parse_qs(urlparse(url).query)["schema"]
        rows = app.backend.run_sql(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND datname = current_database() AND position(%s in query) > 0", [schema])
    else:
        return 0
    return int(rows[0][0])


def _running(app: App, statement: str, for_ms: int) -> bool:
    """Whether a statement of this MariaDB database containing `statement` has been running for
    `for_ms` ms (it waits for a lock, having taken the ones it takes first)."""
    rows = app.backend.run_sql(
        "SELECT COUNT(*) FROM information_schema.processlist WHERE db = DATABASE()"
        " AND id <> CONNECTION_ID() AND command = 'Query' AND time_ms >= %s"
        " AND LOCATE(%s, info) > 0", [for_ms, statement])
    return bool(rows[0][0])


def _ends_unblocked(app: App, future: Future[T]) -> bool:
    """Waits until `future` is done (True) or its statement is seen waiting for a lock (False)."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        try:
            future.result(timeout=0.05)
            return True
        except TimeoutError:
            pass
        if _lock_waits(app):
            return False
    raise AssertionError("the claim neither ended nor waited for a lock")


def _during(app: App, point: str, enqueue: Callable[[], int], meanwhile: Callable[[], T]
            ) -> tuple[int, T, bool]:
    """Runs `enqueue` to `point`, `meanwhile` to its end in another thread, then the rest of
    `enqueue`: (enqueue's id, meanwhile's result, whether `meanwhile` ended without waiting for
    the paused enqueue's locks)."""
    with ThreadPoolExecutor(2) as pool, paused_at(point) as gate:
        enqueued = pool.submit(enqueue)
        assert gate.reached.wait(DEADLINE), f"the enqueue never reached {point}"
        other = pool.submit(meanwhile)
        unblocked = _ends_unblocked(app, other)
        gate.release()
        return int(enqueued.result(DEADLINE)), other.result(DEADLINE), unblocked


def _deadlocks(app: App) -> int:
    retries = getattr(app.backend, "retries", None)
    return 0 if retries is None else int(retries["deadlock"])


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_refused_enqueue_leaves_the_holders_keys(app: App) -> None:
    """Defect 1: the refused job's concurrency key must not replace the running holder's."""
    holder = app.enqueue("t", {}, queue="q", idempotency_key="k", concurrency_key="a",
                         concurrency_limit=1)
    [running] = app.claim("w", limit=1, start=True)
    assert running.id == holder
    refused = app.enqueue("t", {}, queue="q", idempotency_key="k", concurrency_key="b",
                          concurrency_limit=1, sequence_key="s", rate_key="r")
    assert refused == holder
    app.enqueue("t", {}, queue="q", concurrency_key="a", concurrency_limit=1)
    assert app.claim("w", limit=5) == [], "key 'a' runs its limit: its holder still holds it"
    app.complete(running)
    assert len(app.claim("w", limit=5)) == 1


def _debounce(app: App, n: int) -> Callable[[], int]:
    return lambda: app.enqueue("t", {"n": n}, queue="q", idempotency_key="k", unique="pending",
                               on_conflict="replace")


@pytest.mark.parametrize("db_url", ["postgresql", "mariadb"], indirect=True)
def test_debounce_meets_a_claim_of_its_holder(app: App) -> None:
    """Defects 2 and 3: a claim of the pending holder between key_holder and replace_pending
    neither waits for the paused debounce (nor deadlocks with it), and the new payload is
    queued: in the holder if the claim passed it over, else in a new pending job."""
    first = _debounce(app, 1)()
    second, claimed, unblocked = _during(
        app, "debounce.holder_read", _debounce(app, 2),
        lambda: app.claim("w", queues=["q"], limit=1, start=True))
    assert unblocked, "the claim waited for the paused debounce's locks"
    assert _deadlocks(app) == 0
    if claimed:  # the claim took the holder: the payload goes to a new job
        [running] = claimed
        assert running.id == first and running.payload == {"n": 1}
        assert second != first
        job = app.get_job(second)
        assert job is not None and job.status == Status.PENDING and job.payload == {"n": 2}
    else:  # passed over while the debounce held it: the holder takes the payload
        assert second == first
        job = app.get_job(first)
        assert job is not None and job.status == Status.PENDING and job.payload == {"n": 2}
    pending = app.list_jobs(status="pending")
    assert [(j.id, j.payload) for j in pending] == [(second, {"n": 2})]


@pytest.mark.parametrize("db_url", ["postgresql", "mariadb"], indirect=True)
def test_idempotent_enqueue_meets_a_claim_of_its_holder(app: App) -> None:
    """Defect 3's other side: an enqueue stopped after reading its key's holder does not make a
    claim of that holder wait or deadlock; a running holder still holds an 'active' key."""
    first = app.enqueue("t", {"n": 1}, queue="q", idempotency_key="k", unique="active")
    second, claimed, unblocked = _during(
        app, "enqueue.key_checked",
        lambda: app.enqueue("t", {"n": 2}, queue="q", idempotency_key="k", unique="active"),
        lambda: app.claim("w", queues=["q"], limit=1, start=True))
    assert unblocked, "the claim waited for the paused enqueue's locks"
    assert _deadlocks(app) == 0
    assert second == first
    assert [j.id for j in claimed] == [first]
    assert app.list_jobs(status="pending") == []


def _wait_running(app: App, statement: str, future: Future[T]) -> None:
    """Waits until `statement`, sent by the call behind `future`, has been waiting for a lock
    for 200 ms (the call must not end first)."""
    deadline = time.monotonic() + DEADLINE
    while not _running(app, statement, 200):
        assert not future.done(), f"ended without waiting for a lock: {future.result()!r}"
        assert time.monotonic() < deadline, f"{statement!r} never waited for a lock"
        time.sleep(0.01)


@pytest.mark.parametrize("db_url", ["mariadb"], indirect=True)
def test_claim_and_debounce_take_locks_in_one_order(app: App) -> None:
    """Defect 3: a claim holding its chosen row (paused before its UPDATE) and a debounce of that
    row waiting for it. The debounce must not hold an index record the claim's UPDATE needs (a
    deadlock, 1213, that the claim may lose); once the claim commits, the debounce's replace
    matches nothing and its payload goes to a new job (defect 2)."""
    first = _debounce(app, 1)()
    with ThreadPoolExecutor(2) as pool, paused_at("claim.candidates") as gate:
        claim = pool.submit(lambda: app.claim("w", queues=["q"], limit=1, start=True))
        assert gate.reached.wait(DEADLINE), "the claim never reached claim.candidates"
        debounce = pool.submit(_debounce(app, 2))
        _wait_running(app, "SET payload", debounce)  # replace_pending waits for the claim's row
        gate.release()
        claimed = claim.result(DEADLINE)
        second = debounce.result(DEADLINE)
    assert _deadlocks(app) == 0, "the claim and the debounce deadlocked"
    assert [(j.id, j.payload) for j in claimed] == [(first, {"n": 1})]
    assert second != first
    pending = app.list_jobs(status="pending")
    assert [(j.id, j.payload) for j in pending] == [(second, {"n": 2})]


@pytest.mark.parametrize("db_url", ["mariadb"], indirect=True)
def test_a_claim_outlasts_a_burst_of_deadlocks(app: App, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    """Defect 3's last word: a claim that meets deadlocks (1213) is rolled back and tried again,
    more times than the six a lock-wait timeout gets (a worker's claim died after six)."""
    backend = app.backend
    job_id = app.enqueue("t", {}, queue="q")
    real = backend._claim
    left = [10]

    def deadlocking(cur: object, request: object) -> object:
        if left[0]:
            left[0] -= 1
            raise backend._driver.OperationalError(
                1213, "Deadlock found when trying to get lock; try restarting transaction")
        return real(cur, request)

    monkeypatch.setattr(backend, "_claim", deadlocking)
    assert [j.id for j in app.claim("w", queues=["q"], limit=1)] == [job_id]
    assert _deadlocks(app) == 10
