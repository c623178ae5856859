"""Scenario 6: a network partition. A worker runs in a network namespace of its own, joined to
the host by a veth pair; a throwaway PostgreSQL cluster listens on the host end of that link
(and on loopback, for the test and a second worker). Mid-job, the link goes down for longer than
the job's lease, then comes back:

- while the partitioned worker cannot be heard, its lease runs out; the worker on the host reaps
  the job and completes it;
- when the link returns, the partitioned worker's handler tries to complete: refused (its token
  is stale), nothing changes; its own loops learn the lease is lost;
- the partitioned worker lives on and works again once it can reach the database.
"""

from __future__ import annotations

import time

import chaos_biz as biz
import pytest
from chaos_harness import ARCHIVE, check_invariants, job_row, wait_finished
from chaos_netns import NetNs, unavailable_reason
from pgcluster import PgCluster, require_cluster

from claimq import App

LEASE = 2.0
OPTIONS = {"concurrency": 2, "lease": LEASE, "poll_interval": 0.2, "grace": 2.0}

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(180)]


def test_worker_partitioned_from_the_database_past_its_lease(spawn) -> None:
    """A worker cut off from the database (link down) past its lease; its job runs elsewhere.

    Slow: a throwaway cluster and a network namespace of its own; the cut-off job sleeps 8 s in
    its handler, so the link stays down past the lease while another worker takes the job over,
    and the test then waits for that handler to wake and its stale completion to be refused:
    ~25 s, near the budget.
    """
    require_cluster()
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with NetNs() as net:
        cluster = PgCluster(settings={"listen_addresses": f"127.0.0.1,{net.host_ip}"})
        try:
            cluster.initdb()
            with open(cluster.data / "pg_hba.conf", "a") as hba:
                hba.write(f"host all all {net.ns_ip}/32 trust\n")
            cluster.start()
            url = cluster.url("?schema=chaos")
            far_url = url.replace("127.0.0.1", net.host_ip)
            app = App(url)
            app.migrate()
            biz.create_tables(app)
            try:
                run_partition(app, url, far_url, net, spawn)
            finally:
                app.close()
        finally:
            cluster.destroy()


def run_partition(app: App, url: str, far_url: str, net: NetNs, spawn) -> None:
    job_id = app.enqueue("chaos.work", {"sleep": 8.0})
    far = spawn(far_url, prefix=net.prefix, queues=["default", "far"], **OPTIONS)
    far_id = far.wait_started()
    far.wait_log(rf"chaos run-started {job_id} attempt=1")

    net.partition()
    partitioned_at = time.monotonic()
    try:
        near = spawn(url, queues=["default"], **OPTIONS)
        near_id = near.wait_started()
        wait_finished(app, [job_id], timeout=40)  # reaped after the lease, run by `near`
        done = app.get_job(job_id)
        assert (done.worker_id, done.attempts) == (near_id, 2)
        before = job_row(app, job_id)
        assert time.monotonic() - partitioned_at > LEASE
    finally:
        net.heal()

    # Back on the network: the far worker's handler wakes and tries to complete its job.
    far.wait_log(rf"chaos stale-refused {job_id} attempt=1", timeout=60)
    far.wait_log(rf"job {job_id}(: \w+ matched no row| abandoned)", timeout=60)
    assert job_row(app, job_id) == before, "the partitioned worker's stale write changed the job"

    # And it works again: a job only it serves.
    again = app.enqueue("chaos.work", {"n": 2}, queue="far")
    wait_finished(app, [again], timeout=60)
    assert app.get_job(again).worker_id == far_id
    assert far.alive() and near.alive()
    assert far.stop(timeout=30) == 0
    assert near.stop() == 0

    check_invariants(app, {job_id: ARCHIVE, again: ARCHIVE})
    runs = sorted((r for r in biz.runs(app) if r.job_id == job_id), key=lambda r: r.attempt)
    assert [(r.worker, r.attempt, r.outcome) for r in runs] == [
        (far_id, 1, "stale-refused"), (near_id, 2, "completed")
    ]
    [effect] = [e for e in biz.effects(app) if e.job_id == job_id]
    assert (effect.worker, effect.attempt) == (near_id, 2)
    history = app.get_job(job_id).errors
    assert [(e["error"], e["attempt"], e["worker"]) for e in history] == [
        ("LeaseExpired", 1, far_id)
    ]
