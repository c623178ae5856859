"""Reaper: every worker runs it, jittered; its statements are conditional, so twice is harmless.

The tidier too: on PostgreSQL it vacuums the jobs table once claims have left enough dead rows
(SKIP_LOCKED: workers never queue up behind each other's vacuum)."""

from __future__ import annotations

import asyncio
import logging
import random
from typing import TYPE_CHECKING

from claimq._worker.dbcall import is_transient

if TYPE_CHECKING:
    from claimq.worker import Runtime

log = logging.getLogger("claimq.worker")


async def reap_loop(rt: Runtime) -> None:
    while not rt.state.stopping.is_set():
        await asyncio.sleep(rt.reap_interval * (0.5 + random.random()))
        try:
            result = await rt.db.call(rt.backend.reap, 1000)
        except Exception as exc:
            if not is_transient(exc):
                log.exception("reaper failed")
            continue
        if result.requeued or result.dead:
            rt.state.count("reaped", len(result.requeued) + len(result.dead))
            log.info("reaper: %d expired lease(s) back to pending, %d to dead letters",
                     len(result.requeued), len(result.dead))


TIDY_EVERY = 2.0  # seconds between checks of the dead-row count (one cheap statistics query)
TIDY_MIN_DEAD = 20_000


async def tidy_loop(rt: Runtime) -> None:
    while not rt.state.stopping.is_set():
        await asyncio.sleep(TIDY_EVERY * (0.5 + random.random()))
        try:
            if await rt.db.call(rt.backend.tidy, TIDY_MIN_DEAD):
                rt.state.count("vacuums")
        except Exception as exc:
            if is_transient(exc):
                continue
            # Most likely not the table's owner: autovacuum is left to do it alone.
            log.warning("vacuuming the jobs table failed (%s); leaving it to autovacuum", exc)
            return
