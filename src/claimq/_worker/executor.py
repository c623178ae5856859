"""Executor: runs one started job. Async handlers run on the loop, sync ones in a thread pool;
a per-task (or per-job) timeout bounds both. The outcome goes to the completer.

A job's first step runs at once, in its own context (as Python 3.12's eager tasks do): a handler
that finishes without suspending needs no Task and no timer. One that suspends continues in a
Task, and only then is its timeout armed (a timer that cancels the Task).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import queue
import threading
import time
import types
from collections.abc import Callable, Coroutine, Generator
from concurrent.futures import Executor, Future
from typing import TYPE_CHECKING, Any

from claimq import _validate
from claimq._worker.completer import Outcome
from claimq._worker.outcome import BadPayload, JobCancelled, JobTimeout, UnknownTask, failure_for
from claimq._worker.state import InFlight
from claimq.backends.base import Completion
from claimq.errors import InvalidInput, LeaseLost, Permanent
from claimq.job import CorruptRow, Job

if TYPE_CHECKING:
    from claimq.task import Task
    from claimq.worker import Runtime

log = logging.getLogger("claimq.worker")


def start_job(rt: Runtime, flight: InFlight) -> None:
    """Runs the job's first step now; a job that suspends continues in a Task of its own."""
    flight.started_at = time.monotonic()
    coro = run_job(rt, flight)
    context = contextvars.copy_context()
    try:
        waiting_on = context.run(coro.send, None)
    except StopIteration:
        return  # finished in its first step: its outcome is already with the completer
    except Exception:  # run_job reports every handler error itself: this is a bug of ours
        log.exception("job %s: the executor failed; its lease will expire", flight.job.id)
        return
    loop = asyncio.get_running_loop()
    flight.task = loop.create_task(
        _resume(coro, waiting_on), name=f"claimq-job-{flight.job.id}", context=context
    )
    timeout = _timeout(flight.job, rt.app.tasks.get(flight.job.task))
    if timeout is not None:
        handle = loop.call_later(
            timeout - (time.monotonic() - flight.started_at), _time_out, flight
        )
        flight.task.add_done_callback(lambda _: handle.cancel())


def _timeout(job: Job, task: Task[Any, Any] | None) -> float | None:
    """The job's own timeout, else its task's."""
    return job.timeout or (task.timeout if task else None)


def _time_out(flight: InFlight) -> None:
    if flight.task is not None and not flight.task.done():
        flight.timed_out = True
        flight.task.cancel()


@types.coroutine
def _resume(
    coro: Coroutine[Any, Any, None], waiting_on: Any
) -> Generator[Any, Any, None]:
    """Continues a coroutine whose first step ran outside any Task: hands the Task what it
    waits on, then relays every value, result and exception between the two (`yield from`,
    for a coroutine already started)."""
    while True:
        try:
            sent = yield waiting_on
        except BaseException as exc:  # noqa: BLE001 - cancellation included: passed on
            try:
                waiting_on = coro.throw(exc)
            except StopIteration:
                return
        else:
            try:
                waiting_on = coro.send(sent)
            except StopIteration:
                return


async def run_job(rt: Runtime, flight: InFlight) -> None:
    job = flight.job
    task = rt.app.tasks.get(job.task)
    outcome: Outcome
    try:
        if task is None:
            raise UnknownTask(
                f"no task {job.task!r} is registered in this worker "
                f"(known: {sorted(rt.app.tasks)[:20]})"
            )
        if type(job.payload) is not dict:
            if isinstance(job.payload, CorruptRow):
                raise BadPayload(str(job.payload))
            if not isinstance(job.payload, dict):
                raise BadPayload(f"payload is a {type(job.payload).__name__}, not a JSON object")
        args: tuple[Any, ...] = ()
        if task.wants_context:
            from claimq.worker import JobContext  # here: a cycle, and most handlers need none

            args = (JobContext(job=job, attempt=flight.attempt, worker_id=rt.worker_id,
                               _flight=flight, _rt=rt),)
        if task.is_async:
            result = await task.fn(*args, **job.payload)
        else:
            call = functools.partial(
                contextvars.copy_context().run, task.fn, *args, **job.payload
            )
            # A thread cannot be interrupted: on timeout the slot is freed and the thread's
            # eventual result is ignored.
            result = await asyncio.get_running_loop().run_in_executor(rt.handler_pool, call)
        if flight.completed_by_handler:
            rt.state.completed()
            rt.state.forget(job.id)
            return
        result_json = None
        if result is not None:
            try:
                result_json = _validate.result_json(result)
            except InvalidInput as exc:
                raise Permanent(str(exc)) from None
        outcome = Outcome(flight, Completion(job.id, job.claim_token or "", result_json))
    except asyncio.CancelledError:
        if flight.timed_out and not flight.lost:
            outcome = _failed(rt, flight, JobTimeout(
                f"ran longer than its timeout of {_timeout(job, task)}s"))
        elif flight.cancel_requested and not flight.lost:
            outcome = _failed(rt, flight, JobCancelled("cancelled by an operator while running"))
        else:
            rt.state.forget(job.id)  # shutdown or lost lease: whoever cancelled handles it
            raise
    except LeaseLost as exc:
        # ctx.complete_in() or ctx.heartbeat() found the job re-owned: nothing to report.
        if not flight.lost:
            flight.lost = True
            rt.state.count("lease_lost")
        log.warning("job %s: %s matched no row: lease lost, outcome dropped", job.id,
                    exc.operation)
        rt.state.forget(job.id)
        return
    except Exception as exc:
        if flight.cancel_requested:
            exc = JobCancelled(f"cancelled by an operator; handler raised {exc!r}")
        elif isinstance(exc, TypeError) and task is not None and _wrong_arguments(task, job):
            exc = BadPayload(f"payload does not fit the handler's parameters: {exc}")
        outcome = _failed(rt, flight, exc)
    if flight.lost:
        log.warning("job %s finished after its lease was lost; outcome dropped", job.id)
        rt.state.forget(job.id)
        return
    rt.submit(outcome)


class HandlerThreads(Executor):
    """The threads that run sync handlers: at most `max_workers`, started on demand, reused.

    They are daemon threads. A handler that outlives its timeout, its cancellation or the grace
    period cannot be interrupted, and its job is no longer ours; with ThreadPoolExecutor's
    threads, which the interpreter joins at exit, such a handler kept a stopped worker process
    alive until it returned (forever, if it hangs).
    """

    def __init__(self, max_workers: int, thread_name_prefix: str = "claimq-handler") -> None:
        self.max_workers = max_workers
        self.prefix = thread_name_prefix
        self._work: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._threads = 0
        self._shutdown = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot run handlers after shutdown")
            self._work.put((future, functools.partial(fn, *args, **kwargs)))
            if not self._idle.acquire(blocking=False) and self._threads < self.max_workers:
                self._threads += 1
                threading.Thread(
                    target=self._run, name=f"{self.prefix}-{self._threads}", daemon=True
                ).start()
        return future

    def _run(self) -> None:
        while (item := self._work.get()) is not None:
            future, call = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(call())
                except BaseException as exc:  # noqa: BLE001 - handed to the awaiting side
                    future.set_exception(exc)
            del item, future, call
            self._idle.release()

    def shutdown(self, wait: bool = False, *, cancel_futures: bool = False) -> None:
        """Ends the threads once their current handler returns; never waits for them."""
        with self._lock:
            self._shutdown = True
            threads = self._threads
        if cancel_futures:
            while True:
                try:
                    item = self._work.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
        for _ in range(threads):
            self._work.put(None)


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


def _failed(rt: Runtime, flight: InFlight, exc: BaseException) -> Outcome:
    task = rt.app.tasks.get(flight.job.task)
    policy = task.retry if task is not None else None
    failure = failure_for(flight.job, exc, attempt=flight.attempt, worker_id=rt.worker_id,
                          policy=policy)
    if not isinstance(exc, UnknownTask):
        log.info("job %s (%s) attempt %s failed: %s: %s", flight.job.id, flight.job.task,
                 flight.attempt, type(exc).__name__, exc)
    else:
        log.warning("job %s: %s", flight.job.id, exc)
    return Outcome(flight, failure=failure)
