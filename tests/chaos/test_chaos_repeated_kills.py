"""Scenario 2: repeated kills. claimq's own supervisor (`run_worker(processes=3)`) runs three
worker processes; every second the test SIGKILLs one of them at random (the supervisor starts
another) while a feeder keeps enqueueing jobs — a few thousand over the run. Throughout, a
sampler checks that no job has two live owners; at the end every invariant holds."""

from __future__ import annotations

import os
import random
import signal
import threading
import time

import chaos_biz as biz
import pytest
from chaos_harness import (
    ARCHIVE,
    SOAK,
    Sampler,
    check_invariants,
    live,
    wait_finished,
    wait_until,
    worker_children,
)

from claimq import App

DURATION = 60.0 if SOAK else 22.0
BATCH = 40  # jobs per feeder round, every 0.4 s: about 100 jobs a second
PROCESSES = 3
OPTIONS = {"processes": PROCESSES, "concurrency": 8, "lease": 3.0, "poll_interval": 0.1,
           "grace": 2.0}

pytestmark = pytest.mark.timeout(DURATION + 180)


def _payload(rng: random.Random, n: int) -> dict[str, object]:
    roll = rng.random()
    payload: dict[str, object] = {"n": n, "mode": "atomic" if roll < 0.5 else "separate"}
    if roll < 0.2:
        payload["sleep"] = 0.2  # long enough that kills land mid-handler
    elif roll > 0.9:
        payload["fail_attempts"] = 1
    return payload


def test_repeated_kills_while_jobs_flow(capp: App, spawn) -> None:
    """A worker child SIGKILLed every second while jobs flow; every job archived once.

    Slow: the kills go on for DURATION (22 s; 60 s under CLAIMQ_CHAOS_SOAK) by design, one a
    second while ~100 jobs/s flow, and the jobs still queued drain after them: ~31 s in all.
    """
    rng = random.Random(os.getpid())
    supervisor = spawn(capp.url, **OPTIONS)
    supervisor.wait_log(r"worker \S+ started:", count=PROCESSES, timeout=40)
    ids: list[int] = []
    feeding = threading.Event()
    feeding.set()
    feed_errors: list[BaseException] = []

    def feed() -> None:
        n = 0
        while feeding.is_set():
            try:
                ids.extend(capp.enqueue_many(
                    {"task": "chaos.work", "payload": _payload(rng, n + i)} for i in range(BATCH)
                ))
            except Exception as exc:  # noqa: BLE001 - reported by the test
                feed_errors.append(exc)
                return
            n += BATCH
            time.sleep(0.4)

    feeder = threading.Thread(target=feed, daemon=True)
    sampler = Sampler(capp)
    feeder.start()
    sampler.start()
    kills = 0
    try:
        deadline = time.monotonic() + DURATION
        while time.monotonic() < deadline:
            time.sleep(1.0)
            children = worker_children(supervisor.pid)
            if children:
                os.kill(rng.choice(children), signal.SIGKILL)
                kills += 1
            assert supervisor.alive(), supervisor.log()[-3000:]
    finally:
        feeding.clear()
        feeder.join(10)
    assert not feed_errors, feed_errors
    assert kills >= DURATION * 0.8

    wait_finished(capp, ids, timeout=120)
    sampler.stop.set()
    sampler.join(10)
    # The supervisor replaced every killed worker.
    wait_until(lambda: len(worker_children(supervisor.pid)) == PROCESSES, 20,
               "the supervisor to have all its workers again")
    restarts = supervisor.log().count("exited with -9; starting another")
    assert restarts == kills, (restarts, kills)
    assert supervisor.stop(timeout=30) == 0
    assert live(capp) == []

    summary = check_invariants(capp, dict.fromkeys(ids, ARCHIVE))
    assert summary["jobs"] == len(ids) >= DURATION * 50
    assert summary["effects"] == len(ids)
    killed_mid_run = sum(1 for r in biz.runs(capp) if r.ended is None)
    assert killed_mid_run > 0, "no kill landed mid-handler: the scenario proved nothing"
    assert not sampler.errors, sampler.errors[:3]
    assert sampler.samples >= DURATION * 2
    assert not sampler.violations, sampler.violations[:5]
    print(f"repeated kills: {kills} kills, {killed_mid_run} mid-run, {summary}, "
          f"{sampler.samples} samples")
