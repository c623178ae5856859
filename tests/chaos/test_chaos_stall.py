"""Scenario 3: a handler stalls past its lease (the whole worker process is SIGSTOPped: no
heartbeat either), the reaper recovers the job, another worker completes it, then the stalled
worker wakes (SIGCONT) and tries to finish: its stale completion changes nothing."""

from __future__ import annotations

import signal

import chaos_biz as biz
import pytest
from chaos_harness import ARCHIVE, check_invariants, job_row, wait_finished

from claimq import App

pytestmark = pytest.mark.timeout(120)

LEASE = 1.5
OPTIONS = {"concurrency": 2, "lease": LEASE, "poll_interval": 0.1, "grace": 1.0}


@pytest.mark.parametrize("mode", ["atomic", "separate"])
def test_stalled_worker_cannot_complete_a_job_it_lost(capp: App, spawn, mode: str) -> None:
    job_id = capp.enqueue("chaos.work", {"mode": mode, "hold_attempts": 1, "hold": 1.0})
    stalled = spawn(capp.url, **OPTIONS)
    stalled_id = stalled.wait_started()
    stalled.wait_log(rf"chaos holding {job_id} attempt=1")
    stalled.signal(signal.SIGSTOP)
    try:
        rescuer = spawn(capp.url, **OPTIONS)
        rescuer_id = rescuer.wait_started()
        wait_finished(capp, [job_id], timeout=30)
        before = job_row(capp, job_id)
        effects_before = biz.effects(capp)
    finally:
        stalled.signal(signal.SIGCONT)

    # The stalled worker resumes: its handler goes on to complete (atomic: complete_in in its
    # own transaction; separate: return, and the completer writes). Whichever of its loops
    # notices first, the write must match no row.
    # Its handler's run ends before the worker is stopped: a sync handler still holding when
    # the lease loss is noticed can outlast the grace, and its run's end was then never written.
    if mode == "atomic":
        stalled.wait_log(rf"chaos stale-refused {job_id} attempt=1")
    else:
        stalled.wait_log(rf"chaos returning {job_id} attempt=1")
    stalled.wait_log(rf"job {job_id}(: \w+ matched no row| abandoned: lease lost)")
    # Let the stale worker's loops run a few more rounds (heartbeats, completer) then check.
    assert stalled.stop() == 0
    assert rescuer.stop() == 0

    assert job_row(capp, job_id) == before, "a stale write changed the job"
    assert biz.effects(capp) == effects_before
    job = capp.get_job(job_id)
    assert (job.status, job.worker_id, job.attempts) == ("succeeded", rescuer_id, 2)
    assert job.result["worker"] == rescuer_id
    check_invariants(capp, {job_id: ARCHIVE})
    runs = sorted(biz.runs(capp), key=lambda r: r.attempt)
    assert [(r.worker, r.attempt) for r in runs] == [(stalled_id, 1), (rescuer_id, 2)]
    # The two runs overlapped in time; only the second held a valid lease.
    assert runs[0].ended is not None and runs[0].ended > runs[1].started
    assert runs[0].outcome == ("stale-refused" if mode == "atomic" else "returned")
    assert runs[1].outcome == ("completed" if mode == "atomic" else "returned")
    [effect] = biz.effects(capp)
    # separate: the stalled attempt wrote the effect before it stalled, the rerun found it.
    want = (stalled_id, 1) if mode == "separate" else (rescuer_id, 2)
    assert (effect.worker, effect.attempt) == want
    counters = stalled.counters()
    assert counters.get("completed", 0) == 0
    assert counters.get("lease_lost", 0) >= 1


def _stale_write_while_the_new_owner_runs(capp: App, spawn, mode: str, env: dict[str, str]):
    """The stalled worker wakes while the job is being run by its new owner (not after it is
    done): its stale completion meets a live row owned by someone else."""
    job_id = capp.enqueue(
        "chaos.work", {"mode": mode, "hold_attempts": 1, "hold": 1.0, "rerun_sleep": 2.5}
    )
    stalled = spawn(capp.url, env=env, **OPTIONS)
    stalled_id = stalled.wait_started()
    stalled.wait_log(rf"chaos holding {job_id} attempt=1", timeout=30)
    stalled.signal(signal.SIGSTOP)
    try:
        rescuer = spawn(capp.url, **OPTIONS)
        rescuer_id = rescuer.wait_started()
        rescuer.wait_log(rf"chaos run-started {job_id} attempt=2", timeout=30)
    finally:
        stalled.signal(signal.SIGCONT)
    # The stalled handler resumes and completes (or returns for its completer to complete)
    # while the rescuer is still in its 2.5 s handler.
    marker = "stale-refused|completed" if mode == "atomic" else "returning"
    stalled.wait_log(rf"chaos ({marker}) {job_id} attempt=1", timeout=20)
    wait_finished(capp, [job_id], timeout=30)
    assert rescuer.stop() == 0
    assert stalled.stop() == 0
    return job_id, stalled_id, rescuer_id


@pytest.mark.parametrize("mode", ["atomic", "separate"])
def test_stale_completion_while_the_new_owner_runs(capp: App, spawn, mode: str) -> None:
    job_id, stalled_id, rescuer_id = _stale_write_while_the_new_owner_runs(capp, spawn, mode, {})
    job = capp.get_job(job_id)
    assert (job.status, job.worker_id, job.attempts) == ("succeeded", rescuer_id, 2)
    assert job.result["worker"] == rescuer_id
    runs = sorted(biz.runs(capp), key=lambda r: r.attempt)
    assert [(r.worker, r.attempt) for r in runs] == [(stalled_id, 1), (rescuer_id, 2)]
    # The stale attempt to finish came while the new owner was still running the job.
    assert runs[0].ended is not None and runs[0].ended < runs[1].ended
    check_invariants(capp, {job_id: ARCHIVE})


def test_the_checks_notice_a_missing_token_fence(tmp_path, spawn) -> None:
    """Self-check of the suite: with completions unfenced in the stalled worker (a mutation
    injected in that process only), the same scenario must fail the invariants."""
    url = f"sqlite:///{tmp_path}/mutant.db"
    app = App(url)
    app.migrate()
    biz.create_tables(app)
    try:
        job_id, _, _ = _stale_write_while_the_new_owner_runs(
            app, spawn, "atomic", {"CHAOS_MUTATE": "no_fence"}
        )
        with pytest.raises(AssertionError):
            check_invariants(app, {job_id: ARCHIVE})
    finally:
        app.close()
