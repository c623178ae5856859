"""Completer: writes outcomes in batches (one statement for completions, one for failures).

Under load, outcomes pile up while a batch is in flight and go together in the next; idle, each
goes at once. A write interrupted by the database is retried while the job's lease is still
valid; a retry that matches zero rows is checked against the archive, so a completion whose
response was lost is neither reported twice nor taken for a lost lease.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from claimq._worker.dbcall import is_transient
from claimq._worker.state import InFlight
from claimq.backends.base import Completion, Failure

if TYPE_CHECKING:
    from claimq.worker import Runtime

log = logging.getLogger("claimq.worker")
MAX_BATCH = 500


@dataclass(frozen=True, slots=True)
class Outcome:
    flight: InFlight
    completion: Completion | None = None
    failure: Failure | None = None


async def complete_loop(rt: Runtime) -> None:
    queue = rt.outcomes
    while True:
        first = await queue.get()
        if first is None:
            return
        batch = [first]
        stop_after = False
        while len(batch) < MAX_BATCH and not queue.empty():
            item = queue.get_nowait()
            if item is None:
                stop_after = True
                break
            batch.append(item)
        await write_batch(rt, batch)
        if stop_after:
            return


async def write_batch(rt: Runtime, batch: list[Outcome]) -> None:
    done = [o for o in batch if o.completion is not None]
    failed = [o for o in batch if o.failure is not None]

    async def write_completions(items: list[Outcome]) -> set[int]:
        return await rt.db.call(rt.backend.complete, [o.completion for o in items])

    async def write_failures(items: list[Outcome]) -> set[int]:
        result = await rt.db.call(rt.backend.fail, [o.failure for o in items])
        rt.state.count("retried", len(result.retried))
        rt.state.count("dead", len(result.dead))
        return result.retried | result.dead

    if done:
        rt.state.count("completed", len(await _guarded(rt, "complete", done, write_completions)))
    if failed:
        await _guarded(rt, "fail", failed, write_failures)
    for o in batch:
        rt.state.forget(o.flight.job.id)


async def _guarded(
    rt: Runtime,
    what: str,
    items: list[Outcome],
    write: Callable[[list[Outcome]], Awaitable[set[int]]],
) -> set[int]:
    """Write until it lands or every lease has run out; report writes that matched no row."""
    pending = list(items)
    interrupted = False
    delay = 0.05
    while True:
        try:
            written = await write(pending)
            break
        except Exception as exc:
            if not is_transient(exc):
                log.exception("%s failed for jobs %s", what, [o.flight.job.id for o in pending])
                return set()
            interrupted = True
            now = time.monotonic()
            for o in pending:
                if now > o.flight.lease_deadline:
                    rt.abandon(o.flight, f"lease ran out before its {what} could be written")
            pending = [o for o in pending if not o.flight.lost]
            if not pending:
                return set()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)
    for o in pending:
        if o.flight.job.id in written:
            continue
        if interrupted and await _landed_earlier(rt, o):
            written.add(o.flight.job.id)
            continue
        o.flight.lost = True
        rt.state.count("lease_lost")
        log.warning("job %s: %s matched no row: lease lost, outcome dropped", o.flight.job.id, what)
    return written


async def _landed_earlier(rt: Runtime, o: Outcome) -> bool:
    """After an interrupted write: did the earlier attempt commit? (The job then sits in the
    archive or dead letters, last touched by this worker.)"""
    try:
        job = await rt.db.call(rt.backend.get_job, o.flight.job.id)
    except Exception:  # noqa: BLE001
        return False
    return (
        job is not None
        and job.status in ("succeeded", "dead")
        and job.worker_id == rt.worker_id
        and job.attempts == o.flight.attempt
    ) or (
        job is not None
        and job.status == "pending"
        and o.failure is not None
        and any(e.get("worker") == rt.worker_id and e.get("attempt") == o.flight.attempt
                for e in job.errors)
    )
