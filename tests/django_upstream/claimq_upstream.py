"""What Django's own `tests/tasks/` need to run against claimq's backend (see run.py):

- `ClaimqTestBackend`: `ClaimqBackend` with the two helpers Django's DummyBackend tests read,
  `results` (every task result the backend holds, oldest first) and `clear()`. Both go through
  Django's connection, so they see the jobs of the test's own transaction.
- `Runner`: Django's DiscoverRunner that puts claimq's tables into the test database it made
  (runtests.py replaces INSTALLED_APPS, so claimq's app and its post_migrate hook are absent).

And what django-tasks-db's tests/tests.py needs (see tasks_db.py): `ClaimqResults` in place of
its `DBTaskResult` model, `db_worker()` in place of its `db_worker --batch` command, and
`TasksDbRunner`, which empties claimq's tables with each TransactionTestCase's flush.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlparse

from django.db import connections
from django.test.runner import DiscoverRunner

from claimq.contrib.django.tasks import RUNNER, ClaimqBackend


class ClaimqTestBackend(ClaimqBackend):
    def _tables(self) -> tuple[Any, list[str]]:
        connection = connections[self.using]
        if connection.vendor in ("sqlite", "mysql"):  # tables named claimq_*
            return connection, ["claimq_jobs", "claimq_archive", "claimq_dead"]
        schema = parse_qs(urlparse(self.app.url).query).get("schema", ["claimq"])[0]
        return connection, [f"{schema}.jobs", f"{schema}.archive", f"{schema}.dead"]

    @property
    def results(self) -> list[Any]:
        connection, tables = self._tables()
        with connection.cursor() as cursor:
            ids: list[int] = []
            for table in tables:
                cursor.execute(f"SELECT id FROM {table} WHERE task = %s", [RUNNER])
                ids += [row[0] for row in cursor.fetchall()]
        ids.sort()
        return [self.get_result(str(job_id)) for job_id in ids]

    def clear(self) -> None:
        connection, tables = self._tables()
        with connection.cursor() as cursor:
            for table in tables:
                cursor.execute(f"DELETE FROM {table} WHERE task = %s", [RUNNER])


class Runner(DiscoverRunner):
    def setup_databases(self, **kwargs: Any) -> Any:
        config = super().setup_databases(**kwargs)
        backend = ClaimqBackend("migrate", {"BACKEND": "", "QUEUES": [], "OPTIONS": {}})
        backend.migrate_test_database()  # on "default", the only database tasks' tests use
        backend.close()
        return config


# -- django-tasks-db's suite (tasks_db.py) ----------------------------------------------------


class _Results:
    """`DBTaskResult.objects` as django-tasks-db's tests use it, answered from claimq's jobs of
    Django tasks on the 'default' backend, read through Django's connection (inside the test's
    transaction): `ready()` (pending and due, in claimq's claim order: priority, then run_at,
    then id), `successful()` (archived), `failed()` (dead-lettered), `all()`, `count()`,
    iteration (each with `.task_result`), `filter(id=…).update(run_after=…)` (claimq's
    run_now(), the one change of run_after those tests make: to now), and `values("id").query`
    (the SQL another connection runs to count them)."""

    def __init__(self, keep: str = "all", ids: tuple[str, ...] | None = None) -> None:
        self._keep, self._ids = keep, ids

    @staticmethod
    def _backend() -> ClaimqTestBackend:
        from django.tasks import task_backends

        backend = task_backends["default"]
        assert isinstance(backend, ClaimqTestBackend), backend
        return backend

    def _jobs(self) -> list[Any]:
        from django.utils import timezone

        from claimq.job import Status

        backend = self._backend()
        connection, tables = backend._tables()
        connection.ensure_connection()
        with connection.cursor() as cursor:
            ids: list[int] = []
            for table in tables:
                cursor.execute(f"SELECT id FROM {table} WHERE task = %s", [RUNNER])
                ids += [row[0] for row in cursor.fetchall()]
        jobs = [backend.app.get_job(i, conn=connection.connection) for i in sorted(ids)]
        if self._ids is not None:
            jobs = [j for j in jobs if str(j.id) in self._ids]
        now = timezone.now()
        if self._keep == "ready":
            due = [j for j in jobs if j.status is Status.PENDING and j.run_at <= now]
            return sorted(due, key=lambda j: (-j.priority, j.run_at, j.id))
        if self._keep == "successful":
            return [j for j in jobs if j.status is Status.SUCCEEDED]
        if self._keep == "failed":
            return [j for j in jobs if j.status is Status.DEAD]
        return jobs

    def ready(self) -> _Results:
        return _Results("ready", self._ids)

    def successful(self) -> _Results:
        return _Results("successful", self._ids)

    def failed(self) -> _Results:
        return _Results("failed", self._ids)

    def all(self) -> _Results:
        return self

    def using(self, alias: str) -> _Results:
        return self

    def filter(self, *, id: Any) -> _Results:  # noqa: A002 - the ORM's keyword
        return _Results(self._keep, (str(id),))

    def count(self) -> int:
        return len(self._jobs())

    def __iter__(self) -> Any:
        backend = self._backend()
        for job in self._jobs():
            yield type("Row", (), {"task_result": backend.get_result(str(job.id))})()

    def update(self, *, run_after: Any) -> int:
        from django.utils import timezone

        if abs((run_after - timezone.now()).total_seconds()) > 60:
            raise NotImplementedError("claimq's equivalent moves run_after to now only")
        backend = self._backend()
        try:
            return len(backend.app.run_now([j.id for j in self._jobs()]))
        finally:
            backend.close()

    def values(self, *fields: str) -> _Results:
        return self

    @property
    def query(self) -> str:
        _, tables = self._backend()._tables()
        return f"SELECT id FROM {tables[0]} WHERE task = '{RUNNER}'"


class ClaimqResults:
    """Stands in for django_tasks_db.models.DBTaskResult in its tests (see _Results)."""

    objects = _Results()


def db_worker(*, queue_name: str = "default", backend_name: str = "default",
              worker_id: str | None = None, batch: bool = True, interval: float = 0,
              startup_delay: bool = False, verbosity: int = 0) -> None:
    """`manage.py db_worker --batch` as the tests call it (call_command), in claimq's terms:
    claimq.testing.drain() runs every due job of the queues (`*`: all) with a real Worker in
    this process until none is due, then the backend's pools close (Django drops the test
    database later). A backend that is not claimq's has no jobs here: nothing runs. Options
    claimq's worker lacks (--max-tasks, --exclude-queues, log output) are refused: their
    tests are excluded (excluded_tasks_db.txt)."""
    from django.tasks import task_backends

    from claimq.testing import drain

    if not batch or interval or startup_delay or verbosity:
        raise TypeError("claimq's equivalent runs a batch, silently, at once")
    backend = task_backends[backend_name]
    if not isinstance(backend, ClaimqBackend):
        return
    queues = None if queue_name == "*" else queue_name.split(",")
    try:
        drain(backend.app, queues, timeout=60)
    finally:
        backend.close()


class TasksDbRunner(Runner):
    """Runner, and: Django's flush between TransactionTestCases empties its models' tables
    (django-tasks-db's results among them); claimq's tables are no model's, so they are
    emptied with it."""

    def setup_test_environment(self, **kwargs: Any) -> None:
        super().setup_test_environment(**kwargs)
        from django.tasks import task_backends
        from django.test import TransactionTestCase

        flush = TransactionTestCase._fixture_teardown

        def teardown(case: Any) -> None:
            backend = task_backends["default"]
            if isinstance(backend, ClaimqTestBackend):
                backend.clear()
                backend.close()
            flush(case)

        TransactionTestCase._fixture_teardown = teardown  # type: ignore[method-assign]
