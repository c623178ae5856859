"""Fetcher: claims only as many jobs as there are free slots, then starts them.

After an empty claim it backs off with jitter up to the poll interval (never a tight loop); a
NOTIFY from an enqueue, or a freed slot, wakes it early. While outcomes are being written it
leaves the claiming to the completer, whose write claims in the same round trip.
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Awaitable, Callable

from claimq._worker.claims import Claims
from claimq._worker.completer import Completer
from claimq._worker.dbcall import DB, GaveUp
from claimq._worker.inflight import Counters, Registry
from claimq._worker.service import Service
from claimq.job import Job

MIN_IDLE_WAIT = 0.05


async def wait_any(*events: asyncio.Event, timeout: float | None = None) -> None:
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waiters:
            w.cancel()


class Fetcher(Service):
    name = "fetcher"

    def __init__(
        self,
        db: DB,
        registry: Registry,
        counters: Counters,
        claims: Claims,
        completer: Completer,
        start_jobs: Callable[[list[Job]], Awaitable[None]],
        *,
        poll_interval: float,
        stopping: asyncio.Event,
    ) -> None:
        self.db = db
        self.registry = registry
        self.counters = counters
        self.claims = claims
        self.completer = completer
        self.start_jobs = start_jobs
        self.poll_interval = poll_interval
        self.stopping = stopping
        self.woken = asyncio.Event()  # a NOTIFY for one of our queues
        self._idle_wait = MIN_IDLE_WAIT

    def wake(self) -> None:
        self.woken.set()

    async def run(self) -> None:
        registry = self.registry
        while not self.stopping.is_set():
            if self.claims.unknown:
                await self.claims.recover()
                if self.claims.unknown:  # another claim still on its way, or recovery failed
                    await wait_any(self.stopping, timeout=MIN_IDLE_WAIT)
                    continue
            if self.completer.busy and (self.completer.waiting
                                        or registry.free < self.claims.size):
                # The completer claims for free slots when it writes outcomes (the same round
                # trip): a claim of our own now would split the batch and double the trips.
                # A whole batch free beyond its writes (claiming ahead) is a flow of its own.
                registry.slots_free.clear()
                await wait_any(registry.slots_free, self.stopping)
                continue
            wanted = self.claims.reserve()
            if wanted <= 0:
                registry.slots_free.clear()
                if registry.free <= 0:
                    await wait_any(registry.slots_free, self.stopping)
                continue
            self.woken.clear()  # cleared before the claim, so a NOTIFY during it is not lost
            try:
                jobs = await self.db.retry_async(
                    "claim", functools.partial(self._claim, wanted), give_up=self.stopping.is_set)
            except GaveUp:
                return  # stopping while the database was away
            finally:
                registry.unreserve(wanted)
            self.counters.add("claims")
            if jobs:
                self._idle_wait = MIN_IDLE_WAIT
                await self.start_jobs(jobs)
                continue
            await wait_any(self.woken, self.stopping,
                           timeout=self._idle_wait * (0.5 + random.random() / 2))
            self._idle_wait = (MIN_IDLE_WAIT if self.woken.is_set()
                               else min(self._idle_wait * 2, self.poll_interval))

    async def _claim(self, wanted: int) -> list[Job]:
        """Claims and starts (one statement) up to `wanted` jobs: every one has a free slot."""
        return (await self.claims.settle((), (), self.claims.request(wanted))).claimed
