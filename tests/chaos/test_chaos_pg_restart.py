"""Scenario 5: the database goes away under running workers (PostgreSQL only, on a throwaway
cluster of the test's own, so the shared server is never disturbed):

1. every client backend is killed with pg_terminate_backend, three times, while jobs flow;
2. the server is restarted (`pg_ctl restart -m fast`);
3. the server crashes (`pg_ctl stop -m immediate`) and stays down longer than the workers'
   leases, then comes back (crash recovery): the leases of the jobs in flight have run out, so
   the reaper hands them to whoever claims next, while their first owners may still try to
   finish them.

Jobs keep being enqueued throughout. At the end every job is archived once, no two runs held a
valid lease on one job at any sampled moment, no stale write landed, and the business effect of
each job exists once."""

from __future__ import annotations

import time

import psycopg
import pytest
from chaos_harness import finish_outage_scenario, finished_ids, start_outage_scenario
from pgcluster import PgCluster, require_cluster, through_outage

from claimq import App

LEASE = 3.0
OPTIONS = {"concurrency": 4, "lease": LEASE, "poll_interval": 0.1, "grace": 2.0}

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(240)]


def terminate_backends(cluster: PgCluster) -> int:
    with psycopg.connect(cluster.url(), autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'"
        ).fetchone()
    return int(row[0]) if row else 0


def test_database_restarts_and_killed_backends(spawn) -> None:
    """Backends terminated three times, a fast restart, then a crash longer than the leases.

    Slow: a throwaway cluster of its own is restarted and crashed, and the test waits out each
    outage for real (about 12 s of deliberate waits, including a crash held past every lease, plus
    the cluster's starts): ~33 s on the 2-core machine under load.
    """
    require_cluster()
    with PgCluster() as cluster:
        url = cluster.url("?schema=chaos")
        app = App(url)
        try:
            workers, feeder, sampler = start_outage_scenario(app, spawn, OPTIONS)
            ids = feeder.ids

            time.sleep(2.0)
            killed = 0
            for _ in range(3):
                killed += terminate_backends(cluster)
                time.sleep(1.0)
            assert killed >= 6  # at least the workers' pools and listeners, each time

            cluster.restart("fast")
            time.sleep(2.0)
            done_before_crash = len(through_outage(lambda: finished_ids(app)))

            # Make sure work is in flight when the server crashes: slow jobs, one at least
            # running (a crash between two batches would prove nothing).
            slow = through_outage(lambda: app.enqueue_many([
                {"task": "chaos.work",
                 "payload": {"n": 1_000_000 + i, "mode": "atomic", "sleep": 2.0}}
                for i in range(4)
            ]))
            ids.extend(slow)
            running_by = time.monotonic() + 30
            while not any(through_outage(lambda i=i: app.get_job(i)).status == "processing"
                          for i in slow):
                assert time.monotonic() < running_by, "no slow job started before the crash"
                time.sleep(0.05)
            cluster.stop("immediate")
            time.sleep(LEASE + 1.5)  # longer than every lease in flight
            cluster.start()
            cluster.wait_ready()
            time.sleep(2.0)
            feeder.stop()

            summary, reaped = finish_outage_scenario(app, ids, sampler, workers)
            assert len(finished_ids(app)) > done_before_crash > 0
            assert summary["effects"] == len(ids)
            print(f"pg restart: {summary}, backends killed {killed}, reaped {len(reaped)}")
        finally:
            app.close()
