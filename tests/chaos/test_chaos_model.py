"""Scenario 10: a property-based test of the job state machine against a model.

hypothesis drives random interleavings of enqueue (plain, keyed, in an ordered sequence), claim
(fetched, or started at once), start,
heartbeat, complete, fail (retryable, permanent), release, cancel, reap, resurrect and clock
advance through the real App and backend, on a real SQLite file and a real PostgreSQL schema.
Every owner operation is tried with any token ever handed out (current or stale). After every
step the whole database must equal the model:

- no job lost: every enqueued job is in exactly one of live / archive / dead, as predicted;
- no two live owners: every claim hands out a token never seen before, a job has at most one
  current token, and only an operation with that token and a valid state succeeds;
- no stale write: an operation with a stale token raises LeaseLost (or reports the job lost) and
  changes nothing at all;
- the history: each failure and each reaped lease adds exactly one entry;
- flow control: a sequence's jobs are claimed one at a time in id order (on_failure "wait" or
  "skip"); with the circuit breaker some examples give the task, its state is the model's and
  a claim takes nothing while it is open, one probe once it has cooled down.

Time: SQLite runs on a fake clock (SQLiteBackend(clock=...)); PostgreSQL's clock cannot be
moved, so "advance" shifts every live job's run_at and lease_until back instead (the same thing,
seen from the rows). Leases are 10 s, retry delays 0 or 20 s, advances 11 s: every comparison
the model predicts is at least a second away from a tie, whatever the real time spent.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from chaos_harness import SOAK, drop_schema
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from claimq import App, Job, JobNotFound, KeyHeld, LeaseLost
from claimq.backends.base import Failure
from claimq.backends.sqlite import SQLiteBackend

pytestmark = pytest.mark.timeout(300)

LEASE = 10
STEP = 11
DELAYS = (0, 20)
# The circuit breaker some examples give chaos.model: 2 failures within 30 s open it for 20 s
# (one or two advances: 8 s or more from a tie, whatever the real time spent).
BREAKER = {"failures": 2, "window": 30, "cooldown": 20}
SETTINGS = settings(
    max_examples=1000 if SOAK else 100,
    stateful_step_count=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


class FakeClock:
    """Seconds since the epoch that move only when told, plus a microsecond per reading, so
    that successive operations are ordered as they would be on a real clock."""

    def __init__(self) -> None:
        self.base = 1_750_000_000.0
        self.ticks = 0

    def __call__(self) -> float:
        self.ticks += 1
        return self.base + self.ticks * 1e-6

    def now(self) -> datetime:  # the claimq.clock.Clock protocol, which backends read
        return datetime.fromtimestamp(self(), UTC)

    def advance(self, seconds: float) -> None:
        self.base += seconds


@dataclass
class MJob:
    id: int
    priority: int
    max_attempts: int
    run_at: tuple[int, int]  # (virtual second, event number): the claim order
    table: str = "live"  # live | archive | dead
    status: str = "pending"
    attempts: int = 0
    token: str | None = None
    lease_until: int | None = None
    cancel: bool = False
    errors: int = 0
    reason: str | None = None
    payload: dict[str, int] | None = None  # checked for keyed jobs (debounce replaces it)
    sequence: str | None = None  # an ordered sequence's key
    wait: bool = True  # on_failure="wait": a failed job holds its sequence while it retries
    key: str | None = None  # its idempotency key


@dataclass
class MBreaker:
    """The model of chaos.model's circuit breaker (README "Flow control")."""

    state: str = "closed"
    failures: int = 0
    window_until: int | None = None
    open_until: int | None = None
    probe: int | None = None


@dataclass
class Env:
    """One fresh database per example, and how to move its clock."""

    app: App
    advance: Any
    cleanup: Any = field(default=lambda: None)


def sqlite_env(root: Path) -> Env:
    path = root / f"{uuid.uuid4().hex}.db"
    url = f"sqlite:///{path}"
    clock = FakeClock()
    app = App(url)
    app._backend = SQLiteBackend(url, clock=clock)
    app.migrate()
    return Env(app, clock.advance)


class PgEnvs:
    """One schema for the whole test, emptied before each example."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.schema = f"t_{uuid.uuid4().hex[:12]}"
        self.app = App(f"{base_url}?schema={self.schema}")
        self.app.migrate()

    def new(self) -> Env:
        s = self.schema
        with self.app.transaction() as conn:
            conn.execute(f"TRUNCATE {s}.jobs, {s}.archive, {s}.dead, {s}.queues,"
                         f" {s}.idempotency_keys, {s}.breakers")

        def advance(seconds: float) -> None:
            with self.app.transaction() as conn:
                conn.execute(
                    f"UPDATE {s}.jobs SET run_at = run_at - make_interval(secs => %s),"
                    " lease_until = lease_until - make_interval(secs => %s)",
                    (seconds, seconds),
                )
                conn.execute(
                    f"UPDATE {s}.breakers SET window_until = window_until"
                    " - make_interval(secs => %s), open_until = open_until"
                    " - make_interval(secs => %s)", (seconds, seconds))

        return Env(self.app, advance)

    def close(self) -> None:
        self.app.close()
        drop_schema(self.base_url, self.schema)


def machine_for(make_env: Any) -> type[RuleBasedStateMachine]:
    class JobStateMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.env: Env = make_env()
            self.app = self.env.app
            self.jobs: dict[int, MJob] = {}
            self.handles: list[Job] = []  # every claimed Job ever returned: current or stale
            self.tokens: set[str] = set()
            self.vt = 0  # virtual now, in seconds
            self.seq = 0
            self.keys: dict[str, int] = {}  # idempotency key -> the job holding its row
            self.breaker: MBreaker | None = None  # chaos.model's, in the default queue

        def teardown(self) -> None:
            self.env.cleanup()

        def tick(self) -> int:
            self.seq += 1
            return self.seq

        # -- helpers -------------------------------------------------------------------------

        def handle(self, i: int) -> Job:
            """A handle by `i`: i % 3 == 1 prefers a stale one whose job has another owner now
            (the case fencing tokens exist for), i % 3 == 2 the current owner's, else any."""
            kind, n = i % 3, i // 3
            if kind == 1:
                pick = [h for h in self.handles
                        if self.jobs[h.id].token not in (None, h.claim_token)]
            elif kind == 2:
                pick = [h for h in self.handles if self.jobs[h.id].token == h.claim_token]
            else:
                pick = []
            pick = pick or self.handles
            return pick[n % len(pick)]

        def owned(self, h: Job, statuses: tuple[str, ...]) -> MJob | None:
            """The model job when `h` is its current owner in one of `statuses`, else None."""
            m = self.jobs[h.id]
            if m.table == "live" and m.token == h.claim_token and m.status in statuses:
                return m
            return None

        def to_pending(self, m: MJob, run_at: tuple[int, int] | None = None) -> None:
            m.status, m.token, m.lease_until = "pending", None, None
            if run_at is not None:
                m.run_at = run_at

        def bury(self, m: MJob, reason: str) -> None:
            m.table, m.status, m.token, m.lease_until, m.reason = "dead", "dead", None, None, reason

        # -- rules ---------------------------------------------------------------------------

        @initialize(priorities=st.lists(st.integers(0, 2), min_size=2, max_size=4),
                    breaker=st.booleans())
        def some_jobs(self, priorities: list[int], breaker: bool) -> None:
            if breaker:
                self.app.configure_breaker("chaos.model", queue="default", **BREAKER)
                self.breaker = MBreaker()
            for p in priorities:
                self.enqueue(p, 0, 2)

        @rule(priority=st.integers(0, 2), delay=st.sampled_from((0, 0, 20)),
              max_attempts=st.integers(1, 3))
        def enqueue(self, priority: int, delay: int, max_attempts: int) -> None:
            job_id = self.app.enqueue("chaos.model", {"p": priority}, priority=priority,
                                      delay=delay, max_attempts=max_attempts)
            assert job_id not in self.jobs
            self.jobs[job_id] = MJob(job_id, priority, max_attempts,
                                     (self.vt + delay, self.tick()))

        @rule(key=st.sampled_from("xy"), scope=st.sampled_from(("pending", "active")),
              replace=st.booleans(), delay=st.sampled_from((0, 20)), n=st.integers(0, 99))
        def enqueue_keyed(self, key: str, scope: str, replace: bool, delay: int, n: int) -> None:
            """Uniqueness by state and debounce: a holder in the scope's states refuses (or,
            pending and replace, takes the new payload and run_at); otherwise a new job."""
            job_id = self.app.enqueue(
                "chaos.model", {"n": n}, idempotency_key=key, unique=scope,  # type: ignore[arg-type]
                on_conflict="replace" if replace else "ignore", delay=delay)
            holding = ("pending",) if scope == "pending" else ("pending", "fetched", "processing")
            holder = self.jobs.get(self.keys.get(key, 0))
            if holder is not None and holder.table == "live" and holder.status in holding:
                assert job_id == holder.id, "a held key made another job"
                if replace and holder.status == "pending":
                    holder.payload, holder.run_at = {"n": n}, (self.vt + delay, self.tick())
                return
            assert job_id not in self.jobs, "a free key returned an existing job"
            self.keys[key] = job_id
            self.jobs[job_id] = MJob(job_id, 0, 20, (self.vt + delay, self.tick()),
                                     payload={"n": n}, key=key)

        @rule(sequence=st.sampled_from("st"), wait=st.booleans(), priority=st.integers(0, 2),
              delay=st.sampled_from((0, 0, 20)), max_attempts=st.integers(1, 3))
        def enqueue_sequenced(self, sequence: str, wait: bool, priority: int, delay: int,
                              max_attempts: int) -> None:
            """Ordered sequences: one job of a sequence at a time, in id order; a failed one
            holds the rest while it waits for its retry ("wait") or lets the next go ("skip")."""
            job_id = self.app.enqueue(
                "chaos.model", {"p": priority}, priority=priority, delay=delay,
                max_attempts=max_attempts, sequence_key=sequence,
                on_failure="wait" if wait else "skip")
            assert job_id not in self.jobs
            self.jobs[job_id] = MJob(job_id, priority, max_attempts,
                                     (self.vt + delay, self.tick()), sequence=sequence,
                                     wait=wait)

        def due(self, m: MJob) -> bool:
            return m.table == "live" and m.status == "pending" and m.run_at[0] <= self.vt

        def heads(self) -> list[MJob]:
            """Each sequence's claimable job: none while its blocker (its first live job that
            is not a failed "skip" one waiting for its retry) runs; else the first due one up
            to the blocker."""
            found = []
            for sequence in {m.sequence for m in self.jobs.values() if m.sequence}:
                live = sorted((m for m in self.jobs.values()
                               if m.sequence == sequence and m.table == "live"),
                              key=lambda m: m.id)
                blocker = next((m for m in live if m.status != "pending" or m.wait
                                or m.errors == 0), None)
                if blocker is not None and blocker.status != "pending":
                    continue
                found.extend([m for m in live if self.due(m)
                              and (blocker is None or m.id <= blocker.id)][:1])
            return found

        def gate(self) -> str:
            """What the breaker lets a claim take of chaos.model (every job here): "shut",
            "probe" (one job), "open" (as usual). A half-open breaker whose probe was archived
            closes at the claim; one whose probe was buried opens again."""
            b = self.breaker
            if b is None or b.state == "closed":
                return "open"
            if b.state == "open":
                assert b.open_until is not None
                return "shut" if b.open_until > self.vt else "probe"
            probe = self.jobs[b.probe] if b.probe is not None else None
            if probe is not None and probe.table == "dead":
                # buried without a failure written (the reaper, a cancel): as a failed probe
                b.state, b.open_until, b.probe = "open", self.vt + BREAKER["cooldown"], None
                return "shut"
            if probe is None or probe.table != "live":
                b.state, b.failures, b.window_until, b.probe = "closed", 0, None, None
                return "open"
            return "probe" if probe.status == "pending" else "shut"

        def breaker_failed(self) -> None:
            """A failed attempt (fail.sql) counts towards opening the breaker."""
            b = self.breaker
            if b is None or b.state == "open":
                return
            fresh = b.window_until is None or b.window_until <= self.vt
            b.failures = 1 if fresh else b.failures + 1
            if fresh:
                b.window_until = self.vt + BREAKER["window"]
            if b.state == "half_open" or b.failures >= BREAKER["failures"]:
                b.state, b.open_until = "open", self.vt + BREAKER["cooldown"]

        @rule(limit=st.integers(1, 3), start=st.booleans(), worker=st.sampled_from("AB"))
        def claim(self, limit: int, start: bool, worker: str) -> None:
            claimable = sorted(
                [m for m in self.jobs.values() if self.due(m) and m.sequence is None]
                + self.heads(),
                key=lambda m: (-m.priority, m.run_at, m.id),
            )
            gate = self.gate()
            want = [] if gate == "shut" else [m.id for m in claimable[:1 if gate == "probe"
                                                                     else limit]]
            got = self.app.claim(f"worker-{worker}", limit=limit, lease=LEASE, start=start)
            self.tick()
            assert [j.id for j in got] == want, "claim took other jobs than the model's"
            if gate == "probe" and want:
                assert self.breaker is not None
                self.breaker.state, self.breaker.probe = "half_open", want[0]
            for j in got:
                m = self.jobs[j.id]
                assert j.claim_token and j.claim_token not in self.tokens, "a token came back"
                self.tokens.add(j.claim_token)
                m.status = "processing" if start else "fetched"
                m.attempts += int(start)
                m.token, m.lease_until = j.claim_token, self.vt + LEASE
                assert j.status == m.status and j.attempts == m.attempts
                self.handles.append(j)

        @precondition(lambda self: self.handles)
        @rule(i=st.integers(0, 10_000))
        def start(self, i: int) -> None:
            h = self.handle(i)
            m = self.owned(h, ("fetched",))
            if m is not None and m.cancel:
                m = None
            if m is None:
                with pytest.raises(LeaseLost):
                    self.app.start(h, lease=LEASE)
            else:
                assert self.app.start(h, lease=LEASE) == m.attempts + 1
                m.status, m.attempts, m.lease_until = "processing", m.attempts + 1, self.vt + LEASE
            self.tick()

        @precondition(lambda self: self.handles)
        @rule(i=st.integers(0, 10_000))
        def heartbeat(self, i: int) -> None:
            h = self.handle(i)
            m = self.owned(h, ("fetched", "processing"))
            if m is None:
                with pytest.raises(LeaseLost):
                    self.app.heartbeat(h, lease=LEASE)
            else:
                assert self.app.heartbeat(h, lease=LEASE) == m.cancel
                m.lease_until = self.vt + LEASE
            self.tick()

        @precondition(lambda self: self.handles)
        @rule(i=st.integers(0, 10_000))
        def complete(self, i: int) -> None:
            h = self.handle(i)
            m = self.owned(h, ("processing",))
            if m is None:
                with pytest.raises(LeaseLost):
                    self.app.complete(h, {"ok": True})
            else:
                self.app.complete(h, {"ok": True})
                m.table, m.status, m.token, m.lease_until = "archive", "succeeded", None, None
            self.tick()

        @precondition(lambda self: self.handles)
        @rule(i=st.integers(0, 10_000), permanent=st.booleans(), delay=st.sampled_from(DELAYS))
        def fail(self, i: int, permanent: bool, delay: int) -> None:
            self.fail_with(self.handle(i), permanent, delay)

        def fail_with(self, h: Job, permanent: bool, delay: int) -> None:
            m = self.owned(h, ("fetched", "processing"))
            reason = "permanent_error" if permanent else "retries_exhausted"
            error = {"attempt": h.attempts, "worker": h.worker_id, "error": "Boom",
                     "message": f"step {self.seq}"}
            result = self.app.backend.fail(
                [Failure(h.id, h.claim_token or "", error, float(delay), reason, permanent)]
            )
            if m is None:
                assert result.lost == {h.id} and not result.dead and not result.retried
            else:
                m.errors += 1
                self.breaker_failed()
                if permanent or m.attempts >= m.max_attempts:
                    assert result.dead == {h.id}
                    self.bury(m, reason)
                else:
                    assert result.retried == {h.id}
                    self.to_pending(m, (self.vt + delay, self.seq + 1))
            self.tick()

        def running_sequenced(self) -> list[Job]:
            return [h for h in self.handles if self.jobs[h.id].sequence is not None
                    and self.owned(h, ("fetched", "processing")) is not None]

        @precondition(lambda self: self.running_sequenced())
        @rule(i=st.integers(0, 10_000), start=st.booleans())
        def a_sequence_head_fails_and_others_claim(self, i: int, start: bool) -> None:
            """The path on_failure exists for, in one step: a sequence's running job fails and
            waits 20 s for its retry, and the next claim comes (skip: its next job may go)."""
            running = self.running_sequenced()
            self.fail_with(running[i % len(running)], False, 20)
            self.claim(3, start, "B")

        @precondition(lambda self: self.handles)
        @rule(i=st.integers(0, 10_000))
        def release(self, i: int) -> None:
            h = self.handle(i)
            m = self.owned(h, ("fetched", "processing"))
            if m is None:
                with pytest.raises(LeaseLost):
                    self.app.release(h)
            else:
                self.app.release(h)
                if m.cancel:
                    self.bury(m, "cancelled")
                else:
                    if m.status == "processing":
                        m.attempts = max(m.attempts - 1, 0)
                    self.to_pending(m)
            self.tick()

        @precondition(lambda self: self.jobs)
        @rule(i=st.integers(0, 10_000))
        def cancel(self, i: int) -> None:
            m = self.jobs[sorted(self.jobs)[i % len(self.jobs)]]
            outcome = self.app.cancel(m.id)
            if m.table != "live":
                assert outcome == "finished"
            elif m.status in ("pending", "fetched"):
                assert outcome == "cancelled"
                self.bury(m, "cancelled")
            else:
                assert outcome == "cancel_requested"
                m.cancel = True
            self.tick()

        @rule()
        def reap(self) -> None:
            expired = [m for m in self.jobs.values()
                       if m.table == "live" and m.status in ("fetched", "processing")
                       and m.lease_until is not None and m.lease_until < self.vt]
            result = self.app.reap()
            want_dead = {m.id for m in expired
                         if m.cancel or (m.status == "processing" and m.attempts >= m.max_attempts)}
            assert set(result.dead) == want_dead
            assert set(result.requeued) == {m.id for m in expired} - want_dead
            for m in expired:
                m.errors += 1
                if m.id in want_dead:
                    self.bury(m, "cancelled" if m.cancel else "lease_expired")
                else:
                    self.to_pending(m)
            self.tick()

        @precondition(lambda self: self.jobs)
        @rule(i=st.integers(0, 10_000), priority=st.none() | st.integers(0, 2))
        def resurrect(self, i: int, priority: int | None) -> None:
            m = self.jobs[sorted(self.jobs)[i % len(self.jobs)]]
            if m.table != "dead":
                with pytest.raises(JobNotFound):
                    self.app.resurrect(m.id, priority=priority)
            elif m.key is not None and self.keys[m.key] != m.id:
                # Another job took its key (and holds it: live, or finished inside the key's
                # retention, which the model's clock never passes): refused, nothing written.
                with pytest.raises(KeyHeld):
                    self.app.resurrect(m.id, priority=priority)
            else:
                self.app.resurrect(m.id, priority=priority)
                m.table, m.status, m.attempts = "live", "pending", 0
                m.sequence = None  # a dead letter keeps no sequence key
                m.cancel, m.reason = False, None
                m.token, m.lease_until, m.run_at = None, None, (self.vt, self.seq + 1)
                if priority is not None:
                    m.priority = priority
            self.tick()

        @rule()
        def advance(self) -> None:
            self.env.advance(STEP)
            self.vt += STEP

        @precondition(lambda self: self.handles)
        @rule(start=st.booleans())
        def leases_run_out_and_others_claim(self, start: bool) -> None:
            """The path fencing tokens exist for, in one step: the clock passes every lease, the
            reaper recovers the jobs, another worker claims them (the old handles go stale)."""
            self.advance()
            self.reap()
            self.claim(3, start, "C")

        # -- the database equals the model ---------------------------------------------------

        @invariant()
        def database_matches_model(self) -> None:
            found: dict[int, tuple[str, Job]] = {}
            for table in ("live", "archive", "dead"):
                for j in self.app.list_jobs(table, limit=10_000):  # type: ignore[arg-type]
                    assert j.id not in found, f"job {j.id} in two tables"
                    found[j.id] = (table, j)
            assert set(found) == set(self.jobs), "a job was lost or appeared from nowhere"
            for job_id, m in self.jobs.items():
                table, j = found[job_id]
                got = (table, str(j.status), j.attempts, len(j.errors), j.reason, j.priority)
                want = (m.table, m.status, m.attempts, m.errors, m.reason, m.priority)
                assert got == want, f"job {job_id}: database {got} != model {want}"
                if m.payload is not None:
                    assert j.payload == m.payload, f"job {job_id}: payload differs"
                if table == "live":
                    assert j.claim_token == m.token, f"job {job_id}: token differs"
                    assert j.cancel_requested == m.cancel
            current = [m.token for m in self.jobs.values() if m.token]
            assert len(current) == len(set(current))
            if self.breaker is not None:
                (b,) = self.app.breakers()
                got_b = (b.state, b.probe_id if b.state == "half_open" else None)
                want_b = (self.breaker.state,
                          self.breaker.probe if self.breaker.state == "half_open" else None)
                assert got_b == want_b, f"breaker: database {got_b} != model {want_b}"

    JobStateMachine.__name__ = "JobStateMachine"
    return JobStateMachine


def test_state_machine_sqlite(tmp_path: Path) -> None:
    """The state machine against the model on SQLite, on a fake clock.

    Slow: Hypothesis runs 100 examples of up to 50 steps (1,000 under CLAIMQ_CHAOS_SOAK), each
    on a fresh migrated database, and compares every table with the model after each step:
    ~40 s on the 2-core machine under load.
    """
    run_state_machine_as_test(machine_for(lambda: sqlite_env(tmp_path)), settings=SETTINGS)


@pytest.mark.postgres
def test_state_machine_postgresql(pg_base_url: str) -> None:
    """The state machine against the model on PostgreSQL, shifting rows' times for the clock.

    Slow: Hypothesis runs 100 examples of up to 50 steps (1,000 under CLAIMQ_CHAOS_SOAK), each
    on the test's schema emptied by TRUNCATE, every step a round trip or more and a comparison
    of every table with the model: ~80 s on the 2-core machine under load.
    """
    envs = PgEnvs(pg_base_url)
    try:
        run_state_machine_as_test(machine_for(envs.new), settings=SETTINGS)
    finally:
        envs.close()


def test_fake_clock_moves_only_when_told() -> None:
    clock = FakeClock()
    a, b = clock(), clock()
    assert 0 < b - a < 1e-3
    clock.advance(STEP)
    assert clock() - b > STEP - 1e-3
