"""Scenario 1: SIGKILL a worker right after it claims, and after its side effect but before its
completion. The reaper recovers each job once its lease has run out; another worker runs it; the
business effect exists once; the lost attempt shows in the job's history."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import datetime

import chaos_biz as biz
import pytest
from chaos_harness import ARCHIVE, archived, check_invariants, wait_finished

from claimq import App

pytestmark = pytest.mark.timeout(120)

LEASE = 1.5
OPTIONS = {"concurrency": 4, "lease": LEASE, "poll_interval": 0.1, "grace": 1.0}


def _lease_expired_entries(job) -> list[dict]:
    return [e for e in job.errors if e.get("error") == "LeaseExpired"]


def _assert_reaped_after(job, lease_until: datetime, attempt: int) -> None:
    entries = _lease_expired_entries(job)
    assert [e["attempt"] for e in entries] == [attempt], job.errors
    reaped_at = datetime.fromisoformat(str(entries[0]["at"]))
    assert reaped_at >= lease_until, f"reaped at {reaped_at}, before the lease ran out"


def test_kill_right_after_claim(capp: App, spawn) -> None:
    ids = [
        capp.enqueue("chaos.work", {"n": i, "hold_before_run": True, "hold_attempts": 1})
        for i in range(4)
    ]
    doomed = spawn(capp.url, **OPTIONS)
    doomed_id = doomed.wait_started()
    doomed.wait_log(r"chaos holding-before-run \d+ attempt=1", count=4)
    doomed.sigkill()
    held = {j.id: j for j in (capp.get_job(i) for i in ids)}
    for job in held.values():
        assert job.status == "processing" and job.worker_id == doomed_id
    assert biz.runs(capp) == [] and biz.effects(capp) == []  # killed before any business write

    rescuer = spawn(capp.url, **OPTIONS)
    rescuer_id = rescuer.wait_started()
    wait_finished(capp, ids, timeout=30)
    assert rescuer.stop() == 0

    summary = check_invariants(capp, dict.fromkeys(ids, ARCHIVE))
    assert summary["runs"] == 4 and summary["effects"] == 4
    for job in archived(capp):
        assert job.worker_id == rescuer_id and job.attempts == 2
        _assert_reaped_after(job, held[job.id].lease_until, attempt=1)
    assert {e.worker for e in biz.effects(capp)} == {rescuer_id}


def test_kill_a_claimer_before_it_starts_the_job(capp: App, spawn) -> None:
    """A process that claimed (fetched, not started) and died: the jobs come back with no
    attempt spent."""
    ids = [capp.enqueue("chaos.work", {"n": i}) for i in range(3)]
    code = (
        "import sys, time; from claimq import App; "
        f"jobs = App(sys.argv[1]).claim('doomed-claimer', limit=2, lease={LEASE}); "
        "print('claimed', *[j.id for j in jobs], flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, capp.url], stdout=subprocess.PIPE, text=True,
        start_new_session=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("claimed"), line
        taken = [int(x) for x in line.split()[1:]]
        assert len(taken) == 2
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    held = {i: capp.get_job(i) for i in taken}
    assert all(j.status == "fetched" and j.attempts == 0 for j in held.values())

    worker = spawn(capp.url, **OPTIONS)
    worker.wait_started()
    wait_finished(capp, ids, timeout=30)
    assert worker.stop() == 0
    check_invariants(capp, dict.fromkeys(ids, ARCHIVE))
    for job_id in taken:
        job = capp.get_job(job_id)
        assert job.attempts == 1  # the fetched claim spent no attempt
        entries = _lease_expired_entries(job)
        assert len(entries) == 1 and entries[0]["worker"] == "doomed-claimer"
        assert "fetched" in entries[0]["message"]
        assert datetime.fromisoformat(str(entries[0]["at"])) >= held[job_id].lease_until


@pytest.mark.parametrize("mode", ["separate", "atomic"])
def test_kill_after_side_effect_before_completion(capp: App, spawn, mode: str) -> None:
    """separate: the effect committed on its own, then the worker dies: the rerun finds the key
    taken and writes nothing (one effect, by the first attempt). atomic: the effect commits
    with the completion, so the killed attempt left nothing and the rerun writes it once."""
    ids = [capp.enqueue("chaos.work", {"n": i, "mode": mode, "hold_attempts": 1})
           for i in range(3)]
    doomed = spawn(capp.url, **OPTIONS)
    doomed_id = doomed.wait_started()
    marker = "effect-done" if mode == "separate" else "holding"
    doomed.wait_log(rf"chaos {marker} \d+ attempt=1", count=3)
    doomed.sigkill()
    held = {i: capp.get_job(i) for i in ids}
    effects_before = biz.effects(capp)
    assert len(effects_before) == (3 if mode == "separate" else 0)

    rescuer = spawn(capp.url, **OPTIONS)
    rescuer_id = rescuer.wait_started()
    wait_finished(capp, ids, timeout=30)
    assert rescuer.stop() == 0

    summary = check_invariants(capp, dict.fromkeys(ids, ARCHIVE))
    assert summary["runs"] == 6 and summary["effects"] == 3
    effects = {e.job_id: e for e in biz.effects(capp)}
    runs = biz.runs(capp)
    for job_id in ids:
        job = capp.get_job(job_id)
        assert job.status == "succeeded" and job.attempts == 2 and job.worker_id == rescuer_id
        _assert_reaped_after(job, held[job_id].lease_until, attempt=1)
        first, second = sorted((r for r in runs if r.job_id == job_id), key=lambda r: r.attempt)
        assert (first.worker, first.attempt, first.ended) == (doomed_id, 1, None)
        assert (second.worker, second.attempt) == (rescuer_id, 2)
        # The effect exists once: written by the killed attempt (separate) or the rerun (atomic).
        want = (doomed_id, 1) if mode == "separate" else (rescuer_id, 2)
        assert (effects[job_id].worker, effects[job_id].attempt) == want
    assert rescuer.counters().get("completed") == 3
