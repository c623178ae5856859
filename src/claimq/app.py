"""The App: holds the backend and the task registry; enqueue, claim and operator operations."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Literal, TypeVar, overload

from claimq import _audit, _retention, _tracing, _typed, _validate
from claimq._outcome import failure_for
from claimq._results import JobHandle, ResultWaiter
from claimq._specs import check_unique_for, job_spec
from claimq.backends import Backend, open_backend
from claimq.backends.base import (
    LIVE_STATES,
    UNSET,
    BreakerInfo,
    Completion,
    Failure,
    JobFilter,
    Limited,
    Owned,
    PriorityAging,
    Progress,
    QueueInfo,
    RateLimit,
    ReapResult,
    RetentionPolicy,
    StateCount,
    ThrottledKey,
    WorkerInfo,
    WorkflowInfo,
)
from claimq.clock import Clock
from claimq.errors import InvalidInput, JobNotFound, LeaseLost
from claimq.hooks import Event, Hook, Hooks, Middleware
from claimq.job import DeadReason, Job, Status
from claimq.retry import DEFAULT_RETRY, RetryPolicy
from claimq.schedules import Missed, Schedules
from claimq.schedules import default_name as default_schedule_name
from claimq.stats import DEFAULT_WINDOW, Stats, build
from claimq.task import Isolation, Task, default_name, takes_context
from claimq.workflow import Workflow, WorkflowHandle

DEFAULT_URL = "sqlite:///claimq.db"
WORKER_SILENT_AFTER = 30.0  # seconds without a refresh after which App.workers() says not alive
_WAITER_LOCK = threading.Lock()  # an App's one ResultWaiter, made once
F = TypeVar("F", bound=Callable[..., Any])


def database_url(url: str | None = None) -> str:
    return url or os.environ.get("CLAIMQ_DATABASE_URL") or DEFAULT_URL


def _isolation(value: object, func: Callable[..., Any]) -> Isolation:
    if value == "thread":
        return "thread"
    if value != "process":
        raise InvalidInput(f"isolation must be 'thread' or 'process', got {value!r}")
    if inspect.iscoroutinefunction(func):
        raise InvalidInput("isolation='process' is for sync handlers (async ones are cancelled "
                           "at their timeout)")
    if func.__module__ == "__main__" or "<locals>" in func.__qualname__:
        raise InvalidInput("isolation='process' needs a handler defined at module level in an "
                           "importable module (the child process imports it)")
    return "process"


class App:
    """A claimq application: one database, the tasks that run against it.

    `App()` uses `CLAIMQ_DATABASE_URL`, else `sqlite:///claimq.db`. `clock` (tests: a
    `claimq.clock.FakeClock`) gives the backend every time it computes. `audit_age`: how
    long the pruner keeps the operators' audit entries (None: for ever).
    """

    def __init__(
        self,
        database: str | None = None,
        *,
        idempotency_retention: float | timedelta = timedelta(hours=24),
        audit_age: float | timedelta | None = timedelta(days=30),
        payload_limit: int = _validate.MAX_PAYLOAD_BYTES,
        result_limit: int = _validate.MAX_RESULT_BYTES,
        default_max_attempts: int = 20,
        clock: Clock | None = None,
    ) -> None:
        if database is not None and not isinstance(database, str):
            raise InvalidInput(f"database must be a URL string, got {database!r}")
        self.url = database_url(database)
        self.idempotency_retention = _validate.seconds(
            idempotency_retention, "idempotency_retention"
        )
        self.audit_age = None if audit_age is None else _validate.seconds(audit_age, "audit_age")
        self.payload_limit = _validate.integer(payload_limit, "payload_limit", 2, 64 * 2**20)
        # A handler's return value past it sends the job to dead letters (permanent_error).
        self.result_limit = _validate.integer(result_limit, "result_limit", 1, 64 * 2**20)
        self.default_max_attempts = _validate.integer(
            default_max_attempts, "default_max_attempts", *_validate.MAX_ATTEMPTS_RANGE
        )
        if clock is not None and not isinstance(clock, Clock):
            raise InvalidInput(f"clock must be a claimq.clock.Clock (now()), got {clock!r}")
        self.clock = clock  # None: the system clock (on PostgreSQL, the server's)
        self.tasks: dict[str, Task[Any, Any]] = {}
        self._backend: Backend | None = None
        self._hooks: Hooks | None = None  # None until one is registered: the worker checks it
        self._waiter: ResultWaiter | None = None
        self.schedules = Schedules(self)  # the runtime API of periodic schedules
        self._pruner_id = _retention.holder()

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            self._backend = open_backend(self.url, clock=self.clock)
        return self._backend

    def close(self) -> None:
        if self._waiter is not None:
            self._waiter.close()
            self._waiter = None
        if self._backend is not None:
            self._backend.close()
            self._backend = None

    def set_url(self, url: str) -> None:
        """Points this App at the database `url`: closes what it holds open on the one it used
        (connections, the result waiter); the next call opens the new one. The one way to
        change an App's database (`claimq --database`, worker processes, the demo,
        claimq.testing.use_database all go through it)."""
        if not isinstance(url, str):
            raise InvalidInput(f"database must be a URL string, got {url!r}")
        self.close()
        self.url = url

    def __enter__(self) -> App:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transaction(self) -> AbstractContextManager[Any]:
        """A connection inside an open transaction (committed on clean exit, rolled back on an
        exception): pass it as `conn=` to enqueue or to a handler's ctx.complete_in()."""
        return self.backend.transaction()

    def migrate(self) -> list[int]:
        """Apply pending schema migrations; safe when several processes run it at once."""
        return self.backend.migrate()

    def grant(self, role: str, kind: Literal["reader", "producer", "worker", "admin"]) -> None:
        """PostgreSQL: give the database role `role` only what one kind of client needs:
        "reader" (looks: the dashboard's read-only mode), "producer" (enqueues), "worker" (runs
        jobs), "admin" (operator: also purges, resurrects, writes the audit table). Run it as
        the schema's owner, again after each migrate."""
        if not isinstance(role, str) or not 0 < len(role) <= 63 or "\x00" in role:
            raise InvalidInput(f"role must be a database role name, got {role!r}")
        if kind not in ("reader", "producer", "worker", "admin"):
            raise InvalidInput(f"kind must be reader, producer, worker or admin, got {kind!r}")
        self.backend.grant(role, kind)

    # -- hooks ---------------------------------------------------------------------------------

    @property
    def hooks(self) -> Hooks | None:
        """The hooks and middleware registered with on() and middleware(); None while there
        are none (the worker's only per-job cost without them is this check)."""
        return self._hooks

    def on(self, event: Event, fn: Hook | None = None) -> Any:
        """Register a hook (sync or async, called with a `claimq.hooks.JobEvent`) for
        "job.started", "job.succeeded", "job.failed" or "job.dead": `@app.on("job.failed")`.
        Hooks run on the worker's event loop (a sync one must not block). A hook that raises
        is logged; the job's outcome stays its handler's."""

        def register(hook: Hook) -> Hook:
            hooks = self._hooks or Hooks()
            hooks.add_listener(event, hook)
            self._hooks = hooks
            return hook

        return register if fn is None else register(fn)

    def middleware(self, fn: Middleware) -> Middleware:
        """Register `async def mw(ctx, call_next)` around every job's handler call (the first
        registered is the outermost): `@app.middleware`. It returns `await call_next()`; what
        it raises is logged, and the job's outcome stays its handler's."""
        hooks = self._hooks or Hooks()
        hooks.add_middleware(fn)
        self._hooks = hooks
        return fn

    # -- tasks ---------------------------------------------------------------------------------

    @overload
    def task(self, fn: F, /) -> Task[Any, Any]: ...
    @overload
    def task(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        queue: str = "default",
        priority: int = 0,
        max_attempts: int | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | None = None,
        isolation: Isolation = "thread",
        concurrency_key: str | None = None,
        concurrency_limit: int | None = None,
        sequence_key: str | None = None,
        on_failure: Literal["wait", "skip"] | None = None,
        rate_key: str | None = None,
    ) -> Callable[[F], Task[Any, Any]]: ...

    def task(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        queue: str = "default",
        priority: int = 0,
        max_attempts: int | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | None = None,
        isolation: Isolation = "thread",
        concurrency_key: str | None = None,
        concurrency_limit: int | None = None,
        sequence_key: str | None = None,
        on_failure: Literal["wait", "skip"] | None = None,
        rate_key: str | None = None,
    ) -> Any:
        """Register a sync or async function as a task (`@app.task` or `@app.task(...)`).

        `timeout` bounds each attempt. An async handler is cancelled at its timeout. A sync
        handler runs in a thread, which cannot be interrupted: past its timeout the attempt has
        failed, but it keeps its slot and its job is not retried until the thread returns.
        `isolation="process"` runs a sync handler in a child process instead, killed at its
        timeout (a real, enforced limit; the function must be importable at module level, its
        arguments and result picklable, and its `ctx` a read-only snapshot).

        `concurrency_key` names a payload field: at most `concurrency_limit` jobs of the
        task's queue with the same value of that field run at once, across all workers.

        `sequence_key` names a payload field: jobs of the queue with the same value of it run
        one at a time, in enqueue (id) order. `on_failure`: while a failed one waits for its
        retry, "wait" (the default) holds the rest until it has finished (completed or dead),
        "skip" lets the next start.

        `rate_key` names a payload field: the queue's `key_rate_limit` holds for each value of
        it apart, and a handler's Throttled pauses that value only."""
        for field_name, what in ((sequence_key, "sequence_key"), (rate_key, "rate_key")):
            _validate.idempotency_key(field_name, what)
        if on_failure is not None:
            if sequence_key is None:
                raise InvalidInput("on_failure needs a sequence_key")
            _validate.one_of(on_failure, "on_failure", _validate.ON_FAILURE)
        if (concurrency_key is None) != (concurrency_limit is None):
            raise InvalidInput("give concurrency_key and concurrency_limit together")
        if concurrency_key is not None:
            _validate.idempotency_key(concurrency_key, "concurrency_key")
            _validate.integer(concurrency_limit, "concurrency_limit", 1, 1_000_000)

        def register(func: Callable[..., Any]) -> Task[Any, Any]:
            task_name = _validate.task_name(name or default_name(func))
            existing = self.tasks.get(task_name)
            if existing is not None and _handler(existing) is not func:
                raise InvalidInput(f"a different function is already registered as {task_name!r}")
            wants_context = takes_context(func)
            typed = _typed.arguments(func, wants_context)
            if retry is not None and not isinstance(retry, RetryPolicy):
                raise InvalidInput("retry must be a RetryPolicy")
            t: Task[Any, Any] = Task(
                app=self,
                fn=func if typed is None else _typed.wrap(func, typed),
                name=task_name,
                queue=_validate.queue_name(queue),
                priority=_validate.integer(priority, "priority", *_validate.PRIORITY_RANGE),
                max_attempts=_validate.integer(
                    self.default_max_attempts if max_attempts is None else max_attempts,
                    "max_attempts",
                    *_validate.MAX_ATTEMPTS_RANGE,
                ),
                retry=retry or DEFAULT_RETRY,
                timeout=None if timeout is None else _validate.seconds(
                    timeout, "timeout", allow_zero=False
                ),
                wants_context=wants_context,
                isolation=_isolation(isolation, func),
                arguments=typed,
                concurrency_key=concurrency_key,
                concurrency_limit=concurrency_limit,
                sequence_key=sequence_key,
                on_failure=on_failure,
                rate_key=rate_key,
            )
            self.tasks[task_name] = t
            return t

        return register if fn is None else register(fn)

    def periodic(
        self,
        cron: str | None = None,
        *,
        every: float | timedelta | None = None,
        tz: str = "UTC",
        missed: Missed = "latest",
        name: str | None = None,
        payload: dict[str, Any] | None = None,
        **task_options: Any,
    ) -> Callable[[Callable[..., Any]], Task[Any, Any]]:
        """Runs a task on a schedule: `@app.periodic("*/5 * * * *", tz="Europe/Lisbon")` (cron,
        in that zone, DST included) or `@app.periodic(every=90)` (seconds). Registers the
        function as a task (task_options as app.task's; a Task is used as it is) and declares
        a schedule named `name` (default: the task's name, up to 55 characters) that every
        worker fires: exactly one job per tick, with `payload` as its arguments. `missed`: what
        ticks missed while no worker ran become: "latest" (one job, for the latest), "all",
        or "skip"."""

        def declare(func: Callable[..., Any]) -> Task[Any, Any]:
            t = func if isinstance(func, Task) else self.task(**task_options)(func)
            self.schedules.declare(
                name or default_schedule_name(t.name), t, cron=cron, every=every, tz=tz,
                missed=missed, payload=payload, queue=None, priority=None, max_attempts=None,
                timeout=None)
            return t

        return declare

    # -- enqueue -------------------------------------------------------------------------------

    def _new_job(self, task: str | Task[Any, Any], **options: Any) -> _validate.NewJob:
        if isinstance(task, str) and task in self.tasks:
            task = self.tasks[task]  # a registered name takes its task's defaults (queue, …)
        if isinstance(task, Task):
            base = task._job_options()
            for key, value in options.items():
                if value is not None and value != ():
                    base[key] = value
            options = base
            options["payload"] = task.dump_arguments(options.get("payload"))
            options.update(task.flow_options(options["payload"], options))
        else:
            options = {"task": task, **options}
        job = _validate.new_job(
            **options,
            default_max_attempts=self.default_max_attempts,
            payload_limit=self.payload_limit,
        )
        if job.flow is not None and job.flow.unique_for is not None:
            check_unique_for(self, job.flow.unique_for)
        return job

    def enqueue(
        self,
        task: str | Task[Any, Any],
        payload: dict[str, Any] | None = None,
        *,
        queue: str | None = None,
        priority: int | None = None,
        run_at: datetime | None = None,
        delay: float | timedelta | None = None,
        idempotency_key: str | None = None,
        max_attempts: int | None = None,
        tags: Sequence[str] = (),
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
        unique: Literal["pending", "active", "until_done"] | None = None,
        unique_for: float | timedelta | None = None,
        on_conflict: Literal["ignore", "replace"] | None = None,
        concurrency_key: str | None = None,
        concurrency_limit: int | None = None,
        sequence_key: str | None = None,
        on_failure: Literal["wait", "skip"] | None = None,
        rate_key: str | None = None,
        conn: Any = None,
    ) -> JobHandle:
        """Queue one job; returns its id (a JobHandle: an int that can also wait for the
        job's result, `.result(timeout)`). With `conn` (a sqlite3 or psycopg connection) the job
        is written inside the caller's transaction: it exists if and only if that commits. With an
        idempotency key that a job still holds, returns that job's id and writes nothing.

        Which jobs hold a key is `unique`'s: "pending" (the holder is still pending), "active"
        (pending or running), "until_done" (the default: live, or finished less than
        `unique_for` seconds ago, by default the App's idempotency_retention). With
        on_conflict="replace", a pending holder takes this call's payload and run_at
        (debounce) and its id is returned. `concurrency_key`/`concurrency_limit`: at most that
        many jobs of the queue with this key run at once, across all workers. `sequence_key`:
        jobs of the queue with this key run one at a time in enqueue order; `on_failure`
        ("wait", the default, or "skip") says whether a failed one holds the rest while it
        waits for its retry. `rate_key`: the queue's key_rate_limit holds per rate key, and a
        Throttled raised by the job's handler pauses this key only, not the queue."""
        job = self._new_job(
            task, payload=payload, queue=queue, priority=priority, run_at=run_at, delay=delay,
            idempotency_key=idempotency_key, max_attempts=max_attempts, tags=tags,
            timeout=timeout, retry=retry, unique=unique, unique_for=unique_for,
            on_conflict=on_conflict, concurrency_key=concurrency_key,
            concurrency_limit=concurrency_limit, sequence_key=sequence_key, on_failure=on_failure,
            rate_key=rate_key,
        )
        traceparent = _tracing.current_traceparent()  # None without OpenTelemetry
        if traceparent is not None:
            job = job._replace(trace_context=traceparent)
        return JobHandle(self.backend.enqueue([job], self.idempotency_retention, conn)[0], self)

    def enqueue_many(self, jobs: Iterable[dict[str, Any]], *, conn: Any = None) -> list[int]:
        """Queue many jobs in one transaction; each dict takes enqueue()'s options (a registered
        task's name brings its defaults). All or none."""
        _check_batch(jobs)
        items = jobs if isinstance(jobs, Sequence) else list(jobs)
        specs: Iterator[_validate.NewJob] = map(functools.partial(job_spec, self), items)
        traceparent = _tracing.current_traceparent()  # one for the whole batch
        if traceparent is not None:
            specs = (s._replace(trace_context=traceparent) for s in specs)
        if not items:
            return []
        # PostgreSQL checks a large batch while COPY stores the chunks before.
        return self.backend.enqueue_streaming(len(items), specs, self.idempotency_retention, conn)

    async def aenqueue(
        self, task: str | Task[Any, Any], payload: dict[str, Any] | None = None, **options: Any
    ) -> JobHandle:
        """Async enqueue(). With a psycopg AsyncConnection as `conn`, writes in its transaction;
        with the caller's sync connection, writes in its transaction on this thread (a driver
        connection belongs to the code that opened it: sqlite3's to its thread); without
        `conn`, writes in a thread, off the event loop."""
        conn = options.pop("conn", None)
        if conn is not None and self.backend.is_async_connection(conn):
            job = self._new_job(task, payload=payload, **options)
            traceparent = _tracing.current_traceparent()
            if traceparent is not None:
                job = job._replace(trace_context=traceparent)
            ids = await self.backend.aenqueue([job], self.idempotency_retention, conn)
            return JobHandle(ids[0], self)
        if conn is not None:
            return self.enqueue(task, payload, conn=conn, **options)
        return await asyncio.to_thread(self.enqueue, task, payload, **options)

    async def aenqueue_many(
        self, jobs: Iterable[dict[str, Any]], *, conn: Any = None
    ) -> list[int]:
        """Async enqueue_many(); `conn` as in aenqueue()."""
        _check_batch(jobs)
        if conn is not None and self.backend.is_async_connection(conn):
            traceparent = _tracing.current_traceparent()
            specs = [job_spec(self, j)._replace(trace_context=traceparent) for j in jobs]
            return await self.backend.aenqueue(specs, self.idempotency_retention, conn)
        if conn is not None:
            return self.enqueue_many(jobs, conn=conn)
        jobs = list(jobs)
        return await asyncio.to_thread(self.enqueue_many, jobs)

    # -- claim and the owner's transitions (single-job forms raise LeaseLost) ------------------

    def enqueue_workflow(self, workflow: Workflow, *, conn: Any = None) -> WorkflowHandle:
        """Writes the workflow's jobs and their dependencies in one transaction (with `conn`,
        the caller's: it exists if and only if that commits). Jobs with no dependency are
        pending at once; the rest are held until theirs finished. With a key that names a
        workflow already written, that one's handle is returned (`created` False) and nothing
        is written."""
        wf = workflow.validated(self)
        with _tracing.workflow_span(wf.name) as traceparent:
            if traceparent is not None:
                wf = replace(wf, jobs=[j._replace(trace_context=traceparent) for j in wf.jobs])
            added = self.backend.add_workflow(wf, self.idempotency_retention, conn)
        return WorkflowHandle(self, added.id, added.job_ids, added.created)

    async def aenqueue_workflow(self, workflow: Workflow) -> WorkflowHandle:
        """Async enqueue_workflow() (in a thread; no caller connection)."""
        return await asyncio.to_thread(self.enqueue_workflow, workflow)

    def workflow(self, workflow_id: int) -> WorkflowHandle:
        """The handle of a workflow written earlier (JobNotFound-like InvalidInput if none)."""
        graph, _ = self.backend.workflow_graph(workflow_id)
        if self.backend.get_workflow(workflow_id) is None:
            raise InvalidInput(f"no workflow {workflow_id}")
        return WorkflowHandle(self, workflow_id, [j.id for j in graph], created=False)

    def workflows(self, *, limit: int = 50, before: int | None = None) -> list[WorkflowInfo]:
        """Workflows, newest first (ids below `before`, to page)."""
        return self.backend.list_workflows(limit, before)

    def claim(
        self,
        worker_id: str,
        queues: Sequence[str] | None = None,
        limit: int = 1,
        lease: float | None = None,
        *,
        start: bool = False,
    ) -> list[Job]:
        """Claim up to `limit` due jobs of active, unpaused queues (all queues when None).
        With start=True they go straight to processing (claim and start in one statement)."""
        _validate.worker_id(worker_id)
        names = _validate.queue_names(queues)
        _validate.integer(limit, "limit", 0, 10_000)
        lease = _lease(lease)
        if not isinstance(start, bool):
            raise InvalidInput(f"start must be True or False, got {start!r}")
        return self.backend.claim(worker_id, names, limit, lease, start)

    def start(self, job: Job, lease: float | None = None) -> int:
        """fetched -> processing; returns the attempt number. Raises LeaseLost."""
        started = self.backend.start([_owned(job)], _lease(lease))
        if not started:
            raise LeaseLost(job.id, "start")
        return started[0].attempts

    def heartbeat(self, job: Job, lease: float | None = None) -> bool:
        """Extends the lease; returns whether a cancel was requested. Raises LeaseLost."""
        result = self.backend.heartbeat([_owned(job)], _lease(lease))
        if job.id in result.lost:
            raise LeaseLost(job.id, "heartbeat")
        return job.id in result.cancel_requested

    def complete(self, job: Job, result: Any = None, *, conn: Any = None) -> None:
        """processing -> archive, with an optional JSON result. Raises LeaseLost."""
        done = Completion(_job(job).id, _token(job),
                          _validate.result_json(result, self.result_limit))
        if job.id not in self.backend.complete([done], conn):
            raise LeaseLost(job.id, "complete")

    def fail(
        self,
        job: Job,
        error: BaseException,
        *,
        attempt: int | None = None,
        worker_id: str | None = None,
        retry: RetryPolicy | None = None,
    ) -> Literal["retried", "dead"]:
        """Record a failed attempt: retry with backoff, or dead letters. Raises LeaseLost."""
        _token(_job(job))
        if not isinstance(error, BaseException):
            raise InvalidInput(f"error must be an exception instance, got {error!r}")
        if attempt is not None:
            _validate.integer(attempt, "attempt", *_validate.MAX_ATTEMPTS_RANGE)
        if worker_id is not None:
            _validate.worker_id(worker_id)
        if retry is not None and not isinstance(retry, RetryPolicy):
            raise InvalidInput(f"retry must be a RetryPolicy, got {retry!r}")
        if attempt is None:
            # The Job came from claim(), before start() spent the attempt: ask the database.
            current = self.backend.get_job(job.id)
            owned = current is not None and current.claim_token == job.claim_token
            attempt = current.attempts if owned and current is not None else job.attempts
        failure = failure_for(
            job, error, attempt=attempt, worker_id=worker_id or job.worker_id, policy=retry,
            throttle=self.backend.capabilities.flow_control,
        )
        result = self.backend.fail([failure])
        if job.id in result.lost:
            raise LeaseLost(job.id, "fail")
        return "dead" if job.id in result.dead else "retried"

    def release(self, job: Job, delay: float = 0.0) -> None:
        """Hand a fetched or processing job back to pending. Raises LeaseLost."""
        owned = _owned(job)
        delay = _validate.seconds(delay, "delay")
        if owned.id not in self.backend.release([owned], delay):
            raise LeaseLost(job.id, "release")

    def reap(self, limit: int = 1000) -> ReapResult:
        """Recover expired leases (any process may run this at any time)."""
        return self.backend.reap(_validate.integer(limit, "limit", 1, 1_000_000))

    # -- operator operations -------------------------------------------------------------------

    def get_job(self, job_id: int, *, conn: Any = None) -> Job:
        """The job wherever it lives: live, archive or dead letters. With `conn` (a sqlite3,
        psycopg, or on MariaDB the URL's driver's connection), read through it, inside its open
        transaction."""
        job = self.backend.get_job(_job_id(job_id), conn)
        if job is None:
            raise JobNotFound(f"no job {job_id}")
        return job

    def get_progress(self, job_id: int) -> Progress | None:
        """The job's last reported progress (`ctx.progress()`), None when it reported none;
        JobNotFound for a job in no table (pruned or purged: its progress went with it)."""
        progress = self.backend.get_progress(_job_id(job_id))
        if progress is None:
            self.get_job(job_id)  # JobNotFound when the job is gone
        return progress

    def list_jobs(
        self,
        table: Literal["live", "archive", "dead"] = "live",
        *,
        queue: str | None = None,
        task: str | None = None,
        status: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Job]:
        if table not in ("live", "archive", "dead"):
            raise InvalidInput("table must be 'live', 'archive' or 'dead'")
        _filters(queue, task)
        allowed = _STATUSES[table]
        if status is not None and status not in allowed:
            raise InvalidInput(
                f"status must be one of {sorted(allowed)} for table {table!r}, got {status!r}"
            )
        return self.backend.list_jobs(
            table, queue=queue, task=task, status=status,
            limit=_validate.integer(limit, "limit", 1, 100_000),
            offset=_validate.integer(offset, "offset", 0, 2**62),
        )

    def find_jobs(
        self,
        table: Literal["live", "archive", "dead"] = "live",
        *,
        queue: str | None = None,
        task: str | None = None,
        status: str | None = None,
        tag: str | None = None,
        text: str | None = None,
        state: str | None = None,
        before: int | None = None,
        limit: int = 50,
    ) -> list[Job]:
        """Jobs of one table matching every filter given, newest id first. `text`: a substring
        (any case) of the payload's or the attempt history's JSON. `state` (live jobs only):
        running, due, limited (due, but flow control holds it back now: see `limited()`),
        scheduled (never attempted, run_at ahead), retrying (waiting after an attempt) or
        held. Keyset paging: `before` the last id of the previous page."""
        if table not in ("live", "archive", "dead"):
            raise InvalidInput("table must be 'live', 'archive' or 'dead'")
        _filters(queue, task)
        allowed = _STATUSES[table]
        if status is not None and status not in allowed:
            raise InvalidInput(
                f"status must be one of {sorted(allowed)} for table {table!r}, got {status!r}"
            )
        for value, name in ((tag, "tag"), (text, "text")):
            if value is not None and (not isinstance(value, str) or not 0 < len(value) <= 200):
                raise InvalidInput(f"{name} must be a string of 1 to 200 characters, got {value!r}")
        if state is not None and (table != "live" or state not in LIVE_STATES):
            raise InvalidInput(f"state is one of {', '.join(LIVE_STATES)}, for live jobs only; "
                               f"got {state!r} for table {table!r}")
        where = JobFilter(queue=queue, task=task, status=status, tag=tag,
                          text=None if text is None else text.lower(), state=state)
        return self.backend.find_jobs(
            table, where, None if before is None else _job_id(before),
            _validate.integer(limit, "limit", 1, 100_000),
        )

    def count_states(self) -> list[StateCount]:
        """Live jobs by queue and state (running, due, limited, scheduled, retrying, held, as
        in find_jobs; a limited job is not also due); a queue and state with no job has no row.
        One statement: a grouped read of the live tables, and for the limited ones the due
        jobs of busy concurrency keys and throttled rate keys."""
        return self.backend.count_states()

    def limited(self) -> list[Limited]:
        """What holds due jobs back now (the jobs find_jobs(state="limited") finds), per queue,
        reason and key, the most waiting first (at most 1000 rows). A due job is limited for
        the first of these that holds: its queue is "inactive", "paused", "throttled" (a
        handler's Throttled pauses it) or at "max_workers"; its "concurrency" key has its
        concurrency_limit jobs running; its "rate_key" is paused by a Throttled. An empty rate
        limit bucket, a sequence's later jobs and an open circuit breaker do not count."""
        return self.backend.list_limited()

    def purge_jobs(self, table: Literal["archive", "dead"], job_ids: Iterable[int]) -> list[int]:
        """Delete exactly these jobs from archive or dead letters; returns the ids deleted."""
        if table not in ("archive", "dead"):
            raise InvalidInput("purge_jobs takes 'archive' or 'dead'")
        ids = _job_ids(job_ids)
        gone = self.backend.delete_finished(table, ids) if ids else []
        self.backend.purge_idempotency_keys(self.idempotency_retention)
        _audit.record(self.backend, "purge", f"{table} jobs", {"ids": ids, "changed": gone},
                      len(gone))
        return gone

    def run_now(self, job_ids: Iterable[int]) -> list[int]:
        """Pending jobs waiting for a retry's backoff or a later run_at become due now; returns
        the ids changed (jobs already due, running or finished are left as they are)."""
        ids = _job_ids(job_ids)
        changed = self.backend.run_now(ids) if ids else []
        _audit.record(self.backend, "run_now", _jobs_target(ids), {"ids": ids,
                                                                   "changed": changed},
                      len(changed))
        return changed

    def cancel(self, job_id: int) -> Literal["cancelled", "cancel_requested", "finished"]:
        """Pending or fetched: to dead letters now. Running: cancel requested (its worker sees it
        at the next heartbeat). Already finished: nothing changes."""
        outcome = self.backend.cancel(_job_id(job_id))
        if outcome == "not_found":
            raise JobNotFound(f"no job {job_id}")
        _audit.record(self.backend, "cancel", f"job {job_id}", {"outcome": outcome},
                      int(outcome != "finished"))
        return outcome

    def resurrect(
        self, job_id: int, *, payload: dict[str, Any] | None = None, priority: int | None = None
    ) -> None:
        """Dead letter -> pending with attempts reset (history kept), optionally edited.

        A job with an idempotency key takes its key back; when another job holds that key
        (live, or finished inside idempotency_retention) it raises KeyHeld and nothing changes.
        """
        text = None if payload is None else _validate.payload_json(payload, self.payload_limit)
        if priority is not None:
            _validate.integer(priority, "priority", *_validate.PRIORITY_RANGE)
        if not self.backend.resurrect(_job_id(job_id), text, priority,
                                      self.idempotency_retention):
            raise JobNotFound(f"no dead letter {job_id}")
        _audit.record(self.backend, "resurrect", f"job {job_id}",
                      {"payload_edited": payload is not None, "priority": priority}, 1)

    def purge(
        self,
        table: Literal["archive", "dead"],
        *,
        older_than: float | timedelta | None = None,
        queue: str | None = None,
        task: str | None = None,
    ) -> int:
        """Delete finished jobs from archive or dead letters by age and filter; returns count."""
        if table not in ("archive", "dead"):
            raise InvalidInput("purge takes 'archive' or 'dead'")
        age = None if older_than is None else _validate.seconds(older_than, "older_than")
        _filters(queue, task)
        count = self.backend.purge(table, age, queue, task)
        self.backend.purge_idempotency_keys(self.idempotency_retention)
        _audit.record(self.backend, "purge", f"{table} jobs",
                      {"older_than": age, "queue": queue, "task": task}, count)
        return count

    def set_priority(self, job_id: int, priority: int) -> None:
        """Change the priority of a pending job, or of a held workflow job (for when it is
        released)."""
        _validate.integer(priority, "priority", *_validate.PRIORITY_RANGE)
        if not self.backend.set_priority(_job_id(job_id), priority):
            raise JobNotFound(f"no pending or held job {job_id}")
        _audit.record(self.backend, "priority", f"job {job_id}", {"priority": priority}, 1)

    # -- queues --------------------------------------------------------------------------------

    def configure_queue(
        self,
        name: str,
        *,
        paused: bool | None = None,
        active: bool | None = None,
        max_workers: int | None = UNSET,
        lease: float | None = None,
        timeout: float | None = UNSET,
        rate_limit: str | None = UNSET,
        rate_burst: int | None = None,
        aging: float | timedelta | None = UNSET,
        aging_cap: int = 10,
        key_rate_limit: str | None = UNSET,
        key_rate_burst: int | None = None,
    ) -> QueueInfo:
        """Create or change a queue. max_workers=None lifts the limit; timeout=None clears it.
        `rate_limit` ("10/s", "100/m", "5/2s"; None lifts it): at most that many claims from
        the queue per period for all workers together, in bursts of up to `rate_burst`
        (default: the count) after a quiet spell. It takes effect at the next claim.
        `aging` (seconds; None lifts it): a due job's priority counts one more for every
        `aging` seconds it waits, at most `aging_cap` more, so that a flood of higher-priority
        work cannot hold it back for ever. `key_rate_limit` (same form; None lifts it): that
        rate for each rate key of the queue's jobs apart (a job's `rate_key`), in bursts of up
        to `key_rate_burst`; jobs without a rate key are not held by it."""
        _validate.queue_name(name)
        _validate.boolean(paused, "paused")
        _validate.boolean(active, "active")
        if max_workers is not UNSET and max_workers is not None:
            _validate.integer(max_workers, "max_workers", 1, 1_000_000)
        if lease is not None:
            lease = _validate.seconds(lease, "lease", allow_zero=False)
        if timeout is not UNSET and timeout is not None:
            timeout = _validate.seconds(timeout, "timeout", allow_zero=False)
        rate: RateLimit | None = UNSET
        if rate_limit is not UNSET:
            rate = None if rate_limit is None else RateLimit(
                *_validate.rate_limit(rate_limit, rate_burst))
        elif rate_burst is not None:
            raise InvalidInput("rate_burst goes with a rate_limit")
        key_rate: RateLimit | None = UNSET
        if key_rate_limit is not UNSET:
            key_rate = None if key_rate_limit is None else RateLimit(
                *_validate.rate_limit(key_rate_limit, key_rate_burst))
        elif key_rate_burst is not None:
            raise InvalidInput("key_rate_burst goes with a key_rate_limit")
        aged: PriorityAging | None = UNSET
        if aging is not UNSET:
            aged = None if aging is None else PriorityAging(
                _validate.seconds(aging, "aging", allow_zero=False),
                _validate.integer(aging_cap, "aging_cap", 1, 1000))
        # Flow-control settings go only when given: a backend without them still configures.
        flow: dict[str, Any] = {k: v for k, v in (("rate_limit", rate), ("aging", aged),
                                                  ("key_rate_limit", key_rate))
                                if v is not UNSET}
        info = self.backend.configure_queue(
            name, paused=paused, active=active, max_workers=max_workers,
            lease_seconds=lease, timeout_seconds=timeout, **flow,
        )
        changes: dict[str, Any] = {k: v for k, v in (("paused", paused), ("active", active),
                                                      ("lease", lease)) if v is not None}
        for key, value in (("max_workers", max_workers), ("timeout", timeout),
                           ("rate_limit", rate_limit), ("aging", aging),
                           ("key_rate_limit", key_rate_limit)):
            if value is not UNSET:
                changes[key] = value
        for key, burst in (("rate_burst", rate_burst), ("key_rate_burst", key_rate_burst)):
            if burst is not None:
                changes[key] = burst
        if aging is not UNSET and aging is not None:
            changes["aging_cap"] = aging_cap
        _audit.record(self.backend, _queue_action(changes), f"queue {name}", changes, 1)
        return info

    def configure_breaker(
        self,
        task: str | Task[Any, Any],
        *,
        failures: int | None,
        window: float | timedelta = 60.0,
        cooldown: float | timedelta = 30.0,
        queue: str | None = None,
    ) -> BreakerInfo | None:
        """A circuit breaker for `task` in `queue` (default: a registered task's queue, else
        "default"), its state in the database: `failures` failed attempts within `window`
        seconds open it, and while it is open no worker claims the task's jobs from that queue;
        `cooldown` seconds later one job is let through (half-open), whose success closes the
        breaker and whose failure opens it again. Changing the settings keeps the state;
        failures=None removes the breaker. A Throttled is not counted as a failure."""
        name = task.name if isinstance(task, Task) else _validate.task_name(task)
        registered = task if isinstance(task, Task) else self.tasks.get(name)
        queue = _validate.queue_name(
            queue if queue is not None else registered.queue if registered else "default")
        if failures is not None:
            _validate.integer(failures, "failures", 1, 1_000_000)
        seconds = (_validate.seconds(window, "window", allow_zero=False),
                   _validate.seconds(cooldown, "cooldown", allow_zero=False))
        info = self.backend.configure_breaker(queue, name, failures, *seconds)
        _audit.record(self.backend, "breaker", f"queue {queue} task {name}",
                      {"failures": failures, "window": seconds[0], "cooldown": seconds[1]}, 1)
        return info

    def breakers(self) -> list[BreakerInfo]:
        """Every circuit breaker with its state (also in `stats().breakers`)."""
        return self.backend.list_breakers()

    def throttled_keys(self) -> list[ThrottledKey]:
        """The rate keys that a handler's Throttled pauses now (also in
        `stats().throttled_keys`)."""
        return self.backend.list_throttled_keys()

    def pause(self, queue: str) -> QueueInfo:
        """configure_queue(queue, paused=True): creates the queue if it does not exist (the
        CLI refuses an unknown queue unless given --create)."""
        return self.configure_queue(queue, paused=True)

    def resume(self, queue: str) -> QueueInfo:
        return self.configure_queue(queue, paused=False)

    def activate(self, queue: str) -> QueueInfo:
        return self.configure_queue(queue, active=True)

    def deactivate(self, queue: str) -> QueueInfo:
        return self.configure_queue(queue, active=False)

    def queues(self) -> list[QueueInfo]:
        """Every queue with its settings and live counts."""
        return self.backend.list_queues()

    # -- operating -----------------------------------------------------------------------------

    def stats(self, window: float | timedelta = DEFAULT_WINDOW) -> Stats:
        """Per queue and per task: live depths (due, scheduled, running, past their lease),
        the oldest due job's age, dead letters by reason, and over the last `window` seconds
        (default 5 minutes) completions and failures per minute, wait and run latency
        percentiles and attempts per job (see claimq.stats). A few indexed queries."""
        seconds = _validate.seconds(window, "window", allow_zero=False)
        return replace(build(self.backend.stats(seconds), seconds),
                       breakers=self.backend.list_breakers(),
                       throttled_keys=self.backend.list_throttled_keys())

    def workers(
        self, *, silent_after: float | timedelta = WORKER_SILENT_AFTER
    ) -> list[WorkerInfo]:
        """The worker processes in the registry: alive ones, and those gone silent (alive
        False) until they are pruned. A row not refreshed for over `silent_after` seconds
        (default 30: a worker refreshes its row every 5 s and a reaper marks it dead after
        30 s) is reported with alive False even before a reaper marked it (dead_at None): a
        worker killed with SIGKILL, while no other worker runs, is not shown alive with its
        jobs in flight. Raise it for workers with a longer `presence_interval`."""
        limit = _validate.seconds(silent_after, "silent_after", allow_zero=False)
        return [replace(w, alive=False) if w.alive and w.silent_for > limit else w
                for w in self.backend.list_workers()]

    # -- retention -----------------------------------------------------------------------------

    def set_retention(
        self,
        queue: str | None = None,
        *,
        archive_age: float | timedelta | None = None,
        archive_rows: int | None = None,
        dead_age: float | timedelta | None = None,
        dead_rows: int | None = None,
    ) -> RetentionPolicy:
        """How long finished jobs of `queue` (None: every queue without a policy of its own)
        stay: at most `archive_age` seconds and `archive_rows` rows in the archive (results
        included), likewise in dead letters; None lifts that limit. Stored in the database:
        every worker's pruner applies it. Without a default policy: archive 14 days, dead
        letters 30 days. The default's row limits count all the queues it covers together."""
        found = _retention.policy(queue, archive_age, archive_rows, dead_age, dead_rows)
        self.backend.set_retention(found)
        _audit.record(self.backend, "retention", f"queue {found.queue}",
                      dataclasses.asdict(found), 1)
        return found

    def clear_retention(self, queue: str | None = None) -> None:
        """Removes `queue`'s own policy (it takes the default again); None: the default's
        (back to the built-in one)."""
        name = _retention.policy(queue, None, None, None, None).queue
        if not self.backend.delete_retention(name):
            raise JobNotFound(f"no retention policy for {name!r}")
        _audit.record(self.backend, "clear retention", f"queue {name}", {}, 1)

    def retention(self) -> list[RetentionPolicy]:
        """The policies in force: the default ('*') first, then each queue's own."""
        return _retention.policies(self)

    def prune(self, *, batch: int = 1000) -> dict[str, int] | None:
        """One pruning pass as every worker runs it (about once a minute): deletes what the
        retention policies say, `batch` rows per transaction, plus expired idempotency keys.
        Returns the counts per table, or None when another process is pruning right now (one
        pruner at a time across all workers: a lease in the database)."""
        counts = _retention.prune(self, self._pruner_id, batch)
        if counts is not None:
            _audit.record(self.backend, "prune", "finished jobs", {"deleted": counts,
                                                                   "batch": batch},
                          sum(counts.values()))
        return counts

    def partition_archive(self) -> bool:
        """PostgreSQL: keeps the archive partitioned by day of finished_at from now on, so
        that retention drops whole days instead of deleting rows (once every policy has an
        archive age: the oldest days past the longest one). Run once, by an operator: it locks
        the archive while its existing rows are checked and indexed (they stay, as one
        partition). Returns False when the archive is partitioned already. SQLite: InvalidInput."""
        done = self.backend.partition_archive()
        _audit.record(self.backend, "partition archive", "archive", {"done": done}, int(done))
        return done

    # -- results -------------------------------------------------------------------------------

    def result(self, job_id: int, *, timeout: float | None = None) -> Any:
        """Waits for job `job_id` to finish; returns its handler's return value once archived.
        Raises JobFailed (it went to dead letters: `.reason`, `.error`), TimeoutError (not
        finished within `timeout` seconds; None waits as long as it takes), JobNotFound (no
        such job, or its row was pruned). PostgreSQL wakes waiters by NOTIFY; SQLite polls."""
        job_id = _job_id(job_id)
        return self._results().wait(job_id, _timeout(timeout))

    async def aresult(self, job_id: int, *, timeout: float | None = None) -> Any:
        """result() for async code: the event loop goes on while it waits."""
        job_id = _job_id(job_id)
        return await self._results().await_result(job_id, _timeout(timeout))

    def _results(self) -> ResultWaiter:
        with _WAITER_LOCK:
            if self._waiter is None:
                self._waiter = ResultWaiter(self.backend)
            return self._waiter


_STATUSES: dict[str, frozenset[str]] = {
    "live": frozenset({Status.HELD, Status.PENDING, Status.FETCHED, Status.PROCESSING}),
    "archive": frozenset({Status.SUCCEEDED}),
    "dead": frozenset(DeadReason),
}


def _handler(task: Task[Any, Any]) -> Callable[..., Any]:
    """The function registered (not the wrapper that rebuilds typed arguments)."""
    return task.fn.__wrapped__ if task.arguments is not None else task.fn  # type: ignore[attr-defined]


def _job(job: object) -> Job:
    if not isinstance(job, Job):
        raise InvalidInput(f"expected a Job (as claim() returns it), got {job!r}")
    return job


def _timeout(timeout: object) -> float | None:
    return None if timeout is None else _validate.seconds(timeout, "timeout")


def _lease(lease: object) -> float | None:
    return None if lease is None else _validate.seconds(lease, "lease", allow_zero=False)


def _queue_action(changes: dict[str, Any]) -> str:
    """The audit's name of a configure_queue: the dashboard's where it is one of its actions."""
    if changes.keys() == {"paused"}:
        return "pause" if changes["paused"] else "resume"
    if changes.keys() == {"active"}:
        return "activate" if changes["active"] else "deactivate"
    if changes.keys() == {"max_workers"}:
        return "max_workers"
    return "configure_queue"


def _jobs_target(ids: Sequence[int]) -> str:
    return f"job {ids[0]}" if len(ids) == 1 else f"{len(ids)} jobs"


def _filters(queue: object, task: object) -> None:
    if queue is not None:
        _validate.queue_name(queue)
    if task is not None:
        _validate.task_name(task)


def _check_batch(jobs: object) -> None:
    if isinstance(jobs, str | bytes | Mapping) or not isinstance(jobs, Iterable):
        raise InvalidInput(f"enqueue_many takes a list of dicts, got {type(jobs).__name__}")


def _token(job: Job) -> str:
    _job(job)
    if not job.claim_token:
        raise LeaseLost(job.id, "use (the job carries no claim token)")
    return job.claim_token


def _owned(job: Job) -> Owned:
    return Owned(_job(job).id, _token(job))


def _job_id(value: object) -> int:
    return _validate.integer(value, "job id", 1, 2**63 - 1)


def _job_ids(values: object) -> list[int]:
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise InvalidInput(f"expected a list of job ids, got {values!r}")
    ids = [_job_id(v) for v in values]
    if len(ids) > 100_000:
        raise InvalidInput("at most 100,000 job ids at once")
    return list(dict.fromkeys(ids))


__all__ = ["App", "DEFAULT_URL", "Failure", "database_url"]
