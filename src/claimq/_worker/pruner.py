"""Pruner: every worker runs it about once a minute; the database's pruner lease lets one of
them at a time do the work (app.prune), in short batches."""

from __future__ import annotations

import asyncio
import logging
import random

from claimq import _retention
from claimq._worker.dbcall import is_transient
from claimq._worker.service import AppLoop

log = logging.getLogger("claimq.worker")

PRUNE_EVERY = 60.0  # seconds between passes (jittered)
BATCH = 1000  # rows per transaction


class Pruner(AppLoop):
    name = "pruner"

    async def run(self) -> None:
        while not self.stopping.is_set():
            await asyncio.sleep(PRUNE_EVERY * (0.5 + random.random()))
            try:
                # Its own thread, not the DB pool's deadline: a pass is many short batches.
                counts = await asyncio.to_thread(
                    _retention.prune, self.app, self.app._pruner_id, BATCH, self.stopping.is_set)
            except Exception as exc:
                if not is_transient(exc):
                    raise
                continue  # the database is away: the heartbeater says so
            if counts and any(counts.values()):
                self.counters.add("pruned", sum(counts.values()))
                log.info("pruner: deleted %s", counts, extra={"event": "retention.pruned"})
