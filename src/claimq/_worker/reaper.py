"""Reaper: every worker runs it, jittered; its statements are conditional, so twice is harmless.

Before each reap it renews the leases its own worker holds: after the event loop was blocked
(a handler calling time.sleep in `async def`) the reaper's timer may fire before the
heartbeater's, and a worker must not take back the jobs it is itself still running.

The tidier too: on PostgreSQL it vacuums the jobs table once claims have left enough dead rows
(SKIP_LOCKED: workers never queue up behind each other's vacuum)."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable

from claimq._worker.dbcall import DB, is_transient
from claimq._worker.inflight import Counters
from claimq._worker.service import Service
from claimq.backends.base import Backend

log = logging.getLogger("claimq.worker")

REAP_BATCH = 1000


class Reaper(Service):
    name = "reaper"

    def __init__(self, backend: Backend, db: DB, counters: Counters, *, interval: float,
                 stopping: asyncio.Event, workers_dead_after: float = 30.0,
                 workers_forget_after: float = 3600.0,
                 renew: Callable[[], Awaitable[None]] | None = None) -> None:
        self.backend = backend
        self.db = db
        self.counters = counters
        self.interval = interval
        self.stopping = stopping
        self.workers_dead_after = workers_dead_after  # registry rows silent this long: dead
        self.workers_forget_after = workers_forget_after  # and this long: deleted
        self.renew = renew  # the heartbeater's beat: renews this worker's own leases

    async def run(self) -> None:
        while not self.stopping.is_set():
            await asyncio.sleep(self.interval * (0.5 + random.random()))
            await self.round()

    async def round(self) -> None:
        """One pass: renew our own leases, then reap expired ones and stale registry rows."""
        if self.renew is not None:
            await self.renew()  # a database away: it says so and abandons what ran out
        try:
            result = await self.db.call(self.backend.reap, REAP_BATCH)
            marked, _ = await self.db.call(self.backend.prune_workers,
                                           self.workers_dead_after, self.workers_forget_after)
        except Exception as exc:
            if not is_transient(exc):
                raise
            return  # the database is away: the heartbeater says so
        if marked:
            log.warning("worker.dead: %d worker(s) silent for over %.1fs marked dead in the "
                        "registry", marked, self.workers_dead_after,
                        extra={"event": "worker.dead"})
        if result.requeued or result.dead:
            self.counters.add("reaped", len(result.requeued) + len(result.dead))
            log.info("reaper: %d expired lease(s) back to pending, %d to dead letters",
                     len(result.requeued), len(result.dead))


TIDY_EVERY = 2.0  # seconds between checks of the dead-row count (one cheap statistics query)
TIDY_MIN_DEAD = 20_000


class Tidier(Service):
    name = "tidier"

    def __init__(self, backend: Backend, db: DB, counters: Counters, *,
                 stopping: asyncio.Event) -> None:
        self.backend = backend
        self.db = db
        self.counters = counters
        self.stopping = stopping

    async def run(self) -> None:
        while not self.stopping.is_set():
            await asyncio.sleep(TIDY_EVERY * (0.5 + random.random()))
            try:
                if await self.db.call(self.backend.tidy, TIDY_MIN_DEAD):
                    self.counters.add("vacuums")
            except Exception as exc:
                if is_transient(exc):
                    continue
                # Most likely not the table's owner: autovacuum is left to do it alone.
                log.warning("vacuuming the jobs table failed (%s); leaving it to autovacuum",
                            exc)
                return
