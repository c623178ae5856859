"""The `tests.tasks` module django-tasks-db's tests/tests.py imports (`from tests import tasks
as test_tasks`), which its sdist leaves out; tasks_db.py puts this file there.

Reconstructed, not copied: these are the tasks of Django 6.0's tests/tasks/tasks.py (where
django-tasks' test tasks went), each named as tests.py names it, with the one text tests.py
reads differently ("This task failed due to ValueError", lower-case "task"). Nothing here is
claimq's: only what the suite's assertions describe.
"""

import time

from django.tasks import TaskContext, task


@task()
def noop_task(*args, **kwargs):
    return None


@task()
async def noop_task_async(*args, **kwargs):
    return None


@task()
def calculate_meaning_of_life():
    return 42


@task()
def failing_task_value_error():
    raise ValueError("This task failed due to ValueError")


@task()
def failing_task_system_exit():
    raise SystemExit("This task failed due to SystemExit")


@task()
def failing_task_keyboard_interrupt():
    raise KeyboardInterrupt("This task failed due to KeyboardInterrupt")


@task()
def complex_exception():
    raise ValueError(ValueError("This task failed"))


@task()
def complex_return_value():
    # Return something which isn't JSON serializable nor picklable.
    return lambda: True


@task()
def exit_task():
    exit(1)


@task()
def hang():
    """Do nothing for 5 minutes."""
    time.sleep(300)


@task()
def sleep_for(seconds):
    time.sleep(seconds)


@task(takes_context=True)
def get_task_id(context):
    return context.task_result.id


@task(takes_context=True)
def test_context(context, attempt):
    assert isinstance(context, TaskContext)
    assert context.attempt == attempt
