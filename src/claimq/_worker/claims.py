"""Claims: the one round trip that writes outcomes and claims jobs for the slots they free
(backend.settle), for the fetcher and the completer alike, and the recovery of jobs claimed by a
call whose answer was lost."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection, Container, Sequence
from concurrent.futures import Future
from typing import Any

from claimq._worker.dbcall import DB, GaveUp
from claimq._worker.inflight import Counters, Registry
from claimq.backends.base import Backend, ClaimRequest, Completion, Failure, Settled

log = logging.getLogger("claimq.worker")
# Task names a worker's claims pass over, at most: beyond them, jobs of further unknown names are
# still handed back, only claimed first.
MAX_SKIPPED = 64

LATE_POLL = 0.5  # seconds between looks at `stopping` while a late settle runs on
# Jobs one claim asks for at most when its size adapts (no batch given): past about this, a
# bigger claim's statement time grows as fast as the round trips it saves (benchmarks/README.md,
# "Where the time goes").
ADAPTIVE_MAX = 100


class Claims:
    def __init__(
        self,
        backend: Backend,
        db: DB,
        registry: Registry,
        counters: Counters,
        *,
        worker_id: str,
        queues: Sequence[str] | None,
        lease: float | None,
        batch: int,
        on_loop: bool,
        stopping: Callable[[], bool],
        adaptive: bool = False,
    ) -> None:
        self.backend = backend
        self.db = db
        self.registry = registry
        self.counters = counters
        self.worker_id = worker_id
        self.queues = queues
        self.lease = lease
        self.batch = batch
        self.adaptive = adaptive  # the claim's size grows with what may be claimed ahead (size)
        self.backlog = False  # the latest claim came back full: more jobs were waiting
        self.on_loop = on_loop  # the backend settles on this loop's own connections
        self.stopping = stopping
        # A claim whose answer never came (connection lost): it may have claimed jobs in the
        # database that this worker does not know of. No new claims until recover() ran.
        self.unknown = False
        self._recovering = False
        # Settles past their deadline whose threads still run (SQLite, MariaDB): one may yet
        # commit its claim, so recover() looks for lost claims only once they ended.
        self._late: set[Future[Any]] = set()
        # Task names this worker met and cannot run (Executor's hand-back): its claims pass over
        # their jobs; a name registered since is dropped (see skip).
        self.skip_tasks: tuple[str, ...] = ()

    def reserve(self) -> int:
        """Promises free slots to a claim about to be made (so two claims never overshoot)."""
        if self.stopping() or self.unknown:
            return 0
        return self.registry.reserve(self.size)

    @property
    def size(self) -> int:
        """Jobs one claim asks for at most: the batch; when it adapts and the latest claim came
        back full (a backlog), as many as the worker may claim ahead now (its slots free up
        faster than a claim's round trip: fast handlers), up to ADAPTIVE_MAX, never less than
        the batch. An idle queue, or handlers slower than a round trip, keep claims of the
        batch."""
        if not self.adaptive or not self.backlog:
            return self.batch
        return max(self.batch, min(self.registry.ahead, ADAPTIVE_MAX))

    def request(self, wanted: int) -> ClaimRequest | None:
        if wanted <= 0 or self.stopping():
            return None
        return ClaimRequest(self.worker_id, self.queues, wanted, self.lease, True,
                            self.skip_tasks)

    def skip(self, names: Collection[str], registered: Container[str]) -> None:
        """From now on, claims pass over the jobs of `names` (tasks met and handed back), at
        most MAX_SKIPPED names; a name in `registered` (registered since) is dropped."""
        kept = [n for n in self.skip_tasks if n not in registered]
        kept += [n for n in sorted(names) if n not in kept and n not in registered]
        self.skip_tasks = tuple(kept[:MAX_SKIPPED])

    async def settle(
        self, done: Sequence[Completion], failures: Sequence[Failure], claim: ClaimRequest | None
    ) -> Settled:
        """Writes outcomes and claims (either may be empty) in one round trip. A claim whose
        answer is lost leaves this worker's claims unknown."""
        sent = time.perf_counter()
        try:
            if self.on_loop:
                settled = await self.db.within_deadline(
                    self.backend.asettle(done, failures, claim), "settle")
            else:
                settled = await self.db.call(self.backend.settle, done, failures, claim,
                                             late=self._late)
        except Exception:
            if claim is not None:
                self.unknown = True
            raise
        if claim is not None:  # the metrics' claim round trip (one per batch)
            self.backlog = len(settled.claimed) >= claim.limit
            took = time.perf_counter() - sent
            self.counters.claimed(len(settled.claimed), took)
            self.registry.round_trip(took)
        return settled

    async def recover(self) -> None:
        """After a claim whose answer never came, once no other claim is on its way: hand back
        the jobs the database says this worker holds (leases running) but it does not know of,
        rather than leave them to wait out their leases. Their attempts are not counted."""
        if not self.unknown or self._recovering or self.registry.reserved:
            return
        self._recovering = True
        try:
            while self._late:  # a late settle may still commit a claim: wait for its end
                if self.stopping():
                    return  # the leases recover whatever it claims
                await asyncio.wait([asyncio.wrap_future(f) for f in list(self._late)],
                                   timeout=LATE_POLL)
            held = sorted({f.job.id for f in self.registry.held()})
            found = await self.db.retry(
                "finding lost claims", self.backend.orphaned, self.worker_id, held,
                give_up=self.stopping,
            )
            # A claim given up here ran (its attempt counted): the reaper recovers it.
            orphans = [o for o in found if not self.registry.known(o)]
            if orphans:
                released = await self.db.retry(
                    "releasing lost claims", self.backend.release, orphans, 0.0,
                    give_up=self.stopping,
                )
                self.counters.add("lost_claims_released", len(released))
                log.warning("handed back %d job(s) claimed by a call whose answer was lost",
                            len(released))
            self.unknown = False
            self.registry.slots_free.set()
        except GaveUp:
            pass  # stopping while the database is away: the leases recover those jobs
        finally:
            self._recovering = False
