"""Flow control's arithmetic, shared by the backends whose claim runs it in Python (SQLite,
MariaDB): the rate limit's GCRA bucket, the concurrency keys' room, the circuit breakers'
gates."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")
M = TypeVar("M", bound=Mapping[str, Any])


def bucket_room(count: int, period: float, burst: int | None, ahead: float) -> int:
    """The tokens a GCRA bucket holds: its burst (default: `count`), less one for every emission
    interval (period / count) its theoretical arrival time lies `ahead` of now (>= 0)."""
    interval = period / count
    return max(math.floor(-ahead / interval + 1e-6) + (burst or count), 0)


def within_keys(
    ranked: Iterable[tuple[Any, T]], running: dict[str, int], limit: int,
    admit: Callable[[Any], bool] = lambda row: True,
) -> list[T]:
    """The first `limit` items, in `ranked`'s order, whose row (a mapping) has no concurrency key
    or one with room: fewer in flight than the row's concurrency_limit, counting `running`
    (updated as items are taken), and that `admit(row)` (asked only then) lets through."""
    found: list[T] = []
    for row, item in ranked:
        key = row["concurrency_key"]
        if key is not None and running.get(key, 0) >= row["concurrency_limit"]:
            continue
        if not admit(row):
            continue
        if key is not None:
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


class Probe(NamedTuple):
    """A circuit breaker's gate in a claim (breaker_probe.sql's parameters)."""

    queue: str
    task: str
    state: str  # as the claim read it
    probe_id: int | None  # the job offered as its probe; 0: shut; None: none offered yet


def breaker_gates(
    rows: Iterable[Mapping[str, Any]], queue: str, now: Any, close: Callable[[Probe], object],
    pending: str, reopen: Callable[[Probe], object],
) -> dict[str, Probe]:
    """A queue's circuit breakers that hold its tasks back, by task, from claim_breakers.sql's
    rows: shut (probe_id 0: open and cooling down, or half_open while its probe is out) or
    letting one probe through (probe_id None). A half_open one whose probe finished without
    failing is closed (`close`) and holds nothing back; one whose probe was dead-lettered
    without a failure written (the reaper buried it, a cancel) is opened again (`reopen`)."""
    gates: dict[str, Probe] = {}
    for b in rows:
        probe = Probe(queue, b["task"], b["state"], None)
        if b["state"] == "open":
            shut = b["open_until"] > now
        elif b["probe_status"] is None and b["probe_dead"]:
            reopen(probe)
            shut = True
        elif b["probe_status"] is None:  # the probe is done, and a failure would reopen
            close(probe)
            continue
        else:
            shut = b["probe_status"] != pending
        gates[b["task"]] = probe._replace(probe_id=0) if shut else probe
    return gates


def through_gates(rows: Iterable[M], gates: dict[str, Probe], probes: list[Probe]) -> Iterator[M]:
    """`rows` (in claim order) without those of a shut task; of a task whose breaker lets one
    probe through, its first, which becomes its probe (into `probes`)."""
    for row in rows:
        gate = gates.get(row["task"])
        if gate is not None:
            if gate.probe_id is not None:
                continue  # shut, or its one probe already offered
            gates[row["task"]] = gate._replace(probe_id=row["id"])
            probes.append(gates[row["task"]])
        yield row
