"""Heartbeater: one statement per interval extends the lease of every job in flight.

A claim the database no longer gives us (lost) is abandoned: its result is never reported. A
row locked by another transaction is skipped for this round (busy), neither renewed nor lost,
so one job's lock never costs another job its lease. A cancel requested (from any machine) is
passed to the job here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from claimq._worker.dbcall import DB, is_transient
from claimq._worker.inflight import Counters, InFlight, Registry
from claimq._worker.service import Service
from claimq.backends.base import Backend

log = logging.getLogger("claimq.worker")

MAX_INTERVAL = 2.0  # a cancel requested from another machine is seen this promptly
MIN_INTERVAL = 0.05


class Heartbeater(Service):
    name = "heartbeater"

    def __init__(
        self,
        backend: Backend,
        db: DB,
        registry: Registry,
        counters: Counters,
        *,
        lease: float | None,
        default_lease: float,
        abandon: Callable[[InFlight, str], None],
        cancel: Callable[[InFlight], None],
        finished: asyncio.Event,
    ) -> None:
        self.backend = backend
        self.db = db
        self.registry = registry
        self.counters = counters
        self.lease = lease
        self.default_lease = default_lease
        self.abandon = abandon
        self.cancel = cancel
        self.finished = finished
        self._hints: set[asyncio.Task[None]] = set()
        self._unreachable_since: float | None = None

    @property
    def interval(self) -> float:
        leases = [f.lease_seconds for f in self.registry] or [self.lease or self.default_lease]
        return max(min(min(leases) / 3.0, MAX_INTERVAL), MIN_INTERVAL)

    async def run(self) -> None:
        while not self.finished.is_set():
            await asyncio.sleep(self.interval)
            await self.beat()

    def cancel_hint(self, job_id: str) -> None:
        """A cancel was requested somewhere for `job_id`: if we hold it, heartbeat now."""
        if job_id.isdigit() and self.registry.newest(int(job_id)) is not None:
            task = asyncio.ensure_future(self.beat())
            self._hints.add(task)
            task.add_done_callback(self._hints.discard)

    async def beat(self) -> None:
        held = self.registry.held()
        if not held:
            return
        sent = time.monotonic()
        try:
            result = await self.db.call(self.backend.heartbeat, [f.owned for f in held],
                                        self.lease)
        except Exception as exc:
            if not is_transient(exc):
                raise
            self._unreachable(exc)
            now = time.monotonic()
            for f in held:
                if now > f.lease_deadline:
                    self.abandon(f, "its lease ran out while the database was unreachable")
            return
        if self._unreachable_since is not None:
            log.warning("database.reachable: heartbeats go through again",
                        extra={"event": "database.reachable"})
            self._unreachable_since = None
        self.counters.add("heartbeats")
        for f in held:
            job_id = f.job.id
            if self.registry.newest(job_id) is not f:
                # An earlier claim of a job this worker claimed again (that one finished, its
                # outcome on its way): the answer, by job id, is the newer claim's. Its token is
                # no longer the job's; the completer's guarded write settles it.
                continue
            if job_id in result.lost:
                # A finished job may have been completed while this heartbeat ran: for those
                # the completer's own guarded write tells whether the lease was lost. A handler
                # that completed its job in its own transaction did so as the owner.
                if not f.finished and not f.completed_by_handler:
                    self.abandon(f, "lease lost (reaped, cancelled or re-owned elsewhere)")
            elif job_id in result.alive:
                f.renew(sent)
                if job_id in result.cancel_requested and not f.cancel_requested:
                    log.info("job %s: cancel requested", job_id)
                    self.cancel(f)
            # else busy: locked by another transaction; tried again next round

    def _unreachable(self, exc: BaseException) -> None:
        if self._unreachable_since is None:
            self._unreachable_since = time.monotonic()
            log.warning("database.unreachable: heartbeat failed (%s); leases run out unless it "
                        "answers again in time", exc, extra={"event": "database.unreachable"})
