"""Issue 24, suspected item: a settle that outlives its deadline on SQLite or MariaDB (the
backend runs it in a thread; the worker stops waiting for it at the deadline and takes its
claim's answer as lost) and commits after the worker's lost-claim recovery ran. The recovery
found nothing then, so the jobs it claimed stay held by this worker, unknown to it, until
their leases run out.

Forced with the pause point `settle.claimed` (the claim written, not committed): the worker's
Claims service (real backend, in-process) gives up on the call at its deadline, runs its
recovery, and only then does the settle go on and commit. Expected: no job is left held by
the worker without its knowing (the recovery hands it back)."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from dbs import fresh_db_url

from claimq import App
from claimq._pause import set_hook
from claimq._worker.claims import Claims
from claimq._worker.dbcall import DB
from claimq._worker.inflight import Counters, Registry
from claimq.errors import DatabaseUnavailable

pytestmark = pytest.mark.timeout(60)

WAIT = 20.0


@pytest.fixture(params=["sqlite", "mariadb"])
def url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    yield from fresh_db_url(request, request.param, tmp_path)


@pytest.fixture
def app(url: str) -> Iterator[App]:
    app = App(url)
    app.migrate()
    yield app
    app.close()


def test_a_settle_that_commits_after_recovery_leaves_no_job_held_unknown(app: App) -> None:
    job_id = app.enqueue("t.late", {})
    stopped = threading.Event()
    go_on = threading.Event()

    def hook(point: str) -> None:
        if point == "settle.claimed" and not stopped.is_set():
            stopped.set()
            assert go_on.wait(WAIT)

    looked = threading.Event()  # the recovery read the jobs held by this worker
    orphaned, settle = app.backend.orphaned, app.backend.settle
    settled = threading.Event()  # the late settle ended (committed)

    class Watched:
        def __getattr__(self, name: str) -> Any:
            return getattr(app.backend, name)

        def orphaned(self, *args: Any) -> Any:
            found = orphaned(*args)
            looked.set()
            return found

        def settle(self, *args: Any) -> Any:
            try:
                return settle(*args)
            finally:
                settled.set()

    async def main() -> Counters:
        counters = Counters()
        registry = Registry(4, counters)
        db = DB(deadline=0.5)
        backend: Any = Watched()
        claims = Claims(backend, db, registry, counters, worker_id="w-late", queues=None,
                        lease=60.0, batch=4, on_loop=False, stopping=lambda: False)
        try:
            with pytest.raises(DatabaseUnavailable):
                await claims.settle((), (), claims.request(1))
            assert stopped.is_set() and claims.unknown
            recovery = asyncio.ensure_future(claims.recover())
            # give the recovery the chance to look before the settle commits (the parent
            # looks at once; a recovery that waits for the late call does not look yet)
            await asyncio.wait([recovery, asyncio.ensure_future(asyncio.to_thread(
                looked.wait, 1.0))], return_when=asyncio.FIRST_COMPLETED)
            go_on.set()  # the late settle commits its claim
            await asyncio.wait_for(recovery, WAIT)
            assert not claims.unknown
        finally:
            go_on.set()
            db.close()
        return counters

    previous = set_hook(hook)
    try:
        counters = asyncio.run(main())
    finally:
        set_hook(previous)
    assert settled.wait(WAIT)
    job = app.get_job(job_id)
    assert job.status == "pending", (
        f"job {job_id} left {job.status} by worker {job.worker_id} after the recovery: it "
        "waits out its lease")
    assert counters.get("lost_claims_released") == 1
