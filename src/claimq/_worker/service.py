"""Services and their supervisor.

Each loop of the worker (fetcher, heartbeater, completer, reaper, tidier, scheduler, pruner,
listener) is a Service: an object that owns its state and whose `run()` is the loop. The
supervisor runs each in a task of its own; a service whose `run()` raises is logged under a
stable event name (`loop.restarted`) and started again after a back-off, so one bad call never
silently ends a loop for the rest of the worker's life. An error that restarting cannot cure
(the schema is gone) or a service that keeps failing stops the worker, which then exits
non-zero.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from claimq.errors import MigrationError

if TYPE_CHECKING:
    from claimq._worker.dbcall import DB
    from claimq._worker.inflight import Counters
    from claimq.app import App

log = logging.getLogger("claimq.worker")

RESTART_MIN = 0.05  # seconds before the first restart
RESTART_MAX = 5.0
GIVE_UP_AFTER = 20  # failures in a row, each within RESTART_WINDOW of the one before
RESTART_WINDOW = 60.0


class Service:
    """A loop with its own state. `run()` returns when the loop is done (the worker stops);
    raising means it failed and is to be started again."""

    name = "service"

    async def run(self) -> None:
        raise NotImplementedError


class AppLoop(Service):
    """A service that now and then calls its App (the scheduler, the pruner)."""

    def __init__(self, app: App, db: DB, counters: Counters, *,
                 stopping: asyncio.Event) -> None:
        self.app = app
        self.db = db
        self.counters = counters
        self.stopping = stopping


class Supervisor:
    """Starts services, restarts the ones that fail, and says so."""

    def __init__(self, on_fatal: Callable[[BaseException], None]) -> None:
        self._on_fatal = on_fatal
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.restarts: dict[str, int] = {}
        self.restarted = asyncio.Event()  # set at each restart: a signal for tests and metrics

    def start(self, service: Service) -> None:
        task = asyncio.create_task(self._keep_running(service), name=f"claimq-{service.name}")
        self._tasks[service.name] = task

    async def join(self, name: str) -> None:
        """Waits until the service `name` has returned (or was stopped)."""
        task = self._tasks.get(name)
        if task is not None:
            await asyncio.wait([task])

    async def stop(self, timeout: float | None = None) -> None:
        """Cancels every service still running and waits for them to end."""
        tasks = [t for t in self._tasks.values() if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    async def _keep_running(self, service: Service) -> None:
        failures = 0
        last_failure = 0.0
        while True:
            try:
                await service.run()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure of a loop: restart it
                now = time.monotonic()
                failures = failures + 1 if now - last_failure < RESTART_WINDOW else 1
                last_failure = now
                self.restarts[service.name] = self.restarts.get(service.name, 0) + 1
                if isinstance(exc, MigrationError) or failures >= GIVE_UP_AFTER:
                    log.critical("worker.failed: the %s loop failed and cannot recover: %r",
                                 service.name, exc, exc_info=exc,
                                 extra={"event": "worker.failed", "service": service.name})
                    self._on_fatal(exc)
                    return
                delay = min(RESTART_MIN * 2 ** (failures - 1), RESTART_MAX)
                delay *= 0.5 + random.random() / 2
                log.error("loop.restarted: the %s loop failed (%r); restarting it in %.2fs",
                          service.name, exc, delay, exc_info=exc,
                          extra={"event": "loop.restarted", "service": service.name})
                self.restarted.set()
                await asyncio.sleep(delay)
