"""The worker: an asyncio runtime of small services (fetcher, executor, heartbeater, completer,
reaper, tidier, scheduler, pruner, listener) under one supervisor, that runs a claimq App's
tasks."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from claimq import _tracing, _validate
from claimq._processes import import_app, supervise
from claimq._version import __version__
from claimq._worker.claims import Claims
from claimq._worker.completer import WRITERS, WRITERS_CONCURRENT, Completer, Outcomes
from claimq._worker.dbcall import DB
from claimq._worker.executor import Executor
from claimq._worker.exporter import StatsExporter
from claimq._worker.fetcher import Fetcher, wait_any
from claimq._worker.heartbeater import Heartbeater
from claimq._worker.inflight import Counters, InFlight, Registry
from claimq._worker.listener import Listener
from claimq._worker.presence import Presence
from claimq._worker.pruner import Pruner
from claimq._worker.reaper import Reaper, Tidier
from claimq._worker.scheduler import Scheduler
from claimq._worker.service import Service, Supervisor
from claimq.app import App
from claimq.backends.base import Backend, Completion, Dependency, WorkerRecord
from claimq.errors import DatabaseUnavailable, InvalidInput, LeaseLost, WorkerFailed
from claimq.job import Job
from claimq.workflow import Call, Workflow, spawn

log = logging.getLogger("claimq.worker")

DEFAULT_LEASE = 30.0
# Jobs claimed ahead of the free slots, at most, by default where writes run side by side (row
# locks): how many are claimed ahead still follows the handlers against the round trip
# (Registry.ahead), so only a deep backlog of handlers far faster than a round trip reaches it.
DEFAULT_PREFETCH = 480
START_BACKOFF_MAX = 30.0  # seconds between tries, at most, for a database not reachable at start


@dataclass
class JobContext:
    """What a handler that takes `ctx` as its first parameter can see and do."""

    job: Job
    attempt: int
    worker_id: str
    _flight: InFlight = field(repr=False)
    _backend: Backend = field(repr=False)
    _lease: float | None = field(repr=False)
    _loop: asyncio.AbstractEventLoop = field(repr=False)
    _abandon: Any = field(repr=False)
    _result_limit: int = field(repr=False, default=_validate.MAX_RESULT_BYTES)
    _app: App | None = field(repr=False, default=None)

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
        """True once the job is known to be no longer ours, and as soon as its lease may have
        run out: the local lease deadline passed without a renewal (a worker frozen, or cut
        off from its database). Check it, or better call ensure_owned(), before a side effect
        that must not happen twice."""
        return self._flight.lost or self._flight.lease_expired

    def ensure_owned(self) -> None:
        """Checks against the database, right now, that this attempt still owns its job, and
        extends its lease. Raises LeaseLost when it does not (or when ownership cannot be
        confirmed): call it right before an external side effect. A row lock another
        transaction holds (this worker's own heartbeat) is waited out briefly, never taken for
        a lost job. From a sync handler; async handlers await `aensure_owned()`."""
        if not self._confirm_owned():
            self._loop.call_soon_threadsafe(self._give_up)
            raise LeaseLost(self.job.id, "ensure_owned")

    async def aensure_owned(self) -> None:
        if not await asyncio.to_thread(self._confirm_owned):
            self._give_up()
            raise LeaseLost(self.job.id, "ensure_owned")

    def _confirm_owned(self) -> bool:
        if self._flight.lost:
            return False
        sent = time.monotonic()
        # Not heartbeat(): it passes over a row another transaction holds (this worker's own
        # heartbeat, say) as busy, which is no answer here; confirm_owned waits, then answers.
        result = self._backend.confirm_owned(self._flight.owned, self._lease)
        if self.job.id not in result.alive:
            return False
        self._flight.renew(sent)
        if self.job.id in result.cancel_requested:
            self._flight.cancel_requested = True
        return True

    def _give_up(self) -> None:
        # The handler learns it from LeaseLost and ends by itself: no cancellation.
        self._abandon(self._flight, "ensure_owned found the job no longer ours", cancel=False)

    def heartbeat(self) -> None:
        """Extend this job's lease now (from a sync handler). Raises LeaseLost."""
        self.ensure_owned()

    async def aheartbeat(self) -> None:
        await asyncio.to_thread(self.heartbeat)

    def progress(self, fraction: float, note: str | None = None) -> None:
        """Record how far this job is (`fraction` from 0 to 1, an optional short note), shown
        by `claimq jobs show`; from a sync handler (async ones await `aprogress()`). Raises
        LeaseLost when the job is no longer ours."""
        fraction, note = _validate.progress(fraction, note)
        if not self._backend.set_progress(self._flight.owned, fraction, note):
            raise LeaseLost(self.job.id, "progress")

    async def aprogress(self, fraction: float, note: str | None = None) -> None:
        await asyncio.to_thread(self.progress, fraction, note)

    def dependencies(self) -> list[Dependency]:
        """This workflow job's dependencies, in the order they were given: each one's id,
        task, status (succeeded, or dead under the "run" policy), result and dead reason."""
        return self._backend.dependencies(self.job.id)

    async def adependencies(self) -> list[Dependency]:
        return await asyncio.to_thread(self.dependencies)

    def spawn(self, *calls: Call | Workflow) -> list[int]:
        """Adds jobs to this job's workflow (fan-out over what it just read), in one
        transaction and only while this attempt owns the job (LeaseLost otherwise). Every
        job waiting for this one also waits for each new job. A `Workflow` passed here gives
        the new jobs dependencies among themselves; plain calls run side by side."""
        if self._app is None:
            raise InvalidInput("ctx.spawn() needs the worker's App")
        # under this attempt's span
        return spawn(self._app, self._flight.owned, calls, _tracing.current_traceparent())

    async def aspawn(self, *calls: Call | Workflow) -> list[int]:
        return await asyncio.to_thread(self.spawn, *calls)

    def complete_in(self, conn: Any, result: Any = None) -> None:
        """Complete the job inside the caller's open transaction on `conn` (a sqlite3 or psycopg
        connection), so the handler's business writes and the completion commit together.
        Raises LeaseLost (roll back!) when the job is no longer ours."""
        done = Completion(self.job.id, self._flight.owned.token,
                          _validate.result_json(result, self._result_limit))
        if self.job.id not in self._backend.complete([done], conn):
            raise LeaseLost(self.job.id, "complete")
        self._flight.completed_by_handler = True


@dataclass
class _Services:
    """A running worker's collaborators, assembled in one place (Worker._assemble)."""

    db: DB
    registry: Registry
    executor: Executor
    completer: Completer
    fetcher: Fetcher
    presence: Presence
    loops: list[Service]  # what the supervisor runs, in the order it starts them


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _db_deadline(lease: float | None) -> float:
    """How long one database call may take before the worker treats the database as away:
    well inside the lease it keeps, so it says so (and recovers) before the lease runs out."""
    return min(max((lease or DEFAULT_LEASE) / 2.0, 1.0), 15.0)


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
        prefetch: int | None = None,
        worker_id: str | None = None,
        schedules: bool = True,
        prune: bool = True,
        presence_interval: float = 5.0,
        presence_timeout: float | None = None,
        metrics_port: int | None = None,
        metrics_host: str = "127.0.0.1",
        metrics_token: str | None = None,
        metrics_no_token: bool = False,
    ) -> None:
        self.app = app
        self.schedules = bool(_validate.boolean(schedules, "schedules"))  # run the scheduler
        self.prune = bool(_validate.boolean(prune, "prune"))  # run the pruner (retention)
        self.queues = None if queues is None else [_validate.queue_name(q) for q in queues]
        self.concurrency = _validate.integer(concurrency, "concurrency", 1, 10_000)
        self.lease = None if lease is None else _validate.seconds(lease, "lease", allow_zero=False)
        self.poll_interval = _validate.seconds(poll_interval, "poll_interval", allow_zero=False)
        self.grace = _validate.seconds(grace, "grace")
        self.batch = _validate.integer(batch or self.concurrency, "batch", 1, 10_000)
        # No batch given: claims ask for the concurrency, more while jobs are claimed ahead
        # (Claims.size); a batch given is every claim's size.
        self.adaptive_batch = not batch
        # Jobs claimed ahead of the slots, at most (0: none). Only while handlers end faster
        # than a claim's round trip: see Registry. The default is DEFAULT_PREFETCH (at least
        # the concurrency) where writes run side by side (row locks), none on SQLite, whose
        # single writer makes a second flow of batches wait for the first (paired runs:
        # benchmarks/README.md).
        self.prefetch = None if prefetch is None else _validate.integer(
            prefetch, "prefetch", 0, 10_000)
        self.worker_id = worker_id or default_worker_id()
        # The registry row: refreshed every presence_interval seconds; a row silent for
        # presence_timeout seconds (default: 6 intervals, at least 30 s) is marked dead.
        self.presence_interval = _validate.seconds(
            presence_interval, "presence_interval", allow_zero=False)
        self.presence_timeout = max(6 * self.presence_interval, 30.0) \
            if presence_timeout is None else _validate.seconds(
                presence_timeout, "presence_timeout", allow_zero=False)
        # Prometheus /metrics on this port while the worker runs (the `metrics` extra): this
        # worker's counters, and app.stats() while it holds the metrics lease (see
        # claimq._worker.exporter); 0 picks a free port (see metrics_address). On loopback by
        # default, and behind a bearer token (metrics_token, else CLAIMQ_METRICS_TOKEN) unless
        # metrics_no_token says to serve them to whoever reaches the port.
        self.metrics_port = None if metrics_port is None else _validate.integer(
            metrics_port, "metrics_port", 0, 65535)
        self.metrics_host = str(metrics_host)
        self.metrics_no_token = bool(_validate.boolean(metrics_no_token, "metrics_no_token"))
        self.metrics_token = metrics_token if metrics_token is not None or metrics_no_token \
            else os.environ.get(METRICS_TOKEN_ENV) or None
        if self.metrics_port is not None:
            _check_metrics_token(self.metrics_token, self.metrics_no_token)
        self._exporter: StatsExporter | None = None
        # Claims pass over the jobs of task names met and handed back (the App lacks them);
        # drain() turns it off: it ends when no job is due, so it hands such jobs back instead.
        self.skip_unknown = True
        self.metrics_address: tuple[str, int] | None = None
        self.counters = Counters()
        self.supervisor: Supervisor | None = None
        self._stop_requests = 0
        self._supervised = False  # set in a supervisor's child: only the supervisor escalates
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._failure: BaseException | None = None

    @property
    def exports_stats(self) -> bool:
        """Whether this worker's /metrics exports the cluster's queue and task gauges now (it
        holds the database's metrics lease; one worker at a time does)."""
        return self._exporter is not None and self._exporter.holds

    def run(self, *, install_signals: bool = True) -> dict[str, int]:
        """Run until stopped; returns the counters (claims, started, completed, …). Raises
        WorkerFailed when a loop failed in a way restarting cannot cure."""
        return asyncio.run(self.arun(install_signals=install_signals))

    def stop(self) -> None:
        """Ask for a graceful stop (thread-safe). A second call stops at once."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._on_signal)

    def _on_signal(self) -> None:
        self._stop_requests += 1
        if self._stopping is None:
            return
        if self._stop_requests == 1:
            log.info("worker %s: stopping (grace %.1fs); signal again to stop at once",
                     self.worker_id, self.grace)
            self._stopping.set()
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

    def _fatal(self, exc: BaseException) -> None:
        if self._failure is None:
            self._failure = exc
        if self._stopping is not None:
            self._stopping.set()

    async def arun(self, *, install_signals: bool = True) -> dict[str, int]:
        loop = asyncio.get_running_loop()
        self._loop = loop
        backend = self.app.backend
        await self._reach_database(backend)
        metrics_server = self._serve_metrics()  # first: a port in use stops the worker here
        on_loop = backend.capabilities.async_settle
        if on_loop:
            await backend.open_async()
        stopping = self._stopping = asyncio.Event()
        finished = asyncio.Event()  # the completer wrote its last outcome
        services = self._assemble(backend, loop, stopping, finished, on_loop=on_loop)
        db, registry, executor = services.db, services.registry, services.executor
        completer, fetcher, presence = services.completer, services.fetcher, services.presence
        counters = self.counters
        supervisor = self.supervisor = Supervisor(on_fatal=self._fatal)
        if install_signals and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self._on_signal)
        if self._stop_requests:
            stopping.set()  # stop() arrived before the worker was up
        log.info("worker %s started: queues=%s concurrency=%d", self.worker_id,
                 ",".join(self.queues) if self.queues else "*", self.concurrency,
                 extra={"event": "worker.started", "worker_id": self.worker_id})
        for service in services.loops:
            supervisor.start(service)
        try:
            await stopping.wait()
            executor.stopping = True
            await supervisor.join(fetcher.name)
            await self._drain(registry, executor)
            completer.close()
            await asyncio.wait_for(supervisor.join(completer.name), max(DEFAULT_LEASE, 5.0))
        finally:
            finished.set()
            await supervisor.stop(timeout=5.0)
            await presence.unregister()
            if metrics_server is not None:
                metrics_server.shutdown()
                metrics_server.server_close()
            executor.shutdown()
            db.close()
            if on_loop:
                await backend.close_async()
            if install_signals and threading.current_thread() is threading.main_thread():
                for sig in (signal.SIGTERM, signal.SIGINT):
                    loop.remove_signal_handler(sig)
        counters.values["loop_restarts"] = sum(supervisor.restarts.values())
        log.info("worker %s stopped: %s", self.worker_id, counters.values,
                 extra={"event": "worker.stopped", "worker_id": self.worker_id})
        if self._failure is not None:
            raise WorkerFailed(f"worker {self.worker_id} stopped: {self._failure!r}"
                               ) from self._failure
        return dict(counters.values)

    async def _reach_database(self, backend: Backend) -> None:
        """Checks the schema before anything starts. A database not reachable yet (the worker
        started before it, as in a fresh deployment) is waited for, with back-off (1 s doubling
        to START_BACKOFF_MAX, jittered) and a `database.unreachable` line each try, as during an
        outage; a missing or old schema (`claimq migrate`) still stops the worker at once."""
        delay, since = 1.0, time.monotonic()
        while True:
            try:
                await asyncio.to_thread(backend.check_schema)
            except DatabaseUnavailable as exc:
                if self._stop_requests:
                    raise
                wait = delay * (0.75 + random.random() / 2)
                log.warning("database.unreachable: worker %s cannot start yet (%s); trying again "
                            "in %.1fs", self.worker_id, exc, wait,
                            extra={"event": "database.unreachable", "worker_id": self.worker_id})
                await asyncio.sleep(wait)
                delay = min(delay * 2, START_BACKOFF_MAX)
                continue
            if delay > 1.0:
                log.warning("database.reachable: worker %s starts after %.1fs of waiting",
                            self.worker_id, time.monotonic() - since,
                            extra={"event": "database.reachable", "worker_id": self.worker_id})
            return

    def _assemble(self, backend: Backend, loop: asyncio.AbstractEventLoop,
                  stopping: asyncio.Event, finished: asyncio.Event, *,
                  on_loop: bool) -> _Services:
        """Builds the worker's collaborators, each after those it depends on, and the loops the
        supervisor is to run. Outcomes go from the executor to the completer through their own
        queue (Outcomes), so the completer, which starts the jobs its writes claim, is built
        after the executor."""
        counters = self.counters
        prefetch = self.prefetch
        if prefetch is None:
            prefetch = (max(self.concurrency, DEFAULT_PREFETCH) if backend.capabilities.row_locks
                        else 0)
        registry = Registry(self.concurrency, counters, prefetch)
        db = DB(deadline=_db_deadline(self.lease))
        claims = Claims(backend, db, registry, counters, worker_id=self.worker_id,
                        queues=self.queues, lease=self.lease, batch=self.batch,
                        adaptive=self.adaptive_batch,
                        on_loop=on_loop, stopping=stopping.is_set)
        outcomes = Outcomes()

        def make_context(flight: InFlight, abandon: Any) -> JobContext:
            return JobContext(job=flight.job, attempt=flight.attempt, worker_id=self.worker_id,
                              _flight=flight, _backend=backend, _lease=self.lease, _loop=loop,
                              _abandon=abandon, _result_limit=self.app.result_limit,
                              _app=self.app)

        executor = Executor(
            self.app, backend, db, registry, counters, outcomes, worker_id=self.worker_id,
            lease=self.lease, default_lease=DEFAULT_LEASE, concurrency=self.concurrency,
            make_context=make_context, skip_unknown=claims.skip if self.skip_unknown else None,
        )
        completer = Completer(backend, db, registry, counters, claims, outcomes,
                              start_jobs=executor.start,
                              writers=WRITERS_CONCURRENT if on_loop else WRITERS)
        fetcher = Fetcher(db, registry, counters, claims, completer, executor.start,
                          poll_interval=self.poll_interval, stopping=stopping)
        heartbeater = Heartbeater(backend, db, registry, counters, lease=self.lease,
                                  default_lease=DEFAULT_LEASE, abandon=executor.abandon,
                                  cancel=executor.cancel, finished=finished)
        presence = Presence(backend, db, registry, WorkerRecord(
            self.worker_id, socket.gethostname(), os.getpid(),
            None if self.queues is None else tuple(self.queues), self.concurrency, __version__,
            tasks=tuple(sorted(self.app.tasks)),
        ), interval=self.presence_interval, finished=finished)
        reap_every = max(min(self.lease or DEFAULT_LEASE, 60.0) / 2.0, 0.5)
        reaper = Reaper(backend, db, counters, interval=min(reap_every, self.presence_timeout),
                        stopping=stopping, workers_dead_after=self.presence_timeout,
                        workers_forget_after=max(self.presence_timeout * 10, 3600.0),
                        renew=heartbeater.beat)
        loops: list[Service] = [presence, heartbeater, completer, reaper,
                                Tidier(backend, db, counters, stopping=stopping), fetcher]
        if self.schedules:
            loops.append(Scheduler(self.app, db, counters, stopping=stopping))
        if self.prune:
            loops.append(Pruner(self.app, db, counters, stopping=stopping))
        if self.metrics_port is not None:
            self._exporter = StatsExporter(backend, db, self.worker_id,
                                           interval=self.presence_interval, finished=finished)
            loops.append(self._exporter)
        if backend.capabilities.listen_notify:
            loops.append(Listener(backend, self.queues, wake=fetcher.wake,
                                  cancel_hint=heartbeater.cancel_hint))
        return _Services(db, registry, executor, completer, fetcher, presence, loops)

    def _serve_metrics(self) -> Any:
        """Starts the /metrics server (a thread of its own) when metrics_port is set."""
        if self.metrics_port is None:
            return None
        from claimq.metrics import registry, serve  # first: says which extra is missing

        try:
            server = serve(registry(self.app, worker=self), self.metrics_host, self.metrics_port,
                           self.metrics_token)
        except OSError as exc:
            raise InvalidInput(f"cannot serve metrics on {self.metrics_host}:"
                               f"{self.metrics_port}: {exc}") from None
        self.metrics_address = (self.metrics_host, server.server_port)
        if self.metrics_token is None:
            log.warning("worker %s: metrics on http://%s:%d/metrics WITHOUT a token "
                        "(metrics_no_token): anyone who reaches that address may read them",
                        self.worker_id, self.metrics_host, server.server_port,
                        extra={"event": "worker.metrics"})
        else:
            log.info("worker %s: metrics on http://%s:%d/metrics (bearer token)", self.worker_id,
                     self.metrics_host, server.server_port, extra={"event": "worker.metrics"})
        return server

    async def _drain(self, registry: Registry, executor: Executor) -> None:
        """Graceful shutdown after the fetcher stopped: hand back what has not started, give
        running handlers the grace period, then hand back what still runs."""
        await executor.release([f for f in registry if not f.running and not f.finished])
        deadline = time.monotonic() + self.grace
        while any(f.running and not f.lost for f in registry):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            registry.handler_done.clear()
            await wait_any(registry.handler_done, timeout=min(remaining, 0.5))
        running = [f for f in registry if f.running and not f.lost]
        executor.giving_up = True
        if running:
            log.warning("grace period over: handing %d running job(s) back", len(running))
            await executor.release(running)


METRICS_TOKEN_ENV = "CLAIMQ_METRICS_TOKEN"


def _check_metrics_token(token: str | None, no_token: bool) -> None:
    """A served /metrics has a token of at least 16 characters, or metrics_no_token said so
    (never both, never neither: no port is opened to everyone by default)."""
    if token is not None and no_token:
        raise InvalidInput("give a metrics token or metrics_no_token=True, not both")
    if token is None and not no_token:
        raise InvalidInput(
            "metrics need a bearer token: metrics_token= (--metrics-token, or the "
            f"{METRICS_TOKEN_ENV} environment variable), or metrics_no_token=True "
            "(--metrics-no-token) to serve them to anyone who can reach the port")
    if token is not None and (not isinstance(token, str) or len(token) < 16):
        raise InvalidInput("the metrics token must be a string of at least 16 characters")


def run_worker(
    app: App,
    *,
    queues: list[str] | None = None,
    concurrency: int = 10,
    prefetch: int | None = None,
    processes: int = 1,
    lease: float | None = None,
    poll_interval: float = 1.0,
    grace: float = 30.0,
    app_path: str | None = None,
    metrics_port: int | None = None,
    metrics_host: str = "127.0.0.1",
    metrics_token: str | None = None,
    metrics_no_token: bool = False,
    log_format: str = "text",
) -> int:
    """Run one worker in this process, or a supervisor of `processes` worker processes that
    restarts any that dies. Returns an exit code: 0 after a graceful stop, 130 when a second
    signal stopped it at once (a single worker exits with 130 itself), 2 when a worker process
    could not even start (its app or options are wrong). With `metrics_port`, worker process
    i (from 0) serves /metrics on metrics_port + i."""
    options: dict[str, Any] = {
        "queues": queues, "concurrency": concurrency, "prefetch": prefetch, "lease": lease,
        "poll_interval": poll_interval, "grace": grace, "metrics_port": metrics_port,
        "metrics_host": metrics_host, "metrics_token": metrics_token,
        "metrics_no_token": metrics_no_token,
    }
    Worker(app, **options)  # validates the options before anything starts
    if processes <= 1:
        Worker(app, **options).run()
        return 0
    if app_path is None:
        raise InvalidInput("several processes need the app as module:attribute (app_path)")
    return supervise(Worker, app_path, app.url, options, processes, log_format)


__all__ = ["JobContext", "Worker", "import_app", "run_worker"]
