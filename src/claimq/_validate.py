"""Input checks shared by every entry point: bad input raises InvalidInput before any write."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from claimq.errors import InvalidInput
from claimq.retry import RetryPolicy

MAX_PAYLOAD_BYTES = 1024 * 1024
MAX_NAME_LEN = 128
MAX_KEY_LEN = 255
MAX_TAGS = 32
MAX_TAG_LEN = 64
PRIORITY_RANGE = (-1_000_000, 1_000_000)
MAX_ATTEMPTS_RANGE = (1, 10_000)

_QUEUE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
_TASK_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:<>-]*$")

ENQUEUE_OPTIONS = frozenset(
    {"task", "payload", "queue", "priority", "run_at", "delay", "idempotency_key",
     "max_attempts", "tags", "timeout", "retry"}
)


class NewJob(NamedTuple):
    """A validated job, ready for a backend to insert. run_at None means 'now' (database clock).
    A named tuple: bulk enqueue builds one per job, and a frozen dataclass's constructor cost
    as much as all of the job's checks."""

    queue: str
    task: str
    payload_json: str
    priority: int
    delay: float  # seconds after the database's now; used when run_at is None
    run_at: datetime | None
    idempotency_key: str | None
    max_attempts: int
    tags: tuple[str, ...]
    timeout: float | None
    retry_json: str | None


# Names already found valid: enqueue checks the same few names thousands of times.
_VALID_QUEUES: set[str] = set()
_VALID_TASKS: set[str] = set()
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def _remember(known: set[str], value: str) -> str:
    if len(known) < 10_000:
        known.add(value)
    return value


def queue_name(value: object, what: str = "queue") -> str:
    if type(value) is str and value in _VALID_QUEUES:
        return value
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{what} name must be a non-empty string, got {value!r}")
    if len(value) > MAX_NAME_LEN:
        raise InvalidInput(f"{what} name is longer than {MAX_NAME_LEN} characters")
    if not _QUEUE_RE.fullmatch(value):
        raise InvalidInput(
            f"{what} name {value!r} may hold only letters, digits and _ . : - "
            "and must start with a letter or digit"
        )
    return _remember(_VALID_QUEUES, value)


def task_name(value: object) -> str:
    if type(value) is str and value in _VALID_TASKS:
        return value
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"task name must be a non-empty string, got {value!r}")
    if len(value) > MAX_NAME_LEN * 2:
        raise InvalidInput(f"task name is longer than {MAX_NAME_LEN * 2} characters")
    if not _TASK_RE.fullmatch(value):
        raise InvalidInput(
            f"task name {value!r} may hold only letters, digits and _ . : < > - "
            "and must start with a letter or _"
        )
    return _remember(_VALID_TASKS, value)


def encodable(value: str) -> bool:
    """Whether `value` can be stored as UTF-8 text (lone surrogates cannot)."""
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def payload_json(value: object, limit: int = MAX_PAYLOAD_BYTES) -> str:
    if value is None or (type(value) is dict and not value):
        return "{}"
    if type(value) is not dict and not isinstance(value, Mapping):
        raise InvalidInput(f"payload must be a JSON object (a dict), got {type(value).__name__}")
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"payload is not JSON-serialisable: {exc}") from None
    if "\\u0000" in text:
        raise InvalidInput("payload must not contain NUL characters")
    try:
        size = len(text.encode())
    except UnicodeEncodeError:
        raise InvalidInput(
            "payload holds text that is not valid Unicode (a lone surrogate)"
        ) from None
    if size > limit:
        raise InvalidInput(f"payload is {size} bytes, over the limit of {limit} bytes")
    return text


def result_json(value: object) -> str | None:
    if value is None:
        return None
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"job result is not JSON-serialisable: {exc}") from None
    if "\\u0000" in text:
        raise InvalidInput("job result must not contain NUL characters")
    if not encodable(text):
        raise InvalidInput("job result holds text that is not valid Unicode (a lone surrogate)")
    return text


def integer(value: object, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{what} must be an integer, got {value!r}")
    if not lo <= value <= hi:
        raise InvalidInput(f"{what} must be between {lo} and {hi}, got {value}")
    return value


def seconds(value: object, what: str, *, allow_zero: bool = True) -> float:
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{what} must be a number of seconds or a timedelta, got {value!r}")
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        raise InvalidInput(f"{what} must be finite")
    if number < 0 or (number == 0 and not allow_zero):
        raise InvalidInput(f"{what} must be {'>= 0' if allow_zero else '> 0'}, got {number:g}")
    return number


def aware_datetime(value: object, what: str) -> datetime:
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be a datetime, got {value!r}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInput(f"{what} must be timezone-aware (e.g. datetime.now(UTC))")
    return value.astimezone(UTC)


def tags(value: object) -> tuple[str, ...]:
    if value == () and type(value) is tuple:
        return ()
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidInput(f"tags must be a list of strings, got {value!r}")
    out = tuple(value)
    if len(out) > MAX_TAGS:
        raise InvalidInput(f"at most {MAX_TAGS} tags are allowed")
    for tag in out:
        if (not isinstance(tag, str) or not tag or len(tag) > MAX_TAG_LEN or "\x00" in tag
                or not encodable(tag)):
            raise InvalidInput(f"each tag must be a string of 1 to {MAX_TAG_LEN} characters")
    return out


def boolean(value: object, what: str) -> bool | None:
    """None (leave as it is) or a real bool: "no" and 1 are not switches."""
    if value is not None and not isinstance(value, bool):
        raise InvalidInput(f"{what} must be True, False or None, got {value!r}")
    return value


def worker_id(value: object) -> str:
    if (not isinstance(value, str) or not value or len(value) > 255 or "\x00" in value
            or not encodable(value)):
        raise InvalidInput(
            f"worker_id must be a string of 1 to 255 characters without NUL, got {value!r}"
        )
    return value


def queue_names(value: object) -> list[str] | None:
    """claim()'s queues: None (every queue) or a list of names; a bare string is a mistake."""
    if value is None:
        return None
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InvalidInput(f"queues must be a list of queue names or None, got {value!r}")
    return [queue_name(q) for q in value]


def idempotency_key(value: object) -> str | None:
    if value is None:
        return None
    if (not isinstance(value, str) or not value or len(value) > MAX_KEY_LEN or "\x00" in value
            or not encodable(value)):
        raise InvalidInput(f"idempotency_key must be a string of 1 to {MAX_KEY_LEN} characters")
    return value


def new_job(
    *,
    task: object,
    payload: object = None,
    queue: object = None,
    priority: object = None,
    run_at: object = None,
    delay: object = None,
    idempotency_key: object = None,
    max_attempts: object = None,
    tags: object = (),
    timeout: object = None,
    retry: object = None,
    default_queue: str = "default",
    default_max_attempts: int = 20,
    payload_limit: int = MAX_PAYLOAD_BYTES,
) -> NewJob:
    name = task_name(task)
    if run_at is not None and delay is not None:
        raise InvalidInput("give run_at or delay, not both")
    when = None if run_at is None else aware_datetime(run_at, "run_at")
    policy: str | None = None
    if retry is not None:
        if isinstance(retry, Mapping):
            retry = RetryPolicy.from_dict(dict(retry))
        if not isinstance(retry, RetryPolicy):
            raise InvalidInput("retry must be a RetryPolicy or a dict of its fields")
        policy = json.dumps(retry.to_dict())
    if queue is None:
        queue = default_queue
    if max_attempts is None:
        max_attempts = default_max_attempts
    return NewJob(
        queue_name(queue),
        name,
        payload_json(payload, payload_limit),
        0 if priority is None else integer(priority, "priority", *PRIORITY_RANGE),
        0.0 if delay is None else seconds(delay, "delay"),
        when,
        _key(idempotency_key),
        integer(max_attempts, "max_attempts", *MAX_ATTEMPTS_RANGE),
        _tags(tags),
        None if timeout is None else seconds(timeout, "timeout", allow_zero=False),
        policy,
    )


_key = idempotency_key
_tags = tags


def enqueue_spec(item: object, **defaults: Any) -> NewJob:
    """One entry of enqueue_many: a mapping with the same options as enqueue()."""
    if type(item) is not dict and not isinstance(item, Mapping):
        raise InvalidInput(f"each job of enqueue_many must be a dict, got {type(item).__name__}")
    if not ENQUEUE_OPTIONS.issuperset(item):
        raise InvalidInput(f"unknown enqueue option(s): {sorted(set(item) - ENQUEUE_OPTIONS)}")
    if "task" not in item:
        raise InvalidInput("each job of enqueue_many needs a 'task'")
    return new_job(**item, **defaults)


def utcnow() -> datetime:
    return datetime.now(UTC)
