"""Flow control's arithmetic, shared by the backends whose claim runs it in Python (SQLite,
MariaDB): the rate limit's GCRA bucket and the concurrency keys' room."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")


def bucket_room(count: int, period: float, burst: int | None, ahead: float) -> int:
    """The tokens a GCRA bucket holds: its burst (default: `count`), less one for every emission
    interval (period / count) its theoretical arrival time lies `ahead` of now (>= 0)."""
    interval = period / count
    return max(math.floor(-ahead / interval + 1e-6) + (burst or count), 0)


def within_keys(ranked: Iterable[tuple[Any, T]], running: dict[str, int], limit: int) -> list[T]:
    """The first `limit` items, in `ranked`'s order, whose row (a mapping) has no concurrency key
    or one with room: fewer in flight than the row's concurrency_limit, counting `running`
    (updated as items are taken)."""
    found: list[T] = []
    for row, item in ranked:
        key = row["concurrency_key"]
        if key is not None:
            if running.get(key, 0) >= row["concurrency_limit"]:
                continue
            running[key] = running.get(key, 0) + 1
        found.append(item)
        if len(found) >= limit:
            break
    return found


def queue_room(
    state: Any, now: Any, limit: int, clear_throttle: Callable[[], object],
    seconds: Callable[[Any], float] = float,
) -> tuple[int, Any]:
    """How many jobs a flow-controlled queue may hand out now, at most `limit`, and its rate
    limit's arrival time (None without one): none while it is throttled (a throttle past is
    cleared), no more than its bucket holds. `state`: the queue row's throttled_until and rate_*
    columns; `seconds` makes a difference of two of its times a float."""
    if state["throttled_until"] is not None:
        if state["throttled_until"] > now:
            return 0, None
        clear_throttle()
    if state["rate_count"] is None:
        return limit, None
    tat = max(state["rate_tat"] or now, now)
    return min(limit, bucket_room(state["rate_count"], state["rate_period"], state["rate_burst"],
                                  seconds(tat - now))), tat
