"""Scenario 8: priority starvation and bulkhead under load.

- A flood of low-priority jobs is being worked through when urgent (high-priority) jobs arrive
  one by one: each urgent job is claimed ahead of the flood (only claims already under way when
  it arrived may still take low-priority work), and every urgent job is done while the flood is
  still waiting.
- A queue limited to 2 jobs in flight (max_workers, across every worker process) next to an
  unlimited queue, both flooded: sampled throughout, the limited queue never has more than 2
  jobs fetched or processing, its handler runs never overlap more than 2 deep, and the unlimited
  queue meanwhile uses every free slot.
"""

from __future__ import annotations

import threading
import time

import chaos_biz as biz
import pytest
from chaos_harness import ARCHIVE, archived, check_invariants, live, max_overlap, wait_finished

from claimq import App

pytestmark = pytest.mark.timeout(120)

PROCESSES = 2
CONCURRENCY = 4
OPTIONS = {"concurrency": CONCURRENCY, "lease": 10.0, "poll_interval": 0.1, "grace": 2.0}


def test_urgent_jobs_overtake_a_flood(capp: App, spawn) -> None:
    flood = capp.enqueue_many(
        {"task": "chaos.work", "payload": {"n": i, "sleep": 0.03}, "priority": 0}
        for i in range(600)
    )
    workers = [spawn(capp.url, **OPTIONS) for _ in range(PROCESSES)]
    for w in workers:
        w.wait_started()
    urgent = []
    for i in range(10):
        time.sleep(0.1)
        urgent.append(capp.enqueue("chaos.work", {"n": i, "urgent": True}, priority=10))
    wait_finished(capp, flood + urgent, timeout=90)
    for w in workers:
        assert w.stop() == 0
    check_invariants(capp, dict.fromkeys(flood + urgent, ARCHIVE))

    jobs = {j.id: j for j in archived(capp)}
    low = [jobs[i] for i in flood]
    # Claims already running when an urgent job arrived cannot see it: at most one batch per
    # claiming path (fetcher, completer) of each worker process.
    in_flight_claims = 2 * PROCESSES * CONCURRENCY
    for job_id in urgent:
        u = jobs[job_id]
        assert u.created_at and u.started_at
        overtaken_by = [j for j in low if u.created_at < j.started_at < u.started_at]
        assert len(overtaken_by) <= in_flight_claims, (
            f"urgent job {job_id} waited while {len(overtaken_by)} low-priority jobs were claimed"
        )
    last_urgent = max(jobs[i].finished_at for i in urgent)
    assert sum(j.started_at > last_urgent for j in low) > 0, "the flood did not outlast them"


def test_bulkhead_holds_while_other_queues_run_full(capp: App, spawn) -> None:
    capp.configure_queue("limited", max_workers=2)
    limited = capp.enqueue_many(
        {"task": "chaos.work", "queue": "limited", "payload": {"n": i, "sleep": 0.1}}
        for i in range(40)
    )
    free = capp.enqueue_many(
        {"task": "chaos.work", "queue": "free", "payload": {"n": i, "sleep": 0.1}}
        for i in range(160)
    )
    in_flight: list[int] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.02):
            in_flight.append(sum(1 for j in live(capp) if j.queue == "limited"
                                 and j.status in ("fetched", "processing")))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    workers = [spawn(capp.url, **OPTIONS) for _ in range(PROCESSES)]
    for w in workers:
        w.wait_started()
    wait_finished(capp, limited + free, timeout=90)
    stop.set()
    sampler.join(10)
    for w in workers:
        assert w.stop() == 0
    check_invariants(capp, dict.fromkeys(limited + free, ARCHIVE))

    assert len(in_flight) > 20 and max(in_flight) <= 2, max(in_flight)
    runs = biz.runs(capp)
    limited_ids, free_ids = set(limited), set(free)
    limited_runs = [(r.started, r.ended) for r in runs if r.job_id in limited_ids]
    free_runs = [(r.started, r.ended) for r in runs if r.job_id in free_ids]
    assert max_overlap(limited_runs) == 2  # the limit, reached and never passed
    # Meanwhile the unlimited queue took every other slot of both processes.
    assert max_overlap(free_runs) >= PROCESSES * CONCURRENCY - 2
    # The limited queue was not starved either: it ran while the other queue was flooded.
    free_end = max(e for _, e in free_runs)
    assert sum(s < free_end for s, _ in limited_runs) >= 10
