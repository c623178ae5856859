"""Structured logs.

claimq's worker logs under `claimq.worker` with a stable event name in the record's `event`
attribute, and the job's `job_id`, `task`, `queue` and `attempt` where a job is concerned:

    worker.started  worker.stopped  worker.dead  worker.metrics
    job.started (debug)  job.succeeded (debug)  job.failed  job.retried  job.dead
    lease.lost  loop.restarted  worker.failed  database.unreachable  database.reachable
    queue.unknown (`claimq worker --queues` names a queue that does not exist yet)
    schedule.fired (debug)

`database.unreachable` also comes at start: a worker started before its database waits for it
with back-off (`database.reachable` when it starts).

While a handler runs, its job is the current one of its asyncio Task (and of the thread that
runs a sync handler): `JobFields`, a logging.Filter, adds the job's fields to the handler's own
records, and `JsonFormatter` writes every record as one JSON object per line with them.
`claimq worker --log-format json` sets both up; elsewhere add them to a handler of your own:

    handler.addFilter(claimq.logs.JobFields())
    handler.setFormatter(claimq.logs.JsonFormatter())

A filter on a handler runs only for records that pass the level: disabled levels cost nothing.
"""

from __future__ import annotations

import contextvars
import json
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from claimq._worker.inflight import InFlight
    from claimq.job import Job

JOB_FIELDS = ("job_id", "task", "queue", "attempt")

# The job whose handler runs in this context (as claimed: its attempts are this attempt's
# number): the executor sets it first thing in each job's own Task, so it is that job's alone.
current_job: contextvars.ContextVar[Job | None] = contextvars.ContextVar(
    "claimq_current_job", default=None)


def job_fields() -> dict[str, Any] | None:
    """The current job's fields (job_id, task, queue, attempt), or None outside a handler."""
    job = current_job.get()
    if job is None:
        return None
    return {"job_id": job.id, "task": job.task, "queue": job.queue, "attempt": job.attempts}


def error_fields(error: BaseException) -> dict[str, Any]:
    """The `extra` of a record about an error: `error` (its type's name), `error_class` (its
    importable path), `error_message` and `traceback` (from the user's frame: claimq's own
    frames and those that run a handler left out; causes included)."""
    from claimq._outcome import _text, _traceback

    kind = type(error)
    return {"error": kind.__name__, "error_class": f"{kind.__module__}.{kind.__qualname__}",
            "error_message": _text(error), "traceback": _traceback(error)}


def event(name: str, flight: InFlight) -> dict[str, Any]:
    """The `extra` of a record about one claim: its event name and job fields."""
    job = flight.job
    return {"event": name, "job_id": job.id, "task": job.task, "queue": job.queue,
            "attempt": flight.attempt}


class JobFields(logging.Filter):
    """Adds the current job's fields to records that do not carry them already."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "job_id" not in record.__dict__:
            fields = job_fields()
            if fields is not None:
                record.__dict__.update(fields)
        return True


_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts (ISO 8601, UTC), level, logger, message, then event, the
    job's fields and any other `extra` attributes; for a record about an error (exc_info, or a
    failed job's `job.failed`) error, error_class, error_message and traceback (error_fields:
    from the user's frame)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if "job_id" not in out:
            fields = job_fields()
            if fields is not None:
                out.update(fields)
        if record.exc_info and record.exc_info[1] is not None:
            for key, value in error_fields(record.exc_info[1]).items():
                out.setdefault(key, value)
        elif record.exc_text:
            out.setdefault("traceback", record.exc_text)
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        return json.dumps(out, default=str, ensure_ascii=False)


__all__ = ["JOB_FIELDS", "JobFields", "JsonFormatter", "current_job", "error_fields", "event",
           "job_fields"]
