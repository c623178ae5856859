"""Issue 24, suspected item: two claims of one job in one worker share one heartbeat result by
id, so the stale one's `ctx.lease_lost` stays false.

A worker may hold two claims of one job: its earlier attempt finished (its outcome still on its
way to the completer: a finished claim is left registered) when the reaper had already handed
the job out again, to this same worker. One heartbeat renews both claims' tokens; the backend
answers by job id, and the newer token's "alive" renewed the earlier claim too, though the
database no longer knows its token: its handler's `ctx.lease_lost` (a sync handler's thread
that runs on past its timeout reads it) said the lease was fine. In-process Heartbeater, real
databases, FakeClock."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator

import pytest
from dbs import fresh_db_url

from claimq import App
from claimq._worker.dbcall import DB
from claimq._worker.heartbeater import Heartbeater
from claimq._worker.inflight import Counters, Flight, InFlight, Registry
from claimq.backends.base import Owned
from claimq.clock import FakeClock
from claimq.job import Job
from claimq.worker import JobContext

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    yield from fresh_db_url(request, request.param, tmp_path)


def _flight(job: Job, deadline: float, state: Flight) -> InFlight:
    return InFlight(job, Owned(job.id, job.claim_token or ""), job.attempts, 5.0, deadline,
                    state)


def test_the_stale_claim_is_not_renewed_by_the_newer_claims_heartbeat(url: str) -> None:
    clock = FakeClock()
    app = App(url, clock=clock)
    app.migrate()
    abandoned: list[InFlight] = []
    try:
        job_id = app.enqueue("t.twice", {})
        [first] = app.claim("w-1", limit=1, lease=5, start=True)
        clock.advance(60)  # the worker was frozen past its lease
        assert app.reap().requeued == [job_id]
        [second] = app.claim("w-1", limit=1, lease=5, start=True)
        assert second.claim_token != first.claim_token
        counters = Counters()
        registry = Registry(4, counters)
        # the earlier attempt: finished, its outcome not yet written, its lease run out here
        earlier = _flight(first, time.monotonic() - 1.0, Flight.FINISHED)
        registry.add(earlier)
        newer = _flight(second, time.monotonic() + 5.0, Flight.RUNNING)
        registry.add(newer)
        loop = asyncio.new_event_loop()
        stale = JobContext(first, first.attempts, "w-1", earlier, app.backend, 5.0, loop,
                           lambda *a: None)
        assert stale.lease_lost

        async def beat() -> None:
            db = DB(deadline=10)
            try:
                await Heartbeater(app.backend, db, registry, counters, lease=5.0,
                                  default_lease=5.0, abandon=lambda f, why: abandoned.append(f),
                                  cancel=lambda f: None, finished=asyncio.Event()).beat()
            finally:
                db.close()

        try:
            loop.run_until_complete(beat())
        finally:
            loop.close()
        assert stale.lease_lost, (
            "the earlier claim was renewed by the newer claim's heartbeat result")
        assert not newer.lost and not newer.lease_expired and newer not in abandoned
        mine = app.get_job(job_id)
        assert (mine.status, mine.claim_token) == ("processing", second.claim_token)
    finally:
        app.close()
