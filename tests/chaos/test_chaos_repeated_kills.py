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

import pytest
from chaos_harness import (
    ARCHIVE,
    SOAK,
    check_invariants,
    live,
    pid_alive,
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


class Sampler(threading.Thread):
    """Every 0.2 s, in one read: the handler runs still open in live worker processes, and the
    jobs they run. At no sampled moment may two of them hold a valid lease on one job (their
    token the job's current one, its lease not expired)."""

    def __init__(self, app: App) -> None:
        super().__init__(daemon=True)
        self.app = app
        self.stop = threading.Event()
        self.samples = 0
        self.violations: list[object] = []
        self.errors: list[BaseException] = []

    def read(self) -> tuple[list[tuple[int, str, int]], dict[int, tuple[str, bool]]]:
        schema = getattr(self.app.backend, "schema", None)
        with self.app.transaction() as conn:
            if self.app.backend.kind == "postgresql":
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                runs = [(r["job_id"], r["token"], r["pid"]) for r in conn.execute(
                    f"SELECT job_id, token, pid FROM {schema}.chaos_runs WHERE ended IS NULL")]
                jobs = {r["id"]: (str(r["claim_token"]), r["valid"]) for r in conn.execute(
                    f"SELECT id, claim_token, lease_until > now() AS valid FROM {schema}.jobs"
                    " WHERE status = 'processing'")}
            else:
                runs = [tuple(r) for r in conn.execute(
                    "SELECT job_id, token, pid FROM chaos_runs WHERE ended IS NULL")]
                now = self.app.backend.clock()
                jobs = {r[0]: (r[1], bool(r[2])) for r in conn.execute(
                    "SELECT id, claim_token, lease_until > ? FROM claimq_jobs"
                    " WHERE status = 'processing'", (now,))}
        return runs, jobs  # type: ignore[return-value]

    def run(self) -> None:
        while not self.stop.wait(0.2):
            try:
                runs, jobs = self.read()
            except Exception as exc:  # noqa: BLE001 - reported by the test
                self.errors.append(exc)
                continue
            self.samples += 1
            owners: dict[int, list[tuple[str, int]]] = {}
            for job_id, token, pid in runs:
                current = jobs.get(job_id)
                if current and current[0] == token and current[1] and pid_alive(pid):
                    owners.setdefault(job_id, []).append((token, pid))
            self.violations += [(j, o) for j, o in owners.items() if len(o) > 1]


def test_repeated_kills_while_jobs_flow(capp: App, spawn) -> None:
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
    assert summary["extra_runs"] > 0, "no kill landed mid-handler: the scenario proved nothing"
    assert not sampler.errors, sampler.errors[:3]
    assert sampler.samples >= DURATION * 2
    assert not sampler.violations, sampler.violations[:5]
    print(f"repeated kills: {kills} kills, {summary}, {sampler.samples} samples")
