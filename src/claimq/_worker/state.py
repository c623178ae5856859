"""What one worker process holds: its in-flight jobs and the signals between its loops."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from claimq.backends.base import Owned
from claimq.job import Job


@dataclass(eq=False, slots=True)
class InFlight:
    """One job this worker owns, from claim until its outcome is written (or its lease lost)."""

    job: Job
    attempt: int = 0
    lease_seconds: float = 30.0
    lease_deadline: float = 0.0  # monotonic: past this, without a heartbeat, assume it is lost
    started: bool = False
    finished: bool = False  # handler returned; its outcome may still be on its way
    lost: bool = False  # a guarded write matched no row: never report an outcome
    completed_by_handler: bool = False  # ctx.complete_in() committed it in the handler's txn
    cancel_requested: bool = False  # seen at a heartbeat; read by handler threads
    timed_out: bool = False  # its timeout cancelled it
    task: asyncio.Task[Any] | None = None
    started_at: float = 0.0

    @property
    def owned(self) -> Owned:
        assert self.job.claim_token is not None
        return Owned(self.job.id, self.job.claim_token)

    def renew(self) -> None:
        self.lease_deadline = time.monotonic() + self.lease_seconds


@dataclass
class WorkerState:
    concurrency: int
    jobs: dict[int, InFlight] = field(default_factory=dict)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    wake: asyncio.Event = field(default_factory=asyncio.Event)  # set by NOTIFY or freed slots
    slots_free: asyncio.Event = field(default_factory=asyncio.Event)
    handler_done: asyncio.Event = field(default_factory=asyncio.Event)
    counters: dict[str, int] = field(default_factory=dict)
    reserved: int = 0  # slots promised to a claim that is still on its way
    last_completed_at: float = 0.0  # monotonic: when the latest completion was written

    @property
    def free(self) -> int:
        """Slots for new claims: handlers not running, while outcomes still being written stay
        bounded (at most one more batch of them than there are slots)."""
        running = sum(1 for f in self.jobs.values() if not f.finished)
        free = min(self.concurrency - running, 2 * self.concurrency - len(self.jobs))
        return max(free - self.reserved, 0)

    def stop(self) -> None:
        """Stop claiming; wakes whatever waits for a slot or a NOTIFY, to see it."""
        self.stopping.set()
        self.slots_free.set()
        self.wake.set()

    def count(self, name: str, n: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + n

    def completed(self, n: int = 1) -> None:
        if n:  # stamped first: whoever sees the new count sees its time
            self.last_completed_at = time.monotonic()
        self.count("completed", n)

    def finish(self, flight: InFlight) -> None:
        # Not slots_free: the completer claims for these slots when it writes the outcome.
        flight.finished = True
        self.handler_done.set()

    def forget(self, job_id: int) -> None:
        self.jobs.pop(job_id, None)
        self.slots_free.set()
