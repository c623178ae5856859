"""Fetcher: claims only as many jobs as there are free slots, then starts them.

After an empty claim it backs off with jitter up to the poll interval (never a tight loop); a
NOTIFY from an enqueue, or a freed slot, wakes it early.
"""

from __future__ import annotations

import asyncio
import functools
import random
from typing import TYPE_CHECKING

from claimq.errors import ClaimqError

if TYPE_CHECKING:
    from claimq.worker import Runtime

MIN_IDLE_WAIT = 0.05


async def wait_any(*events: asyncio.Event, timeout: float | None = None) -> None:
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waiters:
            w.cancel()


async def fetch_loop(rt: Runtime) -> None:
    state = rt.state
    idle_wait = MIN_IDLE_WAIT
    while not state.stopping.is_set():
        if rt.claims_unknown:
            await rt.recover_claims()
            if rt.claims_unknown:  # another claim still on its way, or recovery failed
                await wait_any(state.stopping, timeout=MIN_IDLE_WAIT)
                continue
        if rt.outcomes or rt.writes:
            # The completer claims for free slots when it writes outcomes (the same round trip):
            # a claim of our own now would split the batch and double the round trips.
            state.slots_free.clear()
            await state.slots_free.wait()
            continue
        wanted = rt.reserve_slots()
        if wanted <= 0:
            state.slots_free.clear()
            if state.free <= 0:
                await state.slots_free.wait()  # stop() sets it too
            continue
        state.wake.clear()  # cleared before the claim, so a NOTIFY during it is not lost
        try:
            jobs = await rt.db.retry_async(
                "claim", functools.partial(rt.claim, wanted), give_up=state.stopping.is_set)
        except ClaimqError:
            break  # stopping while the database was away
        finally:
            state.reserved -= wanted
        state.count("claims")
        if jobs:
            idle_wait = MIN_IDLE_WAIT
            await rt.start_jobs(jobs)
            continue
        await wait_any(state.wake, state.stopping, timeout=idle_wait * (0.5 + random.random() / 2))
        idle_wait = MIN_IDLE_WAIT if state.wake.is_set() else min(idle_wait * 2, rt.poll_interval)
