"""A Django Tasks backend on claimq: `@task` functions of a Django project enqueue into claimq
(inside Django's own transaction) and run on claimq workers (`manage.py claimq_worker`).

It works with Django 6's `django.tasks` and, on Django 4.2 to 5.2, with the `django-tasks`
backport (`pip install django-tasks`)::

    TASKS = {"default": {
        "BACKEND": "claimq.contrib.django.tasks.ClaimqBackend",
        "QUEUES": ["default", "mail"],  # Django's queue names are claimq's queues
        "OPTIONS": {"APP": "shop.jobs:app",  # optional: else an App on Django's database
                    "MAX_ATTEMPTS": 1},      # claimq retries a failed task this many times
    }}

Priorities, queue names, `run_after` and `takes_context` carry over; `get_result()` reads
the job back (READY while pending or retrying, RUNNING, SUCCESSFUL with its return value,
FAILED once dead-lettered, with one TaskError per failed attempt). Every job runs through one
claimq task (`RUNNER`) that imports the Django task by its path (stored in the payload and as
the job's tag).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connections, transaction
from django.utils import timezone
from django.utils.module_loading import import_string

try:  # Django 6
    from django.tasks import TaskContext, TaskResult, TaskResultStatus
    from django.tasks.backends.base import BaseTaskBackend
    from django.tasks.base import TaskError
    from django.tasks.exceptions import TaskResultDoesNotExist
except ImportError:  # the backport
    from django_tasks import TaskContext, TaskResult, TaskResultStatus
    from django_tasks.backends.base import BaseTaskBackend
    from django_tasks.base import TaskError
    from django_tasks.exceptions import TaskResultDoesNotExist

from claimq._processes import import_app
from claimq.app import App
from claimq.contrib.django import _check_same_database, database_url
from claimq.errors import JobNotFound
from claimq.job import Job, Status

RUNNER = "claimq.contrib.django.run_task"
_STATUS = {
    Status.PENDING: TaskResultStatus.READY,
    Status.FETCHED: TaskResultStatus.READY,
    Status.PROCESSING: TaskResultStatus.RUNNING,
    Status.SUCCEEDED: TaskResultStatus.SUCCESSFUL,
    Status.DEAD: TaskResultStatus.FAILED,
}


class ClaimqBackend(BaseTaskBackend):
    supports_defer = True
    supports_async_task = True
    supports_get_result = True
    supports_priority = True

    def __init__(self, alias: str, params: dict[str, Any]) -> None:
        super().__init__(alias, params)
        self.using = self.options.get("DATABASE", "default")
        self.max_attempts = int(self.options.get("MAX_ATTEMPTS", 1))
        path = self.options.get("APP") or getattr(settings, "CLAIMQ_APP", None)
        self.app: App = import_app(path) if path else App(
            database_url(self.using, schema=self.options.get("SCHEMA")))
        if RUNNER not in self.app.tasks:
            self.app.task(name=RUNNER)(run_task)

    def enqueue(self, task: Any, args: Any, kwargs: Any) -> Any:
        self.validate_task(task)
        result = TaskResult(
            task=task, id="0", status=TaskResultStatus.READY, enqueued_at=None,
            started_at=None, finished_at=None, last_attempted_at=None, args=args,
            kwargs=kwargs, backend=self.alias, errors=[], worker_ids=[])
        payload = {"task": task.module_path, "args": result.args, "kwargs": result.kwargs,
                   "takes_context": task.takes_context, "backend": self.alias}
        with transaction.atomic(using=self.using):
            connection = connections[self.using]
            connection.ensure_connection()
            _check_same_database(self.app.url, connection)
            job_id = self.app.enqueue(
                RUNNER, payload, queue=task.queue_name, priority=task.priority,
                run_at=task.run_after, max_attempts=self.max_attempts,
                tags=[task.module_path[-200:]], conn=connection.connection)
        # (not read back: inside the caller's open transaction, other connections cannot see it)
        return replace(result, id=str(job_id), enqueued_at=timezone.now())

    def get_result(self, result_id: str) -> Any:
        try:
            job = self.app.get_job(int(result_id))
        except (JobNotFound, ValueError):
            raise TaskResultDoesNotExist(result_id) from None
        if job.task != RUNNER or not isinstance(job.payload, dict):
            raise TaskResultDoesNotExist(result_id)
        return _result(job, self.alias)

    def check(self, **kwargs: Any) -> Iterable[Any]:
        return []


def _result(job: Job, alias: str) -> Any:
    payload = job.payload
    task = import_string(payload["task"])
    errors = [e for e in job.errors if e.get("attempt") is not None]
    workers = [str(e.get("worker")) for e in errors]
    if job.status in (Status.PROCESSING, Status.SUCCEEDED) and job.worker_id:
        workers.append(job.worker_id)
    result = TaskResult(
        task=task, id=str(job.id), status=_STATUS[job.status], enqueued_at=job.created_at,
        started_at=job.started_at, finished_at=job.finished_at,
        last_attempted_at=_last_attempt(job), args=payload.get("args", []),
        kwargs=payload.get("kwargs", {}), backend=alias,
        errors=[TaskError(exception_class_path=_class_path(str(e.get("error"))),
                          traceback=str(e.get("traceback") or e.get("message") or ""))
                for e in errors],
        worker_ids=workers)
    if job.status == Status.SUCCEEDED:
        object.__setattr__(result, "_return_value", job.result)
    return result


def _last_attempt(job: Job) -> datetime | None:
    return job.started_at if job.attempts else None


def _class_path(name: str) -> str:
    """claimq records an exception's class name; Django wants an importable path."""
    if "." in name:
        return name
    return f"builtins.{name}" if isinstance(getattr(builtins, name, None), type) else (
        "builtins.Exception")


def run_task(ctx: Any, task: str, args: list[Any], kwargs: dict[str, Any],
             takes_context: bool = False, backend: str = "default") -> Any:
    """The claimq handler of every Django task: imports it and calls it (sync or async, in
    the worker's thread pool), with a TaskContext when the task takes one."""
    django_task = import_string(task)
    if takes_context:
        context = TaskContext(task_result=_result(ctx.job, backend))
        return django_task.call(context, *args, **kwargs)
    return django_task.call(*args, **kwargs)


__all__ = ["RUNNER", "ClaimqBackend", "run_task"]
