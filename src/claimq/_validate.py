"""Input checks shared by every entry point: bad input raises InvalidInput before any write."""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, NamedTuple

from claimq._limits import MAX_SECONDS as MAX_SECONDS
from claimq.errors import InvalidInput
from claimq.retry import RetryPolicy

MAX_PAYLOAD_BYTES = 1024 * 1024
MAX_RESULT_BYTES = 1024 * 1024  # a handler's return value, as stored JSON
# JSON numbers that both backends store and read back exactly: SQLite's integers and orjson's
# decoder stop at 64 bits (beyond, an integer comes back as a float).
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
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
     "max_attempts", "tags", "timeout", "retry", "unique", "unique_for", "on_conflict",
     "concurrency_key", "concurrency_limit", "sequence_key", "on_failure", "rate_key"}
)
UNIQUE_SCOPES = ("pending", "active", "until_done")
ON_CONFLICT = ("ignore", "replace")
ON_FAILURE = ("wait", "skip")  # what a sequence's failed job does to the jobs after it


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
    trace_context: str | None = None  # the enqueuer's W3C traceparent (OpenTelemetry)
    flow: Flow | None = None  # flow-control options (README "Flow control"); None: none


class Flow(NamedTuple):
    """A job's flow-control options; the defaults are a plain job's."""

    unique: str = "until_done"  # which states of the key's holder refuse a new job
    unique_for: float | None = None  # until_done: seconds after finishing (None: retention)
    on_conflict: str = "ignore"  # "replace": a pending holder takes the new payload and run_at
    concurrency_key: str | None = None  # at most concurrency_limit running per key and queue
    concurrency_limit: int | None = None
    sequence_key: str | None = None  # one at a time per key and queue, in id order
    sequence_wait: bool | None = None  # True: a failed job holds its sequence until it ends
    rate_key: str | None = None  # the queue's key_rate_limit holds per key; Throttled pauses it


NO_FLOW = Flow()


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


class UnstorableNumber:
    """A number of JSON text that neither a 64-bit float nor a 64-bit integer holds (1e400,
    400 digits, NaN): parse_json() leaves one in its place so that the payload check refuses
    it, naming its field."""

    __slots__ = ("text", "why")

    def __init__(self, text: str, why: str) -> None:
        self.text = text
        self.why = why

    def __repr__(self) -> str:
        return _short(self.text)


_OUT_OF_INT64 = (
    "outside the signed 64-bit range that JSON storage keeps exactly (-2**63 to 2**63-1)"
)


def _short(text: object) -> str:
    text = str(text)
    return text if len(text) <= 40 else f"{text[:20]}…{text[-8:]} ({len(text)} characters)"


def _parse_int(text: str) -> int | UnstorableNumber:
    if len(text) > 20:  # past 64 bits for sure, and int() of 4,300+ digits raises
        return UnstorableNumber(text, _OUT_OF_INT64)
    return int(text)


def _parse_float(text: str) -> float | UnstorableNumber:
    number = float(text)
    if not math.isfinite(number):
        return UnstorableNumber(text, "too large for a 64-bit float")
    mantissa = text.lower().partition("e")[0]
    if number == 0 and any(c in mantissa for c in "123456789"):
        return UnstorableNumber(text, "too small for a 64-bit float (it would be stored as 0)")
    return number


def _parse_constant(text: str) -> UnstorableNumber:
    return UnstorableNumber(text, "not a JSON number (JSON has no NaN or infinity)")


def parse_json(text: str) -> Any:
    """JSON text from outside (the CLI) as Python values; raises json.JSONDecodeError. A number
    that would not survive (too large, too small, NaN, Infinity: Python's json would make it a
    float that is not the number written, or that JSON cannot store) becomes an
    UnstorableNumber, which payload_json() refuses by its field."""
    return json.loads(
        text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant
    )


def _key_text(key: str | float | None) -> str:
    """A dict key as json's encoder writes it (keys of other types were refused)."""
    if isinstance(key, str):
        return key
    if key is True or key is False or key is None:
        return json.dumps(key)
    if isinstance(key, int):
        return int.__repr__(key)
    return float.__repr__(key)


def _plain_float(number: float) -> str:
    """repr() of a float, without an exponent when it is 1e16 or more: PostgreSQL's jsonb
    stores 1e+16 as the integer 10000000000000000, which would read back as an int."""
    text = float.__repr__(number)
    if "e+" not in text:
        return text
    return format(Decimal(text), "f") + ".0"


def _exact_json(value: object, what: str) -> str:
    """The slow path of payload_json and result_json: walks the value, refuses with the
    offending field's path anything that would not read back as written from both backends,
    and encodes it (floats of 1e16 and more without an exponent)."""
    parts: list[str] = []
    open_containers: set[int] = set()

    def where(path: str) -> str:
        return f" at {path}" if path else ""

    def unserialisable(problem: str, path: str) -> InvalidInput:
        return InvalidInput(f"{what} is not JSON-serialisable: {problem}{where(path)}")

    def inexact(number: str, why: str, path: str) -> InvalidInput:
        return InvalidInput(
            f"{what} cannot be stored exactly: {number}{where(path)} is {why}; "
            "send it as a string"
        )

    def walk(v: object, path: str) -> None:
        if v is None or v is True or v is False or isinstance(v, str):
            parts.append(_ENCODER.encode(v))
        elif isinstance(v, int):
            if not INT64_MIN <= v <= INT64_MAX:
                raise inexact(f"the integer {_short(int.__repr__(v))}", _OUT_OF_INT64, path)
            parts.append(int.__repr__(v))
        elif isinstance(v, float):
            if not math.isfinite(v):
                raise unserialisable(f"{v!r} (JSON has no NaN or infinity)", path)
            parts.append(_plain_float(v))
        elif isinstance(v, UnstorableNumber):
            raise inexact(_short(v.text), v.why, path)
        elif isinstance(v, dict | list | tuple):
            if id(v) in open_containers:
                raise unserialisable("a circular reference", path)
            open_containers.add(id(v))
            if isinstance(v, dict):
                parts.append("{")
                for i, (key, item) in enumerate(v.items()):
                    if i:
                        parts.append(",")
                    if not isinstance(key, str | int | float | None) or (
                        isinstance(key, float) and not math.isfinite(key)
                    ):
                        raise unserialisable(
                            f"the key {key!r} ({type(key).__name__}; keys must be strings)", path
                        )
                    parts.append(_ENCODER.encode(_key_text(key)))
                    parts.append(":")
                    walk(item, f"{path}[{key!r}]")
                parts.append("}")
            else:
                parts.append("[")
                for i, item in enumerate(v):
                    if i:
                        parts.append(",")
                    walk(item, f"{path}[{i}]")
                parts.append("]")
            open_containers.discard(id(v))
        else:
            raise unserialisable(f"a {type(v).__name__}", path)

    walk(value, "")
    return "".join(parts)


def _encode(value: object, what: str) -> tuple[str, int]:
    """`value` as JSON text that reads back as written from both backends, and its size in
    bytes; raises InvalidInput naming the first field that cannot be stored."""
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        with contextlib.suppress(RecursionError):
            _exact_json(value, what)  # raises, naming the field
        raise InvalidInput(f"{what} is not JSON-serialisable: {exc}") from None
    try:
        data = text.encode()
    except UnicodeEncodeError:
        raise InvalidInput(
            f"{what} holds text that is not valid Unicode (a lone surrogate)"
        ) from None
    # Cheap test first (a regex costs several times as much): only an exponent or 19 digits
    # in all can be a float of 1e16 or more or an integer past 64 bits.
    if b"e+" in data or len(data) - len(data.translate(None, b"0123456789")) >= 19:
        try:
            text = _exact_json(value, what)
        except RecursionError:
            raise InvalidInput(f"{what} is nested too deeply") from None
        data = text.encode()
    if "\\u0000" in text:
        raise InvalidInput(f"{what} must not contain NUL characters")
    return text, len(data)


def payload_json(value: object, limit: int = MAX_PAYLOAD_BYTES) -> str:
    if value is None or (type(value) is dict and not value):
        return "{}"
    if type(value) is not dict and not isinstance(value, Mapping):
        raise InvalidInput(f"payload must be a JSON object (a dict), got {type(value).__name__}")
    text, size = _encode(value, "payload")
    if size > limit:
        raise InvalidInput(f"payload is {size} bytes, over the limit of {limit} bytes")
    return text


def result_json(value: object, limit: int = MAX_RESULT_BYTES) -> str | None:
    if value is None:
        return None
    text, size = _encode(value, "job result")
    if size > limit:
        raise InvalidInput(f"job result is {size} bytes, over the limit of {limit} bytes "
                           "(App(result_limit=...))")
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
    try:
        number = float(value)
    except OverflowError:  # an int past float's range
        number = math.inf
    if math.isnan(number) or math.isinf(number):
        raise InvalidInput(f"{what} must be finite")
    if number < 0 or (number == 0 and not allow_zero):
        raise InvalidInput(f"{what} must be {'>= 0' if allow_zero else '> 0'}, got {number:g}")
    if number > MAX_SECONDS:
        raise InvalidInput(f"{what} must be at most {MAX_SECONDS:.0f} seconds (100 years), "
                           f"got {number:g}")
    return number


def aware_datetime(value: object, what: str) -> datetime:
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be a datetime, got {value!r}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInput(f"{what} must be timezone-aware (e.g. datetime.now(UTC))")
    try:
        return value.astimezone(UTC)
    except OverflowError:  # datetime.max in a zone east of UTC
        raise InvalidInput(f"{what} {value.isoformat()} is out of range") from None


def run_at(value: object, what: str = "run_at") -> datetime:
    """A due time no further than MAX_SECONDS from now, either way."""
    when = aware_datetime(value, what)
    now = datetime.now(UTC)
    if abs((when - now).total_seconds()) > MAX_SECONDS:
        raise InvalidInput(
            f"{what} {when.isoformat()} is more than 100 years from now"
        )
    return when


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


def idempotency_key(value: object, what: str = "idempotency_key") -> str | None:
    if value is None:
        return None
    if (not isinstance(value, str) or not value or len(value) > MAX_KEY_LEN or "\x00" in value
            or not encodable(value)):
        raise InvalidInput(f"{what} must be a string of 1 to {MAX_KEY_LEN} characters")
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
    unique: object = None,
    unique_for: object = None,
    on_conflict: object = None,
    concurrency_key: object = None,
    concurrency_limit: object = None,
    sequence_key: object = None,
    on_failure: object = None,
    rate_key: object = None,
    default_queue: str = "default",
    default_max_attempts: int = 20,
    payload_limit: int = MAX_PAYLOAD_BYTES,
    default_priority: int = 0,
    default_timeout: float | None = None,
) -> NewJob:
    name = task_name(task)
    if run_at is not None and delay is not None:
        raise InvalidInput("give run_at or delay, not both")
    when = None if run_at is None else _run_at(run_at)
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
    key = _key(idempotency_key)
    job = NewJob(
        queue_name(queue),
        name,
        payload_json(payload, payload_limit),
        default_priority if priority is None else integer(priority, "priority", *PRIORITY_RANGE),
        0.0 if delay is None else seconds(delay, "delay"),
        when,
        key,
        integer(max_attempts, "max_attempts", *MAX_ATTEMPTS_RANGE),
        _tags(tags),
        default_timeout if timeout is None else seconds(timeout, "timeout", allow_zero=False),
        policy,
    )
    if (unique is None and unique_for is None and on_conflict is None
            and concurrency_key is None and concurrency_limit is None
            and sequence_key is None and on_failure is None and rate_key is None):
        return job
    flow = _flow(key, unique, unique_for, on_conflict, concurrency_key, concurrency_limit)
    if sequence_key is not None or on_failure is not None:
        flow = flow._replace(**_sequence(sequence_key, on_failure))
    if rate_key is not None:
        flow = flow._replace(rate_key=_key(rate_key, "rate_key"))
    return job._replace(flow=flow)


def _sequence(sequence_key: object, on_failure: object) -> dict[str, Any]:
    """An ordered sequence's fields of a Flow: its key, and whether a failed job holds it."""
    if sequence_key is None:
        raise InvalidInput("on_failure is what a failed job does to its sequence: it needs a "
                           "sequence_key")
    choice = one_of("wait" if on_failure is None else on_failure, "on_failure", ON_FAILURE)
    return {"sequence_key": _key(sequence_key, "sequence_key"), "sequence_wait": choice == "wait"}


def _flow(
    key: str | None, unique: object, unique_for: object, on_conflict: object,
    concurrency_key: object, concurrency_limit: object,
) -> Flow:
    """The flow-control fields of a NewJob, checked: uniqueness and debounce need an
    idempotency key; a concurrency limit needs a concurrency key and the other way round."""
    unique = one_of("until_done" if unique is None else unique, "unique", UNIQUE_SCOPES)
    on_conflict = one_of("ignore" if on_conflict is None else on_conflict, "on_conflict",
                         ON_CONFLICT)
    period = None
    if unique_for is not None:
        if unique != "until_done":
            raise InvalidInput("unique_for is the period after completion of unique='until_done'")
        period = seconds(unique_for, "unique_for")
    if key is None and (unique != "until_done" or period is not None or on_conflict != "ignore"):
        raise InvalidInput("unique, unique_for and on_conflict need an idempotency_key")
    ckey = None if concurrency_key is None else _key(concurrency_key, "concurrency_key")
    if (ckey is None) != (concurrency_limit is None):
        raise InvalidInput("give concurrency_key and concurrency_limit together")
    limit = None if concurrency_limit is None else integer(
        concurrency_limit, "concurrency_limit", 1, 1_000_000)
    return Flow(unique, period, on_conflict, ckey, limit)


_key = idempotency_key
_tags = tags
_run_at = run_at


def enqueue_spec(item: object, **defaults: Any) -> NewJob:
    """One entry of enqueue_many: a mapping with the same options as enqueue()."""
    if type(item) is not dict and not isinstance(item, Mapping):
        raise InvalidInput(f"each job of enqueue_many must be a dict, got {type(item).__name__}")
    if not ENQUEUE_OPTIONS.issuperset(item):
        raise InvalidInput(f"unknown enqueue option(s): {sorted(set(item) - ENQUEUE_OPTIONS)}")
    if "task" not in item:
        raise InvalidInput("each job of enqueue_many needs a 'task'")
    return new_job(**item, **defaults)


_RATE_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)?\s*(s|sec|m|min|h|hour|d|day)\s*$")
_UNIT_SECONDS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400,
                 "day": 86400}


def rate_limit(value: object, burst: object = None) -> tuple[int, float, int | None]:
    """A rate such as "10/s", "100/m", "5/2s" or "3/h" (count per period), and an optional
    burst: (count, period in seconds, burst)."""
    match = _RATE_RE.match(value) if isinstance(value, str) else None
    if match is None:
        raise InvalidInput(
            f"rate_limit must look like '10/s', '100/m', '5/2s' or '3/h', got {value!r}")
    count = integer(int(match[1]), "rate_limit's count", 1, 1_000_000_000)
    period = float(match[2] or 1) * _UNIT_SECONDS[match[3]]
    if not 0 < period <= 366 * 86400:
        raise InvalidInput(f"rate_limit's period must be above 0 and at most a year, got {value!r}")
    bucket = None if burst is None else integer(burst, "rate_burst", 1, 1_000_000_000)
    return count, period, bucket


def one_of(value: object, what: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise InvalidInput(f"{what} must be one of {list(allowed)}, got {value!r}")
    return str(value)


MAX_PROGRESS_NOTE = 1000


def progress(fraction: object, note: object) -> tuple[float, str | None]:
    """ctx.progress()'s fraction (0 to 1) and note (a short string, or None)."""
    if isinstance(fraction, bool) or not isinstance(fraction, int | float) or not (
            0.0 <= fraction <= 1.0):
        raise InvalidInput(f"progress must be a number from 0 to 1, got {fraction!r}")
    if note is not None and (not isinstance(note, str) or len(note) > MAX_PROGRESS_NOTE
                             or "\x00" in note):
        raise InvalidInput(f"a progress note is a string of at most {MAX_PROGRESS_NOTE} "
                           "characters without NUL")
    return float(fraction), note
