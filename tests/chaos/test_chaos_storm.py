"""Scenario 7: a retry storm (every job of a batch fails transiently three times before it
succeeds) with a poison job (fails on every attempt) at the head of the queue: the queue keeps
moving, every storm job succeeds once with its three failures in its history, the poison job
ends in dead letters with the history of all its attempts."""

from __future__ import annotations

from datetime import datetime

import chaos_biz as biz
import pytest
from chaos_harness import ARCHIVE, SOAK, Expect, archived, check_invariants, wait_finished

from claimq import App, RetryPolicy

pytestmark = pytest.mark.timeout(180)

STORM = 400 if SOAK else 120
PLAIN = 200 if SOAK else 60
OPTIONS = {"concurrency": 6, "lease": 5.0, "poll_interval": 0.1, "grace": 2.0}


def test_retry_storm_and_poison_job(capp: App, spawn) -> None:
    poison = capp.enqueue(
        "chaos.poison", {"kind": "poison"}, priority=10, max_attempts=5,
        retry=RetryPolicy(base=0.3, factor=1.0, cap=0.3, jitter=0.0),
    )
    storm = capp.enqueue_many(
        {"task": "chaos.work", "payload": {"n": i, "fail_attempts": 3}} for i in range(STORM)
    )
    plain = capp.enqueue_many(
        {"task": "chaos.work", "payload": {"n": i, "mode": "separate"}} for i in range(PLAIN)
    )
    workers = [spawn(capp.url, **OPTIONS) for _ in range(2)]
    for w in workers:
        w.wait_started()
    wait_finished(capp, [poison, *storm, *plain], timeout=120)
    for w in workers:
        assert w.stop() == 0

    expected = dict.fromkeys(storm + plain, ARCHIVE)
    expected[poison] = Expect("dead", "retries_exhausted")
    summary = check_invariants(capp, expected)
    assert summary["effects"] == STORM + PLAIN

    for job in archived(capp):
        if job.id in storm:
            assert job.attempts == 4
            assert [(e["attempt"], e["error"]) for e in job.errors] == [
                (1, "RuntimeError"), (2, "RuntimeError"), (3, "RuntimeError")
            ]
            assert all("transient failure" in e["message"] for e in job.errors)
        else:
            assert job.attempts == 1 and job.errors == ()

    dead_job = capp.get_job(poison)
    assert dead_job.attempts == 5
    assert [e["attempt"] for e in dead_job.errors] == [1, 2, 3, 4, 5]
    for entry in dead_job.errors:
        assert entry["error"] == "RuntimeError"
        assert f"poison job {poison} fails on every attempt" in entry["message"]
        assert "Traceback" in entry["traceback"] and "chaos_app.py" in entry["traceback"]
        assert entry["worker"] in {wid for w in workers for wid in w.worker_ids()}
    assert len([r for r in biz.runs(capp) if r.job_id == poison]) == 5

    # The queue kept moving while the poison job, at the head of the queue, kept failing.
    died = dead_job.finished_at
    assert isinstance(died, datetime)
    done_meanwhile = [j for j in archived(capp) if j.finished_at and j.finished_at < died]
    assert done_meanwhile, "no other job finished while the poison job was failing"

    counters = [w.counters() for w in workers]
    assert sum(c.get("retried", 0) for c in counters) == 3 * STORM + 4
    assert sum(c.get("dead", 0) for c in counters) == 1
    assert sum(c.get("completed", 0) for c in counters) == STORM + PLAIN
