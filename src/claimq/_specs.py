"""One job of enqueue_many, from a mapping of enqueue()'s options, checked as an App checks it:
shared by App and the CLI (which checks its input before it opens the database)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from claimq import _validate
from claimq.errors import InvalidInput
from claimq.task import Task


class Defaults(Protocol):
    """What of an App the checks read: its tasks and its defaults."""

    @property
    def tasks(self) -> dict[str, Task[Any, Any]]: ...
    @property
    def default_max_attempts(self) -> int: ...
    @property
    def payload_limit(self) -> int: ...
    @property
    def idempotency_retention(self) -> float: ...


def check_unique_for(app: Defaults, period: float) -> None:
    if period > app.idempotency_retention:
        raise InvalidInput(
            f"unique_for ({period}) is longer than the App's idempotency_retention "
            f"({app.idempotency_retention} s), after which keys are purged")


def job_spec(app: Defaults, item: object) -> _validate.NewJob:
    """One job of enqueue_many: a mapping of enqueue()'s options; a registered task's name
    takes that task's defaults (queue, priority, max_attempts, timeout), as in enqueue()."""
    tasks = app.tasks
    task = tasks.get(name) if (
        tasks and (type(item) is dict or isinstance(item, Mapping))
        and type(name := item.get("task")) is str
    ) else None
    if task is None:
        job = _validate.enqueue_spec(
            item, default_max_attempts=app.default_max_attempts,
            payload_limit=app.payload_limit,
        )
    else:
        if isinstance(item, Mapping):
            payload = item.get("payload")
            if (dumped := task.dump_arguments(payload)) is not payload:
                item = {**item, "payload": dumped}
        if (task.concurrency_key is not None or task.sequence_key is not None
                or task.rate_key is not None):
            spec: Mapping[str, Any] = item  # type: ignore[assignment] # a mapping, as above
            item = {**spec, **task.flow_options(spec.get("payload"), spec)}
        job = _validate.enqueue_spec(
            item, default_queue=task.queue, default_priority=task.priority,
            default_max_attempts=task.max_attempts, default_timeout=task.timeout,
            payload_limit=app.payload_limit,
        )
    if job.flow is not None and job.flow.unique_for is not None:
        check_unique_for(app, job.flow.unique_for)
    return job
