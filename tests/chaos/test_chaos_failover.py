"""Primary failover under load, with pg_auto_failover (Debian's postgresql-15-auto-failover): a
monitor on the host, a primary and a synchronous standby each in a network namespace of its own
(its own address; the host forwards between them). Two workers and a producer use one URL naming
both nodes with `target_session_attrs=read-write`. Mid-run the primary's keeper and server are
killed (SIGKILL); the monitor promotes the standby and everyone follows it.

At the end, read from the new primary: every acknowledged enqueue is there and archived once
(the chaos suite's invariants: no job lost, no two live owners, no stale write, each business
effect once), and every completion a handler saw acknowledged (its `complete_in` transaction
committed: the log line `chaos completed N attempt=K`) stands: the archive holds job N from
attempt K. Jobs in flight on the dead primary are recovered by their leases."""

from __future__ import annotations

import re
import time

import chaos_biz as biz
import pytest
from chaos_harness import (
    ARCHIVE,
    Feeder,
    Sampler,
    archived,
    check_invariants,
    end_run,
    finished_ids,
)
from chaos_netns import unavailable_reason
from pgcluster import through_outage
from pgfailover import Formation, require_failover

from claimq import App

LEASE = 3.0
OPTIONS = {"concurrency": 4, "lease": LEASE, "poll_interval": 0.1, "grace": 2.0}

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(300)]


def test_primary_killed_and_standby_promoted_under_load(spawn) -> None:
    """The primary killed under load; the monitor promotes the standby and every job stands.

    Slow: the test builds a pg_auto_failover formation of its own (a monitor, a primary and a
    synchronous standby: three initdb and a base backup) and waits for the monitor to notice the
    dead primary and promote the standby; well over 30 s (not measured here: pg_autoctl absent).
    """
    require_failover()
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with Formation(netns=True) as formation:
        url = formation.url("?schema=chaos")
        app = App(url)
        try:
            app.migrate()
            biz.create_tables(app)
            workers = [spawn(url, **OPTIONS) for _ in range(2)]
            for w in workers:
                w.wait_started()
            feeder = Feeder(app, slow=0.5, every=0.1)
            feeder.start()
            deadline = time.monotonic() + 30
            while len(through_outage(lambda: finished_ids(app))) < 50:
                assert time.monotonic() < deadline, "nothing finished before the failover"
                time.sleep(0.1)

            killed = time.monotonic()
            formation.kill(0)
            formation.wait_primary_is(1, timeout=120)
            promoted = time.monotonic() - killed
            time.sleep(3.0)  # work goes on on the new primary
            feeder.stop()
            ids = feeder.ids

            sampler = Sampler(app)
            sampler.start()
            end_run(app, ids, sampler, workers, died="a worker died of the failover")

            summary = check_invariants(app, dict.fromkeys(ids, ARCHIVE),
                                       allow_invalid_start=True)
            assert summary["effects"] == len(ids)
            assert not sampler.violations, sampler.violations[:5]
            final = {j.id: j.attempts for j in archived(app)}
            acked = [(int(n), int(k)) for w in workers
                     for n, k in re.findall(r"chaos completed (\d+) attempt=(\d+)", w.log())]
            assert acked, "no handler completion was acknowledged"
            lost = [(n, k) for n, k in acked if final.get(n) != k]
            assert not lost, f"acknowledged completions that did not stand: {lost[:10]}"
            reaped = [j for j in archived(app)
                      if any(e["error"] == "LeaseExpired" for e in j.errors)]
            logs = "".join(w.log() for w in workers)
            assert "database unavailable" in logs and "database reachable again" in logs
            print(f"failover: promoted {promoted:.1f}s after the kill, all done "
                  f"{time.monotonic() - killed:.1f}s after it; {summary}, "
                  f"{len(acked)} acknowledged completions, "
                  f"{len(reaped)} recovered by their leases")
        finally:
            app.close()
