"""The multi-process supervisor (`run_worker(app, processes=N, app_path=...)`) as a real process:
a worker child killed with SIGKILL is replaced, its jobs are recovered through their leases and
every job still finishes; SIGTERM to the supervisor stops every child cleanly."""

from __future__ import annotations

import os
import re
import signal

import pytest
from procfs import child_pids, cmdline, pid_alive
from worker_harness import archived, dead, live, wait_finished, wait_until

from claimq import App

pytestmark = pytest.mark.timeout(90)


def _worker_children(pid: int) -> list[int]:
    """The supervisor's worker processes (not multiprocessing's resource tracker)."""
    return [c for c in child_pids(pid) if "spawn_main" in cmdline(c)]


def test_supervisor_replaces_a_killed_child_and_stops_cleanly(app: App, spawn_worker) -> None:
    ids = [app.enqueue("t.sleep_sync", {"seconds": 0.4}) for _ in range(16)]
    supervisor = spawn_worker(
        app.url, processes=2, concurrency=2, lease=1.0, poll_interval=0.1, grace=5.0
    )
    supervisor.wait_log(r"worker \S+ started:", count=2, timeout=30)
    children = wait_until(lambda: (c := _worker_children(supervisor.pid)) and len(c) == 2 and c,
                          10, "two worker children")
    # The children are the workers that logged their start (worker ids carry the pid).
    logged = {int(w.split(":")[-2]) for w in supervisor.worker_ids()}
    assert logged == set(children)

    wait_until(lambda: len(archived(app)) >= 2, 20, "the first jobs to finish")
    victim = children[0]
    os.kill(victim, signal.SIGKILL)
    supervisor.wait_log(rf"worker process {victim} exited")
    supervisor.wait_log(r"worker \S+ started:", count=3, timeout=30)
    replacement = wait_until(
        lambda: (c := _worker_children(supervisor.pid)) and len(c) == 2 and victim not in c and c,
        10, "a replacement child",
    )
    assert not pid_alive(victim)

    # Every job finishes, the victim's running ones after their leases ran out.
    wait_finished(app, ids, timeout=40)
    assert supervisor.alive()

    supervisor.signal(signal.SIGTERM)
    assert supervisor.wait(timeout=20) == 0
    for pid in replacement:
        assert not pid_alive(pid)
    stopped = re.findall(r"worker \S+:(\d+):\w+ stopped:", supervisor.log())
    assert sorted(int(p) for p in stopped) == sorted(replacement)

    done = archived(app)
    assert sorted(j.id for j in done) == sorted(ids)
    assert live(app) == [] and dead(app) == []
    for job in done:
        # Jobs the victim was running were recovered by a lease expiry; no other job failed.
        assert [e["error"] for e in job.errors] == ["LeaseExpired"] * (job.attempts - 1)
        assert job.attempts in (1, 2)
        if job.attempts == 2:
            assert job.errors[0]["worker"].split(":")[-2] == str(victim)
            assert int(job.worker_id.split(":")[-2]) != victim


def test_ctrl_c_to_the_process_group_stops_the_children_gracefully(
    app: App, spawn_worker
) -> None:
    """A terminal's Ctrl-C sends SIGINT to the supervisor and every child at once. That must
    count as one stop request for each child, not two (which would mean: stop at once)."""
    ids = [app.enqueue("t.sleep_async", {"seconds": 1.5}) for _ in range(2)]
    supervisor = spawn_worker(
        app.url, processes=2, concurrency=1, lease=5.0, poll_interval=0.1, grace=10.0
    )
    supervisor.wait_log(r"worker \S+ started:", count=2, timeout=30)
    for job_id in ids:
        supervisor.wait_handler(job_id)
    children = _worker_children(supervisor.pid)
    assert len(children) == 2

    os.killpg(supervisor.pid, signal.SIGINT)  # the supervisor leads its own process group
    assert supervisor.wait(timeout=20) == 0
    log = supervisor.log()
    assert "stopping at once" not in log
    assert len(re.findall(r"worker \S+ stopped:", log)) == 2
    for pid in children:
        assert not pid_alive(pid)
    # The running jobs finished within the grace period.
    assert sorted(j.id for j in archived(app)) == sorted(ids)
    assert live(app) == []


def test_a_second_signal_to_the_supervisor_stops_the_children_at_once(
    app: App, spawn_worker
) -> None:
    ids = [app.enqueue("t.sleep_async", {"seconds": 60}) for _ in range(2)]
    supervisor = spawn_worker(
        app.url, processes=2, concurrency=1, lease=5.0, poll_interval=0.1, grace=30.0
    )
    supervisor.wait_log(r"worker \S+ started:", count=2, timeout=30)
    for job_id in ids:
        supervisor.wait_handler(job_id)
    children = _worker_children(supervisor.pid)

    supervisor.signal(signal.SIGTERM)
    supervisor.wait_log(r"stopping \(grace", count=2)
    assert supervisor.alive()  # waiting on the running jobs
    supervisor.signal(signal.SIGTERM)
    supervisor.wait(timeout=10)
    for pid in children:
        assert not pid_alive(pid)
    # Nothing was handed back: the jobs wait for their leases to run out.
    assert {j.id for j in live(app) if j.status == "processing"} == set(ids)


@pytest.mark.parametrize("moment", ["restarting", "starting"])
def test_a_stop_signal_while_a_child_is_replaced_reaches_the_replacement(
    app: App, spawn_worker, moment: str
) -> None:
    """SIGTERM to the supervisor just before, or just after, it starts a replacement for a dead
    child: the replacement stops too (it was started unsignalled and ran on, so the supervisor
    waited for it forever: CI's chaos_workflow run saw it)."""
    supervisor = spawn_worker(app.url, processes=2, concurrency=1, poll_interval=0.1,
                              grace=5.0, stop_while=moment)
    assert supervisor.wait(timeout=30) == 0
    assert re.search(r"worker process \d+ exited with -9", supervisor.log())
    assert _worker_children(supervisor.pid) == []
