"""Hooks and middleware, run by a real worker (claimq.testing.drain) on both backends: every
event, sync and async hooks, middleware around sync and async handlers, and hooks that raise
(the job's outcome stays its handler's, the error is logged)."""

from __future__ import annotations

import contextvars
import logging
from typing import Any

import pytest

from claimq import App, JobContext, Permanent, Retry
from claimq.errors import InvalidInput
from claimq.hooks import JobEvent
from claimq.testing import drain

pytestmark = pytest.mark.timeout(60)
tenant: contextvars.ContextVar[str] = contextvars.ContextVar("tenant", default="none")


def record(app: App, seen: list[tuple[Any, ...]]) -> None:
    """A sync hook on two events and an async hook on the other two."""

    def sync_hook(event: JobEvent) -> None:
        seen.append((event.name, event.job.id, event.attempt, event.result,
                     type(event.error).__name__ if event.error else None))

    async def async_hook(event: JobEvent) -> None:
        sync_hook(event)

    app.on("job.started", sync_hook)
    app.on("job.succeeded")(async_hook)
    app.on("job.failed", sync_hook)
    app.on("job.dead", async_hook)


def test_every_event_fires_for_its_outcome(app: App) -> None:
    calls = {"flaky": 0}

    @app.task
    def ok(n: int) -> dict[str, int]:
        return {"n": n}

    @app.task(max_attempts=2)
    async def flaky() -> None:
        calls["flaky"] += 1
        raise Retry(after=0)

    @app.task
    def doomed() -> None:
        raise Permanent("no")

    seen: list[tuple[Any, ...]] = []
    record(app, seen)
    a = ok.enqueue(n=3)
    b = flaky.enqueue()
    c = doomed.enqueue()
    result = drain(app)
    assert (result.succeeded, result.retried, result.dead) == (1, 1, 2)
    by_job = {j: [s for s in seen if s[1] == j] for j in (a, b, c)}
    assert by_job[a] == [("job.started", a, 1, None, None),
                         ("job.succeeded", a, 1, {"n": 3}, None)]
    assert by_job[b] == [("job.started", b, 1, None, None),
                         ("job.failed", b, 1, None, "Retry"),
                         ("job.started", b, 2, None, None),
                         ("job.failed", b, 2, None, "Retry"),
                         ("job.dead", b, 2, None, "Retry")]
    assert by_job[c] == [("job.started", c, 1, None, None),
                         ("job.failed", c, 1, None, "Permanent"),
                         ("job.dead", c, 1, None, "Permanent")]


def test_a_job_completed_in_the_handlers_transaction_fires_succeeded(app: App) -> None:
    @app.task
    def inside(ctx: JobContext) -> None:
        with app.transaction() as conn:
            ctx.complete_in(conn, {"done": True})

    seen: list[tuple[Any, ...]] = []
    record(app, seen)
    job = inside.enqueue()
    assert drain(app).succeeded == 1
    assert [s[0] for s in seen] == ["job.started", "job.succeeded"]
    assert app.get_job(job).result == {"done": True}


@pytest.mark.parametrize("event", ["job.started", "job.succeeded", "job.failed", "job.dead"])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_hook_that_raises_changes_no_outcome_and_is_logged(
    app: App, caplog: pytest.LogCaptureFixture, event: str, kind: str
) -> None:
    @app.task
    def ok() -> str:
        return "fine"

    @app.task
    def bad() -> None:
        raise Permanent("bad")

    def broken(e: JobEvent) -> None:
        raise RuntimeError(f"hook broke on {e.name}")

    async def abroken(e: JobEvent) -> None:
        broken(e)

    later: list[str] = []
    app.on(event, broken if kind == "sync" else abroken)  # type: ignore[arg-type]
    app.on(event, lambda e: later.append(e.name))  # type: ignore[arg-type]
    good, failing = ok.enqueue(), bad.enqueue()
    with caplog.at_level(logging.ERROR, logger="claimq.worker"):
        result = drain(app)
    assert (result.succeeded, result.dead) == (1, 1)
    assert app.get_job(good).result == "fine"
    assert app.get_job(failing).reason == "permanent_error"
    assert app.get_job(failing).errors[-1]["message"] == "bad"
    failed = [r for r in caplog.records if getattr(r, "event", None) == "hook.failed"]
    assert failed and all(f"hook broke on {event}" in r.getMessage() for r in failed)
    assert later, "the hooks after the one that raised still ran"


def test_middleware_wraps_sync_and_async_handlers_in_order(app: App) -> None:
    seen: list[str] = []

    @app.middleware
    async def outer(ctx: JobContext, call_next: Any) -> Any:
        seen.append(f"outer in {ctx.job.task.rsplit('.', 1)[1]}")
        token = tenant.set(ctx.job.payload["tenant"])
        try:
            return await call_next()
        finally:
            tenant.reset(token)
            seen.append("outer out")

    @app.middleware
    async def inner(ctx: JobContext, call_next: Any) -> Any:
        seen.append("inner in")
        result = await call_next()
        seen.append(f"inner saw {result}")
        return result

    @app.task
    def sync_task(tenant: str) -> str:
        return f"sync:{globals()['tenant'].get()}"

    @app.task
    async def async_task(tenant: str) -> str:
        return f"async:{globals()['tenant'].get()}"

    a = sync_task.enqueue(tenant="acme")
    drain(app)
    b = async_task.enqueue(tenant="globex")
    drain(app)
    assert app.get_job(a).result == "sync:acme"
    assert app.get_job(b).result == "async:globex"
    assert seen == ["outer in sync_task", "inner in", "inner saw sync:acme", "outer out",
                    "outer in async_task", "inner in", "inner saw async:globex", "outer out"]


def test_middleware_that_raises_or_skips_changes_no_outcome(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    runs: list[str] = []

    @app.middleware
    async def raises_after(ctx: JobContext, call_next: Any) -> Any:
        await call_next()
        raise RuntimeError("after")

    @app.middleware
    async def swallows(ctx: JobContext, call_next: Any) -> Any:
        try:
            return await call_next()
        except Exception:  # noqa: BLE001 - what the test checks: the failure stands
            return "swallowed"

    @app.middleware
    async def skips(ctx: JobContext, call_next: Any) -> Any:
        return "skipped"

    @app.middleware
    async def raises_before(ctx: JobContext, call_next: Any) -> Any:
        raise RuntimeError("before")

    @app.task
    def ok() -> str:
        runs.append("ok")
        return "real"

    @app.task
    async def bad() -> None:
        runs.append("bad")
        raise Permanent("real failure")

    good, failing = ok.enqueue(), bad.enqueue()
    with caplog.at_level(logging.ERROR, logger="claimq.worker"):
        result = drain(app)
    assert (result.succeeded, result.dead) == (1, 1)
    assert sorted(runs) == ["bad", "ok"], "each handler ran exactly once"
    assert app.get_job(good).result == "real"
    assert app.get_job(failing).errors[-1]["message"] == "real failure"
    messages = [r.getMessage() for r in caplog.records
                if getattr(r, "event", None) == "hook.failed"]
    # (for the failing job, call_next() raised: raises_after never got to its raise)
    assert sum("raised RuntimeError: after" in m for m in messages) == 1
    assert sum("raised RuntimeError: before" in m for m in messages) == 2
    assert sum("skips did not call call_next()" in m for m in messages) == 2


def test_a_timeout_still_applies_through_middleware(app: App) -> None:
    import asyncio

    @app.middleware
    async def passthrough(ctx: JobContext, call_next: Any) -> Any:
        return await call_next()

    seen: list[tuple[Any, ...]] = []
    record(app, seen)

    @app.task(timeout=0.05, max_attempts=1)
    async def slow() -> None:
        await asyncio.Event().wait()

    job = slow.enqueue()
    assert drain(app).dead == 1
    assert app.get_job(job).reason == "timeout"
    assert [s[0] for s in seen] == ["job.started", "job.failed", "job.dead"]
    assert seen[1][4] == "JobTimeout"


def test_bad_registrations_are_refused(app: App) -> None:
    assert app.hooks is None  # the worker's only per-job cost without hooks: this check
    with pytest.raises(InvalidInput, match="unknown event 'job.done'"):
        app.on("job.done", print)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="must be callable"):
        app.on("job.started", 3)  # type: ignore[arg-type]

    def sync_mw(ctx: JobContext, call_next: Any) -> Any:
        return None

    with pytest.raises(InvalidInput, match="a middleware is an async function"):
        app.middleware(sync_mw)  # type: ignore[arg-type]


def test_middleware_and_events_around_a_process_isolated_handler(db_url: str) -> None:
    import hooked_isolated_app as module

    from claimq.testing import use_database

    seen: list[str] = []

    @module.app.middleware
    async def around(ctx: JobContext, call_next: Any) -> Any:
        seen.append("before")
        result = await call_next()
        seen.append(f"after {result}")
        return result

    record_names = [("job.started", "started"), ("job.succeeded", "succeeded")]
    for event, label in record_names:
        module.app.on(event, lambda e, label=label: seen.append(f"{label} {e.result}"))  # type: ignore[arg-type, misc]
    try:
        with use_database(module.app, db_url):
            job = module.isolated.enqueue(n=21)
            assert drain(module.app).succeeded == 1
            assert module.app.get_job(job).result == 42
    finally:
        module.app._hooks = None
    assert seen == ["started None", "before", "after 42", "succeeded 42"]
