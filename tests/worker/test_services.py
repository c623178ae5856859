"""The worker's services in-process: the supervisor restarts a service that fails, says so
under a stable event name, and stops the worker when a failure cannot be cured; a fault
injected once into each service's database call leaves every job finished exactly once.

Faults are injected by wrapping the real backend (a real SQLite file, a real PostgreSQL
schema); nothing about the database is faked."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from polling import archived, dead, live, wait_until

from claimq import App
from claimq._worker.service import Service, Supervisor
from claimq.errors import DatabaseError, MigrationError, WorkerFailed
from claimq.worker import Worker

pytestmark = pytest.mark.timeout(120)


# -- the supervisor alone ---------------------------------------------------------------------


class Flaky(Service):
    name = "flaky"

    def __init__(self, failures: list[BaseException]) -> None:
        self.failures = failures
        self.runs = 0
        self.done = asyncio.Event()

    async def run(self) -> None:
        self.runs += 1
        if self.failures:
            raise self.failures.pop(0)
        self.done.set()


def test_supervisor_restarts_a_failing_service_and_logs_it(caplog: pytest.LogCaptureFixture
                                                           ) -> None:
    fatal: list[BaseException] = []

    async def main() -> Flaky:
        supervisor = Supervisor(on_fatal=fatal.append)
        service = Flaky([RuntimeError("one"), ValueError("two")])
        supervisor.start(service)
        await asyncio.wait_for(service.done.wait(), 10)
        await supervisor.join(service.name)
        assert supervisor.restarts == {"flaky": 2}
        return service

    with caplog.at_level(logging.ERROR, logger="claimq.worker"):
        service = asyncio.run(main())
    assert service.runs == 3
    assert not fatal
    events = [r for r in caplog.records if getattr(r, "event", None) == "loop.restarted"]
    assert [r.service for r in events] == ["flaky", "flaky"]  # type: ignore[attr-defined]
    assert {type(r.exc_info[1]) for r in events if r.exc_info} == {RuntimeError, ValueError}


def test_supervisor_stops_on_a_failure_restarting_cannot_cure() -> None:
    fatal: list[BaseException] = []

    async def main() -> Flaky:
        supervisor = Supervisor(on_fatal=fatal.append)
        service = Flaky([MigrationError("tables gone")])
        supervisor.start(service)
        await supervisor.join(service.name)
        return service

    service = asyncio.run(main())
    assert service.runs == 1
    assert [type(e) for e in fatal] == [MigrationError]


# -- a real worker, one fault injected into one service's database call ----------------------


class FaultOnce:
    """The real backend, except that `method` raises `error` the first time it is called."""

    def __init__(self, backend: Any, method: str, error: BaseException) -> None:
        self._backend = backend
        self._method = method
        self._error: BaseException | None = error
        self.injected = threading.Event()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._backend, name)
        if name != self._method:
            return value

        def once(*args: Any, **kwargs: Any) -> Any:
            if self._error is not None:
                error, self._error = self._error, None
                self.injected.set()
                raise error
            return value(*args, **kwargs)

        return once


def _run_in_thread(worker: Worker) -> Callable[[], dict[str, int]]:
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["counters"] = worker.run(install_signals=False)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            result["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()

    def stop() -> dict[str, int]:
        worker.stop()
        thread.join(60)
        assert not thread.is_alive(), "the worker did not stop"
        if "error" in result:
            raise result["error"]
        return result["counters"]  # type: ignore[no-any-return]

    return stop


@pytest.fixture
def fault_app(db_url: str) -> Iterator[App]:
    app = App(db_url)
    app.migrate()

    @app.task(name="svc.sleepy")
    async def sleepy(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "ok"

    yield app
    app.close()


# (method, lease): a lease shorter than the jobs' run, so heartbeats must keep going after
# the fault for every job to finish on its first attempt.
FAULTS = [("heartbeat", 0.6), ("reap", 0.6), ("settle", 5.0), ("tidy", 0.6)]


@pytest.mark.parametrize(("method", "lease"), FAULTS, ids=[m for m, _ in FAULTS])
def test_a_fault_in_a_service_is_logged_restarted_and_loses_nothing(
    fault_app: App, method: str, lease: float, caplog: pytest.LogCaptureFixture
) -> None:
    app = fault_app
    real = app.backend
    if method == "settle" and real.capabilities.async_settle:
        method = "asettle"  # PostgreSQL's worker settles on its event loop
    ids = [app.enqueue("svc.sleepy", {"seconds": 1.2}) for _ in range(6)]
    faulty = FaultOnce(real, method, DatabaseError("injected fault"))
    app._backend = faulty  # type: ignore[assignment]
    worker = Worker(app, concurrency=3, lease=lease, poll_interval=0.1)
    with caplog.at_level(logging.INFO, logger="claimq.worker"):
        stop = _run_in_thread(worker)
        try:
            assert faulty.injected.wait(30), f"{method} was never called"
            wait_until(lambda: len(archived(app)) == len(ids), 60, "every job archived")
        finally:
            counters = stop()
    app._backend = real
    jobs = archived(app)
    assert sorted(j.id for j in jobs) == ids
    assert all(j.attempts == 1 for j in jobs), [(j.id, j.attempts) for j in jobs]
    assert not dead(app) and not live(app)
    assert counters.get("lease_lost", 0) == 0 and counters.get("reaped", 0) == 0, counters
    said = [r for r in caplog.records if "injected fault" in r.getMessage()
            or (r.exc_info and "injected fault" in str(r.exc_info[1]))]
    assert said, f"nothing logged the injected fault in {method}"


def test_schema_gone_stops_the_worker_non_zero(fault_app: App) -> None:
    app = fault_app
    real = app.backend
    app._backend = FaultOnce(real, "heartbeat", MigrationError("claimq's tables are gone"))
    app.enqueue("svc.sleepy", {"seconds": 2})
    worker = Worker(app, concurrency=1, lease=0.6, poll_interval=0.1)
    with pytest.raises(WorkerFailed, match="tables are gone"):
        asyncio.run(asyncio.wait_for(worker.arun(install_signals=False), 60))
    app._backend = real


@pytest.mark.postgres
def test_a_listener_that_fails_reconnects_and_says_so(
    pg_base_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The listener (PostgreSQL LISTEN) fails once: it says so and listens again; a job
    enqueued afterwards wakes the worker (polling stays the fallback meanwhile)."""
    import uuid

    schema = f"t_{uuid.uuid4().hex[:12]}"
    app = App(f"{pg_base_url}?schema={schema}")
    try:
        app.migrate()

        @app.task(name="svc.quick")
        async def quick() -> str:
            return "ok"

        real = app.backend
        faulty = FaultOnce(real, "listen", DatabaseError("injected fault"))
        app._backend = faulty  # type: ignore[assignment]
        worker = Worker(app, concurrency=2, lease=5.0, poll_interval=0.2)
        with caplog.at_level(logging.INFO, logger="claimq.worker"):
            stop = _run_in_thread(worker)
            try:
                assert faulty.injected.wait(30), "listen was never called"
                job_id = app.enqueue("svc.quick", {})
                wait_until(lambda: [j.id for j in archived(app)] == [job_id], 30,
                           "the job archived")
            finally:
                counters = stop()
        app._backend = real
        assert counters.get("completed") == 1, counters
        assert any("injected fault" in r.getMessage() for r in caplog.records
                   if getattr(r, "event", None) == "listener.reconnecting")
    finally:
        app.backend.run_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        app.close()


def test_a_claim_answered_after_a_newer_claim_of_the_same_job_is_not_started(
    db_url: str,
) -> None:
    """Two writes in flight, each claiming: the database gave a job out to the first, its lease
    ran out (a blocked event loop), the reaper requeued it and the second write claimed it
    again. When the second write's answer is handled first, the first claim is stale and must
    not run (it would run on a token the database no longer knows)."""
    from claimq._worker.completer import Outcomes
    from claimq._worker.dbcall import DB
    from claimq._worker.executor import Executor
    from claimq._worker.inflight import Counters, Registry
    from claimq.clock import FakeClock

    clock = FakeClock()
    app = App(db_url, clock=clock)
    app.migrate()

    @app.task(name="svc.never")
    async def never() -> None:
        await asyncio.sleep(60)

    job_id = app.enqueue("svc.never", {})
    [first] = app.claim("w", limit=1, start=True)
    clock.advance(120)
    assert app.reap().requeued == [job_id]
    [second] = app.claim("w", limit=1, start=True)
    assert (first.attempts, second.attempts) == (1, 2)

    async def main() -> tuple[Registry, Counters]:
        counters = Counters()
        registry = Registry(4, counters)
        db = DB()
        outcomes = Outcomes()
        executor = Executor(app, app.backend, db, registry, counters, outcomes,
                            worker_id="w", lease=None, default_lease=30.0, concurrency=4,
                            make_context=lambda f, abandon: None)
        await executor.start([second])  # the newer answer first
        await executor.start([first])  # then the stale one
        held = registry.held()
        assert [f.owned.token for f in held] == [second.claim_token]
        for f in list(registry):
            assert f.task is not None
            f.task.cancel()
        await asyncio.sleep(0)
        db.close()
        return registry, counters

    registry, counters = asyncio.run(main())
    app.close()
    assert counters.get("lease_lost") == 1 and counters.get("started") == 1


# -- a blocked event loop (a handler calling time.sleep in `async def`) -------------------------


def test_the_reaper_renews_its_own_workers_leases_before_it_reaps(db_url: str) -> None:
    """After the loop was blocked past a lease, the reaper's timer may fire before the
    heartbeater's. The reaper renews the leases its worker holds first, so the worker never
    takes back (and then loses the outcome of) a job it is itself still running; a lease that
    no worker holds is still reaped."""
    from claimq._worker.dbcall import DB
    from claimq._worker.heartbeater import Heartbeater
    from claimq._worker.inflight import Counters, Flight, InFlight, Registry
    from claimq._worker.reaper import Reaper
    from claimq.backends.base import Owned
    from claimq.clock import FakeClock

    clock = FakeClock()
    app = App(db_url, clock=clock)
    app.migrate()
    try:
        ours, orphan = app.enqueue("t", {}), app.enqueue("t", {})
        [job] = app.claim("w-here", limit=1, lease=5, start=True)
        [other] = app.claim("w-gone", limit=1, lease=5, start=True)
        assert (job.id, other.id) == (ours, orphan)
        counters = Counters()
        registry = Registry(4, counters)
        flight = InFlight(job, Owned(job.id, job.claim_token or ""), job.attempts, 5.0,
                          time.monotonic() + 5.0, state=Flight.RUNNING)
        registry.add(flight)
        clock.advance(60)  # both leases ran out on the database's clock

        async def one_round() -> None:
            db = DB(deadline=10)
            try:
                beater = Heartbeater(app.backend, db, registry, counters, lease=5.0,
                                     default_lease=5.0, abandon=lambda f, why: None,
                                     cancel=lambda f: None, finished=asyncio.Event())
                await Reaper(app.backend, db, counters, interval=1.0, stopping=asyncio.Event(),
                             renew=beater.beat).round()
            finally:
                db.close()

        asyncio.run(one_round())
        mine = app.get_job(ours)
        assert (mine.status, mine.worker_id, mine.claim_token) == (
            "processing", "w-here", job.claim_token)
        assert mine.lease_until > app.backend.now()
        assert not flight.lost
        assert app.get_job(orphan).status == "pending"  # nobody held it: reaped
        assert counters.get("reaped") == 1
    finally:
        app.close()


def test_a_database_answer_that_arrived_while_the_loop_was_blocked_is_taken(db_url: str) -> None:
    """A call whose deadline passed only because the event loop was blocked (the answer came
    back in time, waiting to be read) returns its answer: it is not taken for an outage."""
    from claimq._worker.dbcall import DB

    app = App(db_url)
    app.migrate()
    try:
        job_id = app.enqueue("t", {})

        async def main() -> Any:
            db = DB(deadline=0.3)
            try:
                call = asyncio.ensure_future(db.call(app.backend.get_job, job_id))
                await asyncio.sleep(0)  # the call is on its thread
                time.sleep(1.0)  # a handler blocks the loop past the deadline
                return await call
            finally:
                db.close()

        assert asyncio.run(main()).id == job_id
    finally:
        app.close()
