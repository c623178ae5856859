"""Completer: writes outcomes in batches and, in the same round trip, claims jobs for the slots
they free (backend.settle), so a busy worker needs one database round trip per batch.

Under load, outcomes pile up while a batch is in flight and go together in the next; idle, each
goes at once. A write interrupted by the database is retried while the jobs' leases are still
valid; a retry that matches zero rows is checked against the tables, so an outcome whose
response was lost is neither reported twice nor taken for a lost lease.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from claimq._worker.claims import Claims
from claimq._worker.dbcall import DB, is_transient
from claimq._worker.inflight import Counters, InFlight, Registry
from claimq._worker.service import Service
from claimq.backends.base import Backend, Completion, Failure, Settled
from claimq.job import Job
from claimq.logs import event

log = logging.getLogger("claimq.worker")
MAX_BATCH = 500
# Writes in flight at once. A server that runs statements side by side (PostgreSQL: one
# process per connection) keeps its cores busier with three; SQLite has a single writer, where
# a third only waits for the lock (paired runs: benchmarks/README.md).
WRITERS = 2
WRITERS_CONCURRENT = 3
MAX_ERRORS = 3  # unexplained errors of one write before its outcomes are left to the leases


@dataclass(slots=True)
class Outcome:
    flight: InFlight
    completion: Completion | None = None
    failure: Failure | None = None
    error: BaseException | None = None  # the failure's exception (for the app's hooks)


class Outcomes:
    """Outcomes handed in (by the executor) and not yet taken by a write (of the completer)."""

    def __init__(self) -> None:
        self.waiting: list[Outcome] = []
        self.ready = asyncio.Event()

    def submit(self, outcome: Outcome) -> None:
        self.waiting.append(outcome)
        self.ready.set()


class Completer(Service):
    """Takes every outcome waiting (up to MAX_BATCH) and writes them together, with up to
    `writers` writes in flight (while one batch is in the database, the next is run and sent);
    ends once closed and none is left or in flight."""

    name = "completer"

    def __init__(self, backend: Backend, db: DB, registry: Registry, counters: Counters,
                 claims: Claims, outcomes: Outcomes,
                 start_jobs: Callable[[list[Job]], Awaitable[None]] | None = None,
                 writers: int = WRITERS) -> None:
        self.backend = backend
        self.writers = writers
        self.db = db
        self.registry = registry
        self.counters = counters
        self.claims = claims
        self.start_jobs = start_jobs  # starts the jobs a write claimed (the executor's start)
        self._outcomes = outcomes.waiting
        self._ready = outcomes.ready
        self._closed = False
        self._writes = 0  # batches on their way (each claims for the slots free then)
        self._writing: set[asyncio.Task[None]] = set()

    @property
    def busy(self) -> bool:
        """Outcomes waiting or being written: their write claims for the slots they free."""
        return bool(self._outcomes or self._writes)

    @property
    def waiting(self) -> bool:
        """Outcomes not yet taken by a write."""
        return bool(self._outcomes)

    def close(self) -> None:
        """Write what is waiting, then end."""
        self._closed = True
        self._ready.set()

    async def run(self) -> None:
        while True:
            if not self._outcomes or len(self._writing) >= self.writers:
                if self._closed and not self._outcomes and not self._writing:
                    return
                self._ready.clear()
                await self._ready.wait()
                continue
            batch = self._take()
            if not batch:
                continue
            task = asyncio.create_task(self._write_batches(batch))
            self._writing.add(task)
            task.add_done_callback(self._written)

    def _written(self, task: asyncio.Task[None]) -> None:
        self._writing.discard(task)
        self._ready.set()
        if not task.cancelled() and task.exception() is not None:
            log.error("writing outcomes failed", exc_info=task.exception())

    def _take(self) -> list[Outcome]:
        batch, self._outcomes[:] = self._outcomes[:MAX_BATCH], self._outcomes[MAX_BATCH:]
        kept = [o for o in batch if not o.flight.lost]
        for o in batch:
            if o.flight.lost:  # given up since (claimed again, released): nothing to report
                self.registry.forget(o.flight)
        if kept:
            self._writes += 1
        return kept

    async def _write_batches(self, batch: list[Outcome]) -> None:
        """Writes `batch`, then whatever outcomes are waiting by then (often those of the jobs
        this write claimed and started), until none is: one task for a run of batches, not one
        task and two turns of the event loop each."""
        while batch:
            await self._write_batch(batch)
            if not self._outcomes:
                # The jobs this write started run their first step in the loop's next turn;
                # handlers that finish in it hand in their outcomes before this resumes.
                await asyncio.sleep(0)
                if not self._outcomes:
                    return
            batch = self._take()

    async def _write_batch(self, batch: list[Outcome]) -> None:
        """One batch (counted in _writes by whoever took it)."""
        wanted = 0
        settled = None
        try:
            await self.claims.recover()  # only after a claim whose answer was lost
            wanted = self.claims.reserve()
            settled = await self._settle(batch, wanted)
        finally:
            self.registry.unreserve(wanted)
            self._writes -= 1  # before the slots are freed below: the fetcher may claim again
            self.registry.forget_all([o.flight for o in batch])
        if settled is not None:
            failed = settled.failed
            if failed.retried or failed.dead or (settled.completed
                                                 and log.isEnabledFor(logging.DEBUG)):
                _log_outcomes(batch, settled)
            self.counters.completed(len(settled.completed))
            self.counters.add("retried", len(settled.failed.retried))
            self.counters.add("dead", len(settled.failed.dead))
            _count_runs(self.counters, batch, settled)
            if settled.claimed and self.start_jobs is not None:
                self.counters.add("claims")
                await self.start_jobs(settled.claimed)

    async def _settle(self, batch: list[Outcome], wanted: int) -> Settled | None:
        """Write until it lands or every lease has run out; report writes that matched no
        row."""
        pending = list(batch)
        delay = 0.05
        errors = 0  # errors in a row that an outage does not explain
        while True:
            try:
                settled = await self.claims.settle(
                    [o.completion for o in pending if o.completion is not None],
                    [o.failure for o in pending if o.failure is not None],
                    self.claims.request(wanted),
                )
                break
            except Exception as exc:
                if not is_transient(exc):
                    errors += 1
                    ids = [o.flight.job.id for o in pending]
                    if errors > MAX_ERRORS:
                        log.error("writing outcomes failed for jobs %s; giving up (their leases "
                                  "will expire and the reaper retries them)", ids, exc_info=exc)
                        return None
                    log.error("writing outcomes failed for jobs %s; trying again", ids,
                              exc_info=exc)
                for o in pending:
                    if o.flight.lease_expired and o.flight.lose():
                        self.counters.add("lease_lost")
                        log.warning("lease.lost: job %s: its lease ran out before its outcome "
                                    "could be written", o.flight.job.id,
                                    extra={"event": "lease.lost", "job_id": o.flight.job.id})
                pending = [o for o in pending if not o.flight.lost]
                if not pending:
                    return None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
        written = settled.completed | settled.failed.retried | settled.failed.dead
        for o in pending:
            if o.flight.job.id in written:
                continue
            # Checked even when this write was not interrupted: a handler's own transaction
            # (ctx.complete_in) may have committed while its response was lost.
            landed = await self._landed_earlier(o)
            if landed is not None:
                self.counters.add(landed)  # counted once, like any outcome that lands
                self.counters.ran(o.flight, "succeeded" if landed == "completed" else landed)
                continue
            o.flight.lose()  # (lost already, if given up while it looked: counted again)
            self.counters.add("lease_lost")
            kind = "completion" if o.completion is not None else "failure"
            log.warning("lease.lost: job %s: %s matched no row: lease lost, outcome dropped",
                        o.flight.job.id, kind, extra=event("lease.lost", o.flight))
        return settled

    async def _landed_earlier(self, o: Outcome) -> str | None:
        """After a write that matched no row: did an earlier write of this attempt's outcome
        commit after all (its response lost)? Returns the counter it lands in ("completed",
        "dead", "retried"), or None when the job is no longer ours. Proof is the job in the
        archive, last touched by this worker on this attempt, or this very error entry (same
        time, worker and attempt) in its history, wherever the job has gone since (a reaper's
        entry never matches)."""
        try:
            job = await self.db.call(self.backend.get_job, o.flight.job.id)
        except Exception:  # noqa: BLE001
            return None
        if job is None:
            return None
        if (job.status == "succeeded" and job.worker_id == self.claims.worker_id
                and job.attempts == o.flight.attempt):
            return "completed"  # only this attempt's owner could archive it (completer or handler)
        if o.failure is not None:
            entry = o.failure.error

            def same(e: dict[str, object]) -> bool:
                return all(e.get(k) == entry.get(k) for k in ("at", "worker", "attempt"))

            if any(same(e) for e in job.errors):
                # The job may have moved on since (retried, re-run, even finished).
                return "dead" if job.status == "dead" and same(job.errors[-1]) else "retried"
        return None


def _count_runs(counters: Counters, batch: list[Outcome], settled: Settled) -> None:
    """The per-task histograms of one written batch: each attempt whose outcome landed."""
    for o in batch:
        job_id = o.flight.job.id
        if o.completion is not None:
            if job_id in settled.completed:
                counters.ran(o.flight, "succeeded")
        elif job_id in settled.failed.dead:
            counters.ran(o.flight, "dead")
        elif job_id in settled.failed.retried:
            counters.ran(o.flight, "retried")


def _log_outcomes(batch: list[Outcome], settled: Settled) -> None:
    """job.succeeded (debug), job.retried and job.dead lines of one written batch."""
    debug = log.isEnabledFor(logging.DEBUG)
    for o in batch:
        job = o.flight.job
        if o.completion is not None:
            if debug and job.id in settled.completed:
                log.debug("job.succeeded: job %s (%s) attempt %s", job.id, job.task,
                          o.flight.attempt, extra=event("job.succeeded", o.flight))
        elif job.id in settled.failed.dead:
            log.warning("job.dead: job %s (%s) attempt %s: to dead letters (%s)", job.id,
                        job.task, o.flight.attempt, o.failure.reason if o.failure else "",
                        extra=event("job.dead", o.flight))
        elif job.id in settled.failed.retried:
            log.info("job.retried: job %s (%s) attempt %s: retried in %.1fs", job.id, job.task,
                     o.flight.attempt, o.failure.delay if o.failure else 0.0,
                     extra=event("job.retried", o.flight))
