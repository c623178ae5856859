"""Decoding a job row's JSON columns, for every backend: a value that cannot be read back
exactly (broken text, a number beyond every float, an integer beyond 64 bits, the wrong shape)
never raises. The row still becomes a Job, whose payload is a CorruptRow saying what the column
held, and a worker dead-letters that job; listings and get_job() show it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from claimq._json import loads
from claimq.backends.base import UNSET, BreakerInfo, LatencyRow, PriorityAging, RateLimit
from claimq.job import CorruptRow, Job, Status

# orjson reads integers exactly from -2**63 to 2**64 - 1 and turns longer ones into floats
# without a word: a run of 19 digits is where a document needs the exact (slower) check. Such
# an integer is taken for the float it reads as when a double could have printed it (at most
# 17 significant digits): PostgreSQL's jsonb prints 1e20 as 100000000000000000000.
_LONG_DIGITS = re.compile(r"[0-9]{19}")
_LONG_DIGITS_BYTES = re.compile(rb"[0-9]{19}")
_INT_RANGE = range(-(2**63), 2**64)


class Undecodable:
    """A stored JSON value that could not be decoded exactly, and why."""

    __slots__ = ("text", "why")

    def __init__(self, text: str | bytes, why: str) -> None:
        self.text = text if isinstance(text, str) else bytes(text).decode("utf-8", "replace")
        self.why = why

    def __repr__(self) -> str:
        return f"{self.text[:200]!r} ({self.why})"


def loads_exact(data: str | bytes) -> Any:
    """orjson's loads, except that a document it cannot read exactly (or at all) comes back as
    an Undecodable instead of raising or silently rounding. The drivers' JSON loader on
    PostgreSQL, and SQLite's JSON text columns."""
    try:
        value = loads(data)
    except (TypeError, ValueError) as exc:
        return Undecodable(data, str(exc).split(":")[0] or type(exc).__name__)
    digits = _LONG_DIGITS_BYTES if isinstance(data, bytes | bytearray) else _LONG_DIGITS
    if digits.search(data) is not None and not _exact_integers(data):  # type: ignore[arg-type]
        return Undecodable(data, "an integer beyond 64 bits")
    return value


def json_text(text: Any) -> Any:
    """A JSON text column (SQLite's, MariaDB's): None stays None, anything else is decoded (or
    Undecodable)."""
    if text is None:
        return None
    if not isinstance(text, str | bytes):  # a number or a blob another client stored
        return Undecodable(str(text), f"a {type(text).__name__}, not JSON text")
    return loads_exact(text)


def _exact_integers(data: str | bytes) -> bool:
    def check(text: str) -> int:
        number = int(text)
        if number not in _INT_RANGE and len(text.lstrip("-").rstrip("0")) > 17:
            raise ValueError(text)
        return number

    try:
        json.loads(data, parse_int=check)
    except ValueError:
        return False
    return True


def json_columns(
    payload: Any, tags: Any, errors: Any, retry: Any, result: Any
) -> tuple[Any, tuple[Any, ...], tuple[Any, ...], Any, Any]:
    """A row's decoded JSON columns as the Job holds them: (payload, tags, errors, retry,
    result). Any column that is Undecodable or of the wrong shape turns the payload into a
    CorruptRow naming it, and is read as empty (the errors column: as a history saying what it
    held, so the worker's failure or the reaper can still append to it)."""
    if (type(payload) is dict and type(tags) in (list, tuple)
            and (errors is None or type(errors) is list) and (retry is None or type(retry) is dict)
            and type(result) is not Undecodable):
        return payload, tuple(tags), () if errors is None else tuple(errors), retry, result
    corrupt: list[str] = []

    def check(name: str, value: Any, shape: type | None, empty: Any) -> Any:
        if isinstance(value, Undecodable):
            corrupt.append(f"{name} holds {value!r}")
            return empty
        if shape is not None and value is not None and not isinstance(value, shape):
            corrupt.append(f"{name} holds {_shown(value)}, not a JSON {shape.__name__}")
            return empty
        return value

    payload = check("payload", payload, None, None)
    tags = check("tags", tags, list, ())
    history = check("errors", errors, list, None)
    retry = check("retry", retry, dict, None)
    result = check("result", result, None, None)
    if history is None and errors is not None:
        history = [{"error": "CorruptColumn", "message": f"errors column held {_shown(errors)}"}]
    if corrupt:
        payload = CorruptRow(f"job row is corrupt: {'; '.join(corrupt)}")
    return payload, tuple(tags or ()), tuple(history or ()), retry, result


_TIMES = ("lease_until", "heartbeat_at", "run_at", "created_at", "started_at", "updated_at",
          "finished_at")
_BAD_TIME = (TypeError, ValueError, OverflowError, OSError)


def job_from_row(
    row: Mapping[str, Any],
    decode: Callable[[Any], Any] | None = None,
    when: Callable[[Any], datetime | None] | None = None,
    **claimed: Any,
) -> Job:
    """The one way a row becomes a Job, on every backend: the live, archive and dead tables'
    rows and the claim's. Columns a table does not have read as their empty value. `decode`
    turns a JSON column's stored value into Python (None: the driver decoded it), `when` a time
    column's into an aware datetime (None: it is one); a column that cannot be read makes the
    payload a CorruptRow that says so (the worker dead-letters such a job). `claimed`: fields
    the caller knows without the row (a claim's own status, worker, token and times)."""
    get = row.get
    if decode is None:
        payload, tags, errors, retry, result = json_columns(
            row["payload"], row["tags"], get("errors"), get("retry"), get("result"))
    else:
        payload, tags, errors, retry, result = json_columns(
            decode(row["payload"]), decode(row["tags"]), decode(get("errors")),
            decode(get("retry")), decode(get("result")))
    token = get("claim_token")
    status = claimed.get("status") or Status(get("status") or "pending")
    fields: dict[str, Any] = {
        "id": row["id"], "queue": row["queue"], "task": row["task"], "payload": payload,
        "status": status, "priority": row["priority"], "attempts": row["attempts"],
        "max_attempts": row["max_attempts"], "tags": tags,
        "idempotency_key": row["idempotency_key"], "worker_id": get("worker_id"),
        "claim_token": None if token is None else str(token),
        "cancel_requested": bool(get("cancel_requested")), "timeout": get("timeout_seconds"),
        "retry": retry, "errors": errors, "result": result, "reason": get("reason"),
        "lease_until": get("lease_until"), "heartbeat_at": get("heartbeat_at"),
        "run_at": get("run_at"), "created_at": get("created_at"),
        "started_at": get("started_at"), "updated_at": get("updated_at"),
        "finished_at": get("finished_at"), "workflow_id": get("workflow_id"),
    }
    if when is not None:  # else the driver's times are aware datetimes already
        corrupt = []
        for name in _TIMES:
            value = fields[name]
            if value is None or name in claimed:
                continue
            try:
                fields[name] = when(value)
            except _BAD_TIME:
                corrupt.append(f"{name} holds {str(value)[:50]!r}, not a time")
                fields[name] = None
        if corrupt:
            note = "; ".join(corrupt)
            fields["payload"] = CorruptRow(
                f"{payload}; {note}" if isinstance(payload, CorruptRow)
                else f"job row is corrupt: {note}")
    if claimed:
        fields.update(claimed)
    return Job(**fields)


def lease_expired_error(row: Mapping[str, Any], at: datetime) -> dict[str, Any]:
    """The entry the reaper appends to the history of a job whose lease expired at `at`."""
    return {"attempt": row["attempts"], "at": at.isoformat(), "worker": row["worker_id"],
            "error": "LeaseExpired", "message": f"lease expired while {row['status']}"}


def _shown(value: Any) -> str:
    text = value.text if isinstance(value, Undecodable) else json.dumps(value, default=str)
    return repr(text[:200])


def percentiles(values: list[float]) -> tuple[float, float, float] | None:
    """p50, p95 and p99 of `values` (sorted here), interpolated between the two nearest ranks as
    PostgreSQL's percentile_cont does; None for no values."""
    if not values:
        return None
    values.sort()
    last = len(values) - 1

    def at(fraction: float) -> float:
        position = fraction * last
        low = int(position)
        high = min(low + 1, last)
        return values[low] + (values[high] - values[low]) * (position - low)

    return at(0.5), at(0.95), at(0.99)


def latency_rows(rows: Iterable[tuple[str, str, float, float]]) -> list[LatencyRow]:
    """Per queue and per task, the count and percentiles of (queue, task, wait, run) rows: for
    a backend without a percentile function of its own."""
    waits: dict[tuple[str, str], list[float]] = {}
    runs: dict[tuple[str, str], list[float]] = {}
    for queue, task, wait, run in rows:
        for key in (("queue", queue), ("task", task)):
            waits.setdefault(key, []).append(float(wait))
            runs.setdefault(key, []).append(float(run))
    return [
        LatencyRow("queue" if kind == "queue" else "task", name, len(values),
                   percentiles(values), percentiles(runs[(kind, name)]))
        for (kind, name), values in waits.items()
    ]


# The live statuses in which a key's holder refuses a new job, by the enqueue's `unique` scope
# (JSON arrays: SQLite's and MariaDB's key_holder.sql).
HOLDING_JSON = {
    "pending": '["pending"]',
    "active": '["pending", "fetched", "processing"]',
    "until_done": '["pending", "fetched", "processing"]',
}


def flow_params(
    rate: RateLimit | None, aging: PriorityAging | None, key_rate: RateLimit | None = UNSET
) -> dict[str, Any]:
    """update_queue's flow-control parameters: UNSET leaves a setting, None lifts it."""
    params: dict[str, Any] = {"set_rate": rate is not UNSET, "set_aging": aging is not UNSET,
                              "set_key_rate": key_rate is not UNSET}
    r = rate if isinstance(rate, RateLimit) else None
    a = aging if isinstance(aging, PriorityAging) else None
    k = key_rate if isinstance(key_rate, RateLimit) else None
    params.update(rate_count=r and r.count, rate_period=r and r.period, rate_burst=r and r.burst,
                  aging_step=a and a.step, aging_cap=a and a.cap, key_rate_count=k and k.count,
                  key_rate_period=k and k.period, key_rate_burst=k and k.burst)
    return params


def flow_settings(
    rate_count: int | None, rate_period: float | None, rate_burst: int | None,
    aging_step: float | None, aging_cap: int | None, key_rate_count: int | None = None,
    key_rate_period: float | None = None, key_rate_burst: int | None = None,
) -> dict[str, Any]:
    """A queue row's flow-control settings as QueueInfo's fields."""
    rate = None if rate_count is None or rate_period is None else RateLimit(
        rate_count, rate_period, rate_burst)
    aging = None if aging_step is None or aging_cap is None else PriorityAging(
        aging_step, aging_cap)
    key_rate = None if key_rate_count is None or key_rate_period is None else RateLimit(
        key_rate_count, key_rate_period, key_rate_burst)
    return {"rate_limit": rate, "aging": aging, "key_rate_limit": key_rate}


def breaker_info(row: Mapping[str, Any], when: Callable[[Any], Any]) -> BreakerInfo:
    """A list_breakers.sql row; `when` makes the backend's time column a datetime."""
    return BreakerInfo(
        queue=row["queue"], task=row["task"], failure_limit=row["failure_limit"],
        window=float(row["window_seconds"]), cooldown=float(row["cooldown_seconds"]),
        state=row["state"], failures=row["failures"], opened_at=when(row["opened_at"]),
        open_until=when(row["open_until"]), probe_id=row["probe_id"])


def breaker_params(
    queue: str, task: str, failure_limit: int | None, window: float, cooldown: float, now: Any
) -> dict[str, Any]:
    """set_breaker.sql's, delete_breaker.sql's and mark_breaker_queue.sql's parameters."""
    return {"queue": queue, "task": task, "failure_limit": failure_limit, "window": window,
            "cooldown": cooldown, "now": now}
