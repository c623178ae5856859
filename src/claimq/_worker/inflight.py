"""What one worker process holds: its in-flight jobs, keyed by their claim (job id + token),
and the slots they take."""

from __future__ import annotations

import asyncio
import bisect
import enum
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from claimq.backends.base import Owned
from claimq.job import Job

# Upper bounds (seconds) of the claim round-trip histogram's buckets (the metrics' `le`).
CLAIM_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# Upper bounds (seconds) of the per-task attempt duration histogram's buckets.
RUN_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
               900.0, 3600.0)
# How an attempt this worker ran ended, once its outcome was written (the metrics' `outcome`):
# each attempt counts in exactly one. A failed attempt is `retried` or `dead`.
OUTCOMES = ("succeeded", "retried", "dead")
GIVEN_UP_KEPT = 1000  # given-up claims remembered before the old ones are pruned
GIVEN_UP_FOR = 600.0  # seconds: far longer than any lease
EWMA = 0.2  # weight of the newest sample in the round-trip and handler-time averages
# An illegal move of a claim's state raises IllegalTransition, and is kept in ILLEGAL, when
# STRICT is set (the tests set it, and CLAIMQ_STRICT_FLIGHTS=1 for the workers they start);
# otherwise the claim moves as the booleans this state replaced did (and a debug line says so).
STRICT = os.environ.get("CLAIMQ_STRICT_FLIGHTS") == "1"
ILLEGAL: list[str] = []  # (strict) illegal transitions seen: the tests fail on any

log = logging.getLogger("claimq.worker")


class IllegalTransition(AssertionError):
    """A claim was moved along an edge its lifecycle does not have (a bug of the worker's)."""


class Flight(enum.Enum):
    """Where one claim stands. Three steps (its handler waits, runs, has returned), each either
    still ours or lost (nothing about it may be reported any more):

        WAITING ──launch──▶ RUNNING ──finish──▶ FINISHED        (ours)
           │lose              │lose               │lose
           ▼                  ▼                   ▼
        GIVEN_UP ─launch─▶ ABANDONED ─finish─▶ DROPPED          (lost)

    A claim is forgotten (Registry.forget) once its outcome was written or it is lost and
    nothing of it runs; forgetting leaves it FINISHED or DROPPED. The moves are in _NEXT."""

    WAITING = ("waiting", False, False, False)  # claimed: waits for a slot or its earlier attempt
    RUNNING = ("running", True, False, False)  # its handler runs (holds a slot)
    FINISHED = ("finished", False, True, False)  # its handler returned; outcome on its way
    GIVEN_UP = ("given up", False, False, True)  # lost before its handler started
    ABANDONED = ("abandoned", True, False, True)  # lost while its handler runs on (a thread)
    DROPPED = ("dropped", False, True, True)  # lost, and nothing of it runs

    def __init__(self, label: str, running: bool, finished: bool, lost: bool) -> None:
        self.label = label
        self.running = running  # its handler has started and not yet returned (holds a slot)
        self.finished = finished  # its handler returned (or never will run)
        self.lost = lost  # no longer ours: nothing about it may be reported
        self.moves: dict[str, Flight] = {}  # from _NEXT


# The one table of the lifecycle: (state, move) -> the next state. A move not in it is
# illegal; losing a claim lost already is no move (InFlight.lose).
_NEXT: dict[tuple[Flight, str], Flight] = {
    (Flight.WAITING, "launch"): Flight.RUNNING,
    (Flight.WAITING, "lose"): Flight.GIVEN_UP,
    (Flight.RUNNING, "finish"): Flight.FINISHED,
    (Flight.RUNNING, "lose"): Flight.ABANDONED,
    (Flight.FINISHED, "lose"): Flight.DROPPED,
    (Flight.FINISHED, "forget"): Flight.FINISHED,
    # given up while its claim's batch was being started (Executor.start awaits between
    # registering a batch and launching it): launched all the same, its Task returns at once
    (Flight.GIVEN_UP, "launch"): Flight.ABANDONED,
    (Flight.DROPPED, "launch"): Flight.ABANDONED,
    (Flight.GIVEN_UP, "forget"): Flight.DROPPED,
    (Flight.ABANDONED, "finish"): Flight.DROPPED,
    (Flight.DROPPED, "forget"): Flight.DROPPED,
}
for (_state, _move), _after in _NEXT.items():
    _state.moves[_move] = _after


@dataclass(eq=False, slots=True)
class InFlight:
    """One claim of one job, from the claim until its outcome is written or it is given up.

    A claim is never confused with another claim of the same job: the reaper may hand the job
    back to this very worker while an earlier attempt still runs here."""

    job: Job
    owned: Owned
    attempt: int
    lease_seconds: float
    lease_deadline: float  # monotonic: past it without a renewal, the lease may be gone
    state: Flight = Flight.WAITING  # changed by launch(), finish(), lose() and forget() only
    # What happened to the attempt, whatever its state (set from handler threads too):
    completed_by_handler: bool = False  # ctx.complete_in() committed it in the handler's txn
    cancel_requested: bool = False  # seen at a heartbeat; read by handler threads
    timed_out: bool = False  # ran past its timeout: its Task was cancelled for it
    task: asyncio.Task[Any] | None = None  # None while it waits for a slot (claimed ahead)
    began: float = 0.0  # monotonic: when its handler's Task was made
    ran: float = 0.0  # seconds its handler ran (set when it returned; the metrics' duration)

    @property
    def running(self) -> bool:
        return self.state.running

    @property
    def finished(self) -> bool:
        return self.state.finished

    @property
    def lost(self) -> bool:
        return self.state.lost

    def launch(self) -> None:
        """Its handler's Task was made (it holds a slot)."""
        self._move("launch")

    def finish(self) -> None:
        """Its handler returned (or its Task ended)."""
        self._move("finish")

    def lose(self) -> bool:
        """No longer ours: from here on nothing about it may be reported. Returns whether it
        was still ours (False: lost already, nothing changes)."""
        if self.state.lost:
            return False
        self._move("lose")
        return True

    def forget(self) -> None:
        """Dropped from the registry: nothing of it is left to run or to report."""
        self._move("forget")

    def _move(self, move: str) -> None:
        state = self.state
        after = state.moves.get(move)
        if after is None:
            message = f"job {self.job.id} attempt {self.attempt}: cannot {move} when {state.label}"
            if STRICT:
                ILLEGAL.append(message)  # seen even where the raise is caught (a callback)
                raise IllegalTransition(message)
            log.debug("%s", message)
            # as the booleans this state replaced did: launching sets `running`, finishing and
            # forgetting clear it and set `finished`; `lost` stays as it was
            if move == "launch":
                after = Flight.ABANDONED if state.lost else Flight.RUNNING
            else:
                after = Flight.DROPPED if state.lost else Flight.FINISHED
        self.state = after

    def renew(self, since: float) -> None:
        """The database extended the lease at or after `since` (monotonic)."""
        self.lease_deadline = since + self.lease_seconds

    @property
    def lease_expired(self) -> bool:
        return time.monotonic() > self.lease_deadline


@dataclass
class Counters:
    """The worker's counters, reported when it stops (and by its metrics)."""

    values: dict[str, int] = field(default_factory=dict)
    last_completed_at: float = 0.0  # monotonic: when the latest completion was written
    # Round trips that claimed, by bucket of CLAIM_BUCKETS (the last: beyond them), and their sum.
    claim_seconds: list[int] = field(default_factory=lambda: [0] * (len(CLAIM_BUCKETS) + 1))
    claim_seconds_sum: float = 0.0
    # Per (task, queue, outcome): attempts by bucket of RUN_BUCKETS (the last: beyond), and the
    # sum of their seconds. Only attempts whose outcome was written (or landed) count.
    runs: dict[tuple[str, str, str], tuple[list[int], list[float]]] = field(default_factory=dict)

    def ran(self, flight: InFlight, outcome: str) -> None:
        """One attempt of `flight`'s job ended `outcome` (one of OUTCOMES), its outcome written:
        counted in the per-task histogram with the seconds its handler ran."""
        key = (flight.job.task, flight.job.queue, outcome)
        found = self.runs.get(key)
        if found is None:
            found = self.runs[key] = ([0] * (len(RUN_BUCKETS) + 1), [0.0])
        found[0][bisect.bisect_left(RUN_BUCKETS, flight.ran)] += 1
        found[1][0] += flight.ran

    def run_histograms(self) -> Iterator[tuple[tuple[str, str, str],
                                               list[tuple[str, float]], float]]:
        """Per (task, queue, outcome): cumulative (le, count) buckets, +Inf last, and the sum."""
        for key, (counts, total) in sorted(self.runs.items()):
            yield key, _cumulative(RUN_BUCKETS, counts), total[0]

    def claimed(self, jobs: int, seconds: float) -> None:
        """One round trip that claimed (per batch, not per job)."""
        self.claim_seconds[bisect.bisect_left(CLAIM_BUCKETS, seconds)] += 1
        self.claim_seconds_sum += seconds
        if jobs:
            self.add("claimed", jobs)

    def claim_histogram(self) -> tuple[list[tuple[str, float]], float]:
        """Cumulative (le, count) buckets, +Inf last, and the sum: the metrics' histogram."""
        return _cumulative(CLAIM_BUCKETS, self.claim_seconds), self.claim_seconds_sum

    def completed(self, n: int = 1) -> None:
        if n:  # stamped first: whoever sees the new count sees its time
            self.last_completed_at = time.monotonic()
        self.add("completed", n)

    def add(self, name: str, n: int = 1) -> None:
        self.values[name] = self.values.get(name, 0) + n

    def get(self, name: str) -> int:
        return self.values.get(name, 0)


def _cumulative(bounds: tuple[float, ...], counts: list[int]) -> list[tuple[str, float]]:
    buckets, total = [], 0
    for bound, count in zip((*map(repr, bounds), "+Inf"), counts, strict=True):
        total += count
        buckets.append((bound, float(total)))
    return buckets


class Registry:
    """The claims this worker holds, and the slots they leave free.

    A slot is taken from the claim until the handler returns, and stays taken by a handler that
    runs on after its job was lost or timed out (a thread cannot be interrupted). Outcomes still
    on their way are bounded too, to one more batch than there are slots.

    Claiming ahead (`prefetch`, at most that many jobs beyond the slots): only as many as the
    slots free up during one claim's round trip, judged by the averages of both. Handlers
    shorter than a round trip then get a batch each trip while the last one's outcomes are
    written; a job claimed ahead waits about one round trip, and handlers that take longer than
    that get none (what waits here would be better run by an idle worker)."""

    def __init__(self, concurrency: int, counters: Counters, prefetch: int = 0) -> None:
        self.concurrency = concurrency
        self.counters = counters
        self.prefetch = prefetch
        self._round_trip = 0.0  # average seconds of a claim's round trip (0: none yet)
        self._handler = 0.0  # average seconds from a handler's start to its end (0: none yet)
        self._claims: dict[Owned, InFlight] = {}
        self._newest: dict[int, InFlight] = {}  # per job id, its latest claim here
        # Claims given up here (lease lost or feared lost) and forgotten since: their attempt
        # was used, so they are never taken for claims whose answer was lost.
        self._given_up: dict[Owned, float] = {}
        self.reserved = 0  # slots promised to a claim still on its way
        self.slots_free = asyncio.Event()
        self.handler_done = asyncio.Event()

    def __iter__(self) -> Iterator[InFlight]:
        return iter(list(self._claims.values()))

    def __len__(self) -> int:
        return len(self._claims)

    def known(self, owned: Owned) -> bool:
        """Whether this claim was ever ours here (held now, or given up recently)."""
        return owned in self._claims or owned in self._given_up

    def newest(self, job_id: int) -> InFlight | None:
        return self._newest.get(job_id)

    def held(self) -> list[InFlight]:
        """The claims still ours (their leases to keep)."""
        return [f for f in self._claims.values() if not f.lost]

    @property
    def ahead(self) -> int:
        """How many jobs a claim may take beyond the slots now (see the class)."""
        if not self.prefetch or not self._round_trip or not self._handler:
            return 0
        per_trip = self.concurrency * self._round_trip / self._handler
        return self.prefetch if per_trip >= self.prefetch else int(per_trip)

    def round_trip(self, seconds: float) -> None:
        """A claim's round trip took `seconds`."""
        self._round_trip = seconds if not self._round_trip else (
            self._round_trip + EWMA * (seconds - self._round_trip))

    def handler_ran(self, seconds: float) -> None:
        """A handler's Task ran `seconds` (from its start to its end)."""
        seconds = max(seconds, 1e-6)
        self._handler = seconds if not self._handler else (
            self._handler + EWMA * (seconds - self._handler))

    @property
    def free(self) -> int:
        return self._room(self.concurrency + self.ahead, self._busy())

    def _busy(self) -> int:
        return sum(1 for f in self._claims.values() if not f.finished)

    def _room(self, slots: int, busy: int) -> int:
        free = min(slots - busy, 2 * slots - len(self._claims))
        return max(free - self.reserved, 0)

    def reserve(self, at_most: int) -> int:
        """Promises up to `at_most` free slots to a claim; with a whole batch more still free
        beyond them (claiming ahead), wakes the fetcher to claim it beside this one."""
        ahead, busy = self.ahead, self._busy()
        free = self._room(self.concurrency + ahead, busy)
        n = min(free, at_most)
        if ahead and n:
            beyond = n - min(self._room(self.concurrency, busy), n)
            if beyond:
                self.counters.add("claimed_ahead", beyond)
            if free - n >= at_most:
                self.slots_free.set()
        self.reserved += n
        return n

    def unreserve(self, n: int) -> None:
        self.reserved -= n

    def add(self, flight: InFlight) -> InFlight | None:
        """Registers a new claim; returns this job's earlier claim here, if one is still
        registered (the database gave the job out again, so that claim is lost for sure)."""
        earlier = self._newest.get(flight.job.id)
        self._claims[flight.owned] = flight
        self._newest[flight.job.id] = flight
        return earlier

    def finish(self, flight: InFlight) -> None:
        """Its handler returned (the outcome, if any, goes to the completer)."""
        flight.finish()
        self.handler_done.set()

    def forget_all(self, flights: list[InFlight]) -> None:
        for flight in flights:
            self._drop(flight)
        self.handler_done.set()
        self.slots_free.set()

    def forget(self, flight: InFlight) -> None:
        """Drops the claim: its outcome was written, or it is lost and nothing of it runs."""
        self._drop(flight)
        self.handler_done.set()
        self.slots_free.set()

    def _drop(self, flight: InFlight) -> None:
        if self._claims.get(flight.owned) is flight:
            del self._claims[flight.owned]
        if self._newest.get(flight.job.id) is flight:
            del self._newest[flight.job.id]
        if flight.lost:
            now = time.monotonic()
            self._given_up[flight.owned] = now
            if len(self._given_up) > GIVEN_UP_KEPT:
                self._given_up = {o: t for o, t in self._given_up.items()
                                  if now - t < GIVEN_UP_FOR}
        flight.forget()
