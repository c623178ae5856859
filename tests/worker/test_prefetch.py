"""Claiming ahead (Worker(prefetch=...)): a worker whose handlers end faster than a claim's round
trip claims up to `prefetch` jobs beyond its free slots, so one batch is written while the next
runs; those jobs wait here for a slot, never run beyond the concurrency, are handed back
uncounted when the worker stops, and a cancel that reaches one while it waits fails it without
running its handler. Handlers slower than a round trip get nothing claimed ahead.

Real SQLite files and a real PostgreSQL schema throughout."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from polling import archived, in_thread, wait_until

from claimq import App, Job
from claimq._worker.inflight import Counters, Registry
from claimq.worker import Worker

pytestmark = pytest.mark.timeout(120)


def test_how_much_is_claimed_ahead_follows_the_handlers_against_the_round_trip() -> None:
    registry = Registry(20, Counters(), prefetch=20)
    assert registry.ahead == 0  # nothing measured yet: nothing ahead
    registry.round_trip(0.002)
    assert registry.ahead == 0
    registry.handler_ran(0.0002)  # ten handlers end per slot during one round trip
    assert registry.ahead == 20  # capped at prefetch
    slow = Registry(20, Counters(), prefetch=20)
    slow.round_trip(0.002)
    slow.handler_ran(0.010)  # 20 slots x 2 ms / 10 ms: four slots free up per round trip
    assert slow.ahead == 4
    slower = Registry(20, Counters(), prefetch=20)
    slower.round_trip(0.002)
    slower.handler_ran(1.0)
    assert slower.ahead == 0
    off = Registry(20, Counters(), prefetch=0)
    off.round_trip(0.002)
    off.handler_ran(0.0001)
    assert off.ahead == 0
    # what is claimed ahead counts as slots: free grows by it, and shrinks as claims are held
    assert registry.free == 40 and off.free == 20


def test_a_claim_grows_with_what_may_be_claimed_ahead_unless_a_batch_is_given() -> None:
    """No batch given: a claim asks for the concurrency, and, while the latest claim came back
    full (a backlog), for as many as may be claimed ahead (up to ADAPTIVE_MAX) when handlers
    end faster than a round trip; an idle queue or slow handlers keep claims of the
    concurrency. A batch given is every claim's size."""
    from claimq._worker.claims import ADAPTIVE_MAX, Claims

    def claims(registry: Registry, batch: int, adaptive: bool) -> Claims:
        return Claims(None, None, registry, Counters(), worker_id="w", queues=None,  # type: ignore[arg-type]
                      lease=None, batch=batch, on_loop=True, stopping=lambda: False,
                      adaptive=adaptive)

    def backlogged(c: Claims) -> Claims:
        c.backlog = True  # the latest claim came back full
        return c

    fast = Registry(20, Counters(), prefetch=480)
    fast.round_trip(0.005)
    fast.handler_ran(0.00001)  # a deep backlog of no-op handlers
    assert fast.ahead == 480
    assert backlogged(claims(fast, 20, adaptive=True)).size == ADAPTIVE_MAX == 100
    assert claims(fast, 20, adaptive=True).size == 20  # the latest claim found fewer: no backlog
    assert backlogged(claims(fast, 20, adaptive=False)).size == 20  # Worker(batch=20)
    assert backlogged(claims(fast, 250, adaptive=True)).size == 250  # never below the batch
    some = Registry(20, Counters(), prefetch=480)
    some.round_trip(0.005)
    some.handler_ran(0.002)  # 20 slots x 5 ms / 2 ms: 50 free up per round trip
    assert backlogged(claims(some, 20, adaptive=True)).size == 50
    slow = Registry(20, Counters(), prefetch=480)
    slow.round_trip(0.005)
    slow.handler_ran(0.5)
    assert backlogged(claims(slow, 20, adaptive=True)).size == 20
    idle = Registry(20, Counters(), prefetch=480)  # nothing measured yet
    assert backlogged(claims(idle, 20, adaptive=True)).size == 20
    reserving = backlogged(claims(fast, 20, adaptive=True))
    assert reserving.reserve() == 100 and fast.reserved == 100


def test_the_worker_claims_in_bigger_batches_only_without_a_batch_given() -> None:
    from claimq.worker import DEFAULT_PREFETCH

    app = App("sqlite:///:memory:")
    try:
        assert Worker(app, concurrency=20).adaptive_batch
        assert not Worker(app, concurrency=20, batch=20).adaptive_batch
        assert DEFAULT_PREFETCH == 480
    finally:
        app.close()


def _run(worker: Worker, app: App, done: int) -> dict[str, int]:
    """Runs the worker in a thread of its own until `done` jobs are archived, then stops it."""
    thread, out = in_thread(lambda: worker.run(install_signals=False))
    try:
        wait_until(lambda: len(archived(app)) >= done or not thread.is_alive(), 60,
                   f"{done} jobs archived")
    finally:
        worker.stop()
        thread.join(60)
    assert not thread.is_alive(), "the worker did not stop"
    if "error" in out:
        raise out["error"]
    return out["result"]  # type: ignore[no-any-return]


def _drain_fast(db_url: str, jobs: int, **options: Any
                ) -> tuple[dict[str, int], dict[str, int], list[Job], bool]:
    """Drains `jobs` no-op jobs with Worker(app, concurrency=4, **options): the worker's
    counters, what its handlers saw, the archived jobs, and whether the backend has row locks."""
    app = App(db_url)
    app.migrate()
    seen = {"running": 0, "most": 0, "runs": 0}

    @app.task(name="pf.fast")
    async def fast(n: int) -> None:
        seen["running"] += 1
        seen["runs"] += 1
        seen["most"] = max(seen["most"], seen["running"])
        await asyncio.sleep(0)  # one turn of the loop: the others may start meanwhile
        seen["running"] -= 1

    try:
        app.enqueue_many([{"task": "pf.fast", "payload": {"n": i}} for i in range(jobs)])
        counters = _run(Worker(app, concurrency=4, poll_interval=0.05, **options), app, jobs)
        return counters, seen, archived(app), app.backend.capabilities.row_locks
    finally:
        app.close()


def test_fast_handlers_are_claimed_ahead_yet_never_run_beyond_the_concurrency(
        db_url: str) -> None:
    counters, seen, jobs, _ = _drain_fast(db_url, 600, prefetch=4)
    assert seen["most"] <= 4  # slots are the concurrency, whatever was claimed ahead
    assert counters.get("claimed_ahead", 0) > 0
    assert len(jobs) == 600 and {j.attempts for j in jobs} == {1}
    assert seen["runs"] == 600  # each exactly once


def test_prefetch_zero_claims_nothing_ahead(db_url: str) -> None:
    counters, seen, jobs, _ = _drain_fast(db_url, 200, prefetch=0)
    assert counters.get("claimed_ahead", 0) == 0
    assert len(jobs) == 200 and seen["most"] <= 4


def test_the_default_claims_ahead_where_writes_run_side_by_side(db_url: str) -> None:
    """PostgreSQL (row locks): up to the concurrency by default; SQLite (one writer): none."""
    counters, seen, jobs, row_locks = _drain_fast(db_url, 600)
    ahead = counters.get("claimed_ahead", 0)
    assert (ahead > 0) == row_locks, ahead
    assert len(jobs) == 600 and seen["most"] <= 4


def test_slow_handlers_get_nothing_claimed_ahead(db_url: str) -> None:
    app = App(db_url)
    app.migrate()
    held: list[int] = []

    @app.task(name="pf.slow")
    async def slow(n: int) -> None:
        held.append(len(app.list_jobs(status="processing")))
        await asyncio.sleep(0.15)

    try:
        app.enqueue_many([{"task": "pf.slow", "payload": {"n": i}} for i in range(8)])
        counters = _run(Worker(app, concurrency=2, prefetch=2, poll_interval=0.05), app, 8)
        assert counters.get("claimed_ahead", 0) == 0
        assert max(held) <= 2  # the worker never held more than its slots
        assert len(archived(app)) == 8
    finally:
        app.close()


def test_a_job_waiting_for_a_slot_is_handed_back_uncounted_or_failed_by_a_cancel(
        db_url: str) -> None:
    """The executor with one slot and three claimed jobs: the first runs (held on an event),
    the second is released as a stopping worker does with what has not started (back to
    pending, its attempt not counted), the third is cancelled by an operator while it waits
    (dead as cancelled, its handler never called)."""
    from claimq._worker.claims import Claims
    from claimq._worker.completer import Completer, Outcomes
    from claimq._worker.dbcall import DB
    from claimq._worker.executor import Executor

    app = App(db_url)
    app.migrate()
    calls: list[int] = []
    gate = asyncio.Event()

    @app.task(name="pf.held")
    async def held(n: int) -> None:
        calls.append(n)
        if n == 0:
            await gate.wait()

    ids = [app.enqueue("pf.held", {"n": n}) for n in range(3)]
    jobs = app.claim("w", limit=3, start=True)
    assert sorted(j.id for j in jobs) == ids

    async def main() -> Counters:
        counters = Counters()
        registry = Registry(1, counters, prefetch=2)
        db = DB()
        claims = Claims(app.backend, db, registry, counters, worker_id="w", queues=None,
                        lease=None, batch=1, on_loop=False, stopping=lambda: False)
        outcomes = Outcomes()
        executor = Executor(app, app.backend, db, registry, counters, outcomes,
                            worker_id="w", lease=None, default_lease=30.0, concurrency=1,
                            make_context=lambda f, abandon: None)
        completer = Completer(app.backend, db, registry, counters, claims, outcomes)
        writing = asyncio.create_task(completer.run())
        try:
            await executor.start(sorted(jobs, key=lambda j: j.id))
            first, second, third = (registry.newest(i) for i in ids)
            assert first is not None and second is not None and third is not None
            assert first.task is not None and second.task is None and third.task is None
            await asyncio.sleep(0.05)
            assert calls == [0]  # one slot: the others wait
            await executor.release([second])
            executor.cancel(third)
            gate.set()
            deadline = time.monotonic() + 30
            while len(registry) and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert not len(registry)
        finally:
            completer.close()
            await asyncio.wait_for(writing, 30)
            db.close()
        return counters

    try:
        counters = asyncio.run(main())
        assert calls == [0]  # neither waiting handler ran
        assert counters.get("released") == 1
        released = app.get_job(ids[1])
        assert released is not None and released.status == "pending"
        assert released.attempts == 0  # never run: its attempt is not counted
        cancelled = app.get_job(ids[2])
        assert cancelled is not None and cancelled.status == "dead"
        assert "cancel" in str(cancelled.errors[-1]).lower()
        done = app.get_job(ids[0])
        assert done is not None and done.status == "succeeded"
    finally:
        app.close()
