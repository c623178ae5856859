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

Priorities, queue names, `run_after` and `takes_context` carry over (and `get_result()`'s
`task` is the task with them, as enqueued); `get_result()` reads the job back (READY while
pending or retrying, RUNNING, SUCCESSFUL with its return value, FAILED once dead-lettered,
with one TaskError per failed attempt). Every job runs through one claimq task (`RUNNER`)
that imports the Django task by its path (stored in the payload and as the job's tag).
"""

from __future__ import annotations

import builtins
import traceback
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, urlparse

from django.conf import settings
from django.db import connections, transaction
from django.utils import timezone
from django.utils.module_loading import import_string

try:  # Django 6
    from django.tasks import TaskContext, TaskResult, TaskResultStatus
    from django.tasks.backends.base import BaseTaskBackend
    from django.tasks.base import TaskError
    from django.tasks.exceptions import TaskResultDoesNotExist
    from django.tasks.signals import task_enqueued, task_finished, task_started
except ImportError:  # the backport
    from django_tasks import TaskContext, TaskResult, TaskResultStatus
    from django_tasks.backends.base import BaseTaskBackend
    from django_tasks.base import TaskError
    from django_tasks.exceptions import TaskResultDoesNotExist
    from django_tasks.signals import task_enqueued, task_finished, task_started

from claimq._processes import import_app
from claimq.app import App
from claimq.contrib.django import _check_same_database, _same_database, database_url
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
        self.schema: str | None = self.options.get("SCHEMA")
        # Django builds its task backends when a tasks module is imported, before the test
        # runner swaps in the test database: everything about the database is read at use.
        self._path: str | None = self.options.get("APP") or getattr(settings, "CLAIMQ_APP", None)
        self._app: App | None = None
        if self._path:
            self.app  # noqa: B018 - the named App learns RUNNER now, for its workers

    @property
    def app(self) -> App:
        """The named App (OPTIONS["APP"] or settings.CLAIMQ_APP), else an App on Django's
        database as Django's settings are now (its test database inside tests)."""
        if self._path:
            if self._app is None:
                self._app = _with_runner(import_app(self._path))
            return self._app
        url = _django_url(self.using, self.schema)
        if self._app is None or self._app.url != url:
            if self._app is not None:
                self._app.close()
            self._app = _with_runner(App(url))
        return self._app

    def close(self) -> None:
        """Closes the pools of the backend's own App (never those of a named App)."""
        if self._app is not None and not self._path:
            self._app.close()
            self._app = None

    def _connection(self) -> Any:
        connection = connections[self.using]
        connection.ensure_connection()
        return connection

    def enqueue(self, task: Any, args: Any, kwargs: Any) -> Any:
        self.validate_task(task)
        result = TaskResult(
            task=task, id="0", status=TaskResultStatus.READY, enqueued_at=None,
            started_at=None, finished_at=None, last_attempted_at=None, args=args,
            kwargs=kwargs, backend=self.alias, errors=[], worker_ids=[])
        payload = {"task": task.module_path, "args": result.args, "kwargs": result.kwargs,
                   "takes_context": task.takes_context, "backend": self.alias}
        if task.run_after is not None:  # get_result()'s task is the one enqueued, run_after too
            payload["run_after"] = task.run_after.isoformat()
        app = self.app
        with transaction.atomic(using=self.using):
            connection = self._connection()
            _check_same_database(app.url, connection)
            job_id = app.enqueue(
                RUNNER, payload, queue=task.queue_name, priority=task.priority,
                run_at=task.run_after, max_attempts=self.max_attempts,
                tags=[task.module_path[-200:]], conn=connection.connection)
            # read back in the same transaction: the stored time, as get_result() gives it
            stored = app.get_job(job_id, conn=connection.connection)
        result = replace(result, id=str(job_id), enqueued_at=stored.created_at)
        task_enqueued.send(type(self), task_result=result)
        return result

    def get_result(self, result_id: str) -> Any:
        app = self.app
        connection = self._connection()
        # Through Django's connection when the backend writes through it: inside the atomic()
        # that enqueued the job (and every django.test.TestCase) only it sees the job, and no
        # pool of claimq's stays on a test database that Django then drops.
        conn = connection.connection if _same_database(app.url, connection) else None
        try:
            job = app.get_job(int(result_id), conn=conn)
        except (JobNotFound, ValueError):
            raise TaskResultDoesNotExist(result_id) from None
        if job.task != RUNNER or not isinstance(job.payload, dict):
            raise TaskResultDoesNotExist(result_id)
        return _result(job, self.alias)

    def check(self, **kwargs: Any) -> Iterable[Any]:
        return []

    def migrate_test_database(self) -> None:
        """claimq's tables in the test database Django just made (claimq_migrate made them in
        the real one)."""
        app = self.app
        connection = self._connection()
        if connection.vendor == "sqlite" and connection.is_in_memory_db():
            _migrate_sqlite(connection.connection)
            return
        schema = parse_qs(urlparse(app.url).query).get("schema", [self.schema])[0]
        with App(database_url(self.using, schema=schema)) as own:
            own.migrate()


def _with_runner(app: App) -> App:
    if RUNNER not in app.tasks:
        app.task(name=RUNNER)(run_task)
    return app


def _django_url(using: str, schema: str | None) -> str:
    connection = connections[using]
    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        # Django's in-memory test database: read and written only through Django's connection
        return "sqlite:///:memory:"
    return database_url(using, schema=schema)


def _migrate_sqlite(conn: Any) -> None:
    """claimq's SQLite migrations through Django's connection (an in-memory test database
    that no other connection can open)."""
    from claimq.backends.sqlite.backend import _MIGRATIONS, _split_statements

    conn.execute("CREATE TABLE IF NOT EXISTS claimq_migrations ("
                 " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)")
    done = {r[0] for r in conn.execute("SELECT version FROM claimq_migrations")}
    for version, name, text in _MIGRATIONS:
        if version not in done:
            for statement in _split_statements(text):
                conn.execute(statement)
            conn.execute("INSERT INTO claimq_migrations (version, name, applied_at) "
                         "VALUES (?, ?, 0)", (version, name))


def _result(job: Job, alias: str) -> Any:
    payload = job.payload
    run_after = payload.get("run_after")
    # the task as enqueued: its priority, queue and run_after (as django-tasks-db's results do)
    task = import_string(payload["task"]).using(
        priority=job.priority, queue_name=job.queue, backend=alias,
        run_after=datetime.fromisoformat(run_after) if run_after else None)
    errors = [e for e in job.errors if e.get("attempt") is not None]
    workers = [str(e.get("worker")) for e in errors]
    if job.status in (Status.PROCESSING, Status.SUCCEEDED) and job.worker_id:
        workers.append(job.worker_id)
    result = TaskResult(
        task=task, id=str(job.id), status=_STATUS[job.status], enqueued_at=job.created_at,
        started_at=job.started_at, finished_at=job.finished_at,
        last_attempted_at=_last_attempt(job), args=payload.get("args", []),
        kwargs=payload.get("kwargs", {}), backend=alias,
        errors=[TaskError(exception_class_path=str(e.get("error_class")
                                                   or _class_path(str(e.get("error")))),
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
             takes_context: bool = False, backend: str = "default",
             run_after: str | None = None) -> Any:
    """The claimq handler of every Django task: imports it and calls it (sync or async, in
    the worker's thread pool), with a TaskContext when the task takes one; sends Django's
    task_started, and task_finished once the result is final (succeeded, or failed for the
    last time). `run_after` (the task's, ISO 8601) is for the results only: the job's run_at
    holds it for the queue."""
    django_task = import_string(task)
    now = timezone.now()
    started = replace(_result(ctx.job, backend), status=TaskResultStatus.RUNNING,
                      started_at=now, last_attempted_at=now)
    task_started.send(sender=ClaimqBackend, task_result=started)
    try:
        if takes_context:
            value = django_task.call(TaskContext(task_result=started), *args, **kwargs)
        else:
            value = django_task.call(*args, **kwargs)
    except Exception as exc:
        if ctx.attempt >= ctx.job.max_attempts:  # dead-lettered now: the result is final
            error = TaskError(exception_class_path=_path_of(type(exc)),
                              traceback="".join(traceback.format_exception(exc)))
            task_finished.send(sender=ClaimqBackend, task_result=replace(
                started, status=TaskResultStatus.FAILED, finished_at=timezone.now(),
                errors=[*started.errors, error]))
        raise
    finished = replace(started, status=TaskResultStatus.SUCCESSFUL, finished_at=timezone.now())
    object.__setattr__(finished, "_return_value", value)
    task_finished.send(sender=ClaimqBackend, task_result=finished)
    return value


def _path_of(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


__all__ = ["RUNNER", "ClaimqBackend", "run_task"]
