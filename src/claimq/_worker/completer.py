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
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from claimq._worker.dbcall import is_transient
from claimq._worker.state import InFlight
from claimq.backends.base import ClaimRequest, Completion, Failure, Settled

if TYPE_CHECKING:
    from claimq.worker import Runtime

log = logging.getLogger("claimq.worker")
MAX_BATCH = 500
WRITERS = 2


@dataclass(slots=True)
class Outcome:
    flight: InFlight
    completion: Completion | None = None
    failure: Failure | None = None


async def complete_loop(rt: Runtime) -> None:
    """Takes every outcome waiting (up to MAX_BATCH) and writes them together, with up to
    WRITERS writes in flight (while one batch is in the database, the next is run and sent);
    ends once the outcomes are closed and none is left or in flight."""
    writing: set[asyncio.Task[None]] = set()

    def written(task: asyncio.Task[None]) -> None:
        writing.discard(task)
        rt.outcomes_ready.set()
        if not task.cancelled() and task.exception() is not None:
            log.error("writing outcomes failed", exc_info=task.exception())

    while True:
        if not rt.outcomes or len(writing) >= WRITERS:
            if rt.outcomes_closed and not rt.outcomes and not writing:
                return
            rt.outcomes_ready.clear()
            await rt.outcomes_ready.wait()
            continue
        task = asyncio.create_task(write_batches(rt, _take(rt)))
        writing.add(task)
        task.add_done_callback(written)


def _take(rt: Runtime) -> list[Outcome]:
    batch, rt.outcomes[:] = rt.outcomes[:MAX_BATCH], rt.outcomes[MAX_BATCH:]
    rt.writes += 1
    return batch


async def write_batches(rt: Runtime, batch: list[Outcome]) -> None:
    """Writes `batch`, then whatever outcomes are waiting by then (often those of the jobs
    this write claimed and started), until none is: one task for a run of batches, not one
    task and two turns of the event loop each."""
    while True:
        await write_batch(rt, batch)
        if not rt.outcomes:
            return
        batch = _take(rt)


async def write_batch(rt: Runtime, batch: list[Outcome]) -> None:
    """One batch (counted in rt.writes by whoever took it from rt.outcomes)."""
    wanted = 0
    try:
        await rt.recover_claims()  # only after a claim whose answer was lost
        wanted = rt.reserve_slots()
        settled = await _settle(rt, batch, wanted)
    finally:
        rt.state.reserved -= wanted
        rt.writes -= 1  # before the slots are freed below: the fetcher may claim again
    for o in batch:
        rt.state.forget(o.flight.job.id)
    if settled is not None:
        rt.state.completed(len(settled.completed))
        rt.state.count("retried", len(settled.failed.retried))
        rt.state.count("dead", len(settled.failed.dead))
        if settled.claimed:
            rt.state.count("claims")
            await rt.start_jobs(settled.claimed)


async def _settle(rt: Runtime, batch: list[Outcome], wanted: int) -> Settled | None:
    """Write until it lands or every lease has run out; report writes that matched no row."""
    pending = list(batch)
    delay = 0.05
    while True:
        claim = None
        if wanted > 0 and not rt.state.stopping.is_set():
            claim = ClaimRequest(rt.worker_id, rt.queues, wanted, rt.lease, True)
        try:
            settled = await rt.settle(
                [o.completion for o in pending if o.completion is not None],
                [o.failure for o in pending if o.failure is not None],
                claim,
            )
            break
        except Exception as exc:
            if not is_transient(exc):
                log.exception("writing outcomes failed for jobs %s",
                              [o.flight.job.id for o in pending])
                return None
            now = time.monotonic()
            for o in pending:
                if now > o.flight.lease_deadline:
                    rt.abandon(o.flight, "lease ran out before its outcome could be written")
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
        landed = await _landed_earlier(rt, o)
        if landed is not None:
            rt.state.count(landed)  # counted once, like any outcome that lands
            continue
        o.flight.lost = True
        rt.state.count("lease_lost")
        kind = "completion" if o.completion is not None else "failure"
        log.warning("job %s: %s matched no row: lease lost, outcome dropped",
                    o.flight.job.id, kind)
    return settled


async def _landed_earlier(rt: Runtime, o: Outcome) -> str | None:
    """After a write that matched no row: did an earlier write of this attempt's outcome
    commit after all (its response lost)? Returns the counter it lands in ("completed", "dead",
    "retried"), or None when the job is no longer ours. Proof is the job in the archive, last
    touched by this worker on this attempt, or this very error entry (same time, worker and
    attempt) in its history, wherever the job has gone since (a reaper's entry never matches)."""
    try:
        job = await rt.db.call(rt.backend.get_job, o.flight.job.id)
    except Exception:  # noqa: BLE001
        return None
    if job is None:
        return None
    if (job.status == "succeeded" and job.worker_id == rt.worker_id
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
