"""Heartbeater: one statement per interval extends the lease of every job in flight.

A job the database no longer gives us (lost) is abandoned: its result is never reported. A job
whose cancel was requested (from any machine) is cancelled here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from claimq._worker.dbcall import is_transient

if TYPE_CHECKING:
    from claimq.worker import Runtime

log = logging.getLogger("claimq.worker")


async def heartbeat_loop(rt: Runtime) -> None:
    while not rt.finished.is_set():
        await asyncio.sleep(rt.heartbeat_interval)
        await beat(rt)


async def beat(rt: Runtime) -> None:
    held = [f for f in rt.state.jobs.values() if not f.lost]
    if not held:
        return
    try:
        result = await rt.db.call(rt.backend.heartbeat, [f.owned for f in held], rt.lease)
    except Exception as exc:
        if not is_transient(exc):
            raise
        now = time.monotonic()
        for f in held:
            if now > f.lease_deadline:
                rt.abandon(f, "lease ran out while the database was unreachable")
        return
    rt.state.count("heartbeats")
    for f in held:
        if f.job.id in result.lost:
            # A finished job may have been completed while this heartbeat ran: for those the
            # completer's own guarded write tells whether the lease was lost. A handler that
            # completed its job in its own transaction (ctx.complete_in) did so as the owner.
            if not f.finished and not f.completed_by_handler:
                rt.abandon(f, "lease lost (reaped, cancelled or re-owned elsewhere)")
        elif f.job.id in result.alive:
            f.renew()
            if f.job.id in result.cancel_requested and not f.cancel_requested:
                log.info("job %s: cancel requested", f.job.id)
                f.cancel_requested = True
                if f.task is not None and f.started:
                    f.task.cancel()
