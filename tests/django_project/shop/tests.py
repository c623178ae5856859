"""The project's own tests, run by `manage.py test shop` (tests/django_project/
test_django_project.py runs it on SQLite and PostgreSQL): Django's test runner makes a test
database after the task backend was built, and drops it afterwards (issue 29)."""

from dataclasses import replace
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

from django.db import connection, transaction
from django.test import TestCase, TransactionTestCase
from django.utils import timezone
from django_tasks import TaskResultStatus, default_task_backend
from django_tasks.signals import task_enqueued, task_finished, task_started

from claimq._outcome import error_entry
from claimq.contrib.django.tasks import _result, run_task
from claimq.job import Status
from shop.models import Order
from shop.tasks import ConnectionError as ShopConnectionError
from shop.tasks import fulfil_later, unreachable


def _received(signal: Any) -> list[Any]:
    got: list[Any] = []

    def receiver(sender: Any, task_result: Any, **kwargs: Any) -> None:
        got.append(task_result)

    signal.connect(receiver, weak=False)
    return got


def _run(result_id: str) -> Any:
    """What a claimq worker does with the job, in this process (an in-memory test database
    has no other reader): run_task with the job as read through Django's connection."""
    app = default_task_backend.app  # type: ignore[attr-defined]
    job = app.get_job(int(result_id), conn=connection.connection)
    ctx = SimpleNamespace(job=job, attempt=1)
    return run_task(ctx, **job.payload)


class EnqueueInTestCase(TestCase):
    def test_enqueue_and_read_back_in_the_test_database(self) -> None:
        # defect 1: the backend follows the test database; defect 6: TestCase's transaction
        order = Order.objects.create(item="cake")
        result = fulfil_later.enqueue(order.id)
        self.assertEqual(result.status, TaskResultStatus.READY)
        # defect 4: enqueued_at is the stored time
        self.assertEqual(default_task_backend.get_result(result.id), result)
        enqueued_at = result.enqueued_at
        result.refresh()
        self.assertEqual(result.enqueued_at, enqueued_at)

    def test_read_back_with_the_options_enqueued(self) -> None:
        # django-tasks-db's suite: get_result()'s task is the one enqueued, options and all
        later = timezone.now() + timedelta(hours=1)
        task = fulfil_later.using(priority=5, queue_name="mail", run_after=later)
        result = task.enqueue(0)
        read = default_task_backend.get_result(result.id)
        self.assertEqual(read, result)
        self.assertEqual((read.task.priority, read.task.queue_name, read.task.run_after),
                         (5, "mail", later))
        self.assertIsNone(default_task_backend.get_result(
            fulfil_later.enqueue(0).id).task.run_after)

    def test_inside_atomic(self) -> None:
        with transaction.atomic():
            result = fulfil_later.enqueue(0)
            self.assertEqual(default_task_backend.get_result(result.id).id, result.id)

    def test_signals(self) -> None:
        # defect 3
        enqueued, started = _received(task_enqueued), _received(task_started)
        finished = _received(task_finished)
        order = Order.objects.create(item="tea")
        result = fulfil_later.enqueue(order.id)
        self.assertEqual([r.id for r in enqueued], [result.id])
        self.assertEqual(_run(result.id), {"order": order.id, "item": "tea"})
        self.assertEqual([(r.id, r.status) for r in started],
                         [(result.id, TaskResultStatus.RUNNING)])
        self.assertEqual([(r.id, r.status, r.return_value) for r in finished],
                         [(result.id, TaskResultStatus.SUCCESSFUL,
                           {"order": order.id, "item": "tea"})])

    def test_exception_class_path(self) -> None:
        # defect 5: a library's class named like a builtin keeps its own path
        finished = _received(task_finished)
        result = unreachable.enqueue()
        with self.assertRaises(ShopConnectionError):
            _run(result.id)
        [failed] = finished
        self.assertEqual(failed.status, TaskResultStatus.FAILED)
        self.assertEqual([e.exception_class_path for e in failed.errors],
                         ["shop.tasks.ConnectionError"])
        # and as the worker records it, read back by get_result()
        app = default_task_backend.app  # type: ignore[attr-defined]
        job = app.get_job(int(result.id), conn=connection.connection)
        entry = error_entry(job, ShopConnectionError("down"), 1, "w1")
        dead = replace(job, status=Status.DEAD, attempts=1, errors=(entry,))
        self.assertEqual([e.exception_class_path for e in _result(dead, "default").errors],
                         ["shop.tasks.ConnectionError"])


class ReadOutsideTransaction(TransactionTestCase):
    def test_get_result_leaves_nothing_on_the_test_database(self) -> None:
        # defect 2: the jobs are committed here; reading them must not leave a claimq pool
        # connected to the test database, which Django drops after the tests
        result = fulfil_later.enqueue(0)
        self.assertEqual(default_task_backend.get_result(result.id), result)
        result.refresh()
        self.assertEqual(result.status, TaskResultStatus.READY)
