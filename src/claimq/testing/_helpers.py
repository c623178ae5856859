"""Helpers for the test suites of applications that use claimq: run what they enqueued, in the
test's own process, with the real worker, on a real database (a SQLite file is enough), and
assert on what is waiting in the queues."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from claimq import _validate
from claimq.app import App
from claimq.errors import InvalidInput
from claimq.job import Job
from claimq.task import Task

POLL = 0.005  # seconds between two looks at the database while draining


@dataclass(frozen=True, slots=True)
class Drained:
    """What one drain() ran: attempts that succeeded, that failed and will be retried (their
    retry is scheduled: drain() leaves jobs that are not due yet), and jobs dead-lettered;
    `errors`: what each failed attempt raised, "job ID (task) attempt N: Type: message"."""

    succeeded: int
    retried: int
    dead: int
    errors: tuple[str, ...] = ()

    @property
    def ran(self) -> int:
        return self.succeeded + self.retried + self.dead


def drain(
    app: App,
    queue: str | Sequence[str] | None = None,
    *,
    concurrency: int = 1,
    timeout: float = 60.0,
) -> Drained:
    """Run every due job of `queue` (a name, several, or None: every queue) in this process,
    with a real `Worker`, until none is due or running; jobs that the handlers enqueue run too.
    Jobs scheduled for later (a delay, a retry's backoff) stay: move an `App(clock=FakeClock())`
    forward and drain again. Raises TimeoutError when due work remains after `timeout` seconds.
    From async code (a running event loop) use `await adrain(...)`."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # (run below: outside this except block, whose error would chain to every other)
    else:
        raise InvalidInput("drain() cannot run inside a running event loop: use await adrain()")
    return asyncio.run(adrain(app, queue, concurrency=concurrency, timeout=timeout))


async def adrain(
    app: App,
    queue: str | Sequence[str] | None = None,
    *,
    concurrency: int = 1,
    timeout: float = 60.0,
) -> Drained:
    """drain() on the running event loop."""
    from claimq.worker import Worker

    queues = _queues(queue)
    timeout = _validate.seconds(timeout, "timeout", allow_zero=False)
    worker_id = f"claimq-testing-drain:{uuid.uuid4().hex[:8]}"
    worker = Worker(app, queues=queues, concurrency=concurrency, poll_interval=POLL,
                    grace=timeout, worker_id=worker_id)
    # A job of a task the App lacks is handed back (due later), not passed over while due:
    # drain() ends when nothing is due.
    worker.skip_unknown = False
    running = asyncio.create_task(worker.arun(install_signals=False))
    deadline = time.monotonic() + timeout
    try:
        while not running.done():
            left = await asyncio.to_thread(_work_left, app, queues)
            if not left:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"drain(): work left after {timeout}s: {left}")
            await asyncio.sleep(POLL)
    finally:
        worker.stop()
        counters = await running
    failed = counters.get("retried", 0) + counters.get("dead", 0)
    errors = await asyncio.to_thread(_errors, app, worker_id) if failed else ()
    return Drained(succeeded=counters.get("completed", 0),
                   retried=counters.get("retried", 0), dead=counters.get("dead", 0),
                   errors=errors)


def _errors(app: App, worker_id: str) -> tuple[str, ...]:
    """The failed attempts that worker recorded, wherever their jobs are now."""
    found = []
    for table in ("live", "archive", "dead"):
        for job in app.list_jobs(table, limit=100_000):
            found += [(e.get("at") or "", f"job {job.id} ({job.task}) attempt {e.get('attempt')}: "
                       f"{e.get('error')}: {e.get('message')}")
                      for e in job.errors if e.get("worker") == worker_id]
    return tuple(text for _, text in sorted(found))


def _queues(queue: str | Sequence[str] | None) -> list[str] | None:
    if queue is None:
        return None
    names = [queue] if isinstance(queue, str) else list(queue)
    return [_validate.queue_name(q) for q in names]


def _work_left(app: App, queues: list[str] | None) -> str:
    """What still has to run (due, or held by a worker) in the queues a drain serves; "" when
    nothing. Paused and inactive queues are not served and do not count."""
    busy = []
    for q in app.queues():
        if queues is not None and q.name not in queues or q.paused or not q.active:
            continue
        if q.pending or q.fetched or q.processing:
            busy.append(f"{q.name}: {q.pending} due, {q.fetched + q.processing} running")
    return "; ".join(busy)


# -- assertions --------------------------------------------------------------------------------


def all_enqueued(
    app: App, task: str | Task[Any, Any] | None = None, *, queue: str | None = None
) -> list[Job]:
    """The jobs waiting to run (pending: due or scheduled), oldest first; of one task and/or
    queue when given."""
    return app.list_jobs("live", queue=queue, task=_task_name(task), status="pending",
                         limit=100_000)


def assert_enqueued(app: App, task: str | Task[Any, Any], /, **args: Any) -> Job:
    """Asserts that a job of `task` is waiting whose payload holds these arguments (others may
    be there too); returns the oldest such job. Raises AssertionError saying what is waiting."""
    jobs = all_enqueued(app, task)
    matching = [j for j in jobs if _matches(app, task, j, args)]
    if not matching:
        raise AssertionError(
            f"no job of {_task_name(task)!r} with {args} is enqueued; waiting: "
            f"{_shown(jobs) or 'none'}")
    return matching[0]


def refute_enqueued(app: App, task: str | Task[Any, Any], /, **args: Any) -> None:
    """Asserts that no job of `task` whose payload holds these arguments is waiting."""
    matching = [j for j in all_enqueued(app, task) if _matches(app, task, j, args)]
    if matching:
        raise AssertionError(
            f"expected no job of {_task_name(task)!r} with {args}; found {_shown(matching)}")


def _task_name(task: str | Task[Any, Any] | None) -> str | None:
    if task is None or isinstance(task, str):
        return task
    if isinstance(task, Task):
        return task.name
    raise InvalidInput(f"task must be a Task or a task name, got {task!r}")


def _matches(app: App, task: str | Task[Any, Any], job: Job, args: dict[str, Any]) -> bool:
    if not args:
        return True
    expected = _as_stored(app, task, args)
    return all(k in job.payload and job.payload[k] == v for k, v in expected.items())


def _as_stored(app: App, task: str | Task[Any, Any], args: dict[str, Any]) -> dict[str, Any]:
    """The arguments as a payload stores them (typed arguments dumped, tuples as lists)."""
    registered = app.tasks.get(task) if isinstance(task, str) else task
    dump = getattr(registered, "dump_arguments", None)
    payload = dump(args, partial=True) if dump is not None else args
    stored: dict[str, Any] = json.loads(_validate.payload_json(payload, 2**30))
    return stored


def _shown(jobs: list[Job], most: int = 10) -> str:
    text = ", ".join(f"#{j.id} {j.payload}" for j in jobs[:most])
    return text + (f" and {len(jobs) - most} more" if len(jobs) > most else "")


# -- a database for one test -------------------------------------------------------------------


@contextmanager
def use_database(app: App, url: str, *, migrate: bool = True) -> Iterator[App]:
    """Points `app` (say, your module-level `App()`) at another database for the block, migrated
    unless `migrate=False`, then back: `with use_database(app, f"sqlite:///{tmp_path}/q.db"):`."""
    if not isinstance(url, str):
        raise InvalidInput(f"url must be a database URL string, got {url!r}")
    before = app.url
    app.set_url(url)
    try:
        if migrate:
            app.migrate()
        yield app
    finally:
        app.set_url(before)
