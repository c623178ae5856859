"""Scheduler: every worker runs it. It writes the schedules its App declares, then about once a
second enqueues the due ticks of every schedule (app.schedules.fire_due): the schedules table's
row locks make each tick one job however many workers do so at once."""

from __future__ import annotations

import asyncio
import logging
import random

from claimq._worker.dbcall import is_transient
from claimq._worker.service import AppLoop

log = logging.getLogger("claimq.worker")

SCHEDULE_EVERY = 1.0  # seconds between passes (jittered)


class Scheduler(AppLoop):
    name = "scheduler"
    synced = False  # the App's declared schedules are written

    async def run(self) -> None:
        while not self.stopping.is_set():
            try:
                if not self.synced:
                    await self.db.call(self.app.schedules.sync_declared)
                    self.synced = True
                fired = await self.db.call(self.app.schedules.fire_due)
            except Exception as exc:
                if not is_transient(exc):
                    raise
                fired = {}  # the database is away: the heartbeater says so
            count = sum(len(ids) for ids in fired.values())
            if count:
                self.counters.add("scheduled", count)
                # DEBUG: a schedule every second would otherwise log every tick at INFO
                log.debug("scheduler: %d job(s) enqueued for %s", count,
                          ", ".join(sorted(fired)), extra={"event": "schedule.fired"})
            await asyncio.sleep(SCHEDULE_EVERY * (0.5 + random.random()))
