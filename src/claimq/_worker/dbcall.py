"""Database calls from the event loop: run in a small thread pool (or, for PostgreSQL's hot path,
on the loop itself), retried through outages."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from claimq.errors import ClaimqError, DatabaseUnavailable

T = TypeVar("T")
log = logging.getLogger("claimq.worker")


def is_transient(exc: BaseException) -> bool:
    """Errors that an outage or a busy database explains; anything else is a bug to surface.
    The backends classify their drivers' errors: a transient one is DatabaseUnavailable."""
    return isinstance(exc, DatabaseUnavailable)


class DB:
    """Runs backend calls off the loop. `call` raises; `retry` keeps trying through outages."""

    def __init__(self, threads: int = 4) -> None:
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="claimq-db")
        self.outage = False

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, fn, *args)

    async def retry(
        self,
        what: str,
        fn: Callable[..., T],
        *args: Any,
        give_up: Callable[[], bool] = lambda: False,
        max_delay: float = 5.0,
    ) -> T:
        """Call until it succeeds. Transient errors back off with jitter (bounded); `give_up`
        ends the attempts early (raising ClaimqError), e.g. once a lease has run out."""
        return await self.retry_async(
            what, lambda: self.call(fn, *args), give_up=give_up, max_delay=max_delay)

    async def retry_async(
        self,
        what: str,
        attempt: Callable[[], Awaitable[T]],
        *,
        give_up: Callable[[], bool] = lambda: False,
        max_delay: float = 5.0,
    ) -> T:
        """retry() for a call that runs on the loop itself (`attempt` makes each try)."""
        delay = 0.05
        while True:
            try:
                result = await attempt()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                if not self.outage:
                    log.warning("database unavailable during %s: %s; retrying", what, exc)
                self.outage = True
                if give_up():
                    raise ClaimqError(f"gave up on {what} after database errors") from exc
                await asyncio.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, max_delay)
                continue
            if self.outage:
                log.warning("database reachable again (%s)", what)
                self.outage = False
            return result

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
