"""The plain forms of the Backend Protocol's optional parts, for a backend whose driver is
synchronous and whose database has no notifications (SQLite, MariaDB/MySQL): settle in a thread,
no listener (workers poll), no async connections, no streaming enqueue."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from claimq._validate import NewJob
from claimq.backends.base import ClaimRequest, Completion, Failure, Listener, Settled
from claimq.errors import InvalidInput


class PlainOptionalParts:
    """Mixed into a backend class that defines settle() and enqueue()."""

    engine = "this database"  # for messages: "SQLite", "MariaDB/MySQL"

    # The backend's own (declared here for the methods below).
    settle: Callable[..., Settled]
    enqueue: Callable[..., list[int]]

    def enqueue_streaming(
        self, count: int, jobs: Iterator[NewJob], retention: float, conn: Any = None
    ) -> list[int]:
        """No streaming (capabilities.copy_streaming is false): checks every job, then
        enqueues them in one transaction."""
        return self.enqueue(list(jobs), retention, conn)

    def is_async_connection(self, conn: Any) -> bool:
        """No async driver here."""
        return False

    async def aenqueue(self, jobs: Sequence[NewJob], retention: float, conn: Any) -> list[int]:
        """Not supported (capabilities.async_connections is false): raises InvalidInput."""
        raise InvalidInput("an async connection needs a PostgreSQL database")

    async def open_async(self) -> None:
        """Nothing to open (capabilities.async_settle is false)."""

    async def asettle(
        self,
        done: Sequence[Completion],
        failures: Sequence[Failure],
        claim: ClaimRequest | None = None,
    ) -> Settled:
        """settle() in a thread: the driver is synchronous."""
        return await asyncio.to_thread(self.settle, done, failures, claim)

    async def close_async(self) -> None:
        """Nothing to close."""

    def listen(self) -> Listener:
        """No notifications here (capabilities.listen_notify is false): the worker polls."""
        raise NotImplementedError(f"{self.engine} has no LISTEN/NOTIFY; workers poll")

    def wake_workers(self, queues: Sequence[str]) -> None:
        """Nothing to do: workers poll."""

    def listen_results(self) -> Listener:
        """No notifications here: result waiters poll (with back-off)."""
        raise NotImplementedError(f"{self.engine} has no LISTEN/NOTIFY; result waiters poll")

    def watch_results(self, job_ids: Sequence[int], waiter: str) -> None:
        """Nothing to do: waiters poll."""

    def unwatch_results(self, job_ids: Sequence[int], waiter: str) -> None:
        """Nothing to do: waiters poll."""
