"""Flow control's arithmetic, shared by the backends whose claim runs it in Python (SQLite,
MariaDB): the rate limit's GCRA bucket and the rate keys' buckets, priority aging, the
concurrency keys' room, the circuit breakers' gates. Each backend brings its statements and its
time type; the rules are here once."""

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


def aged_priority(priority: int, waited: float, step: float | None, cap: int | None) -> int:
    """A job's priority under priority aging: one more for every `step` seconds it has `waited`
    since its run_at, at most `cap` more (no aging: `step` None)."""
    if step is None or cap is None:
        return priority
    return priority + min(cap, math.floor(waited / step))


def aging_scan(limit: int) -> int:
    """How many candidates of a flow queue's plain order an aging claim of `limit` jobs reads."""
    return limit * 4 + 16


def level_scan(limit: int) -> int:
    """How many of each lower priority level (the oldest) an aging claim reads besides."""
    return limit * 2 + 4


def claim_order(rank: int, run_at: Any, job_id: int) -> tuple[int, Any, int]:
    """The claim's order: highest (aged) priority first, then the earliest run_at, then id."""
    return -rank, run_at, job_id


class KeyBuckets:
    """A flow queue's per-rate-key buckets during one claim: each key's tokens, read when the
    claim first meets the key (no row: a full bucket; throttled: none). `state`: the queue row's
    key_rate_* columns; `read(key)`: the key's (tat, throttled_until), or None without a row;
    `consume(key, tat, n)`: spends n tokens of a bucket whose arrival time the claim read as
    `tat`; `seconds` makes a difference of two times a float."""

    def __init__(
        self, state: Mapping[str, Any], now: Any, read: Callable[[str], Any],
        consume: Callable[[str, Any, int], object], seconds: Callable[[Any], float] = float,
    ) -> None:
        self.now, self.read, self.consume, self.seconds = now, read, consume, seconds
        self.count: int | None = state["key_rate_count"]
        self.period: float = state["key_rate_period"] or 0.0
        self.burst: int | None = state["key_rate_burst"]
        self.left: dict[str, float] = {}
        self.tat: dict[str, Any] = {}
        self.offered: dict[str, list[int]] = {}

    @property
    def interval(self) -> float:
        """Seconds between two tokens (the emission interval), with a limit."""
        assert self.count is not None
        return self.period / self.count

    def full_ahead(self) -> float | None:
        """How many seconds ahead of now a key's arrival time leaves its bucket empty (None: no
        limit)."""
        if self.count is None:
            return None
        return ((self.burst or self.count) - 1 + 1e-6) * self.period / self.count

    def take(self, row: Mapping[str, Any]) -> bool:
        """Whether the row's rate key (if any) has a token left for it (and takes it)."""
        key = row["rate_key"]
        if key is None:
            return True
        if key not in self.left:
            found = self.read(key)
            tat = self.now if found is None or found[0] is None else max(found[0], self.now)
            self.tat[key] = tat
            if found is not None and found[1] is not None and found[1] > self.now:
                self.left[key] = 0
            elif self.count is None:
                self.left[key] = math.inf
            else:
                self.left[key] = bucket_room(self.count, self.period, self.burst,
                                             self.seconds(tat - self.now))
        if self.left[key] <= 0:
            return False
        self.left[key] -= 1
        self.offered.setdefault(key, []).append(row["id"])
        return True

    def spend(self, chosen: set[int]) -> None:
        """Spends the tokens of the jobs the claim took (keys in order: no deadlock between two
        claims that lock key rows)."""
        if self.count is None:
            return
        for key, offered in sorted(self.offered.items()):
            n = len(chosen.intersection(offered))
            if n:
                self.consume(key, self.tat[key], n)


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


def through_gates(
    ranked: Iterable[tuple[M, T]], gates: dict[str, Probe], probes: list[Probe]
) -> Iterator[tuple[M, T]]:
    """`ranked`'s (row, item) pairs (in claim order) without those of a shut task; of a task
    whose breaker lets one probe through, its first, which becomes its probe (into `probes`)."""
    for row, item in ranked:
        gate = gates.get(row["task"])
        if gate is not None:
            if gate.probe_id is not None:
                continue  # shut, or its one probe already offered
            gates[row["task"]] = gate._replace(probe_id=row["id"])
            probes.append(gates[row["task"]])
        yield row, item
