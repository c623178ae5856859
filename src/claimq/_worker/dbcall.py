"""Database calls from the event loop: run in a small thread pool (or, for PostgreSQL's hot path,
on the loop itself), retried through outages."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from claimq._worker.threads import Threads
from claimq.errors import ClaimqError, DatabaseUnavailable

T = TypeVar("T")
log = logging.getLogger("claimq.worker")


def is_transient(exc: BaseException) -> bool:
    """Errors that an outage or a busy database explains; anything else is a bug to surface.
    The backends classify their drivers' errors: a transient one is DatabaseUnavailable."""
    return isinstance(exc, DatabaseUnavailable)


class GaveUp(ClaimqError):
    """DB.retry stopped trying (its `give_up` said so) while the database was away."""


class DB:
    """Runs backend calls off the loop. `call` raises; `retry` keeps trying through outages.

    Every call has a deadline: a database that stops answering (a half-open connection, packets
    dropped) must not hang a loop past the leases it keeps. A call past its deadline raises
    DatabaseUnavailable; its thread is left to the driver's own socket timeouts."""

    def __init__(self, threads: int = 32, deadline: float = 10.0) -> None:
        # Threads start on demand: a few serve a worker; calls stuck on dead connections each
        # hold one, and the next call gets a fresh thread (and a fresh pooled connection).
        self.pool = Threads(max_workers=threads, name="claimq-db")
        self.outage = False
        self.deadline = deadline

    async def call(self, fn: Callable[..., T], *args: Any,
                   late: set[Future[Any]] | None = None) -> T:
        """`fn(*args)` in a thread. Past the deadline its thread runs on (it may still commit):
        with `late`, its future is kept there until it ends."""
        future = self.pool.submit(fn, *args)
        try:
            return await self.within_deadline(
                asyncio.wrap_future(future), getattr(fn, "__name__", "call"))
        except DatabaseUnavailable:
            if late is not None and not future.done():
                late.add(future)
                future.add_done_callback(late.discard)
            raise

    async def within_deadline(self, call: Awaitable[T], what: str) -> T:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(None) as timeout:  # timers, not a task per call
                when = loop.time() + self.deadline
                timer = loop.call_at(when, _expire, loop, timeout, when)
                try:
                    return await call
                finally:
                    timer.cancel()
        except TimeoutError:
            raise DatabaseUnavailable(
                f"the database did not answer {what} within {self.deadline:g}s") from None

    async def retry(
        self,
        what: str,
        fn: Callable[..., T],
        *args: Any,
        give_up: Callable[[], bool] = lambda: False,
        max_delay: float = 5.0,
    ) -> T:
        """Call until it succeeds. Transient errors back off with jitter (bounded); `give_up`
        ends the attempts early (raising GaveUp), e.g. once a lease has run out."""
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
                    raise GaveUp(f"gave up on {what} after database errors") from exc
                await asyncio.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, max_delay)
                continue
            if self.outage:
                log.warning("database reachable again (%s)", what)
                self.outage = False
            return result

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)


STALL = 0.25  # seconds late: the timer fired only once a blocked event loop ran again


def _expire(loop: asyncio.AbstractEventLoop, timeout: asyncio.Timeout, when: float) -> None:
    """A call's deadline passed. Measured across a stall of the loop itself (a handler blocking
    it), the database may have answered long ago, its answer waiting to be read: the call gets
    a little longer rather than being taken for an outage."""
    now = loop.time()
    if now - when > STALL:
        timeout.reschedule(now + STALL)
    else:
        timeout.reschedule(now)  # expires it: the call is cancelled, TimeoutError raised
