"""Scenario 5 on MariaDB: the server goes away under running workers, on a throwaway mariadbd of
the test's own (tests/mariacluster.py), so the shared server is never disturbed:

1. the server is restarted with a clean shutdown (SIGTERM: it ends every session and rolls back
   the transactions in flight);
2. the server crashes (SIGKILL) while slow jobs run, stays down longer than the workers' leases,
   and comes back through InnoDB crash recovery: the leases of the jobs in flight have run out,
   so the reaper hands them to whoever claims next, while their first owners may still try to
   finish them.

Jobs keep being enqueued throughout. At the end every job is archived once, no two runs held a
valid lease on one job at any sampled moment, no stale write landed, the business effect of each
job exists once, and both workers lived through both outages."""

from __future__ import annotations

import time

import pytest
from chaos_harness import finish_outage_scenario, finished_ids, start_outage_scenario
from mariacluster import MariaCluster, require_server
from pgcluster import through_outage
from polling import wait_until

from claimq import App

LEASE = 3.0
OPTIONS = {"concurrency": 4, "lease": LEASE, "poll_interval": 0.1, "grace": 2.0}

pytestmark = [pytest.mark.mariadb, pytest.mark.timeout(180)]


def test_server_restart_and_crash_under_running_workers(spawn) -> None:
    """A MariaDB server of the test's own, shut down and restarted, then SIGKILLed past the leases.

    Slow: it installs a datadir (mariadb-install-db), starts the server three times (the third
    with InnoDB crash recovery) and waits out a crash longer than every lease: ~25 s, near the
    budget.
    """
    require_server()
    with MariaCluster() as server:
        url = server.url("chaos")
        app = App(url)
        try:
            workers, feeder, sampler = start_outage_scenario(app, spawn, OPTIONS)
            ids = feeder.ids

            wait_until(lambda: len(through_outage(lambda: finished_ids(app))) >= 20, 60,
                       "the workers to finish jobs before the restart")
            server.restart()
            after_restart = len(through_outage(lambda: finished_ids(app)))
            wait_until(
                lambda: len(through_outage(lambda: finished_ids(app))) >= after_restart + 20,
                60, "the workers to finish jobs after the restart")
            done_before_crash = len(through_outage(lambda: finished_ids(app)))

            # Work in flight when the server crashes: slow jobs, one at least running (a crash
            # between two batches would prove nothing).
            slow = through_outage(lambda: app.enqueue_many([
                {"task": "chaos.work",
                 "payload": {"n": 1_000_000 + i, "mode": ("atomic", "separate")[i % 2],
                             "sleep": 2.0}}
                for i in range(4)
            ]))
            ids.extend(slow)
            wait_until(
                lambda: any(through_outage(lambda i=i: app.get_job(i)).status == "processing"
                            for i in slow),
                60, "a slow job to start before the crash")
            server.crash()
            time.sleep(LEASE + 1.5)  # down longer than every lease in flight
            server.start()
            wait_until(
                lambda: len(through_outage(lambda: finished_ids(app))) >= done_before_crash + 20,
                60, "the workers to finish jobs after the crash")
            # Owners sampled while jobs flow after the recovery too (the scenario is short: the
            # count of samples is waited for, not assumed from its length).
            seen = sampler.samples
            wait_until(lambda: sampler.samples >= max(seen + 10, 25), 60,
                       "the sampler to read the owners after the recovery")
            feeder.stop()

            summary, reaped = finish_outage_scenario(app, ids, sampler, workers)
            # Each job ran its effect once; a batch the feeder enqueued again after an outage
            # hid its answer is drained too, one effect each as well.
            assert summary["effects"] == len(finished_ids(app)) >= len(ids)
            print(f"mariadb restart+crash: {summary}, reaped {len(reaped)}, "
                  f"owner samples {sampler.samples}")
        finally:
            app.close()
