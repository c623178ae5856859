"""The interleaving driver: operation A runs in its own thread until it reaches a named pause
point (claimq._pause), operation B then runs in another thread to its end (or until it waits
for a database lock A holds), A is resumed, both finish, and the caller checks the invariants.

A World is one fresh database seen by two Apps (two "processes" a and b, each with its own
backend and connections) and a third (`probe`) that only reads, all on one FakeClock.

No wall-clock assertion anywhere: timeouts below only stop a hung run (and are generous for
a loaded CI machine). B is taken to be blocked on A when the database says so (PostgreSQL:
pg_stat_activity.wait_event_type = 'Lock' for a session of this world's application_name;
MariaDB: a LOCK WAIT transaction of this world's database in information_schema.innodb_trx,
or one of its statements running for half a second (blocked_on_lock);
SQLite: B's thread is waiting for the writer lock, seen in its Python stack). If it is neither
done nor seen blocked within BLOCK_FALLBACK seconds, A is resumed anyway: the run is then an
ordinary concurrent run, and the invariants must hold for it too."""

from __future__ import annotations

import gc
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from claimq import App
from claimq._pause import set_hook
from claimq.backends.base import ClaimRequest, Completion, Failure
from claimq.clock import FakeClock
from claimq.job import Job

REACH_TIMEOUT = 120.0  # A to its point: only a hang takes this long
BLOCK_FALLBACK = 20.0  # B neither done nor seen blocked: resume A anyway
JOIN_TIMEOUT = 180.0
POLL = 0.01
SQLITE_STABLE = 5  # polls B must stay in the writer wait before it counts as blocked


@dataclass
class World:
    """One fresh database, two Apps that act on it (a and b) and one that reads (probe)."""

    kind: str  # "sqlite", "postgresql" or "mariadb"
    url: str
    clock: FakeClock
    a: App
    b: App
    probe: App
    enqueued: set[int] = field(default_factory=set)  # every job id the world has queued
    scopes: dict[str, str] = field(default_factory=dict)  # idempotency key -> unique scope

    @classmethod
    def open(cls, kind: str, url: str) -> World:
        # Each reading moves the clock on a millisecond: successive operations get distinct,
        # increasing times, as on a real clock, and the clock moves only when read.
        clock = FakeClock(start=datetime.now(UTC), tick=0.001)
        a, b, probe = App(url, clock=clock), App(url, clock=clock), App(url, clock=clock)
        a.migrate()
        return cls(kind, url, clock, a, b, probe)

    def close(self) -> None:
        for app in (self.a, self.b, self.probe):
            app.close()

    def table(self, name: str) -> str:
        if self.kind == "postgresql":
            return f"{self.probe.backend.schema}.{name}"  # type: ignore[attr-defined]
        return f"claimq_{name}"

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        """A committed-state read (its own connection, outside any operation)."""
        return self.probe.backend.run_sql(sql)

    # -- building a world ---------------------------------------------------------------------

    def enqueue(self, n: int = 1, task: str = "t.work", **kw: Any) -> list[int]:
        if kw.get("idempotency_key") is not None:
            self.scopes[kw["idempotency_key"]] = kw.get("unique") or "until_done"
        ids = [int(self.b.enqueue(task, {"n": i}, **kw)) for i in range(n)]
        self.enqueued.update(ids)
        return ids

    def claim(self, app: App | None = None, *, queues: list[str] | None = None, limit: int = 10,
              lease: float | None = 30.0, start: bool = True, worker: str = "w-setup"
              ) -> list[Job]:
        return (app or self.b).backend.claim(worker, queues, limit, lease, start)


# -- the operations specs are made of (each returns what the backend answered) ------------------


def claim(app: App, queues: list[str] | None = None, limit: int = 10, worker: str = "w",
          start: bool = True) -> list[Job]:
    return app.backend.claim(worker, queues, limit, 30.0, start)


def complete(app: App, jobs: list[Job]) -> set[int]:
    return app.backend.complete([Completion(j.id, str(j.claim_token), '"ok"') for j in jobs])


def failure(job: Job, *, permanent: bool = False, delay: float = 0.0) -> Failure:
    error = {"attempt": job.attempts, "error": "Boom", "message": "interleaving"}
    return Failure(job.id, str(job.claim_token), error, delay,
                   "permanent_error" if permanent else "retries_exhausted", permanent)


def fail(app: App, jobs: list[Job], *, permanent: bool = False) -> Any:
    return app.backend.fail([failure(j, permanent=permanent) for j in jobs])


def settle(app: App, done: list[Job], failed: list[Job], claim_queues: list[str] | None = None,
           limit: int = 0) -> Any:
    request = ClaimRequest("w-settle", claim_queues, limit, 30.0, True) if limit else None
    return app.backend.settle([Completion(j.id, str(j.claim_token), '"ok"') for j in done],
                              [failure(j) for j in failed], request)


# -- the driver -----------------------------------------------------------------------------------


@dataclass
class Outcome:
    point: str
    reached: bool = False
    b_blocked: bool | None = None  # True: B waited on A; False: B finished first; None: unknown
    a_result: Any = None
    b_result: Any = None
    a_error: BaseException | None = None
    b_error: BaseException | None = None
    note: str = ""  # when B was neither done nor seen blocked: where it was

    def raise_errors(self) -> None:
        for side, error in (("A", self.a_error), ("B", self.b_error)):
            if error is not None:
                raise AssertionError(f"operation {side} raised {error!r}") from error


class _Gate:
    """The hook: stops the first arrival of A's thread at `point`; every other call passes."""

    def __init__(self, point: str) -> None:
        self.point = point
        self.thread: int | None = None
        self.reached = threading.Event()
        self.resume = threading.Event()

    def __call__(self, point: str) -> None:
        if point != self.point or threading.get_ident() != self.thread or self.reached.is_set():
            return
        self.reached.set()
        if not self.resume.wait(JOIN_TIMEOUT):
            raise RuntimeError(f"interleave: never resumed at {point}")


class _Runner(threading.Thread):
    def __init__(self, name: str, fn: Callable[[], Any], gate: _Gate | None = None) -> None:
        super().__init__(name=f"interleave-{name}", daemon=True)
        self.fn, self.gate = fn, gate
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        if self.gate is not None:
            self.gate.thread = threading.get_ident()
        try:
            self.result = self.fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            self.error = exc


def blocked_on_lock(world: World, b: _Runner) -> bool:
    """Whether the database (or, on SQLite, B's stack) says B waits for a lock."""
    if world.kind == "postgresql":
        [(n,)] = world.rows(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND application_name = current_setting('application_name') "
            "AND pid <> pg_backend_pid()")
        return int(n) > 0
    if world.kind == "mariadb":
        # innodb_trx's LOCK WAIT, or (it misses some waits: one that began in the optimizer's
        # read of a const table, and, while other sessions load the server, most of them) a
        # statement of this world's database running for half a second, which the specs'
        # operations, milliseconds each, only do while they wait (A itself waits in Python).
        [(n,)] = world.rows(
            "SELECT (SELECT count(*) FROM information_schema.innodb_trx t "
            "        JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id "
            "        WHERE t.trx_state = 'LOCK WAIT' AND p.db = DATABASE()) "
            "     + (SELECT count(*) FROM information_schema.processlist "
            "        WHERE db = DATABASE() AND id <> CONNECTION_ID() AND command = 'Query' "
            "          AND time_ms >= 500)")
        return int(n) > 0
    frame = sys._current_frames().get(b.ident or -1)
    return (frame is not None and frame.f_code.co_name in ("_write", "transaction")
            and frame.f_code.co_filename.endswith("sqlite/backend.py"))


def interleave(world: World, a: Callable[[], Any], point: str, b: Callable[[], Any]) -> Outcome:
    """Runs `a` to `point`, `b` through (or until it waits on a's lock), then resumes `a`."""
    outcome = Outcome(point)
    gate = _Gate(point)
    # No garbage collection while A waits at its point: a collection in this (the driving)
    # thread once ran a finalizer that waited for a lock A held, and A waits for this thread:
    # the run hung. Earlier tests' garbage is collected now, while nothing is held.
    gc.collect()
    gc.disable()
    previous = set_hook(gate)
    try:
        ra = _Runner("A", a, gate)
        ra.start()
        deadline = time.monotonic() + REACH_TIMEOUT
        while not gate.reached.wait(POLL) and ra.is_alive():
            if time.monotonic() > deadline:
                raise AssertionError(f"A hung before reaching {point}")
        outcome.reached = gate.reached.is_set()
        rb = _Runner("B", b)
        if outcome.reached:
            rb.start()
            outcome.b_blocked = _watch(world, rb)
            if outcome.b_blocked is None:
                outcome.note = _where(rb)
        gate.resume.set()
        ra.join(JOIN_TIMEOUT)
        if not outcome.reached:
            rb.start()  # A ran through without its point: still run B, then report
        rb.join(JOIN_TIMEOUT)
        if ra.is_alive() or rb.is_alive():
            raise AssertionError(f"interleave at {point}: an operation hung")
        outcome.a_result, outcome.a_error = ra.result, ra.error
        outcome.b_result, outcome.b_error = rb.result, rb.error
    finally:
        gate.resume.set()
        set_hook(previous)
        gc.enable()
    return outcome


def _where(runner: _Runner) -> str:
    frame = sys._current_frames().get(runner.ident or -1)
    return "".join(traceback.format_stack(frame)) if frame is not None else "(gone)"


def _watch(world: World, b: _Runner) -> bool | None:
    """Until B is done (False) or seen waiting for A's lock (True); None: neither, in time."""
    stable = 0
    deadline = time.monotonic() + BLOCK_FALLBACK
    while time.monotonic() < deadline:
        b.join(POLL)
        if not b.is_alive():
            return False
        if blocked_on_lock(world, b):
            stable += 1
            if world.kind != "sqlite" or stable >= SQLITE_STABLE:
                return True
        else:
            stable = 0
    return None
