"""The worker's own Python per job, without the database: a profiling aid, not a throughput
figure.

The PostgreSQL worker's loop (completer -> settle -> start jobs -> run them -> hand in their
outcomes) runs with the settle round trip replaced by canned claim rows of settle.sql's shape:
what is timed is building the statement's parameters, turning its rows into Jobs, starting and
running 20 no-op handlers per batch and collecting their outcomes. The socket, the server and
the row decoding are not in it (see benchmarks/ab.py and benchmarks/bench.py for those). CPU time,
best of 5:

    .venv/bin/python benchmarks/worker_python.py [--batches 3000] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from claimq import App
from claimq._worker.claims import Claims
from claimq._worker.completer import Completer, Outcomes
from claimq._worker.dbcall import DB
from claimq._worker.executor import Executor
from claimq._worker.inflight import Counters, Registry
from claimq.backends.base import ClaimRequest, Completion, FailResult, Failure, Settled
from claimq.backends.postgres.backend import _settle_params, _settle_result

BATCH = 20


def claim_rows(first_id: int, now: datetime) -> list[tuple[Any, ...]]:
    """Rows as settle.sql returns them for a claim of BATCH started no-op jobs."""
    return [(None, first_id + i, "bench", "noop", {}, [], None, 0, 1, 20, str(uuid.uuid4()),
             now + timedelta(seconds=30), now, now, now, None, None, None, i + 1)
            for i in range(BATCH)]


async def run(app: App, batches: int) -> float:
    """CPU seconds per job for `batches` batches of the completer's loop."""
    now = datetime.now(UTC)
    canned = [claim_rows(1 + n * BATCH, now) for n in range(batches + 1)]
    counters = Counters()
    registry = Registry(BATCH, counters)
    db = DB(threads=1)
    claims = Claims(app.backend, db, registry, counters, worker_id="w", queues=None, lease=None,
                    batch=BATCH, on_loop=True, stopping=lambda: False)
    outcomes = Outcomes()
    executor = Executor(app, app.backend, db, registry, counters, outcomes, worker_id="w",
                        lease=None, default_lease=30.0, concurrency=BATCH,
                        make_context=lambda f, abandon: None)
    completer = Completer(app.backend, db, registry, counters, claims, outcomes,
                          start_jobs=executor.start)
    calls = 0

    async def settle(done: list[Completion], failures: list[Failure],
                     claim: ClaimRequest | None) -> Settled:
        nonlocal calls
        calls += 1
        _settle_params(done, claim, None)
        rows = canned[calls] if claim is not None and calls < batches else [(None,) * 19]
        _, jobs = _settle_result(rows, claim)
        return Settled({d.id for d in done}, FailResult(), jobs)

    claims.settle = settle  # type: ignore[method-assign]
    await executor.start(_settle_result(canned[0], ClaimRequest("w", None, BATCH, None, True))[1])
    started = time.process_time()
    writer = asyncio.create_task(completer.run())
    while len(registry) or completer.busy:
        registry.slots_free.clear()
        await registry.slots_free.wait()
    completer.close()
    await writer
    spent = time.process_time() - started
    db.close()
    assert counters.get("completed") == calls * BATCH, counters
    return spent / (calls * BATCH)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batches", type=int, default=3000)
    p.add_argument("--profile", action="store_true", help="cProfile one run instead")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        app = App(f"sqlite:///{tmp}/unused.db")  # holds the task; no database is opened

        @app.task(name="noop")
        async def noop() -> None:
            return None

        if a.profile:
            profile = cProfile.Profile()
            profile.runcall(asyncio.run, run(app, a.batches))
            pstats.Stats(profile).sort_stats("tottime").print_stats(25)
            return
        best = min(asyncio.run(run(app, a.batches)) for _ in range(5))
        print(f"worker Python per job (no round trip), best of 5: {best * 1e6:.2f} us")


if __name__ == "__main__":
    main()
