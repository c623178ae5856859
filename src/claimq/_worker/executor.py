"""Executor: runs one started job. Async handlers run on the loop, sync ones in a thread pool;
a per-task (or per-job) timeout bounds both. The outcome goes to the completer."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import time
from typing import TYPE_CHECKING, Any

from claimq import _validate
from claimq._worker.completer import Outcome
from claimq._worker.outcome import BadPayload, JobCancelled, JobTimeout, UnknownTask, failure_for
from claimq._worker.state import InFlight
from claimq.backends.base import Completion
from claimq.errors import InvalidInput, Permanent

if TYPE_CHECKING:
    from claimq.worker import Runtime

log = logging.getLogger("claimq.worker")


async def run_job(rt: Runtime, flight: InFlight) -> None:
    from claimq.worker import JobContext

    job = flight.job
    task = rt.app.tasks.get(job.task)
    outcome: Outcome
    flight.started_at = time.monotonic()
    try:
        if task is None:
            raise UnknownTask(
                f"no task {job.task!r} is registered in this worker "
                f"(known: {sorted(rt.app.tasks)[:20]})"
            )
        if not isinstance(job.payload, dict):
            raise BadPayload(f"payload is a {type(job.payload).__name__}, not a JSON object")
        ctx = JobContext(job=job, attempt=flight.attempt, worker_id=rt.worker_id,
                         _flight=flight, _rt=rt)
        args: tuple[Any, ...] = (ctx,) if task.wants_context else ()
        timeout = job.timeout or task.timeout
        if task.is_async:
            result = await asyncio.wait_for(task.fn(*args, **job.payload), timeout)
        else:
            call = functools.partial(
                contextvars.copy_context().run, task.fn, *args, **job.payload
            )
            future = asyncio.get_running_loop().run_in_executor(rt.handler_pool, call)
            # A thread cannot be interrupted: on timeout the slot is freed and the thread's
            # eventual result is ignored.
            result = await asyncio.wait_for(future, timeout)
        if flight.completed_by_handler:
            rt.state.count("completed")
            rt.state.forget(job.id)
            return
        try:
            result_json = _validate.result_json(result)
        except InvalidInput as exc:
            raise Permanent(str(exc)) from None
        outcome = Outcome(flight, completion=Completion(job.id, job.claim_token or "", result_json))
    except TimeoutError:
        limit = job.timeout or (task.timeout if task else None)
        outcome = _failed(rt, flight, JobTimeout(f"ran longer than its timeout of {limit}s"))
    except asyncio.CancelledError:
        if flight.cancel.is_set() and not flight.lost:
            outcome = _failed(rt, flight, JobCancelled("cancelled by an operator while running"))
        else:
            rt.state.forget(job.id)  # shutdown or lost lease: whoever cancelled handles it
            raise
    except Exception as exc:
        if flight.cancel.is_set():
            exc = JobCancelled(f"cancelled by an operator; handler raised {exc!r}")
        outcome = _failed(rt, flight, exc)
    if flight.lost:
        log.warning("job %s finished after its lease was lost; outcome dropped", job.id)
        rt.state.forget(job.id)
        return
    rt.submit(outcome)


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
