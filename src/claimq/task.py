"""Tasks: functions registered under a stable name, with their default job options."""

from __future__ import annotations

import functools
import inspect
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, ParamSpec, TypeVar

from claimq import _validate
from claimq._typed import Parameters
from claimq.errors import InvalidInput
from claimq.retry import DEFAULT_RETRY, RetryPolicy

if TYPE_CHECKING:
    from claimq._results import JobHandle
    from claimq._typed import Arguments
    from claimq.app import App

Isolation = Literal["thread", "process"]
P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class CallOptions:
    """Per-call job options, kept apart from the handler's own keyword arguments."""

    queue: str | None = None
    priority: int | None = None
    run_at: datetime | None = None
    delay: float | timedelta | None = None
    idempotency_key: str | None = None
    max_attempts: int | None = None
    tags: tuple[str, ...] = ()
    timeout: float | None = None
    unique: str | None = None
    unique_for: float | timedelta | None = None
    on_conflict: str | None = None


@dataclass(frozen=True)
class Task(Generic[P, R]):
    """A registered handler. Call it to run it directly; `.enqueue(**kwargs)` to queue a job."""

    app: App
    fn: Callable[P, R]
    name: str
    queue: str = "default"
    priority: int = 0
    max_attempts: int = 20
    retry: RetryPolicy = DEFAULT_RETRY
    timeout: float | None = None
    wants_context: bool = False
    isolation: Isolation = "thread"  # "process": a sync handler in a child process
    options: CallOptions = field(default_factory=CallOptions)
    arguments: Arguments | None = None  # typed parameters (then `fn` rebuilds them)
    concurrency_key: str | None = None  # the payload field whose value is the concurrency key
    concurrency_limit: int | None = None  # at most this many running per key value
    sequence_key: str | None = None  # the payload field whose value is the sequence key
    on_failure: str | None = None  # a sequence's failed job: "wait" (the default) or "skip"
    rate_key: str | None = None  # the payload field whose value is the rate key
    # What the handler takes, read from its signature once (at registration; copies share it).
    parameters: Parameters | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.parameters is None:
            object.__setattr__(self, "parameters",
                               Parameters(self.name, self.fn, self.wants_context))

    def dump_arguments(self, payload: Any, *, partial: bool = False) -> Any:
        """The payload as stored: unless `partial`, checked against the handler's parameters
        (unknown, missing, or of the wrong simple type: InvalidInput); typed arguments
        validated and dumped to JSON. A payload that is not a mapping comes back as it is,
        for the payload check to refuse."""
        if not partial and self.parameters is not None:
            self.parameters.check(payload)
        if self.arguments is None or not (payload is None or isinstance(payload, Mapping)):
            return payload
        return self.arguments.dump(payload, partial=True)

    @functools.cached_property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.fn)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fn(*args, **kwargs)

    def with_options(self, **options: Any) -> Task[P, R]:
        """A copy whose next enqueue uses these job options (queue, priority, delay, run_at,
        idempotency_key, max_attempts, tags, timeout, unique, unique_for, on_conflict).
        Checked here, so that a bad one fails where it is written."""
        try:
            merged = replace(self.options, **options)
        except TypeError:
            known = sorted(CallOptions.__dataclass_fields__)
            raise InvalidInput(
                f"unknown job option(s) {sorted(set(options) - set(known))}; known: {known}"
            ) from None
        for name, value in options.items():
            if value is not None:
                _OPTION_CHECKS[name](value)
        return replace(self, options=merged)

    def _job_options(self, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        o = self.options
        return {
            "task": self.name,
            "payload": {} if payload is None else payload,
            "queue": o.queue or self.queue,
            "priority": self.priority if o.priority is None else o.priority,
            "run_at": o.run_at,
            "delay": o.delay,
            "idempotency_key": o.idempotency_key,
            "max_attempts": o.max_attempts or self.max_attempts,
            "tags": o.tags,
            "timeout": o.timeout or self.timeout,
            "retry": None,
            "unique": o.unique,
            "unique_for": o.unique_for,
            "on_conflict": o.on_conflict,
        }

    def flow_options(self, payload: object, given: Any = None) -> dict[str, Any]:
        """The concurrency key and limit, the sequence key and the rate key of a job of this
        task with this payload: the values of the payload fields they name, as JSON text
        prefixed by the field's name; those the job's options (`given`) already have are left
        out."""
        given = given or {}
        options: dict[str, Any] = {}
        if self.concurrency_key is not None and given.get("concurrency_key") is None:
            options["concurrency_key"] = self._key_of(payload, self.concurrency_key,
                                                      "limits concurrency")
            options["concurrency_limit"] = self.concurrency_limit
        if self.sequence_key is not None and given.get("sequence_key") is None:
            options["sequence_key"] = self._key_of(payload, self.sequence_key, "orders jobs")
        if self.on_failure is not None and given.get("on_failure") is None:
            options["on_failure"] = self.on_failure
        if self.rate_key is not None and given.get("rate_key") is None:
            options["rate_key"] = self._key_of(payload, self.rate_key, "limits its rate")
        return options

    def _key_of(self, payload: object, field_name: str, what: str) -> str:
        if not isinstance(payload, dict) or field_name not in payload:
            raise InvalidInput(
                f"task {self.name!r} {what} by payload field {field_name!r}, which this job's "
                "payload does not have")
        value = json.dumps(payload[field_name], sort_keys=True, default=str)
        return f"{field_name}={value}"[:_validate.MAX_KEY_LEN]

    def _payload(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if not args or self.parameters is None:
            if args:
                raise InvalidInput(f"task {self.name!r} takes its arguments by name")
            return kwargs
        return self.parameters.bind(args, kwargs)

    def enqueue(self, *args: Any, conn: Any = None, **kwargs: Any) -> JobHandle:
        """Queue one job whose payload is these arguments, as the handler takes them
        (positionals bound to its parameters by name; checked against its signature:
        InvalidInput); returns its id, a JobHandle (an int that can also wait for the result:
        `task.enqueue(...).result(timeout=5)`). `conn` (keyword only): the caller's connection,
        to write the job inside its transaction."""
        return self.app.enqueue(conn=conn, **self._job_options(self._payload(args, kwargs)))

    def step(self, *args: Any, **kwargs: Any) -> Call:
        """This task with these arguments, not yet written: a job to put in a workflow,
        `chain()` or `group()` (`.with_options(queue=...)` adds enqueue() options)."""
        return Call(self, self._payload(args, kwargs))

    async def aenqueue(self, *args: Any, conn: Any = None, **kwargs: Any) -> JobHandle:
        """Async enqueue(): the same arguments."""
        return await self.app.aenqueue(
            conn=conn, **self._job_options(self._payload(args, kwargs)))


@dataclass(frozen=True)
class Call:
    """A job not yet written: a task, its payload and enqueue()'s options (`task.step(...)`
    or `claimq.call(task, payload, **options)`)."""

    task: str | Task[Any, Any]
    payload: dict[str, Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def with_options(self, **options: Any) -> Call:
        """The same job with these enqueue() options added (queue, priority, delay, ...)."""
        return Call(self.task, self.payload, {**self.options, **options})


_OPTION_CHECKS: dict[str, Callable[[Any], object]] = {
    "queue": _validate.queue_name,
    "priority": lambda v: _validate.integer(v, "priority", *_validate.PRIORITY_RANGE),
    "run_at": _validate.run_at,
    "delay": lambda v: _validate.seconds(v, "delay"),
    "idempotency_key": _validate.idempotency_key,
    "max_attempts": lambda v: _validate.integer(v, "max_attempts", *_validate.MAX_ATTEMPTS_RANGE),
    "tags": _validate.tags,
    "timeout": lambda v: _validate.seconds(v, "timeout", allow_zero=False),
    "unique": lambda v: _validate.one_of(v, "unique", _validate.UNIQUE_SCOPES),
    "unique_for": lambda v: _validate.seconds(v, "unique_for"),
    "on_conflict": lambda v: _validate.one_of(v, "on_conflict", _validate.ON_CONFLICT),
}


def default_name(fn: Callable[..., Any]) -> str:
    """`module.qualname`. A function of a script run as `__main__` is named after the module a
    worker imports for it (`python myapp.py` or `python -m myapp`: `myapp.…`), so that the
    jobs the script enqueues are the ones `claimq worker myapp:app` runs."""
    module = fn.__module__
    if module == "__main__":
        module = _main_module_name() or module
    return f"{module}.{fn.__qualname__}"


def _main_module_name() -> str | None:
    """The importable name of the `__main__` module: its spec's under `python -m`, else its
    file's, with the packages around it (directories holding an __init__.py)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name and spec.name != "__main__":
        return str(spec.name)
    file = getattr(main, "__file__", None)
    if not isinstance(file, str) or not file.endswith(".py"):
        return None  # -c or an interactive session: only a worker in this process sees it
    path = Path(file).resolve()
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    name = ".".join(parts)
    return name if all(p.isidentifier() for p in parts) else None


def takes_context(fn: Callable[..., Any]) -> bool:
    """A handler that declares a first parameter named `ctx` (or `context`) receives the job's
    context there."""
    params = list(inspect.signature(fn).parameters)
    return bool(params) and params[0] in ("ctx", "context")
