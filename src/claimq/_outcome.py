"""Turns a handler's exception into a Failure: which delay, which dead-letter reason. One rule
for the worker's executor and for App.fail (a job claimed by hand)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import traceback
from datetime import UTC, datetime
from types import TracebackType

from claimq.backends.base import Failure
from claimq.errors import Permanent, Retry, Throttled
from claimq.job import DeadReason, Job
from claimq.retry import DEFAULT_RETRY, RetryPolicy

MAX_MESSAGE = 2000
MAX_TRACEBACK = 8000


class JobTimeout(Exception):  # noqa: N818 - names the event, as asyncio.TimeoutError does
    """The handler ran past its timeout."""


class UnknownTask(Exception):  # noqa: N818
    """This worker has no handler registered under the job's task name."""


class JobCancelled(Exception):  # noqa: N818
    """An operator cancelled the job while it ran."""


class BadPayload(Exception):  # noqa: N818
    """The stored payload is not a JSON object (written by another client)."""


def describe(error: BaseException) -> str:
    """`Type: message`, even for an exception whose __str__ itself raises."""
    return f"{type(error).__name__}: {_text(error)}"


def _text(error: BaseException) -> str:
    try:
        return str(error)
    except Exception as exc:  # noqa: BLE001 - user code: its __str__ may do anything
        return f"<str() of the exception raised {type(exc).__name__}>"


# Frames a handler's traceback starts with before it reaches the user's code: claimq's own,
# and those of the stdlib pieces that run a handler (a Task, a thread pool, a thread).
_INTERNAL_DIRS = tuple(os.path.dirname(path) + os.sep for path in (
    __file__, asyncio.__file__, concurrent.futures.__file__))  # claimq's own directory first
_INTERNAL_FILES = (threading.__file__,)


def _internal(filename: str) -> bool:
    return filename.startswith(_INTERNAL_DIRS) or filename in _INTERNAL_FILES


def user_traceback(tb: TracebackType | None) -> TracebackType | None:
    """`tb` from its first frame outside claimq and the machinery that runs a handler (the
    user's frame); `tb` itself when every frame is such (the error is claimq's own)."""
    first = tb
    while first is not None and _internal(first.tb_frame.f_code.co_filename):
        first = first.tb_next
    return tb if first is None else first


def _traceback(error: BaseException) -> str:
    """The traceback of `error` from the user's frame (user_traceback), causes included."""
    tb = user_traceback(error.__traceback__)
    try:
        return "".join(traceback.format_exception(type(error), error, tb))
    except Exception:  # noqa: BLE001 - formatting calls str() on it
        return "".join(traceback.format_tb(tb)) + describe(error)


def error_entry(job: Job, error: BaseException, attempt: int, worker_id: str | None) -> dict[
    str, object
]:
    tb = _traceback(error)
    return {
        "attempt": attempt,
        "at": datetime.now(UTC).isoformat(),
        "worker": worker_id,
        "error": type(error).__name__,
        # the importable path (Django's Tasks record it): two libraries' classes may share a name
        "error_class": f"{type(error).__module__}.{type(error).__qualname__}",
        # NUL cannot be stored in PostgreSQL text or jsonb: keep it visible, not fatal
        "message": _text(error)[:MAX_MESSAGE].replace("\x00", "\\x00"),
        "traceback": tb[-MAX_TRACEBACK:].replace("\x00", "\\x00"),
    }


def failure_for(
    job: Job,
    error: BaseException,
    *,
    attempt: int,
    worker_id: str | None,
    policy: RetryPolicy | None = None,
    token: str | None = None,
    throttle: bool = True,
) -> Failure:
    """Retry(after) -> that delay; Permanent/cancel/bad payload -> dead now; timeout, unknown task
    and anything else -> backoff, dead letters once attempts run out (with a matching reason).
    Throttled(after) -> that delay and a pause of the job's queue; without `throttle` (a backend
    without capabilities.flow_control) a plain retry after `after`."""
    token = token if token is not None else job.claim_token or ""
    entry = error_entry(job, error, attempt, worker_id)
    if isinstance(error, Permanent | BadPayload):
        return Failure(job.id, token, entry, 0.0, DeadReason.PERMANENT_ERROR, permanent=True)
    if isinstance(error, JobCancelled):
        return Failure(job.id, token, entry, 0.0, DeadReason.CANCELLED, permanent=True)
    if job.retry:
        policy = RetryPolicy.from_dict(job.retry)
    delay = (policy or DEFAULT_RETRY).delay(attempt)
    reason = DeadReason.RETRIES_EXHAUSTED
    if isinstance(error, Throttled) and throttle:
        return Failure(job.id, token, entry, error.after, reason, throttle=error.after)
    if isinstance(error, Retry):
        delay = error.after
    elif isinstance(error, JobTimeout):
        reason = DeadReason.TIMEOUT
    elif isinstance(error, UnknownTask):
        reason = DeadReason.UNKNOWN_TASK
    return Failure(job.id, token, entry, delay, reason)
