"""The app that the chaos tests run in real worker processes.

`python -c "import chaos_app; chaos_app.main()"` (with this folder on the path) runs a worker on
`CLAIMQ_DATABASE_URL` with the Worker options given as JSON in `CHAOS_WORKER`
(`{"processes": N}` runs claimq's multi-process supervisor instead). Handlers log
`chaos <event> <job id> attempt=<n>` markers that the tests wait for, and write into business
tables of the same database (see chaos_biz): one row per handler run (`chaos_runs`) and the side
effect keyed by the job's idempotency key (`chaos_effects`, primary key on the key).

Fault hooks, opt-in through the environment of the worker process only:
- CHAOS_LOSE_RESPONSES=complete,fail: the first complete (or fail) write of each job really
  commits, then the call raises the backend's transient error, as if the response was lost.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Any

import chaos_biz as biz

from claimq import App, LeaseLost, Permanent, RetryPolicy, Throttled
from claimq.errors import DatabaseUnavailable
from claimq.worker import JobContext, Worker, run_worker

app = App()  # CLAIMQ_DATABASE_URL; the backend opens lazily, in whichever process uses it
log = logging.getLogger("chaos")

FAST_RETRY = RetryPolicy(base=0.05, factor=2.0, cap=0.2, jitter=0.5)


def mark(ctx: JobContext, event: str) -> None:
    log.info("chaos %s %s attempt=%s", event, ctx.id, ctx.attempt)
    for handler in logging.getLogger().handlers:
        handler.flush()


def _hold(seconds: float) -> None:
    """Block (in the handler's thread) for `seconds` of wall time; SIGSTOP-safe."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.02)


@app.task(name="chaos.work", retry=FAST_RETRY, max_attempts=20)
def work(
    ctx: JobContext,
    mode: str = "atomic",
    hold_attempts: int = 0,
    hold: float = 60.0,
    hold_before_run: bool = False,
    fail_attempts: int = 0,
    fail_always: bool = False,
    sleep: float = 0.0,
    hold_conn: float = 0.0,
    rerun_sleep: float = 0.0,
    n: int = 0,
    **extra: Any,
) -> dict[str, Any] | None:
    """The business handler of every chaos scenario.

    mode "atomic": the side effect and the completion commit together (ctx.complete_in);
    mode "separate": the side effect commits on its own, then the handler returns (completion
    by the worker's completer afterwards; a crash in between makes a duplicate run).
    On attempts <= hold_attempts it blocks for `hold` seconds: before recording anything
    (hold_before_run), or after the side effect (separate), or before completing (atomic).
    hold_conn: first keep one of the app's database connections busy that long (an open
    transaction: with pool_size=1 the worker's own loops must wait for it)."""
    if hold_conn:
        with app.transaction():
            mark(ctx, "holding-connection")
            time.sleep(hold_conn)
    holding = ctx.attempt <= hold_attempts
    if hold_before_run and holding:
        mark(ctx, "holding-before-run")
        _hold(hold)
    run_id = biz.run_started(app, ctx)
    mark(ctx, "run-started")
    if sleep:
        time.sleep(sleep)
    if rerun_sleep and not holding:
        time.sleep(rerun_sleep)  # the attempts after the held ones take this long
    if fail_always or ctx.attempt <= fail_attempts:
        biz.run_ended(app, run_id, "failed")
        raise RuntimeError(f"transient failure on attempt {ctx.attempt} (job {ctx.id})")
    result = {"n": n, "attempt": ctx.attempt, "worker": ctx.worker_id}
    if mode == "separate":
        new = biz.effect(app, ctx)
        mark(ctx, "effect-done" if new else "effect-duplicate")
        if holding and not hold_before_run:
            mark(ctx, "holding")
            _hold(hold)
        biz.run_ended(app, run_id, "returned")
        mark(ctx, "returning")
        return result
    if holding and not hold_before_run:
        mark(ctx, "holding")
        _hold(hold)
    try:
        with app.transaction() as conn:
            biz.effect_in(app, conn, ctx)
            biz.run_ended_in(app, conn, run_id, "completed")
            ctx.complete_in(conn, result)
    except LeaseLost:
        biz.run_ended(app, run_id, "stale-refused")
        mark(ctx, "stale-refused")
        raise
    mark(ctx, "completed")
    return None


@app.task(name="chaos.poison", retry=FAST_RETRY, max_attempts=5)
def poison(ctx: JobContext, **payload: Any) -> None:
    run_id = biz.run_started(app, ctx)
    biz.run_ended(app, run_id, "failed")
    raise RuntimeError(f"poison job {ctx.id} fails on every attempt (this was {ctx.attempt})")


@app.task(name="chaos.permanent", retry=FAST_RETRY)
def permanent(ctx: JobContext, **payload: Any) -> None:
    raise Permanent(f"job {ctx.id}: this input can never work")


@app.task(name="chaos.echo", retry=FAST_RETRY)
def echo(ctx: JobContext, **payload: Any) -> dict[str, Any]:
    """Returns its payload; the bad-input scenario checks what comes back byte for byte."""
    return {"payload": payload, "key": ctx.idempotency_key}


@app.task(name="chaos.throttle", retry=FAST_RETRY)
def throttle(ctx: JobContext, n: int = 0, throttle: float = 0.0, sleep: float = 0.0,
             **payload: Any) -> None:
    """Raises Throttled(after=throttle) on its first attempt when `throttle` is given (the
    dependency said 429), else sleeps `sleep` s; each run is recorded like chaos.work's."""
    run_id = biz.run_started(app, ctx)
    if throttle and ctx.attempt == 1:
        biz.run_ended(app, run_id, "throttled")
        raise Throttled(after=throttle)
    time.sleep(sleep)
    biz.run_ended(app, run_id, "returned")


@app.task(name="chaos.dependent", retry=FAST_RETRY, max_attempts=1000)
def dependent(ctx: JobContext, n: int = 0, down_flag: str = "", **payload: Any) -> None:
    """Calls a dependency that is down while the file `down_flag` exists (then it fails);
    each run is recorded like chaos.work's."""
    run_id = biz.run_started(app, ctx)
    if down_flag and os.path.exists(down_flag):
        biz.run_ended(app, run_id, "failed")
        raise RuntimeError(f"job {ctx.id}: the dependency is down")
    biz.run_ended(app, run_id, "returned")


@app.task(name="chaos.raise_text", retry=FAST_RETRY)
def raise_text(ctx: JobContext, text: str) -> None:
    raise Permanent(text)


# -- fault hooks --------------------------------------------------------------------------------


def _transient_error(url: str) -> Exception:
    # What a backend raises when a connection drops: its driver's error mapped to claimq's.
    return DatabaseUnavailable("chaos: response lost after commit")


def install_response_loss(which: set[str]) -> None:
    """Wrap the backend's outcome writes: the first write of each job's completion (or failure)
    commits, then the call raises a transient error, as if the connection dropped before the
    response arrived. Jobs that the same call claimed (settle) are lost to this worker too, as
    they would be: the test finds them recovered by the reaper. Writes inside a caller's
    transaction (ctx.complete_in) are left alone: their commit comes later."""
    backend = app.backend
    lost_once: set[tuple[str, int]] = set()

    def lose(result: Any, done: Any, failures: Any, claimed: Any) -> Any:
        fresh = [("complete", d.id) for d in done if "complete" in which]
        fresh += [("fail", f.id) for f in failures if "fail" in which]
        fresh = [k for k in fresh if k not in lost_once]
        if not fresh:
            return result
        lost_once.update(fresh)
        for what in ("complete", "fail"):
            ids = [i for w, i in fresh if w == what]
            if ids:
                log.info("chaos response-lost %s %s", what, " ".join(map(str, ids)))
        if claimed:
            log.info("chaos response-lost claimed %s", " ".join(str(j.id) for j in claimed))
        raise _transient_error(backend.url)

    if hasattr(backend, "settle"):
        real_settle = backend.settle

        def settle(done: Any, failures: Any, claim: Any = None) -> Any:
            result = real_settle(done, failures, claim)
            return lose(result, done, failures, result.claimed)

        backend.settle = settle  # type: ignore[method-assign]
    if hasattr(backend, "asettle"):  # PostgreSQL: the worker's own path, on its event loop
        real_asettle = backend.asettle

        async def asettle(done: Any, failures: Any, claim: Any = None) -> Any:
            result = await real_asettle(done, failures, claim)
            return lose(result, done, failures, result.claimed)

        backend.asettle = asettle  # type: ignore[method-assign]

    real_complete, real_fail = backend.complete, backend.fail

    def complete(done: Any, conn: Any = None) -> Any:
        result = real_complete(done, conn)
        return result if conn is not None else lose(result, done, [], [])

    def fail(failures: Any) -> Any:
        return lose(real_fail(failures), [], failures, [])

    backend.complete = complete  # type: ignore[method-assign]
    backend.fail = fail  # type: ignore[method-assign]


def remove_completion_fence() -> None:
    """CHAOS_MUTATE=no_fence: this worker's completions no longer check the claim token. Only
    for the self-check that proves the suite notices a broken fence; fails loudly when the SQL
    it patches has changed shape."""
    backend = app.backend
    if backend.kind == "postgresql":
        q = backend._q  # type: ignore[attr-defined]
        fence = "AND j.claim_token = o.token "
        assert fence in q.settle, "settle.sql changed: update the no_fence mutation"
        q.settle = q.settle.replace(fence, "")
    else:
        import claimq.backends.sqlite.backend as sqlite_backend

        q = sqlite_backend._Q
        fence = "AND j.claim_token = d.value ->> 1"
        assert fence in q.complete_archive, "complete_archive.sql changed: update no_fence"
        q.complete_archive = q.complete_archive.replace(fence, "")
    log.warning("chaos mutation: completions are not fenced by the claim token")


@app.task(name="chaos.step", retry=FAST_RETRY, max_attempts=20)
def step(ctx: JobContext, node: int, fail: bool = False, sleep: float = 0.0) -> int:
    """A workflow job of test_chaos_workflow: each run recorded like chaos.work's (start and
    end times, the token it ran under); `fail` ends it in dead letters (Permanent)."""
    run_id = biz.run_started(app, ctx)
    if sleep:
        _hold(sleep)
    if fail:
        biz.run_ended(app, run_id, "failed")
        raise Permanent(f"node {node} fails by design")
    biz.run_ended(app, run_id, "succeeded")
    return node


def main() -> None:
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s",
    )
    options: dict[str, Any] = json.loads(os.environ.get("CHAOS_WORKER", "{}"))
    lose = {w for w in os.environ.get("CHAOS_LOSE_RESPONSES", "").split(",") if w}
    if lose:
        install_response_loss(lose)
    if os.environ.get("CHAOS_MUTATE") == "no_fence":
        remove_completion_fence()
    processes = options.pop("processes", 1)
    if processes > 1:
        sys.exit(run_worker(app, processes=processes, app_path="chaos_app:app", **options))
    Worker(app, **options).run()
