"""The app that the worker tests run in real worker processes.

`python -c "import worker_testapp; worker_testapp.main()"` (with this folder on the path) runs a
worker on `CLAIMQ_DATABASE_URL` with the Worker options given as JSON in `CLAIMQ_TEST_WORKER`
(`{"processes": N}` runs the multi-process supervisor instead). It logs at INFO to stderr; the
handlers log `handler-start <id>` and similar markers the tests wait for.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from typing import Any

from claimq import App, Permanent, Retry
from claimq.worker import JobContext, Worker, run_worker

app = App()  # CLAIMQ_DATABASE_URL; the backend opens lazily, in whichever process uses it
log = logging.getLogger("worker_testapp")


def _mark(ctx: JobContext, what: str) -> None:
    log.info("%s %s attempt=%s", what, ctx.id, ctx.attempt)


@app.task(name="t.echo_sync")
def echo_sync(ctx: JobContext, x: int) -> dict[str, Any]:
    _mark(ctx, "handler-start")
    return {"x": x, "kind": "sync"}


@app.task(name="t.echo_async")
async def echo_async(ctx: JobContext, x: int) -> dict[str, Any]:
    _mark(ctx, "handler-start")
    await asyncio.sleep(0)
    return {"x": x, "kind": "async"}


@app.task(name="t.sleep_sync")
def sleep_sync(ctx: JobContext, seconds: float) -> dict[str, Any]:
    _mark(ctx, "handler-start")
    time.sleep(seconds)
    _mark(ctx, "handler-end")
    return {"slept": seconds}


@app.task(name="t.sleep_async")
async def sleep_async(ctx: JobContext, seconds: float) -> dict[str, Any]:
    _mark(ctx, "handler-start")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        _mark(ctx, "handler-cancelled")
        raise
    _mark(ctx, "handler-end")
    return {"slept": seconds}


@app.task(name="t.sleep_on_first")
async def sleep_on_first(ctx: JobContext, seconds: float) -> dict[str, Any]:
    """Sleeps on its first attempt only, so a rerun after a crash finishes at once."""
    _mark(ctx, "handler-start")
    if ctx.attempt == 1:
        await asyncio.sleep(seconds)
    return {"attempt": ctx.attempt}


@app.task(name="t.slow_with_timeout", timeout=0.3)
async def slow_with_timeout(ctx: JobContext, seconds: float) -> None:
    _mark(ctx, "handler-start")
    await asyncio.sleep(seconds)


@app.task(name="t.flaky")
def flaky(ctx: JobContext, fail_times: int) -> dict[str, Any]:
    _mark(ctx, "handler-start")
    if ctx.attempt <= fail_times:
        raise RuntimeError(f"attempt {ctx.attempt} fails on purpose")
    return {"attempt": ctx.attempt}


@app.task(name="t.retry_once")
async def retry_once(ctx: JobContext) -> dict[str, Any]:
    _mark(ctx, "handler-start")
    if ctx.attempt == 1:
        raise Retry(after=0.2, reason="not yet")
    return {"attempt": ctx.attempt}


@app.task(name="t.permanent")
def permanent(ctx: JobContext) -> None:
    _mark(ctx, "handler-start")
    raise Permanent("this input can never work")


@app.task(name="t.poll_cancel_sync")
def poll_cancel_sync(ctx: JobContext, seconds: float) -> str:
    """A sync handler that cooperates with cancellation by polling ctx.cancelled."""
    _mark(ctx, "handler-start")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ctx.cancelled:
            _mark(ctx, "handler-saw-cancel")
            raise RuntimeError("stopping: cancel requested")
        time.sleep(0.02)
    return "ran to the end"


def _stop_while_replacing(moment: str, processes: int) -> None:
    """Fault injection for the supervisor (option `stop_while`): its first child is killed
    as soon as it has started, and the supervisor gets its SIGTERM just before its replacement
    starts ("restarting": at the pause before the restart) or just after ("starting")."""
    import multiprocessing.context
    import random
    import signal

    from claimq import _processes

    started: list[Any] = []
    real_start = multiprocessing.context.SpawnProcess.start

    def start(process: Any) -> None:
        real_start(process)
        started.append(process)
        if len(started) == 1:
            os.kill(process.pid, signal.SIGKILL)
        elif len(started) == processes + 1 and moment == "starting":
            os.kill(os.getpid(), signal.SIGTERM)

    class StopThenNoPause(random.Random):
        def random(self) -> float:
            os.kill(os.getpid(), signal.SIGTERM)
            return 0.0

    multiprocessing.context.SpawnProcess.start = start  # type: ignore[method-assign]
    if moment == "restarting":
        _processes.random = StopThenNoPause()  # type: ignore[assignment]


def main() -> None:
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s",
    )
    options: dict[str, Any] = json.loads(os.environ.get("CLAIMQ_TEST_WORKER", "{}"))
    processes = options.pop("processes", 1)
    if processes > 1:
        if moment := options.pop("stop_while", None):
            _stop_while_replacing(moment, processes)
        sys.exit(run_worker(app, processes=processes, app_path="worker_testapp:app", **options))
    Worker(app, **options).run()
