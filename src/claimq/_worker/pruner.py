"""Pruner: every worker runs it about once a minute; the database's pruner lease lets one of
them at a time do the work (app.prune), in short batches."""

from __future__ import annotations

import asyncio
import logging
import random

from claimq import _retention
from claimq._worker.dbcall import is_transient
from claimq._worker.service import AppLoop
from claimq._worker.threads import Threads
from claimq.errors import PermissionDenied

log = logging.getLogger("claimq.worker")

PRUNE_EVERY = 60.0  # seconds between passes (jittered)
BATCH = 1000  # rows per transaction


class Pruner(AppLoop):
    name = "pruner"
    thread = Threads(max_workers=1, name="claimq-prune")  # one pass at a time per process

    async def run(self) -> None:
        holder = _retention.holder()  # this pruner's name on the lease
        while not self.stopping.is_set():
            await asyncio.sleep(PRUNE_EVERY * (0.5 + random.random()))
            try:
                # A daemon thread of its own, not the DB pool's deadline: a pass is many short
                # batches; nor the default executor, which asyncio.run waits for at exit (a
                # stopping worker's pass ends at its next batch, or is left behind).
                counts = await asyncio.get_running_loop().run_in_executor(
                    self.thread, _retention.prune, self.app, holder, BATCH,
                    self.stopping.is_set)
            except PermissionDenied as exc:
                # A least-privilege worker role (claimq grant ROLE --as worker) may not delete
                # finished jobs: retention is then an operator's (`claimq retention prune`).
                log.warning("retention.off: this worker's database role may not prune (%s); "
                            "run `claimq retention prune` as an operator role instead", exc,
                            extra={"event": "retention.off"})
                return
            except Exception as exc:
                if not is_transient(exc):
                    raise
                continue  # the database is away: the heartbeater says so
            if counts and any(counts.values()):
                self.counters.add("pruned", sum(counts.values()))
                log.info("pruner: deleted %s", counts, extra={"event": "retention.pruned"})
