"""Sync handlers in child processes (`@app.task(isolation="process")`): a thread cannot be
interrupted, a process can. Each attempt runs in a fresh child (forkserver: no threads or
connections of the worker are inherited), which is killed at the attempt's timeout, when its
lease is lost, or when an operator cancels it; the attempt then fails at once.

The child imports the handler's module and finds the task by name; arguments, result and the
handler's exception cross the process boundary by pickle."""

from __future__ import annotations

import importlib
import multiprocessing
import pickle
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from claimq.backends.base import Dependency, Owned
from claimq.errors import InvalidInput
from claimq.job import Job
from claimq.task import Task
from claimq.workflow import Call, Workflow, spawn

if TYPE_CHECKING:
    from claimq.app import App

POLL = 0.05  # seconds between checks of the kill conditions while the child runs


class ChildFailed(Exception):  # noqa: N818 - names the event
    """The child process raised an exception that could not be sent back as it was, or died."""


class ChildTimedOut(Exception):  # noqa: N818
    """The child ran past the attempt's timeout and was killed."""


class ChildStopped(Exception):  # noqa: N818
    """The child was killed because the attempt was no longer wanted (lease lost, cancelled)."""


@dataclass(frozen=True)
class IsolatedContext:
    """The `ctx` a process-isolated handler receives: a snapshot of its job, and the job's
    workflow (dependencies(), spawn()) read and written over the child's own connection to
    the worker's database, fenced by the attempt's token like the worker's own writes."""

    job: Job
    attempt: int
    worker_id: str
    owned: Owned
    url: str  # the worker's database (its App may have been pointed elsewhere than the module's)
    _app: App | None = field(default=None, repr=False, compare=False)  # the child's App, set there

    @property
    def id(self) -> int:
        return self.job.id

    @property
    def idempotency_key(self) -> str:
        return self.job.effective_key

    def progress(self, fraction: float, note: str | None = None) -> None:
        raise InvalidInput("ctx.progress() is not available to a handler with "
                           "isolation='process' (its ctx is a read-only snapshot)")

    def dependencies(self) -> list[Dependency]:
        """This workflow job's dependencies, in the order they were given (JobContext's)."""
        return self._app_here().backend.dependencies(self.job.id)

    def spawn(self, *calls: Call | Workflow) -> list[int]:
        """Adds jobs to this job's workflow, only while this attempt owns the job
        (JobContext's)."""
        return spawn(self._app_here(), self.owned, calls)

    def _app_here(self) -> App:
        if self._app is None:
            raise InvalidInput("this ctx works inside the isolated handler's process only")
        return self._app


_context: Any = None


def _mp() -> Any:
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(["claimq"])
    return _context


def run_in_child(
    module: str,
    task_name: str,
    args: tuple[Any, ...],
    payload: dict[str, Any],
    timeout: float | None,
    stop: Callable[[], bool],
) -> Any:
    """Runs the task in a child process and returns its result (runs in a handler thread)."""
    mp = _mp()
    receive, send = mp.Pipe(duplex=False)
    child = mp.Process(target=_child_main, args=(module, task_name, args, payload, send),
                       daemon=True, name=f"claimq-isolated-{task_name}")
    child.start()
    send.close()
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while not receive.poll(POLL):
            if not child.is_alive() and not receive.poll(0):
                raise ChildFailed(f"the child process died (exit code {child.exitcode})")
            if deadline is not None and time.monotonic() > deadline:
                raise ChildTimedOut(f"ran longer than its timeout of {timeout}s; killed")
            if stop():
                raise ChildStopped("the attempt was given up; its process was killed")
        try:
            ok, value = receive.recv()
        except EOFError:
            child.join(1)
            raise ChildFailed(f"the child process died (exit code {child.exitcode})") from None
    finally:
        if child.is_alive():
            child.kill()
        child.join(5)
        receive.close()
    if ok:
        return value
    raise value


def _child_main(
    module: str, task_name: str, args: tuple[Any, ...], payload: dict[str, Any], send: Connection
) -> None:
    app = None
    try:
        task = _find(module, task_name)
        if args and isinstance(args[0], IsolatedContext):
            ctx = args[0]
            app = task.app
            if app.url != ctx.url:
                app.set_url(ctx.url)
            args = (replace(ctx, _app=app), *args[1:])
        result: tuple[bool, Any] = (True, task.fn(*args, **payload))
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the worker
        result = (False, _sendable(exc))
    finally:
        if app is not None:
            app.close()  # what dependencies() or spawn() opened
    try:
        send.send(result)
    except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot be pickled
        send.send((False, ChildFailed(f"cannot send the result back: {exc!r}")))
    send.close()


def _find(module: str, task_name: str) -> Task[Any, Any]:
    mod = importlib.import_module(module)
    for value in vars(mod).values():
        if isinstance(value, Task) and value.name == task_name:
            return value
        tasks = getattr(value, "tasks", None)
        if isinstance(tasks, dict) and isinstance(tasks.get(task_name), Task):
            found: Task[Any, Any] = tasks[task_name]
            return found
    raise LookupError(f"no task {task_name!r} in module {module!r} (in the child process)")


def _sendable(exc: BaseException) -> BaseException:
    """The exception itself when it survives pickling, else a ChildFailed that describes it."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return ChildFailed(f"{type(exc).__name__} in the child process:\n{tb[-4000:]}")
