"""The worker: an asyncio runtime of small loops (fetcher, executor, heartbeater, completer,
reaper, listener) that runs a claimq App's tasks, and a supervisor for several processes."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from claimq import _validate
from claimq._worker.completer import Outcome, complete_loop
from claimq._worker.dbcall import DB
from claimq._worker.executor import HandlerThreads, start_job
from claimq._worker.fetcher import fetch_loop, wait_any
from claimq._worker.heartbeater import beat, heartbeat_loop
from claimq._worker.notifier import start_listener
from claimq._worker.reaper import reap_loop, tidy_loop
from claimq._worker.state import InFlight, WorkerState
from claimq.app import App
from claimq.backends.base import ClaimRequest, Completion, Failure, Settled
from claimq.errors import ClaimqError, LeaseLost
from claimq.job import Job

T = TypeVar("T")

log = logging.getLogger("claimq.worker")


@dataclass
class JobContext:
    """What a handler that takes `ctx` as its first parameter can see and do."""

    job: Job
    attempt: int
    worker_id: str
    _flight: InFlight = field(repr=False)
    _rt: Runtime = field(repr=False)

    @property
    def id(self) -> int:
        return self.job.id

    @property
    def idempotency_key(self) -> str:
        """Stable across retries: pass it to downstream systems so a rerun repeats no effect."""
        return self.job.effective_key

    @property
    def cancelled(self) -> bool:
        """True once an operator asked to cancel this job (seen at a heartbeat)."""
        return self._flight.cancel_requested

    @property
    def lease_lost(self) -> bool:
        return self._flight.lost

    def heartbeat(self) -> None:
        """Extend this job's lease now (from a sync handler). Raises LeaseLost."""
        result = self._rt.backend.heartbeat([self._flight.owned], self._rt.lease)
        if self.job.id in result.lost:
            raise LeaseLost(self.job.id, "heartbeat")
        self._flight.renew()
        if self.job.id in result.cancel_requested:
            self._flight.cancel_requested = True

    async def aheartbeat(self) -> None:
        await asyncio.to_thread(self.heartbeat)

    def complete_in(self, conn: Any, result: Any = None) -> None:
        """Complete the job inside the caller's open transaction on `conn` (a sqlite3 or psycopg
        connection), so the handler's business writes and the completion commit together.
        Raises LeaseLost (roll back!) when the job is no longer ours."""
        done = Completion(self.job.id, self._flight.owned.token, _validate.result_json(result))
        if self.job.id not in self._rt.backend.complete([done], conn):
            raise LeaseLost(self.job.id, "complete")
        self._flight.completed_by_handler = True


@dataclass
class Runtime:
    """Everything the loops share."""

    app: App
    queues: list[str] | None
    concurrency: int
    lease: float | None
    poll_interval: float
    grace: float
    batch: int
    worker_id: str
    state: WorkerState
    db: DB
    handler_pool: HandlerThreads
    outcomes: list[Outcome] = field(default_factory=list)  # waiting for the completer
    outcomes_ready: asyncio.Event = field(default_factory=asyncio.Event)
    outcomes_closed: bool = False
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    listener_stop: threading.Event = field(default_factory=threading.Event)
    default_lease: float = 30.0
    hints: set[asyncio.Future[None]] = field(default_factory=set)
    # A claim whose answer never came (connection lost): it may have claimed jobs in the
    # database that this worker does not know of. No new claims until recover_claims() ran.
    claims_unknown: bool = False
    recovering: bool = False
    writes: int = 0  # outcome writes on their way (each claims for the slots free then)
    settle_on_loop: bool = False  # the backend's asettle, on this loop's own connections

    @property
    def backend(self) -> Any:
        return self.app.backend

    @property
    def heartbeat_interval(self) -> float:
        leases = [f.lease_seconds for f in self.state.jobs.values()] or [
            self.lease or self.default_lease
        ]
        # A third of the shortest lease, and at least every 2 s so that a cancel requested from
        # another machine is seen promptly; one statement covers every job in flight.
        return max(min(min(leases) / 3.0, 2.0), 0.05)

    @property
    def reap_interval(self) -> float:
        return max(min(self.lease or self.default_lease, 60.0) / 2.0, 0.5)

    def cancel_hint(self, job_id: str) -> None:
        """A cancel was requested somewhere for `job_id`: if we hold it, heartbeat now."""
        if job_id.isdigit() and int(job_id) in self.state.jobs:
            task = asyncio.ensure_future(beat(self))
            self.hints.add(task)
            task.add_done_callback(self.hints.discard)

    def reserve_slots(self) -> int:
        """Promise free slots to a claim about to be made (so two claims never overshoot)."""
        if self.state.stopping.is_set() or self.claims_unknown:
            return 0
        n = min(self.state.free, self.batch)
        self.state.reserved += n
        return n

    async def settle(
        self, done: Sequence[Completion], failures: Sequence[Failure], claim: ClaimRequest | None
    ) -> Settled:
        """Writes outcomes and claims for free slots (either may be empty), in one round trip:
        on the loop where the backend can (PostgreSQL), else in a database thread. A claim
        whose answer is lost leaves this worker's claims unknown."""
        try:
            if self.settle_on_loop:
                return await self.backend.asettle(done, failures, claim)  # type: ignore[no-any-return]
            settled: Settled = await self.db.call(self.backend.settle, done, failures, claim)
            return settled
        except Exception:
            if claim is not None:
                self.claims_unknown = True
            raise

    async def claim(self, wanted: int) -> list[Job]:
        """Claims and starts (one statement) up to `wanted` jobs: every one has a free slot."""
        claim = ClaimRequest(self.worker_id, self.queues, wanted, self.lease, True)
        return (await self.settle((), (), claim)).claimed

    async def recover_claims(self) -> None:
        """After a claim whose answer never came, once no other claim is on its way: hand back
        the jobs the database says this worker holds (leases running) but it does not know of,
        rather than leave them to wait out their leases. Their attempts are not counted."""
        if not self.claims_unknown or self.recovering or self.state.reserved:
            return
        self.recovering = True
        try:
            orphans = await self.db.retry(
                "finding lost claims", self.backend.orphaned, self.worker_id,
                list(self.state.jobs), give_up=self.state.stopping.is_set,
            )
            if orphans:
                released = await self.db.retry(
                    "releasing lost claims", self.backend.release, orphans, 0.0,
                    give_up=self.state.stopping.is_set,
                )
                self.state.count("lost_claims_released", len(released))
                log.warning("handed back %d job(s) claimed by a call whose answer was lost",
                            len(released))
            self.claims_unknown = False
            self.state.slots_free.set()
        except ClaimqError:
            pass  # stopping while the database is away: the leases recover those jobs
        finally:
            self.recovering = False

    def submit(self, outcome: Outcome) -> None:
        self.state.finish(outcome.flight)
        self.outcomes.append(outcome)
        self.outcomes_ready.set()

    def abandon(self, flight: InFlight, why: str) -> None:
        """Give a job up without reporting anything: someone else owns it now (or will)."""
        if flight.lost:
            return
        flight.lost = True
        self.state.count("lease_lost")
        log.warning("job %s abandoned: %s", flight.job.id, why)
        if flight.task is not None and not flight.task.done():
            flight.task.cancel()
        if flight.task is None or flight.task.done():
            self.state.forget(flight.job.id)

    async def start_jobs(self, jobs: list[Job]) -> None:
        flights = []
        lease_len = 0.0
        seen: tuple[datetime | None, datetime | None] = (None, None)
        now = time.monotonic()  # one claim: its leases all began together
        for job in jobs:
            if (job.lease_until, job.updated_at) != seen:  # one claim: the same for every job
                seen = (job.lease_until, job.updated_at)
                lease_len = _lease_length(job, self.lease or self.default_lease)
            flight = InFlight(job, lease_seconds=lease_len, lease_deadline=now + lease_len)
            self.state.jobs[job.id] = flight
            flights.append(flight)
        if self.state.stopping.is_set():
            await self.release(flights)
            return
        # Claimed with start=True: every job is already processing, its attempt counted.
        for f in flights:
            f.attempt = f.job.attempts
            f.started = True
            start_job(self, f)
        self.state.count("started", len(flights))

    async def release(self, flights: Sequence[InFlight]) -> None:
        """Hand jobs back to pending (attempt not counted); they are no longer ours either way."""
        flights = [f for f in flights if not f.lost]
        if not flights:
            return
        for f in flights:
            f.lost = True  # from here on, nothing this process does may report an outcome
        try:
            released = await self.db.retry(
                "release", self.backend.release, [f.owned for f in flights], 0.0,
                give_up=lambda: all(time.monotonic() > f.lease_deadline for f in flights),
            )
            self.state.count("released", len(released))
        except Exception:  # noqa: BLE001 - leases run out; the reaper recovers them
            log.warning("could not release %d job(s); their leases will expire", len(flights))
        for f in flights:
            self.state.forget(f.job.id)


def _lease_length(job: Job, fallback: float) -> float:
    if job.lease_until is not None and job.updated_at is not None:
        return max((job.lease_until - job.updated_at).total_seconds(), 0.05)
    return fallback


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Worker:
    """Runs an App's tasks. `Worker(app).run()` blocks until SIGTERM/SIGINT (graceful: stop
    claiming, release fetched jobs, give running ones `grace` seconds, then release them; a
    second signal stops at once and leaves the jobs to lease expiry)."""

    def __init__(
        self,
        app: App,
        *,
        queues: Sequence[str] | None = None,
        concurrency: int = 10,
        lease: float | None = None,
        poll_interval: float = 1.0,
        grace: float = 30.0,
        batch: int | None = None,
        worker_id: str | None = None,
    ) -> None:
        self.app = app
        self.queues = None if queues is None else [_validate.queue_name(q) for q in queues]
        self.concurrency = _validate.integer(concurrency, "concurrency", 1, 10_000)
        self.lease = None if lease is None else _validate.seconds(lease, "lease", allow_zero=False)
        self.poll_interval = _validate.seconds(poll_interval, "poll_interval", allow_zero=False)
        self.grace = _validate.seconds(grace, "grace")
        self.batch = _validate.integer(batch or self.concurrency, "batch", 1, 10_000)
        self.worker_id = worker_id or default_worker_id()
        self.runtime: Runtime | None = None
        self._stop_requests = 0
        self._supervised = False  # set in a supervisor's child: only the supervisor escalates
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, *, install_signals: bool = True) -> dict[str, int]:
        """Run until stopped; returns the counters (claims, started, completed, …)."""
        return asyncio.run(self.arun(install_signals=install_signals))

    def stop(self) -> None:
        """Ask for a graceful stop (thread-safe). A second call stops at once."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._on_signal)

    def _on_signal(self) -> None:
        self._stop_requests += 1
        rt = self.runtime
        if rt is None:
            return
        if self._stop_requests == 1:
            log.info("worker %s: stopping (grace %.1fs); signal again to stop at once",
                     self.worker_id, self.grace)
            rt.state.stop()
        elif self._supervised:
            # The same stop request arriving twice: Ctrl-C signals the whole process group and
            # systemd the whole cgroup, and the supervisor forwards it as well. The supervisor
            # alone counts signals; on the second it SIGKILLs its children.
            return
        else:
            log.warning("worker %s: stopping at once; leases will recover running jobs",
                        self.worker_id)
            sys.stdout.flush()
            os._exit(130)

    async def arun(self, *, install_signals: bool = True) -> dict[str, int]:
        loop = asyncio.get_running_loop()
        self._loop = loop
        check = getattr(self.app.backend, "check_schema", None)
        if check is not None:
            check()
        rt = Runtime(
            app=self.app,
            queues=self.queues,
            concurrency=self.concurrency,
            lease=self.lease,
            poll_interval=self.poll_interval,
            grace=self.grace,
            batch=self.batch,
            worker_id=self.worker_id,
            state=WorkerState(concurrency=self.concurrency),
            db=DB(threads=4),
            handler_pool=HandlerThreads(max_workers=self.concurrency * 2),
        )
        open_async = getattr(self.app.backend, "open_async", None)
        if open_async is not None:
            await open_async()
            rt.settle_on_loop = True
        self.runtime = rt
        if install_signals and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self._on_signal)
        listener = start_listener(rt, loop)
        log.info("worker %s started: queues=%s concurrency=%d", rt.worker_id,
                 ",".join(rt.queues) if rt.queues else "*", rt.concurrency)
        background = [
            asyncio.create_task(heartbeat_loop(rt), name="claimq-heartbeat"),
            asyncio.create_task(complete_loop(rt), name="claimq-completer"),
            asyncio.create_task(reap_loop(rt), name="claimq-reaper"),
            asyncio.create_task(tidy_loop(rt), name="claimq-tidier"),
        ]
        try:
            await fetch_loop(rt)
            await self._drain(rt)
        finally:
            rt.finished.set()
            rt.listener_stop.set()
            for t in background:
                t.cancel()
            await asyncio.gather(*background, return_exceptions=True)
            rt.handler_pool.shutdown(wait=False, cancel_futures=True)
            rt.db.close()
            if rt.settle_on_loop:
                await rt.backend.close_async()
            if listener is not None:
                listener.join(timeout=2)
            if install_signals and threading.current_thread() is threading.main_thread():
                for sig in (signal.SIGTERM, signal.SIGINT):
                    loop.remove_signal_handler(sig)
        log.info("worker %s stopped: %s", rt.worker_id, rt.state.counters)
        return dict(rt.state.counters)

    async def _drain(self, rt: Runtime) -> None:
        """Graceful shutdown after the fetcher stopped."""
        state = rt.state
        not_started = [f for f in state.jobs.values() if not f.started and not f.lost]
        await rt.release(not_started)
        deadline = time.monotonic() + rt.grace
        while any(not f.finished and not f.lost for f in state.jobs.values()):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            state.handler_done.clear()
            await wait_any(state.handler_done, timeout=min(remaining, 0.5))
        running = [f for f in state.jobs.values() if not f.finished and not f.lost]
        if running:
            log.warning("grace period over: handing %d running job(s) back", len(running))
            await rt.release(running)
            for f in running:
                if f.task is not None:
                    f.task.cancel()
        rt.outcomes_closed = True  # the completer writes what is waiting, then ends
        rt.outcomes_ready.set()
        completer = next(
            (t for t in asyncio.all_tasks() if t.get_name() == "claimq-completer"), None
        )
        if completer is not None:
            await asyncio.wait([completer], timeout=max(rt.default_lease, 5.0))


from claimq._processes import import_app, run_worker  # noqa: E402 - needs Worker defined

__all__ = ["JobContext", "Worker", "import_app", "run_worker"]
