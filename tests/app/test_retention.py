"""Retention on both backends, on the FakeClock: finished rows older than the policies vanish
with no operator (app.prune, as every worker's pruner runs it), per queue and by count; one
pruner at a time across processes (a lease in the database)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from app_support import run_threads, worker_running

from claimq import App, InvalidInput, JobNotFound, Worker
from claimq._worker import pruner as pruner_service
from claimq.backends.base import Completion
from claimq.clock import FakeClock

ALL = 100_000
DAY = 86400


def _archive(app: App, n: int, queue: str = "q") -> list[int]:
    ids = app.enqueue_many([{"task": "t", "queue": queue} for _ in range(n)])
    jobs = app.claim("w", [queue], limit=n, start=True)
    assert len(jobs) == n
    done = app.backend.complete([Completion(j.id, j.claim_token or "", '"r"') for j in jobs])
    assert done == set(ids)
    return ids


def _bury(app: App, n: int, queue: str = "q") -> list[int]:
    ids = app.enqueue_many([{"task": "t", "queue": queue} for _ in range(n)])
    for i in ids:  # the backend's cancel: the App's would add audit rows (pruned after 30 days)
        assert app.backend.cancel(i) == "cancelled"
    return ids


def _pruned(**counts: int) -> dict[str, int]:
    """A pass's counts: those given, every other table 0."""
    return {"archive": 0, "dead": 0, "idempotency_keys": 0, "progress": 0, "rate_keys": 0,
            "audit": 0, "archive_partitions": 0, **counts}


def _ids(app: App, table: str) -> set[int]:
    return {j.id for j in app.list_jobs(table, limit=ALL)}  # type: ignore[arg-type]


def test_the_default_policy_prunes_old_rows_without_an_operator(app: App,
                                                                clock: FakeClock) -> None:
    old_done, old_dead = _archive(app, 3), _bury(app, 2)
    clock.advance(15 * DAY)
    new_done = _archive(app, 2)
    counts = app.prune()
    assert counts == _pruned(archive=3)
    assert _ids(app, "archive") == set(new_done)
    assert _ids(app, "dead") == set(old_dead)  # dead letters stay 30 days
    clock.advance(16 * DAY)
    assert app.prune() == _pruned(archive=2, dead=2)
    assert _ids(app, "archive") == _ids(app, "dead") == set()
    with pytest.raises(JobNotFound):  # a pruned result is gone with its row
        app.result(old_done[0], timeout=0)


def test_policies_per_queue_by_age_and_count(app: App, clock: FakeClock) -> None:
    app.set_retention(archive_age=3600, dead_rows=1)  # the default: an hour; one dead letter
    app.set_retention("keep", archive_rows=2)  # no age limit, the newest two
    app.set_retention("short", archive_age=60, dead_age=60)
    keep = [_archive(app, 1, "keep")[0] for _ in range(4) if clock.advance(1)]
    short, other = _archive(app, 2, "short"), _archive(app, 2, "other")
    dead_other, dead_short = _bury(app, 3, "other"), _bury(app, 2, "short")
    clock.advance(120)
    counts = app.prune(batch=1)  # one row per transaction: many batches
    assert counts == _pruned(archive=4, dead=4)
    assert _ids(app, "archive") == {*keep[2:], *other}
    assert _ids(app, "dead") == {dead_other[-1]}  # the newest of the default's queues
    assert not set(short) & _ids(app, "archive") and not set(dead_short) & _ids(app, "dead")
    clock.advance(3600)
    app.prune()
    assert _ids(app, "archive") == set(keep[2:])
    policies = app.retention()
    assert [p.queue for p in policies] == ["*", "keep", "short"]
    assert policies[1].archive_rows == 2 and policies[1].archive_age is None
    app.clear_retention("keep")
    app.clear_retention()
    assert [p.queue for p in app.retention()] == ["*", "short"]
    assert app.retention()[0].archive_age == 14 * DAY  # the built-in default again


def test_expired_idempotency_keys_are_pruned(app: App, clock: FakeClock) -> None:
    first = app.enqueue("t", idempotency_key="k1", queue="q")
    assert app.enqueue("t", idempotency_key="k1", queue="q") == first
    jobs = app.claim("w", ["q"], limit=1, start=True)
    app.backend.complete([Completion(jobs[0].id, jobs[0].claim_token or "", None)])
    clock.advance(2 * DAY)  # past the App's 24 h idempotency_retention
    assert app.prune() == _pruned(idempotency_keys=1)
    assert app.enqueue("t", idempotency_key="k1", queue="q") != first


def test_one_pruner_at_a_time(app: App, clock: FakeClock) -> None:
    _archive(app, 3)
    app.set_retention(archive_age=0)
    assert app.backend.take_lease("pruner", "someone-else", 60)
    assert app.prune() is None  # another process is pruning
    assert len(_ids(app, "archive")) == 3
    clock.advance(61)  # its holder died: the lease runs out
    assert app.prune() == _pruned(archive=3)
    assert app.backend.take_lease("pruner", "someone-else", 60)  # and was given back


class _Watched:
    """A backend whose prune() batches say which App runs them, and whether another App's
    batch runs at the same time."""

    def __init__(self, backend: Any, who: int, active: set[int], overlaps: list[Any],
                 lock: threading.Lock) -> None:
        self._backend, self._who = backend, who
        self._active, self._overlaps, self._lock = active, overlaps, lock

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def prune(self, batch: Any) -> int:
        with self._lock:
            if self._active - {self._who}:
                self._overlaps.append((self._who, set(self._active)))
            self._active.add(self._who)
        try:
            threading.Event().wait(0.001)
            return int(self._backend.prune(batch))
        finally:
            with self._lock:
                self._active.discard(self._who)


def test_concurrent_pruners_never_overlap(app: App, clock: FakeClock, db_url: str) -> None:
    _archive(app, 400)
    app.set_retention(archive_age=0)
    clock.advance(1)
    active: set[int] = set()
    overlaps: list[Any] = []
    lock = threading.Lock()
    apps = [App(db_url, clock=clock) for _ in range(4)]
    for n, a in enumerate(apps):
        a._backend = _Watched(a.backend, n, active, overlaps, lock)  # type: ignore[assignment]
    barrier = threading.Barrier(4)
    ran: list[dict[str, int] | None] = []

    def pruner(a: App) -> None:
        barrier.wait(30)
        for _ in range(20):
            ran.append(a.prune(batch=10))

    run_threads(pruner, [(a,) for a in apps])
    for a in apps:
        a.close()
    assert overlaps == []
    assert sum(r["archive"] for r in ran if r) == 400
    assert _ids(app, "archive") == set()


@pytest.fixture
def fast_pruner(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(pruner_service, "PRUNE_EVERY", 0.05)
    yield


def test_a_worker_prunes_by_itself(app: App, clock: FakeClock, fast_pruner: None) -> None:
    _archive(app, 5)
    _bury(app, 2)
    clock.advance(timedelta(days=31))
    with worker_running(Worker(app, concurrency=1, poll_interval=0.05)) as worker:
        for _ in range(1200):  # until its pruner has said so (after the rows went)
            if worker.counters.get("pruned") >= 7:
                break
            threading.Event().wait(0.05)
        assert _ids(app, "archive") == _ids(app, "dead") == set()
    assert worker.counters.get("pruned") == 7


def test_bad_policies_are_refused(app: App) -> None:
    for options in ({"archive_age": -1}, {"archive_rows": -1}, {"dead_rows": 1.5},
                    {"dead_age": "soon"}):
        with pytest.raises(InvalidInput):
            app.set_retention("q", **options)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        app.set_retention("bad queue name!" * 20)
    with pytest.raises(InvalidInput):
        app.prune(batch=0)
    with pytest.raises(JobNotFound):
        app.clear_retention("q")
    assert [p.queue for p in app.retention()] == ["*"]


def test_a_stopping_pruner_ends_its_pass_between_batches(app: App, clock: FakeClock) -> None:
    from claimq import _retention

    _archive(app, 30)
    app.set_retention(archive_age=0)
    clock.advance(1)
    counts = _retention.prune(app, "stopping-worker", 10, stop=lambda: True)
    assert counts is not None and counts["archive"] == 10  # one batch, then it stopped
    assert len(_ids(app, "archive")) == 20
    assert app.backend.take_lease("pruner", "next", 60)  # it gave the lease back
