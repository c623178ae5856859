"""Presence: the worker's row in the registry (`claimq workers`, `app.workers()`).

Written when the worker starts, refreshed every `interval` seconds with the number of jobs in
flight (one short statement of its own, never part of a claim or a settle), deleted at a clean
stop. A worker that dies without stopping leaves its row to go silent: the reaper of any worker
marks it dead after `timeout` seconds and deletes it much later (see Reaper)."""

from __future__ import annotations

import asyncio
import logging

from claimq._worker.dbcall import DB, is_transient
from claimq._worker.inflight import Registry
from claimq._worker.service import Service
from claimq.backends.base import Backend, WorkerRecord

log = logging.getLogger("claimq.worker")


class Presence(Service):
    name = "presence"

    def __init__(self, backend: Backend, db: DB, registry: Registry, record: WorkerRecord, *,
                 interval: float, finished: asyncio.Event) -> None:
        self.backend = backend
        self.db = db
        self.registry = registry
        self.record = record
        self.interval = interval
        self.finished = finished
        self.registered = False

    async def run(self) -> None:
        while not self.finished.is_set():
            try:
                await self.refresh()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                # the database is away: the heartbeater says so; the row goes silent meanwhile
            await asyncio.sleep(self.interval)

    async def refresh(self) -> None:
        in_flight = len(self.registry.held())
        if self.registered:
            if await self.db.call(self.backend.worker_seen, self.record.id, in_flight):
                return
            log.warning("worker.reregistered: worker %s had no registry row (pruned while it "
                        "was away); writing it again", self.record.id,
                        extra={"event": "worker.reregistered"})
        await self.db.call(self.backend.register_worker,
                           self.record._replace(in_flight=in_flight))
        self.registered = True

    async def unregister(self) -> None:
        """At a clean stop: the row goes (best effort; a row left behind goes silent)."""
        try:
            await self.db.call(self.backend.unregister_worker, self.record.id)
        except Exception as exc:  # noqa: BLE001 - stopping anyway
            log.warning("could not remove worker %s from the registry (%s); its row will be "
                        "marked dead", self.record.id, exc)
