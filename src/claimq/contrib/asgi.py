"""claimq in an ASGI application (Starlette, FastAPI, …): enqueue from request handlers with
`await task.aenqueue(...)` / `await app.aenqueue(...)`, and optionally run a worker inside the
server's process, started and stopped by the application's lifespan::

    from starlette.applications import Starlette
    from claimq.contrib.asgi import lifespan

    web = Starlette(routes=[...], lifespan=lifespan(app, concurrency=10))

or, inside a lifespan of your own, `async with running_worker(app): yield`.

The worker shares the server's event loop: handlers that block it stall requests too (see the
README's "Blocking calls"). In production, workers usually run as their own processes
(`claimq worker`); an in-process worker suits small deployments and development.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from claimq.app import App
from claimq.errors import DatabaseUnavailable, InvalidInput

log = logging.getLogger("claimq.worker")


@asynccontextmanager
async def running_worker(app: App, *, migrate: bool = False, **worker_options: Any
                         ) -> AsyncIterator[Any]:
    """A `claimq.Worker(app, **worker_options)` running on this event loop for the block
    (yields it); graceful stop at the end (`grace` seconds for running jobs, default 30).
    `migrate=True` migrates the schema first. A worker that cannot start (schema missing)
    raises here; one that fails later is logged."""
    from claimq.worker import Worker

    if not isinstance(app, App):
        raise InvalidInput(f"expected a claimq App, got {app!r}")
    if migrate:
        await asyncio.to_thread(app.migrate)
    # A schema that is missing fails the startup now; a database not reachable yet does not:
    # the worker waits for it, with back-off, and says so.
    with contextlib.suppress(DatabaseUnavailable):
        await asyncio.to_thread(app.backend.check_schema)
    worker = Worker(app, **worker_options)
    task = asyncio.create_task(worker.arun(install_signals=False), name="claimq-worker")
    task.add_done_callback(_report)
    try:
        yield worker
    finally:
        worker.stop()
        await asyncio.wait([task])


def _report(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("the in-process claimq worker stopped", exc_info=task.exception())


def lifespan(app: App, *, worker: bool = True, migrate: bool = False, **worker_options: Any
             ) -> Callable[[Any], AbstractAsyncContextManager[None]]:
    """A lifespan for `Starlette(lifespan=...)` / `FastAPI(lifespan=...)`: migrates first
    when `migrate=True`, runs an in-process worker (`Worker` options as keywords) unless
    `worker=False`."""

    @asynccontextmanager
    async def run(_asgi_app: Any) -> AsyncIterator[None]:
        if not worker:
            if migrate:
                await asyncio.to_thread(app.migrate)
            yield
            return
        async with running_worker(app, migrate=migrate, **worker_options):
            yield

    return run


__all__ = ["lifespan", "running_worker"]
