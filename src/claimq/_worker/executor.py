"""Executor: runs each claimed job in an asyncio Task of its own, so that everything a handler
does with its current task (asyncio.timeout, TaskGroup, wait_for, anyio and httpx cancel
scopes, uncancel) binds to its own job and never to the worker. Async handlers run on the loop,
sync ones in a thread pool or, with isolation="process", in a child process.

Slots: a job holds its slot until its handler has returned. A sync handler past its timeout, or
whose lease was lost, cannot be interrupted; it keeps its slot and its job is neither retried
nor re-run here until the thread returns. A new claim of a job whose earlier attempt still runs
here waits for that attempt to end."""

from __future__ import annotations

import asyncio
import collections
import contextvars
import functools
import inspect
import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from claimq import _tracing, _validate
from claimq._json import loads
from claimq._outcome import (
    BadPayload,
    JobCancelled,
    JobTimeout,
    UnknownTask,
    describe,
    failure_for,
)
from claimq._worker.completer import Outcome, Outcomes
from claimq._worker.dbcall import DB
from claimq._worker.inflight import Counters, InFlight, Registry
from claimq._worker.isolation import (
    ChildStopped,
    ChildTimedOut,
    IsolatedContext,
    run_in_child,
)
from claimq._worker.threads import Threads
from claimq.backends.base import Backend, Completion, Owned
from claimq.errors import InvalidInput, LeaseLost, Permanent
from claimq.job import CorruptRow, Job, ends_job
from claimq.logs import current_job, event

if TYPE_CHECKING:
    from claimq.app import App
    from claimq.hooks import Hooks
    from claimq.task import Task

log = logging.getLogger("claimq.worker")

# Handed to a job's Task when the worker gives it up (shutdown past grace, lease lost): the
# handler is cancelled; its outcome is not reported.
_ABANDONED = "claimq: job abandoned"
_EXITS = (KeyboardInterrupt, SystemExit, GeneratorExit)
_EPOCH = datetime.min.replace(tzinfo=UTC)
# A job of a task this worker does not register goes back to pending this much later (its
# attempt not counted), so that a worker that registers it (another App on the same database)
# takes it first; it is never run, failed or dead-lettered here.
HAND_BACK_DELAY = 2.0


class _Raised:
    """A handler raised KeyboardInterrupt, SystemExit or GeneratorExit: caught where the handler
    was called and handed on as a value (GeneratorExit, rethrown through an await, escapes every
    except clause of the coroutines above it); its job fails, the worker goes on."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def _calling(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except _EXITS as exc:
        return _Raised(exc)


class Executor:
    def __init__(
        self,
        app: App,
        backend: Backend,
        db: DB,
        registry: Registry,
        counters: Counters,
        outcomes: Outcomes,
        *,
        worker_id: str,
        lease: float | None,
        default_lease: float,
        concurrency: int,
        make_context: Callable[[InFlight, Callable[..., None]], Any],
        skip_unknown: Callable[[set[str], dict[str, Any]], None] | None = None,
    ) -> None:
        self.app = app
        self.backend = backend
        self.db = db
        self.registry = registry
        self.counters = counters
        self.outcomes = outcomes  # where finished attempts' outcomes go (to the completer)
        self.worker_id = worker_id
        self.lease = lease
        self.default_lease = default_lease
        self.threads = Threads(max_workers=concurrency, name="claimq-handler")
        self.concurrency = concurrency
        self._in_slots = 0  # handlers' Tasks not yet ended
        # Claimed ahead (Registry.ahead), started in claim order as slots free up.
        self._waiting: collections.deque[
            tuple[InFlight, InFlight | None, dict[int, str] | None]] = collections.deque()
        self.make_context = make_context  # (claim, abandon) -> the handler's ctx
        self.stopping = False
        self.giving_up = False  # past the grace period: stop waiting for stuck threads
        self.unknown_tasks: set[str] = set()  # names met and handed back (warned about once)
        # Claims.skip: the claims pass over the names handed back (None: they do not)
        self.skip_unknown = skip_unknown

    # -- starting ------------------------------------------------------------------------------

    async def start(self, jobs: Sequence[Job]) -> None:
        """Registers freshly claimed (and started) jobs and runs each in a Task of its own; a
        worker that is stopping hands them straight back."""
        now = time.monotonic()  # one claim: its leases all began together
        lease_len = 0.0
        seen: tuple[Any, Any] = (None, None)
        flights = []
        for job in jobs:
            if (job.lease_until, job.updated_at) != seen:  # one claim: the same for every job
                seen = (job.lease_until, job.updated_at)
                lease_len = _lease_length(job, self.lease or self.default_lease)
            held = self.registry.newest(job.id)
            if held is not None and _newer(held.job, job):
                # Two writes were in flight and this answer came last, though the database has
                # given the job out again since (to the claim we hold): this claim is stale.
                self.counters.add("lease_lost")
                log.warning("lease.lost: job %s: a claim answered late, after a newer claim of "
                            "it; not started", job.id,
                            extra={"event": "lease.lost", "job_id": job.id})
                continue
            flight = InFlight(job, Owned(job.id, job.claim_token or ""), job.attempts,
                              lease_len, now + lease_len)
            earlier = self.registry.add(flight)
            if earlier is not None and not earlier.lost and not earlier.finished:
                # The database gave the job out again: that claim's lease had run out. (A
                # finished one is left to the completer: its outcome may have landed already.)
                self.abandon(earlier, "the job was claimed again (its lease had expired)")
            flights.append((flight, earlier))
        if self.stopping:
            await self.release([f for f, _ in flights])
            return
        tasks = self.app.tasks
        foreign = [f for f, _ in flights if f.job.task not in tasks]
        if foreign:  # work of another App on this database: not ours to run or to fail
            flights = [(f, e) for f, e in flights if f.job.task in tasks]
        # OpenTelemetry: only while a tracer provider is set (one check per batch otherwise)
        traces = await self._trace_contexts(flights) if _tracing.enabled() else None
        free = max(self.concurrency - self._in_slots, 0)
        for flight, earlier in flights[:free]:
            self._launch(flight, earlier, traces)
        for flight, earlier in flights[free:]:  # claimed ahead: each waits for a slot
            self._waiting.append((flight, earlier, traces))
        self.counters.add("started", len(flights))
        if log.isEnabledFor(logging.DEBUG):  # per-job lines only when asked for
            for flight, _ in flights:
                log.debug("job.started: job %s (%s) attempt %s", flight.job.id, flight.job.task,
                          flight.attempt, extra=event("job.started", flight))
        if foreign:
            await self._hand_back(foreign)

    async def _hand_back(self, flights: list[InFlight]) -> None:
        """Jobs of tasks this worker does not register: back to pending, their attempt not
        counted, due again after HAND_BACK_DELAY (a worker that registers the task takes them
        then). One warning per task name for the life of this worker."""
        for flight in flights:
            name = flight.job.task
            if name in self.unknown_tasks:
                continue
            self.unknown_tasks.add(name)
            log.warning(
                "task.unknown: job %s: no task %r is registered in this worker (known: %s); "
                "handed back to pending, its attempt not counted, for a worker that registers "
                "it (jobs of this task are handed back without this warning from now on)",
                flight.job.id, name, sorted(self.app.tasks)[:20],
                extra=event("task.unknown", flight))
        self.counters.add("handed_back", len(flights))
        await self.release(flights, HAND_BACK_DELAY)
        if self.skip_unknown is not None:  # and the claims pass over them from now on
            self.skip_unknown({f.job.task for f in flights}, self.app.tasks)

    def _launch(self, flight: InFlight, earlier: InFlight | None,
                traces: dict[int, str] | None) -> None:
        """Runs a claim's handler in a slot: a Task of its own, in a copy of the worker's
        context (contextvars a handler sets stay with its job)."""
        self._in_slots += 1
        flight.launch()
        flight.began = time.monotonic()
        flight.task = task = asyncio.get_running_loop().create_task(
            self._run(flight, earlier) if traces is None
            else self._traced(flight, earlier, traces.get(flight.job.id)))
        # a callback, not the Task's own finally: a Task cancelled before its first step never
        # runs its body, and its slot must come back all the same
        task.add_done_callback(functools.partial(self._slot_freed, flight))

    def _slot_freed(self, ended: InFlight, task: asyncio.Task[None]) -> None:
        self._in_slots -= 1
        self.registry.handler_ran(time.monotonic() - ended.began)
        waiting = self._waiting
        while waiting and self._in_slots < self.concurrency:
            flight, earlier, traces = waiting.popleft()
            if not flight.lost:  # given up while it waited (released, lease lost)
                self._launch(flight, earlier, traces)

    async def _trace_contexts(self, flights: list[tuple[InFlight, Any]]) -> dict[int, str]:
        """The stored trace contexts of a claimed batch (one statement); tracing never holds a
        job up: an error leaves the spans without a parent."""
        try:
            return await self.db.call(self.backend.trace_contexts, [f.job.id for f, _ in flights])
        except Exception as exc:  # noqa: BLE001
            log.debug("reading trace contexts failed: %r", exc)
            return {}

    async def _traced(self, flight: InFlight, earlier: InFlight | None,
                      traceparent: str | None) -> None:
        """_run inside the attempt's span, a child of the enqueuer's."""
        with _tracing.attempt_span(flight, traceparent) as span:
            await self._run(flight, earlier, span)

    def abandon(self, flight: InFlight, why: str, *, cancel: bool = True) -> None:
        """Gives a claim up without reporting anything: someone else owns the job now (or
        will). Its handler is cancelled; a sync one runs on in its thread, holding its slot."""
        if not flight.lose():
            return
        self.counters.add("lease_lost")
        log.warning("lease.lost: job %s abandoned: %s", flight.job.id, why,
                    extra=event("lease.lost", flight))
        if not cancel:
            return
        if flight.task is not None and not flight.task.done():
            flight.task.cancel(_ABANDONED)
        elif not flight.running:
            self.registry.forget(flight)

    def cancel(self, flight: InFlight) -> None:
        """An operator asked to cancel this running job."""
        flight.cancel_requested = True
        if flight.task is not None and not flight.task.done():
            flight.task.cancel()

    async def release(self, flights: Sequence[InFlight], delay: float = 0.0) -> None:
        """Hands jobs back to pending (attempt not counted), due again after `delay` seconds;
        they are no longer ours either way."""
        flights = [f for f in flights if not f.lost]
        if not flights:
            return
        for f in flights:
            f.lose()  # from here on, nothing this process does may report an outcome
        try:
            released = await self.db.retry(
                "release", self.backend.release, [f.owned for f in flights], delay,
                give_up=lambda: all(f.lease_expired for f in flights),
            )
            self.counters.add("released", len(released))
        except Exception:  # noqa: BLE001 - leases run out; the reaper recovers them
            log.warning("could not release %d job(s); their leases will expire", len(flights))
        for f in flights:
            if f.task is not None and not f.task.done():
                f.task.cancel(_ABANDONED)
            if not f.running:
                self.registry.forget(f)

    def shutdown(self) -> None:
        self.threads.shutdown(cancel_futures=True)

    # -- running -------------------------------------------------------------------------------

    async def _run(self, flight: InFlight, earlier: InFlight | None, span: Any = None) -> None:
        # This job's Task's own context: its handler's log lines carry its fields. The Job, not
        # the claim: the claim holds the Task, which holds this context (a cycle for the GC).
        current_job.set(flight.job)
        try:
            if earlier is not None and earlier.task is not None and not earlier.task.done():
                # Never two attempts of one job at once here: the earlier one's thread runs on.
                await asyncio.wait([earlier.task])
            if flight.lost:
                return
            if flight.cancel_requested:  # while it waited for a slot (claimed ahead)
                raise asyncio.CancelledError
            hooks = self.app.hooks  # None unless the app registered hooks or middleware
            outcome = await self._attempt(flight, hooks)
            if hooks is not None:
                await self._after(hooks, flight, outcome)
        except asyncio.CancelledError:
            outcome = None
            if not flight.lost and (flight.cancel_requested or flight.timed_out):
                # A handler that let our cancellation through, after a cancel or a timeout
                outcome = self._failed(flight, self._interrupted(flight))
        except BaseException as exc:  # noqa: BLE001 - a bug of ours: say so, keep the worker
            log.exception("job %s: the executor failed; its lease will expire", flight.job.id)
            outcome = None
            del exc
        finally:
            flight.ran = time.monotonic() - flight.began
            if flight.running:
                self.registry.finish(flight)
        if outcome is None or flight.lost:
            if flight.lost and outcome is not None:
                log.warning("job %s finished after its lease was lost; outcome dropped",
                            flight.job.id)
            self.registry.forget(flight)
        else:
            self.outcomes.submit(outcome)
        if span is not None:
            _tracing.set_outcome(span, *_outcome(flight, outcome))

    async def _attempt(self, flight: InFlight, hooks: Hooks | None) -> Outcome | None:
        job = flight.job
        task = self.app.tasks.get(job.task)
        try:
            if task is None:
                raise UnknownTask(
                    f"no task {job.task!r} is registered in this worker "
                    f"(known: {sorted(self.app.tasks)[:20]})"
                )
            if type(job.payload) is not dict:
                if isinstance(job.payload, CorruptRow):
                    raise BadPayload(str(job.payload))
                if not isinstance(job.payload, dict):
                    raise BadPayload(
                        f"payload is a {type(job.payload).__name__}, not a JSON object")
            timeout = _timeout(job, task)
            if hooks is not None:
                result = await self._hooked(hooks, flight, task, timeout)
            elif task.is_async:
                # Awaited here, in this frame (not a helper coroutine: one per job is enough)
                args = (self.make_context(flight, self.abandon),) if task.wants_context else ()
                handle = None if timeout is None else asyncio.get_running_loop().call_later(
                    timeout, self._time_out, flight)
                try:
                    result = await task.fn(*args, **job.payload)
                except _EXITS as exc:
                    result = _Raised(exc)
                finally:
                    if handle is not None:
                        handle.cancel()
            else:
                result = await self._run_sync(flight, task, timeout)
            if type(result) is _Raised:
                return self._failed(flight, result.exc)
            if flight.timed_out or flight.cancel_requested:
                # the handler swallowed our cancellation, or its thread returned too late
                raise self._interrupted(flight)
            if flight.completed_by_handler:
                self.counters.completed()
                flight.ran = time.monotonic() - flight.began
                self.counters.ran(flight, "succeeded")
                return None
            result_json = None
            if result is not None:
                try:
                    result_json = _validate.result_json(result, self.app.result_limit)
                except InvalidInput as exc:
                    raise Permanent(str(exc)) from None
            return Outcome(flight, Completion(job.id, flight.owned.token, result_json))
        except LeaseLost as exc:
            # ctx.complete_in(), ctx.heartbeat() or ctx.ensure_owned() found the job re-owned
            if flight.lose():
                self.counters.add("lease_lost")
            log.warning("lease.lost: job %s: %s matched no row: outcome dropped", job.id,
                        exc.operation, extra=event("lease.lost", flight))
            return None
        except asyncio.CancelledError:
            if flight.lost or not (flight.timed_out or flight.cancel_requested):
                raise
            return self._failed(flight, self._interrupted(flight))
        except Exception as exc:
            if flight.cancel_requested:
                exc = JobCancelled(f"cancelled by an operator; handler raised {describe(exc)}")
            elif isinstance(exc, ChildTimedOut):
                exc = JobTimeout(str(exc))
            elif isinstance(exc, TypeError) and task is not None and _wrong_arguments(task, job):
                exc = BadPayload(f"payload does not fit the handler's parameters: {exc}")
            return self._failed(flight, exc)

    async def _hooked(self, hooks: Hooks, flight: InFlight, task: Task[Any, Any],
                      timeout: float | None) -> Any:
        """The handler's call, with the app's started hooks and through its middleware."""
        ctx = self.make_context(flight, self.abandon)
        if not task.is_async:
            return await hooks.call(ctx, lambda: self._run_sync(flight, task, timeout))

        async def invoke() -> Any:
            args = (ctx,) if task.wants_context else ()
            handle = None if timeout is None else asyncio.get_running_loop().call_later(
                timeout, self._time_out, flight)
            try:
                return await task.fn(*args, **flight.job.payload)
            except _EXITS as exc:
                return _Raised(exc)
            finally:
                if handle is not None:
                    handle.cancel()

        return await hooks.call(ctx, invoke)

    async def _after(self, hooks: Hooks, flight: InFlight, outcome: Outcome | None) -> None:
        """The succeeded, failed and dead hooks of a finished attempt, before its outcome is
        written. A cancel arriving now (the handler has returned) leaves the outcome as it is."""
        if flight.lost or (outcome is None and not flight.completed_by_handler):
            return
        ctx = self.make_context(flight, self.abandon)
        try:
            if outcome is None or outcome.completion is not None:
                done = None if outcome is None else outcome.completion
                text = None if done is None else done.result_json
                await hooks.emit("job.succeeded", ctx, None if text is None else loads(text))
                return
            failure = outcome.failure
            await hooks.emit("job.failed", ctx, error=outcome.error)
            if failure is not None and ends_job(failure.permanent, flight.attempt,
                                                flight.job.max_attempts):
                await hooks.emit("job.dead", ctx, error=outcome.error)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if flight.lost or current is None:
                raise
            current.uncancel()

    async def _run_sync(self, flight: InFlight, task: Task[Any, Any],
                        timeout: float | None) -> Any:
        loop = asyncio.get_running_loop()
        payload = flight.job.payload
        if task.isolation == "process":
            args: tuple[Any, ...] = ((IsolatedContext(flight.job, flight.attempt,
                                                      self.worker_id, flight.owned,
                                                      self.app.url),)
                                     if task.wants_context else ())
            stop = lambda: flight.lost or flight.cancel_requested  # noqa: E731
            call = functools.partial(run_in_child, task.fn.__module__, task.name, args,
                                     payload, timeout, stop)
            timeout = None  # enforced by killing the child
        else:
            args = (self.make_context(flight, self.abandon),) if task.wants_context else ()
            call = functools.partial(contextvars.copy_context().run, _calling, task.fn, *args,
                                     **payload)
        future = loop.run_in_executor(self.threads, call)
        handle = None if timeout is None else loop.call_later(timeout, self._time_out, flight)
        try:
            while True:
                try:
                    return await asyncio.shield(future)
                except asyncio.CancelledError:
                    current = asyncio.current_task()
                    if self.giving_up or current is None:
                        raise
                    # A thread cannot be interrupted: its job stays held (slot, lease) until
                    # it returns, so no retry of it can overlap this attempt.
                    current.uncancel()
                    if flight.timed_out and not flight.lost:
                        log.warning("job %s ran past its timeout; its sync handler cannot be "
                                    "interrupted and still holds its slot (isolation="
                                    "'process' enforces timeouts)", flight.job.id)
        except ChildStopped:
            raise asyncio.CancelledError() from None
        finally:
            if handle is not None:
                handle.cancel()

    def _time_out(self, flight: InFlight) -> None:
        if flight.task is not None and not flight.task.done() and not flight.lost:
            flight.timed_out = True
            flight.task.cancel()

    def _interrupted(self, flight: InFlight) -> Exception:
        if flight.cancel_requested:
            return JobCancelled("cancelled by an operator while running")
        timeout = _timeout(flight.job, self.app.tasks.get(flight.job.task))
        return JobTimeout(f"ran longer than its timeout of {timeout}s")

    def _failed(self, flight: InFlight, exc: BaseException) -> Outcome:
        task = self.app.tasks.get(flight.job.task)
        failure = failure_for(flight.job, exc, attempt=flight.attempt, worker_id=self.worker_id,
                              policy=task.retry if task is not None else None,
                              token=flight.owned.token,
                              throttle=self.backend.capabilities.flow_control)
        if isinstance(exc, UnknownTask):
            log.warning("job %s: %s", flight.job.id, exc)
        else:
            log.info("job.failed: job %s (%s) attempt %s: %s", flight.job.id, flight.job.task,
                     flight.attempt, describe(exc),
                     extra={**event("job.failed", flight), **_error_fields(failure.error)})
        return Outcome(flight, failure=failure, error=exc)


def _error_fields(entry: dict[str, Any]) -> dict[str, Any]:
    """claimq.logs.error_fields of a failed attempt, from its error entry (already formatted:
    the traceback from the user's frame)."""
    return {"error": entry.get("error"), "error_class": entry.get("error_class"),
            "error_message": entry.get("message"), "traceback": entry.get("traceback")}


def _outcome(flight: InFlight, outcome: Outcome | None) -> tuple[str, str | None]:
    """The attempt's outcome for its span: (label, error message or None)."""
    if outcome is None or flight.lost:
        # nothing to report: completed in the handler's own transaction, or given up
        return ("succeeded" if flight.completed_by_handler and not flight.lost else "lost"), None
    failure = outcome.failure
    if failure is None:
        return "succeeded", None
    dead = ends_job(failure.permanent, flight.attempt, flight.job.max_attempts)
    return ("dead" if dead else "retried"), str(failure.error.get("message") or failure.reason)


def _newer(a: Job, b: Job) -> bool:
    """Whether claim `a` of a job was made after claim `b` of it (a start counts an attempt;
    within one attempt number, after a release, the claim's time tells)."""
    return (a.attempts, a.updated_at or _EPOCH) > (b.attempts, b.updated_at or _EPOCH)


def _lease_length(job: Job, fallback: float) -> float:
    if job.lease_until is not None and job.updated_at is not None:
        return max((job.lease_until - job.updated_at).total_seconds(), 0.05)
    return fallback


def _timeout(job: Job, task: Task[Any, Any] | None) -> float | None:
    """The job's own timeout, else its task's."""
    return job.timeout or (task.timeout if task else None)


def _wrong_arguments(task: Task[Any, Any], job: Job) -> bool:
    """Whether the payload cannot bind to the handler's signature: retrying cannot help."""
    args: tuple[Any, ...] = (None,) if task.wants_context else ()
    try:
        inspect.signature(task.fn).bind(*args, **job.payload)
    except TypeError:
        return True
    except ValueError:  # no signature to inspect (a builtin): assume the call was fine
        return False
    return False
