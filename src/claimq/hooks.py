"""Hooks and middleware: code of yours that runs around every job a worker runs.

- `@app.on("job.started" | "job.succeeded" | "job.failed" | "job.dead")`: a function, sync or
  async, called with a `JobEvent`. "job.failed" is every failed attempt (retried or not);
  "job.dead" follows it when that failure dead-letters the job.
- `@app.middleware`: `async def mw(ctx, call_next)` wraps the handler's call (an async
  handler's, a sync one's thread, a child process): set a tenancy contextvar, open a tracing
  span, time the attempt. `return await call_next()`.

Hooks cannot change a job's outcome, and never break it: an exception a hook or a middleware
raises is logged (`hook.failed`) and the outcome is the handler's own (a middleware that never
calls `call_next` still gets the handler run after it). Events fire in the worker, before the
outcome is written: when the job shows as finished in the database its hooks have run. A job
dead-lettered by the reaper (its lease ran out) fires none. Hooks run on the worker's event
loop, sync ones called directly (a metrics counter, a log line, an error reporter's non-blocking
capture: no thread hop per event); anything that may block belongs in an async hook that
awaits it (`await asyncio.to_thread(...)`). They hold the job's slot while they run.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from claimq.errors import InvalidInput
from claimq.job import Job

if TYPE_CHECKING:
    from claimq.worker import JobContext

log = logging.getLogger("claimq.worker")

Event = Literal["job.started", "job.succeeded", "job.failed", "job.dead"]
EVENTS: tuple[Event, ...] = ("job.started", "job.succeeded", "job.failed", "job.dead")
Hook = Callable[["JobEvent"], Any]
CallNext = Callable[[], Awaitable[Any]]
Middleware = Callable[["JobContext", CallNext], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class JobEvent:
    """What a hook is told: the event, the job's context (`ctx.job`, `ctx.attempt`, …), the
    handler's return value ("job.succeeded") or its exception ("job.failed", "job.dead")."""

    name: Event
    ctx: JobContext
    result: Any = None
    error: BaseException | None = None

    @property
    def job(self) -> Job:
        return self.ctx.job

    @property
    def attempt(self) -> int:
        return self.ctx.attempt


class _Call:
    __slots__ = ("called", "error", "value")

    def __init__(self) -> None:
        self.called = False
        self.value: Any = None
        self.error: BaseException | None = None


class Hooks:
    """An App's hooks and middleware (internal: apps register through App.on/App.middleware)."""

    def __init__(self) -> None:
        self.listeners: dict[str, list[Hook]] = {e: [] for e in EVENTS}
        self.middleware: list[Middleware] = []

    def add_listener(self, event: str, fn: Hook) -> None:
        if event not in self.listeners:
            raise InvalidInput(f"unknown event {event!r}; events: {', '.join(EVENTS)}")
        if not callable(fn):
            raise InvalidInput(f"a hook must be callable, got {fn!r}")
        self.listeners[event].append(fn)

    def add_middleware(self, fn: Middleware) -> None:
        if not inspect.iscoroutinefunction(fn):
            raise InvalidInput("a middleware is an async function: async def mw(ctx, call_next)")
        self.middleware.append(fn)

    async def emit(self, event: Event, ctx: JobContext, result: Any = None,
                   error: BaseException | None = None) -> None:
        """Calls the event's hooks in order; one that raises is logged, the others still run."""
        hooks = self.listeners[event]
        if not hooks:
            return
        data = JobEvent(event, ctx, result, error)
        for hook in hooks:
            try:
                if inspect.iscoroutinefunction(hook):
                    await hook(data)
                else:
                    hook(data)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # noqa: BLE001 - user code: logged, never the job's
                _failed(f"{event} hook {_name(hook)}", ctx, exc)

    async def call(self, ctx: JobContext, invoke: Callable[[], Awaitable[Any]]) -> Any:
        """The handler's call (`invoke`) after the started hooks, through the middleware."""
        await self.emit("job.started", ctx)
        return await self._through(0, ctx, invoke)

    async def _through(self, i: int, ctx: JobContext, invoke: Callable[[], Awaitable[Any]]
                       ) -> Any:
        if i == len(self.middleware):
            return await invoke()
        mw = self.middleware[i]
        call = _Call()

        async def call_next() -> Any:
            if call.called:
                raise RuntimeError("call_next() may be called once")
            call.called = True
            try:
                call.value = await self._through(i + 1, ctx, invoke)
            except BaseException as exc:
                call.error = exc
                raise
            return call.value

        try:
            await mw(ctx, call_next)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - user code
            if exc is not call.error:
                _failed(f"middleware {_name(mw)}", ctx, exc)
        else:
            if not call.called:
                log.error("hook.failed: job %s: middleware %s did not call call_next(); the "
                          "handler runs after it", ctx.job.id, _name(mw),
                          extra={"event": "hook.failed", "job_id": ctx.job.id})
        if not call.called:
            await call_next()
        if call.error is not None:
            raise call.error
        return call.value


def _name(fn: Any) -> str:
    return str(getattr(fn, "__qualname__", None) or repr(fn))


def _failed(what: str, ctx: JobContext, exc: BaseException) -> None:
    log.error("hook.failed: job %s: %s raised %s: %s", ctx.job.id, what, type(exc).__name__, exc,
              exc_info=exc, extra={"event": "hook.failed", "job_id": ctx.job.id})


__all__ = ["EVENTS", "CallNext", "Event", "Hook", "JobEvent", "Middleware"]
