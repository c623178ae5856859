"""A worker process survives its PostgreSQL server going away mid-run: a `pg_ctl restart -m
fast`, then a stop of a few seconds (the connection pool waits for the server to return; the
worker's calls retry transient errors). Jobs keep flowing through both; every job ends in the
archive exactly once and the worker process lives on until it is told to stop.

Runs on a throwaway cluster of its own (tests/pgcluster.py), never the shared server."""

from __future__ import annotations

import signal
import time

import pytest
from pgcluster import PgCluster, require_cluster, through_outage
from worker_harness import archived, dead, live

from claimq import App


def _wait_archived(app: App, count: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while True:
        done = through_outage(lambda: len(archived(app)), timeout=30)
        if done >= count:
            return done
        if time.monotonic() > deadline:
            raise AssertionError(f"only {done} of {count} jobs archived after {timeout}s")
        time.sleep(0.05)


@pytest.mark.postgres
@pytest.mark.timeout(150)
def test_worker_survives_database_restarts(spawn_worker) -> None:
    require_cluster()
    with PgCluster() as cluster:
        url = cluster.url("?schema=claimq_restart")
        app = App(url)
        try:
            app.migrate()
            ids = [app.enqueue("t.sleep_sync", {"seconds": 0.1}) for _ in range(60)]
            worker = spawn_worker(url, concurrency=4, lease=5.0, poll_interval=0.2, grace=5.0)
            worker_id = worker.wait_started()

            # 1. A fast restart while jobs run.
            before = _wait_archived(app, 12, timeout=30)
            cluster.restart("fast")
            assert before < len(ids), "the restart should land mid-run"
            ids += through_outage(
                lambda: [app.enqueue("t.sleep_async", {"seconds": 0.05}) for _ in range(30)],
                timeout=30,
            )
            # 2. The server away for a few seconds while jobs run.
            before = _wait_archived(app, before + 12, timeout=60)
            cluster.stop("fast")
            time.sleep(3)
            assert worker.alive()
            cluster.start()
            assert before < len(ids), "the outage should land mid-run"
            ids += through_outage(
                lambda: [app.enqueue("t.echo_sync", {"x": i}) for i in range(20)],
                timeout=30,
            )

            _wait_archived(app, len(ids), timeout=90)
            assert worker.alive()
            done = through_outage(lambda: archived(app), timeout=30)
            assert sorted(j.id for j in done) == sorted(ids)  # each exactly once
            assert {j.worker_id for j in done} == {worker_id}
            assert live(app) == [] and dead(app) == []

            worker.signal(signal.SIGTERM)
            assert worker.wait(timeout=20) == 0
            counters = worker.counters()
            assert counters["started"] >= len(ids)
            assert counters["completed"] <= len(ids)
        finally:
            app.close()
