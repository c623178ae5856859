"""StatsExporter: which worker process exports the cluster's gauges on its /metrics.

The queue and task gauges (`claimq_queue_*`, `claimq_task_*` from `app.stats()`) describe the
database, not a process: were every worker to export them, a `sum()` over the scraped
targets would count each queue once per worker. So only the worker holding the database's
`metrics` lease exports them (and runs `app.stats()` at its scrapes); the others export their
own counters and histograms only. Every worker serving /metrics runs this loop: it takes or
renews the lease every `interval` seconds for LEASE_FOR intervals, and drops it at a clean
stop so that another worker takes over at its next turn; a worker that dies hands over once
its lease runs out. A worker believes it holds the lease only until its own deadline, counted
from before its last renewal was sent, so two workers never both export: the one whose renewal
failed stops first."""

from __future__ import annotations

import asyncio
import logging
import time

from claimq._worker.dbcall import DB, is_transient
from claimq._worker.service import Service
from claimq.backends.base import Backend
from claimq.errors import PermissionDenied

log = logging.getLogger("claimq.worker")

LEASE_NAME = "metrics"
LEASE_FOR = 3  # intervals: a renewal or two may fail (a blip) without a handover


class StatsExporter(Service):
    name = "stats-exporter"

    def __init__(self, backend: Backend, db: DB, holder: str, *, interval: float,
                 finished: asyncio.Event) -> None:
        self.backend = backend
        self.db = db
        self.holder = holder
        self.interval = interval
        self.seconds = interval * LEASE_FOR
        self.finished = finished
        self.held_until = 0.0  # monotonic: this worker exports the gauges until then

    @property
    def holds(self) -> bool:
        """Whether this worker exports the cluster's gauges now."""
        return time.monotonic() < self.held_until

    async def run(self) -> None:
        try:
            while not self.finished.is_set():
                sent = time.monotonic()
                try:
                    taken = await self.db.call(self.backend.take_lease, LEASE_NAME, self.holder,
                                               self.seconds)
                except PermissionDenied as exc:
                    log.warning("metrics: this worker's database role may not take the metrics "
                                "lease (%s); it exports its own counters only", exc,
                                extra={"event": "metrics.no_lease"})
                    self.held_until = 0.0
                    return
                except Exception as exc:
                    if not is_transient(exc):
                        raise
                    taken = None  # the database is away: hold on until the deadline
                if taken is not None:
                    was = self.holds
                    # a margin of one interval: stop before another may take over
                    self.held_until = sent + self.seconds - self.interval if taken else 0.0
                    if taken and not was:
                        log.info("metrics: this worker exports the queue gauges",
                                 extra={"event": "metrics.exporting"})
                await asyncio.sleep(self.interval)
        finally:
            if self.held_until:
                self.held_until = 0.0
                try:
                    await self.db.call(self.backend.drop_lease, LEASE_NAME, self.holder)
                except Exception as exc:  # noqa: BLE001 - stopping anyway; it runs out
                    log.debug("dropping the metrics lease failed: %r", exc)
