"""The App of the least-privilege tests' `claimq worker` process (its role is in the
environment's CLAIMQ_DATABASE_URL)."""

from __future__ import annotations

from claimq import App, JobContext, Permanent, RetryPolicy

app = App()


@app.task(name="ok", queue="roles", retry=RetryPolicy(base=0.0, jitter=0.0))
def ok(ctx: JobContext, n: int = 0, fail_first: bool = False) -> int:
    if fail_first and ctx.attempt == 1:
        raise RuntimeError("first attempt fails")  # retried at once, as the worker role
    if n < 0:
        raise Permanent("negative")  # to dead letters, as the worker role
    if n == 0:
        app.enqueue("ok", {"n": 100}, queue="roles")  # a worker's handler enqueues too
    return n
