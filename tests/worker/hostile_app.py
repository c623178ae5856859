"""Hostile handlers: ordinary handler code and ordinary mistakes, run by real worker processes.

`python -c "import hostile_app; hostile_app.main()"` (with tests/worker and tests/chaos on the
path) runs a worker on `CLAIMQ_DATABASE_URL` with the Worker options given as JSON in
`CLAIMQ_TEST_WORKER`, logging at INFO to stderr.

Most handlers record each run in the chaos suite's business table `chaos_runs` (chaos_biz: job,
token, attempt, worker, pid, start, end, whether the token was current with a valid lease at
the start), so the tests check that no two attempts of a job overlap and run the chaos
invariant checker over these runs. The run is recorded *synchronously, before the handler's
first await*: the hostile construct must be entered in the handler's first step, where the
runtime's defects show (a handler that suspended first continues in a Task of its own).

The tasks are registered by `register(app)`, so that a test process can register them on its own
App too: then `app.enqueue("h.name", payload)` applies the task's defaults (queue,
max_attempts, timeout, retry), as in the worker. Handlers are module-level functions (a worker
that runs handlers in child processes finds them by name).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

_CHAOS = str(Path(__file__).resolve().parent.parent / "chaos")
if _CHAOS not in sys.path:  # chaos_biz, when imported by a test of tests/worker alone
    sys.path.insert(0, _CHAOS)

import chaos_biz as biz  # noqa: E402

from claimq import App, LeaseLost, RetryPolicy  # noqa: E402
from claimq.worker import JobContext, Worker  # noqa: E402

log = logging.getLogger("hostile")
FAST_RETRY = RetryPolicy(base=0.05, factor=2.0, cap=0.2, jitter=0.5)
SINGLE_QUEUE = "single"  # the tests configure it with max_workers=1

app = App()  # CLAIMQ_DATABASE_URL; the backend opens lazily, in whichever process uses it


def mark(ctx: JobContext, event: str, **extra: Any) -> None:
    more = "".join(f" {k}={v}" for k, v in extra.items())
    log.info("hostile %s %s attempt=%s%s", event, ctx.id, ctx.attempt, more)
    for handler in logging.getLogger().handlers:
        handler.flush()


def _app_of(ctx: JobContext) -> App:
    return app  # handlers record through the App of the worker process that runs them


# -- run records --------------------------------------------------------------------------------


def recorded_async(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """Records the run (start, then end with how it ended) around an async handler, before its
    body runs and after it ended. The records go through a thread, as an async handler's
    blocking database calls should: run_started takes a row lock (FOR SHARE) on the job, and
    waiting for a row lock on the event loop can wait on a statement of the worker's own that
    only the (then blocked) event loop can finish."""

    @functools.wraps(fn)
    async def handler(ctx: JobContext, **payload: Any) -> Any:
        the_app = _app_of(ctx)
        run_id = await asyncio.to_thread(biz.run_started, the_app, ctx)
        mark(ctx, "run-started")
        outcome = "raised"
        try:
            result = await fn(ctx, **payload)
            outcome = "returned"
            return result
        finally:
            await asyncio.shield(asyncio.to_thread(biz.run_ended, the_app, run_id, outcome))
            mark(ctx, "run-ended", outcome=outcome)

    return handler


def recorded_sync(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def handler(ctx: JobContext, **payload: Any) -> Any:
        the_app = _app_of(ctx)
        run_id = biz.run_started(the_app, ctx)
        mark(ctx, "run-started")
        outcome = "raised"
        try:
            result = fn(ctx, **payload)
            outcome = "returned"
            return result
        finally:
            biz.run_ended(the_app, run_id, outcome)
            mark(ctx, "run-ended", outcome=outcome)

    return handler


# -- timeouts and cancel scopes -----------------------------------------------------------------


@recorded_async
async def timeout_caught(ctx: JobContext) -> dict[str, Any]:
    try:
        async with asyncio.timeout(0.1):
            await asyncio.sleep(1)
    except TimeoutError:
        await asyncio.sleep(0.01)  # the task is still usable after its own timeout
        return {"timed_out": True}
    return {"timed_out": False}


@recorded_async
async def timeout_uncaught(ctx: JobContext) -> None:
    async with asyncio.timeout(0.1):
        await asyncio.sleep(1)


@recorded_async
async def wait_for_caught(ctx: JobContext) -> dict[str, Any]:
    try:
        await asyncio.wait_for(asyncio.sleep(1), 0.1)
    except TimeoutError:
        await asyncio.sleep(0.01)
        return {"timed_out": True}
    return {"timed_out": False}


@recorded_async
async def wait_for_uncaught(ctx: JobContext) -> None:
    await asyncio.wait_for(asyncio.sleep(1), 0.1)


async def _failing_child() -> None:
    await asyncio.sleep(0.05)
    raise ValueError("child fails on purpose")


@recorded_async
async def taskgroup_caught(ctx: JobContext) -> dict[str, Any]:
    caught = 0
    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(_failing_child())
            tg.create_task(asyncio.sleep(1))
    except* ValueError as group:
        caught = len(group.exceptions)
    await asyncio.sleep(0.01)
    return {"caught": caught}


@recorded_async
async def taskgroup_uncaught(ctx: JobContext) -> None:
    async with asyncio.TaskGroup() as tg:
        tg.create_task(_failing_child())
        tg.create_task(asyncio.sleep(1))


@recorded_async
async def anyio_move_on(ctx: JobContext) -> dict[str, Any]:
    import anyio

    with anyio.move_on_after(0.1) as scope:
        await anyio.sleep(1)
    await anyio.sleep(0.01)
    return {"cancelled_caught": scope.cancelled_caught}


@recorded_async
async def anyio_fail_after(ctx: JobContext) -> None:
    import anyio

    with anyio.fail_after(0.1):
        await anyio.sleep(1)


@recorded_async
async def self_cancel_uncancel(ctx: JobContext) -> dict[str, Any]:
    """Cancels its own task, catches the CancelledError and un-cancels: a handler is entitled
    to treat its own task as its own."""
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    try:
        await asyncio.sleep(1)
    except asyncio.CancelledError:
        task.uncancel()
    await asyncio.sleep(0.05)  # still runs normally afterwards
    return {"uncancelled": True}


@recorded_async
async def inner_timeout_then_job_timeout(ctx: JobContext) -> None:
    """Catches a timeout of its own, then overruns the job's timeout (task timeout=0.5 s): the
    worker's timeout must still cancel it."""
    try:
        async with asyncio.timeout(0.05):
            await asyncio.sleep(1)
    except TimeoutError:
        pass
    await asyncio.sleep(5)


# -- context variables --------------------------------------------------------------------------

VISITOR: contextvars.ContextVar[str | None] = contextvars.ContextVar("hostile_visitor",
                                                                     default=None)


@recorded_async
async def ctxvar_async(ctx: JobContext) -> dict[str, Any]:
    seen = VISITOR.get()  # set before any suspension: leaks into the runtime's context, if any
    VISITOR.set(f"job-{ctx.id}")
    await asyncio.sleep(0.05)
    return {"seen_before": seen, "after": VISITOR.get()}


@recorded_sync
def ctxvar_sync(ctx: JobContext) -> dict[str, Any]:
    seen = VISITOR.get()
    VISITOR.set(f"job-{ctx.id}")
    time.sleep(0.05)
    return {"seen_before": seen, "after": VISITOR.get()}


# -- BaseExceptions and broken exceptions -------------------------------------------------------


class BadStr(Exception):
    """An exception whose __str__ itself raises."""

    def __str__(self) -> str:
        raise RuntimeError("__str__ of BadStr fails on purpose")


@recorded_async
async def keyboard_interrupt_async(ctx: JobContext) -> None:
    raise KeyboardInterrupt


@recorded_sync
def keyboard_interrupt_sync(ctx: JobContext) -> None:
    raise KeyboardInterrupt


@recorded_async
async def system_exit_async(ctx: JobContext) -> None:
    sys.exit(3)


@recorded_sync
def system_exit_sync(ctx: JobContext) -> None:
    sys.exit(3)


@recorded_async
async def generator_exit_async(ctx: JobContext) -> None:
    raise GeneratorExit


@recorded_sync
def generator_exit_sync(ctx: JobContext) -> None:
    raise GeneratorExit


@recorded_async
async def bad_str_async(ctx: JobContext) -> None:
    raise BadStr


@recorded_sync
def bad_str_sync(ctx: JobContext) -> None:
    raise BadStr


# -- blocking and overrunning -------------------------------------------------------------------


@recorded_async
async def blocking_sleep(ctx: JobContext, seconds: float) -> dict[str, Any]:
    """Blocks the event loop (a sync sleep inside async def): no heartbeat from this loop."""
    time.sleep(seconds)
    return {"slept": seconds}


@recorded_async
async def normal_async(ctx: JobContext, seconds: float = 0.0) -> dict[str, Any]:
    await asyncio.sleep(seconds)
    return {"ok": ctx.id}


@recorded_sync
def normal_sync(ctx: JobContext, seconds: float = 0.0) -> dict[str, Any]:
    time.sleep(seconds)
    return {"ok": ctx.id}


@recorded_sync
def sync_sleep(ctx: JobContext, seconds: float) -> dict[str, Any]:
    time.sleep(seconds)
    return {"slept": seconds, "worker": ctx.worker_id}


@recorded_sync
def sync_overrun(ctx: JobContext, seconds: float = 3.0) -> dict[str, Any]:
    """Registered with timeout=1 in the max_workers=1 queue: overruns its timeout."""
    time.sleep(seconds)
    return {"slept": seconds}


@recorded_sync
def sync_quick_single(ctx: JobContext) -> dict[str, Any]:
    """The healthy job of the max_workers=1 queue."""
    return {"ok": ctx.id}


# -- file-recorded handlers (no database writes of their own) -----------------------------------


def _append(path: Path, record: dict[str, Any]) -> None:
    # One O_APPEND write per line: lines of concurrent writers never interleave.
    line = (json.dumps(record) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def isolated_sleep(folder: str, seconds: float = 10.0) -> None:
    """Registered with timeout=1 and isolation="process": sleeps past its timeout, then does
    its side effect. Takes no ctx: what a child process gets of the job is the runtime's choice.
    Records its pid at the start, and the side effect after the sleep, in files in `folder`."""
    here = Path(folder)
    _append(here / "isolated-starts.jsonl", {"pid": os.getpid(), "t": time.time()})
    time.sleep(seconds)
    _append(here / "isolated-effects.jsonl", {"pid": os.getpid(), "t": time.time()})


def file_sleep(ctx: JobContext, folder: str, seconds: float) -> dict[str, Any]:
    """Sync; records start and end of each run in `folder`/runs.jsonl (not in the database, which
    may be unreachable in the test that uses it)."""
    path = Path(folder) / "runs.jsonl"
    base = {"job": ctx.id, "attempt": ctx.attempt, "token": ctx.job.claim_token,
            "pid": os.getpid()}
    _append(path, {**base, "event": "start", "t": time.time()})
    mark(ctx, "run-started")
    time.sleep(seconds)
    _append(path, {**base, "event": "end", "t": time.time()})
    return {"slept": seconds}


# -- lease checks after a freeze (issue 12, defect 12) ------------------------------------------


def _frozen_gap(lease: float) -> Callable[[], bool]:
    """A probe that returns True on the first call after the process was frozen: a step of the
    monotonic clock (which runs on while SIGSTOPped) longer than 0.8 lease between two calls."""
    last = [time.monotonic()]

    def resumed() -> bool:
        now = time.monotonic()
        gap, last[0] = now - last[0], now
        return gap > 0.8 * lease

    return resumed


def probe_lease_sync(ctx: JobContext, lease: float, wait: float = 30.0) -> dict[str, Any]:
    """Polls until the process was frozen and resumed, then reports ctx.lease_lost at once."""
    resumed = _frozen_gap(lease)
    mark(ctx, "probe-waiting")
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        time.sleep(0.01)
        if resumed():
            mark(ctx, "probe-resumed", lease_lost=ctx.lease_lost)
            return {"lease_lost": ctx.lease_lost}
    mark(ctx, "probe-never-frozen")
    return {"lease_lost": None}


async def probe_lease_async(ctx: JobContext, lease: float, wait: float = 30.0) -> dict[str, Any]:
    """As probe_lease_sync. A heartbeat caught mid-call by the freeze can answer "lost" before
    the handler's first step after it: the worker then cancels the handler at its await, and
    the probe reports what ctx.lease_lost said at that moment (probe-cancelled)."""
    resumed = _frozen_gap(lease)
    mark(ctx, "probe-waiting")
    deadline = time.monotonic() + wait
    try:
        while time.monotonic() < deadline:
            await asyncio.sleep(0.01)
            if resumed():
                mark(ctx, "probe-resumed", lease_lost=ctx.lease_lost)
                return {"lease_lost": ctx.lease_lost}
    except asyncio.CancelledError:
        mark(ctx, "probe-cancelled", lease_lost=ctx.lease_lost)
        raise
    mark(ctx, "probe-never-frozen")
    return {"lease_lost": None}


def guarded_effect_sync(
    ctx: JobContext, folder: str, lease: float, freeze: bool = True, wait: float = 30.0
) -> dict[str, Any]:
    """Waits for the freeze (unless freeze=False), then checks ownership against the database
    right before its side effect (ctx.ensure_owned()), and only then writes the effect."""
    resumed = _frozen_gap(lease)
    mark(ctx, "guard-waiting")
    deadline = time.monotonic() + wait
    while freeze and time.monotonic() < deadline:
        time.sleep(0.01)
        if resumed():
            break
    try:
        ctx.ensure_owned()  # type: ignore[attr-defined]  # the call issue 12 asks for
    except LeaseLost:
        mark(ctx, "guard-refused")
        raise
    _append(Path(folder) / "effects.jsonl", {"job": ctx.id, "attempt": ctx.attempt,
                                          "t": time.time()})
    mark(ctx, "guard-effect")
    return {"effect": True}


async def guarded_effect_async(
    ctx: JobContext, folder: str, lease: float, freeze: bool = True, wait: float = 30.0
) -> dict[str, Any]:
    resumed = _frozen_gap(lease)
    mark(ctx, "guard-waiting")
    deadline = time.monotonic() + wait
    while freeze and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
        if resumed():
            break
    try:
        await ctx.aensure_owned()  # type: ignore[attr-defined]
    except (LeaseLost, asyncio.CancelledError):
        # Refused by its own check, or first by the worker, whose heartbeat found the lease
        # lost after the freeze and cancelled the handler: no side effect either way.
        mark(ctx, "guard-refused")
        raise
    _append(Path(folder) / "effects.jsonl", {"job": ctx.id, "attempt": ctx.attempt,
                                          "t": time.time()})
    mark(ctx, "guard-effect")
    return {"effect": True}


# -- registration -------------------------------------------------------------------------------

RETRIED = {"max_attempts": 3, "retry": FAST_RETRY}
BRIEF = {"max_attempts": 2, "retry": FAST_RETRY}

TASKS: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "h.timeout_caught": (timeout_caught, {}),
    "h.timeout_uncaught": (timeout_uncaught, RETRIED),
    "h.wait_for_caught": (wait_for_caught, {}),
    "h.wait_for_uncaught": (wait_for_uncaught, RETRIED),
    "h.taskgroup_caught": (taskgroup_caught, {}),
    "h.taskgroup_uncaught": (taskgroup_uncaught, RETRIED),
    "h.anyio_move_on": (anyio_move_on, {}),
    "h.anyio_fail_after": (anyio_fail_after, RETRIED),
    "h.self_cancel_uncancel": (self_cancel_uncancel, {}),
    "h.inner_timeout_then_job_timeout": (inner_timeout_then_job_timeout,
                                         {**BRIEF, "timeout": 0.5}),
    "h.ctxvar_async": (ctxvar_async, {}),
    "h.ctxvar_sync": (ctxvar_sync, {}),
    "h.keyboard_interrupt_async": (keyboard_interrupt_async, BRIEF),
    "h.keyboard_interrupt_sync": (keyboard_interrupt_sync, BRIEF),
    "h.system_exit_async": (system_exit_async, BRIEF),
    "h.system_exit_sync": (system_exit_sync, BRIEF),
    "h.generator_exit_async": (generator_exit_async, BRIEF),
    "h.generator_exit_sync": (generator_exit_sync, BRIEF),
    "h.bad_str_async": (bad_str_async, BRIEF),
    "h.bad_str_sync": (bad_str_sync, BRIEF),
    "h.blocking_sleep": (blocking_sleep, {"max_attempts": 3}),
    "h.normal_async": (normal_async, {}),
    "h.normal_sync": (normal_sync, {}),
    "h.sync_sleep": (sync_sleep, {"max_attempts": 5, "retry": FAST_RETRY}),
    "h.sync_overrun": (sync_overrun, {"timeout": 1, "max_attempts": 3, "retry": FAST_RETRY,
                                      "queue": SINGLE_QUEUE}),
    "h.sync_quick_single": (sync_quick_single, {"queue": SINGLE_QUEUE}),
    "h.file_sleep": (file_sleep, {"max_attempts": 5, "retry": FAST_RETRY}),
    "h.probe_lease_sync": (probe_lease_sync, RETRIED),
    "h.probe_lease_async": (probe_lease_async, RETRIED),
    "h.guarded_effect_sync": (guarded_effect_sync, RETRIED),
    "h.guarded_effect_async": (guarded_effect_async, RETRIED),
}

# The enforced timeout issue 12 (defect 5) asks for: a sync handler run in a child process
# that is killed at its timeout. Registered with `isolation="process"` where the runtime has it.
ISOLATED = ("h.isolated_sleep", isolated_sleep,
            {"timeout": 1, "max_attempts": 2, "retry": FAST_RETRY, "isolation": "process"})


def register(target: App) -> bool:
    """Registers every hostile task on `target`; returns whether `isolation="process"` was
    accepted (when not, h.isolated_sleep is registered without it, as a plain sync handler)."""
    for name, (fn, options) in TASKS.items():
        target.task(name=name, **options)(fn)
    name, fn, options = ISOLATED
    try:
        target.task(name=name, **options)(fn)
        return True
    except TypeError:  # App.task() has no isolation= yet
        plain = {k: v for k, v in options.items() if k != "isolation"}
        target.task(name=name, **plain)(fn)
        return False


ISOLATION_SUPPORTED = register(app)


def main() -> None:
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s",
    )
    if not ISOLATION_SUPPORTED:
        log.warning("hostile: App.task() does not accept isolation=; h.isolated_sleep runs "
                    "as a plain sync handler")
    options: dict[str, Any] = json.loads(os.environ.get("CLAIMQ_TEST_WORKER", "{}"))
    Worker(app, **options).run()
