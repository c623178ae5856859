"""Scheduler: every worker runs it. It writes the schedules its App declares, then about once a
second enqueues the due ticks of every schedule (app.schedules.fire_due): the schedules table's
row locks make each tick one job however many workers do so at once. When the next tick is due
sooner than the next regular pass, it sleeps until that tick instead (next_wait)."""

from __future__ import annotations

import asyncio
import logging
import random

from claimq._worker.dbcall import is_transient
from claimq._worker.service import AppLoop

log = logging.getLogger("claimq.worker")

SCHEDULE_EVERY = 1.0  # seconds between passes (jittered)
WAKE_AFTER = 0.01  # seconds past a tick's due time: the pass then finds it due


def next_wait(due_in: float | None, regular: float) -> float:
    """Seconds until the next pass: the regular (jittered) wait, or, when the next tick is due
    `due_in` seconds from now (by the database's clock) and that is sooner, until just after it.
    No schedule (None), or one still due after the pass (0 or less: another worker is firing
    it, more were due than a pass takes, or it cannot be planned), keeps the regular wait."""
    if due_in is None or due_in <= 0:
        return regular
    return min(regular, due_in + WAKE_AFTER)


class Scheduler(AppLoop):
    name = "scheduler"
    synced = False  # the App's declared schedules are written

    async def run(self) -> None:
        while not self.stopping.is_set():
            fired: dict[str, list[int]] = {}
            due_in = None
            try:
                if not self.synced:
                    await self.db.call(self.app.schedules.sync_declared)
                    self.synced = True
                fired = await self.db.call(self.app.schedules.fire_due)
                due_in = await self.db.call(self.app.schedules.next_due_in)
            except Exception as exc:
                # transient: the database is away, the heartbeater says so; this pass fires
                # what it fired and waits the regular wait
                if not is_transient(exc):
                    raise
            count = sum(len(ids) for ids in fired.values())
            if count:
                self.counters.add("scheduled", count)
                # DEBUG: a schedule every second would otherwise log every tick at INFO
                log.debug("scheduler: %d job(s) enqueued for %s", count,
                          ", ".join(sorted(fired)), extra={"event": "schedule.fired"})
            regular = SCHEDULE_EVERY * (0.5 + random.random())
            await asyncio.sleep(next_wait(due_in, regular))
