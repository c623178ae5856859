"""Regression tests of issue 12's runtime defects (1, 2, 3, 5, 6, 7 and 12), one scenario each
as the issue reproduces it, with real worker processes where a process matters. Each asserts
the correct behaviour, so each fails on the runtime that has the defect.

The handlers are hostile_app's (run records in chaos_runs, or in files where the database is
not reachable); the checks are hostile_harness's and the chaos suite's invariant checker.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlunparse

import hostile_app
import psycopg
import pytest
from hostile_harness import (
    OPTIONS,
    Expect,
    UnstartedSampler,
    archived,
    assert_still_working,
    check_invariants,
    check_outcome,
    dead,
    file_runs,
    freeze,
    live,
    max_open_at_once,
    runs_by_job,
    wait_done,
    wait_until,
)
from procfs import pid_alive

from claimq import App, DatabaseError
from claimq.worker import Worker

pytest_plugins = ["hostile_fixtures"]  # happ, sqlite_happ, pg_happ, spawn_hostile
pytestmark = pytest.mark.timeout(120)

ARCHIVE = Expect("archive")
TIMEOUT = Expect("dead", "timeout")


def _reap_and_take_over(app: App, job_id: int) -> Any:
    """While the job's worker is frozen: wait out its lease (on the database's clock), reap it
    and claim it as another owner ("test-claimer", long lease). Returns the new claim."""
    wait_until(lambda: app.get_job(job_id).lease_until < app.backend.now(), 10,
               "the frozen worker's lease to run out")
    reaped = app.reap()
    assert reaped.requeued == [job_id], reaped
    [mine] = app.claim("test-claimer", limit=1, lease=60, start=True)
    assert mine.id == job_id
    return mine


# -- 1 ------------------------------------------------------------------------------------------


def test_defect_01_asyncio_timeout_caught_in_a_handler_keeps_the_worker(
    happ: App, spawn_hostile
) -> None:
    """`async with asyncio.timeout(0.1): await asyncio.sleep(1)`, the TimeoutError caught by
    the handler: the job is archived with the handler's result, and the worker lives on."""
    worker = spawn_hostile(happ.url, **OPTIONS)
    worker_id = worker.wait_started()
    job_id = happ.enqueue("h.timeout_caught", {})
    wait_done(happ, [worker], [job_id], timeout=20)
    check_outcome(happ, job_id, ARCHIVE, attempts=1)
    assert happ.get_job(job_id).result == {"timed_out": True}
    assert_still_working(happ, worker, worker_id)


# -- 2 ------------------------------------------------------------------------------------------


def test_defect_02_a_job_reclaimed_by_its_own_worker_runs_once_at_a_time(
    sqlite_happ: App, spawn_hostile
) -> None:
    """SQLite, lease 2 s, concurrency 2, one 6 s sync job. The worker is frozen for 3 s, the
    job reaped meanwhile, then the worker resumes (and may claim the job again while its first
    attempt still runs). Expected: the job is archived (exactly once: it is in the archive, in
    no other table), never more than one of its attempts runs at a time, at most 2 starts."""
    app = sqlite_happ
    job_id = app.enqueue("h.sync_sleep", {"seconds": 6.0})
    worker = spawn_hostile(app.url, concurrency=2, lease=2.0, poll_interval=0.1, grace=2.0)
    worker_id = worker.wait_started()
    worker.wait_log(rf"hostile run-started {job_id} attempt=1")
    freeze(worker, app)
    try:
        time.sleep(3.0)  # the scenario: frozen for 3 s, past the 2 s lease
        wait_until(lambda: app.get_job(job_id).lease_until < app.backend.now(), 10,
                   "the frozen worker's lease to run out")
        assert app.reap().requeued == [job_id]
    finally:
        os.kill(worker.pid, signal.SIGCONT)
    wait_done(app, [worker], [job_id], timeout=40)
    check_outcome(app, job_id, ARCHIVE)
    assert [j.id for j in archived(app)] == [job_id] and dead(app) == []
    runs = runs_by_job(app)[job_id]
    spans = [(r.attempt, r.started, r.ended) for r in runs]
    assert max_open_at_once(runs) == 1, f"attempts of job {job_id} ran at once: {spans}"
    assert len(runs) <= 2, f"job {job_id} started {len(runs)} times: {spans}"
    check_invariants(app, {job_id: ARCHIVE}, effects_for_archived=False)
    assert_still_working(app, worker, worker_id)


# -- 3 ------------------------------------------------------------------------------------------


def test_defect_03_one_locked_row_costs_no_other_job_its_lease(
    pg_happ: App, spawn_hostile
) -> None:
    """PostgreSQL: a worker (lease 1.5 s) runs four 5 s jobs; another session holds `SELECT 1
    FROM <schema>.jobs WHERE id = <job 1> FOR UPDATE` for three leases while a second worker
    runs too (it reaps what expires and runs it). Expected: jobs 2-4 each start exactly once
    (job 1 may lose its lease), all four archived."""
    app = pg_happ
    lease = 1.5
    options = {"concurrency": 4, "lease": lease, "poll_interval": 0.1, "grace": 2.0}
    first = spawn_hostile(app.url, **options)
    first.wait_started()
    ids = [app.enqueue("h.sync_sleep", {"seconds": 5.0}) for _ in range(4)]
    first.wait_log(r"hostile run-started \d+ attempt=1", count=4, timeout=20)
    session = psycopg.connect(app.backend.conninfo)  # type: ignore[attr-defined]
    try:
        locked = session.execute(
            f"SELECT 1 FROM {app.backend.schema}.jobs WHERE id = %s FOR UPDATE",  # type: ignore[attr-defined]
            (ids[0],),
        ).fetchall()
        assert locked == [(1,)]
        second = spawn_hostile(app.url, **options)
        second.wait_started()
        time.sleep(3 * lease)  # the scenario: the row lock is held for three leases
    finally:
        session.rollback()
        session.close()
    wait_done(app, [first, second], ids, timeout=40)
    by_job = runs_by_job(app)
    starts = {i: [(r.worker, r.attempt) for r in by_job[i]] for i in ids}
    assert all(len(starts[i]) == 1 for i in ids[1:]), (
        f"jobs 2-4 must each start once (job 1 was the locked one): {starts}"
    )
    for i in ids:
        check_outcome(app, i, ARCHIVE)
    check_invariants(app, dict.fromkeys(ids, ARCHIVE), effects_for_archived=False)
    assert first.alive() and second.alive()
    assert first.stop() == 0 and second.stop() == 0


# -- 5 ------------------------------------------------------------------------------------------


def test_defect_05_a_sync_attempt_past_its_timeout_holds_its_slot(
    happ: App, spawn_hostile
) -> None:
    """`@app.task(timeout=1, max_attempts=3)` sync handler sleeping 3 s in a queue with
    max_workers=1, a worker of concurrency 1, and a healthy job of that queue enqueued after
    it. Expected: attempts never overlap (a timed-out attempt still running holds its slot and
    its job is not retried until it ends); the job is dead with `timeout` after 3 attempts;
    the healthy job is archived and is never held claimed (fetched or processing) for long
    without having started."""
    worker = spawn_hostile(happ.url, **{**OPTIONS, "concurrency": 1})
    worker_id = worker.wait_started()
    sampler = UnstartedSampler(happ, hostile_app.SINGLE_QUEUE)
    sampler.start()
    try:
        slow = happ.enqueue("h.sync_overrun", {"seconds": 3.0})
        worker.wait_log(rf"hostile run-started {slow} attempt=1", timeout=20)
        healthy = happ.enqueue("h.sync_quick_single", {})
        wait_done(happ, [worker], [slow, healthy], timeout=45)
    finally:
        sampler.stop.set()
        sampler.join(5)
    by_job = runs_by_job(happ)
    spans = [(r.attempt, round(r.started, 2), r.ended and round(r.ended, 2))
             for r in by_job[slow]]
    assert max_open_at_once(by_job[slow]) == 1, f"attempts of job {slow} overlapped: {spans}"
    assert max_open_at_once(by_job[slow] + by_job[healthy]) == 1
    check_outcome(happ, slow, TIMEOUT, attempts=3)
    check_outcome(happ, healthy, ARCHIVE, attempts=1)
    assert not sampler.errors, sampler.errors[:3]
    stalled = {k: round(v, 2) for k, v in sampler.longest.items() if v > 1.5}
    assert not stalled, f"jobs processing without a started run (job, token) -> s: {stalled}"
    check_invariants(happ, {slow: TIMEOUT, healthy: ARCHIVE}, effects_for_archived=False)
    assert_still_working(happ, worker, worker_id)


def test_defect_05_isolation_process_enforces_a_sync_timeout(
    happ: App, spawn_hostile, tmp_path: Path
) -> None:
    """`@app.task(timeout=1, isolation="process", max_attempts=2)` on a sync handler that
    sleeps 10 s and then does its side effect. Expected: each attempt runs in a child process
    (not the worker's pid) that is killed at the timeout: the side effect never happens, no
    child is left, and the job goes through its retries to dead letters with `timeout`."""
    worker = spawn_hostile(happ.url, **{**OPTIONS, "concurrency": 2})
    worker_id = worker.wait_started()
    job_id = happ.enqueue("h.isolated_sleep", {"folder": str(tmp_path), "seconds": 10.0})
    wait_done(happ, [worker], [job_id], timeout=40)
    check_outcome(happ, job_id, TIMEOUT, attempts=2)
    starts_file = tmp_path / "isolated-starts.jsonl"
    starts = [json.loads(line) for line in starts_file.read_text().splitlines()]
    assert len(starts) == 2, starts
    # The side effect would come 10 s after a start: wait until past the last one's.
    remaining = max(s["t"] for s in starts) + 10.0 + 1.5 - time.time()
    if remaining > 0:
        time.sleep(remaining)
    effects = tmp_path / "isolated-effects.jsonl"
    assert not effects.exists(), (
        "the side effect after the timeout happened (the attempt was not killed): "
        f"{effects.read_text()}; App.task() accepts isolation=: "
        f"{hostile_app.ISOLATION_SUPPORTED}"
    )
    assert all(s["pid"] != worker.pid for s in starts), "ran in the worker process itself"
    assert not [s["pid"] for s in starts if pid_alive(s["pid"])], "a killed child still runs"
    assert_still_working(happ, worker, worker_id)


# -- 6 ------------------------------------------------------------------------------------------


class HeartbeatFailsOnce:
    """A real backend whose heartbeat (sync or async form) raises DatabaseError("injected")
    once; everything else passes through."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.injected = False
        self.after = 0  # heartbeats that went through after the injected failure

    def _once(self) -> None:
        if not self.injected:
            self.injected = True
            raise DatabaseError("injected: heartbeat failure for the test")
        self.after += 1

    def heartbeat(self, *args: Any, **kwargs: Any) -> Any:
        self._once()
        return self._real.heartbeat(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._real, name)
        if name == "aheartbeat":  # should the runtime heartbeat on its loop
            async def aheartbeat(*args: Any, **kwargs: Any) -> Any:
                self._once()
                return await value(*args, **kwargs)

            return aheartbeat
        return value


def _long_sync(seconds: float) -> dict[str, Any]:
    time.sleep(seconds)
    return {"slept": seconds}


def _quick() -> str:
    return "ok"


def test_defect_06_a_failing_heartbeat_is_logged_and_heartbeats_go_on(
    app: App, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A real Worker in a thread over an App whose backend (a real database) raises
    DatabaseError from one heartbeat. Expected: a log record of "claimq.worker" names the
    failure, heartbeats go on, so a 3 s job with a 1 s lease is archived at its first attempt
    and never reaped (a reaper runs all along), and the worker keeps running."""
    caplog.set_level(logging.INFO)
    app.task(name="r.long")(_long_sync)
    app.task(name="r.quick")(_quick)
    faulty = HeartbeatFailsOnce(app.backend)
    app._backend = faulty  # type: ignore[assignment]  # fault injection on the real database
    observer = App(db_url)
    worker = Worker(app, concurrency=2, lease=1.0, poll_interval=0.1, grace=2.0)
    results: list[Any] = []
    thread = threading.Thread(
        target=lambda: results.append(worker.run(install_signals=False)), daemon=True)
    try:
        job_id = observer.enqueue("r.long", {"seconds": 3.0}, max_attempts=3)
        thread.start()
        reaped: list[int] = []

        def reap_until_done() -> bool:
            got = observer.reap()
            reaped.extend(got.requeued + got.dead)
            return job_id in {j.id for j in archived(observer) + dead(observer)}

        wait_until(reap_until_done, 30, "the long job to finish", interval=0.1)
        assert faulty.injected, "the worker never called backend.heartbeat/aheartbeat"
        named = [r for r in caplog.records
                 if r.name.startswith("claimq.worker") and r.levelno >= logging.WARNING
                 and ((r.exc_info and isinstance(r.exc_info[1], DatabaseError))
                      or "DatabaseError" in r.getMessage() or "injected" in r.getMessage())]
        assert named, "no warning/error of claimq.worker named the heartbeat's DatabaseError"
        assert faulty.after >= 2, f"heartbeats after the failure: {faulty.after}"
        assert reaped == [], f"the job was reaped (its heartbeats stopped): {reaped}"
        job = observer.get_job(job_id)
        assert (job.status, job.attempts, job.errors) == ("succeeded", 1, ()), (
            job.status, job.attempts, [e.get("error") for e in job.errors])
        assert thread.is_alive()
        fresh = observer.enqueue("r.quick", {})
        wait_until(lambda: fresh in {j.id for j in archived(observer)}, 20,
                   "the worker to run a fresh job")
    finally:
        worker.stop()
        thread.join(30)
        observer.close()
    assert not thread.is_alive() and results, "the worker did not stop"


# -- 7 ------------------------------------------------------------------------------------------


def _through(url: str, host: str, port: int) -> str:
    parsed = urlparse(url)
    auth = parsed.netloc.rsplit("@", 1)[0] + "@" if "@" in parsed.netloc else ""
    return urlunparse(parsed._replace(netloc=f"{auth}{host}:{port}"))


@pytest.mark.parametrize("how", ["silent_peer", "lost_packets"])
def test_defect_07_a_database_that_stops_answering(
    pg_happ: App, spawn_hostile, tmp_path: Path, how: str
) -> None:
    """PostgreSQL behind a proxy that stops forwarding without closing anything (silent_peer:
    a peer that accepts and never answers; lost_packets: the worker in a network namespace and
    the link down, so every packet is lost). Expected: the worker notices within its lease and
    says so (a WARNING of claimq's), and once the database answers again it recovers on new
    connections (lost_packets; for silent_peer a fresh worker takes over): every job archived
    exactly once, no two attempts of a job at once, and it still claims fresh jobs."""
    from blackhole_proxy import BlackholeProxy
    from chaos_netns import NetNs, unavailable_reason

    app = pg_happ
    lease = 3.0
    real = urlparse(app.url)
    net: NetNs | None = None
    if how == "lost_packets":
        reason = unavailable_reason()
        if reason:
            pytest.skip(reason)
        net = NetNs().__enter__()
    proxy = BlackholeProxy(real.port or 5432, real.hostname or "127.0.0.1",
                           listen_host=net.host_ip if net else "127.0.0.1")
    try:
        worker = spawn_hostile(_through(app.url, proxy.host, proxy.port),
                               prefix=net.prefix if net else (),
                               concurrency=2, lease=lease, poll_interval=0.2, grace=2.0)
        worker_id = worker.wait_started(timeout=30)
        ids = [app.enqueue("h.file_sleep", {"folder": str(tmp_path), "seconds": 1.5})
               for _ in range(6)]
        worker.wait_log(r"hostile run-started \d+ attempt=1", timeout=20)
        seen = len(worker.log())
        if net:
            net.partition()
        else:
            proxy.blackhole()
        try:
            # Noticed within the lease (the deadline has slack for a loaded machine).
            rx_warning = r"WARNING (claimq\S*): "
            wait_until(lambda: _warned_since(worker.log(), seen, rx_warning), 3 * lease,
                       "a warning from the worker that the database does not answer")
            # Then it stays away until the worker's leases ran out, and they are reaped.
            wait_until(lambda: all(j.lease_until < app.backend.now() for j in live(app)
                                   if j.status == "processing"), 3 * lease,
                       "the worker's leases to run out")
            app.reap()
        finally:
            if net:
                net.heal()
            else:
                proxy.resume()
        if how == "silent_peer":
            # Its connections to a peer that acknowledges and never answers stay stuck until
            # the OS gives up on them: recovery in the same process is not claimed here (see
            # the closing note of issue 12). Nothing is lost: a fresh worker finishes it all.
            worker.kill()
            # The hung peer goes away too: while it held the server's end open, a claim the
            # server ran but whose answer it swallowed stayed an open transaction, its jobs
            # locked (SKIP LOCKED passes them by) until that session ended.
            proxy.close()
            worker = spawn_hostile(app.url, concurrency=2, lease=lease, poll_interval=0.2,
                                   grace=2.0)
            worker_id = worker.wait_started(timeout=30)
        wait_done(app, [worker], ids, timeout=60)
        for job_id in ids:
            check_outcome(app, job_id, ARCHIVE)
        assert sorted(j.id for j in archived(app)) == sorted(ids) and dead(app) == []
        runs = file_runs(tmp_path / "runs.jsonl")
        overlapping = {
            i: [(a["attempt"], b["attempt"]) for a, b in zip(rs, rs[1:], strict=False)
                if a["end"] is None or a["end"] > b["start"]]
            for i, rs in runs.items()
        }
        assert not any(overlapping.values()), f"attempts overlapped: {overlapping}"
        assert_still_working(app, worker, worker_id)
    finally:
        proxy.close()
        if net:
            net.close()


def _warned_since(log: str, offset: int, pattern: str) -> bool:
    import re

    return re.search(pattern, log[offset:]) is not None


# -- 12 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_defect_12_lease_lost_is_true_right_after_a_long_freeze(
    happ: App, spawn_hostile, kind: str
) -> None:
    """A worker frozen (SIGSTOP) for 2.5x its lease, its job reaped and taken over meanwhile,
    then resumed: its handler, checking `ctx.lease_lost` on its first step after the freeze
    (before any heartbeat could tell), sees True: the local lease deadline has passed."""
    lease = 1.0
    worker = spawn_hostile(happ.url, concurrency=2, lease=lease, poll_interval=0.1, grace=1.0)
    worker_id = worker.wait_started()
    job_id = happ.enqueue(f"h.probe_lease_{kind}", {"lease": lease})
    worker.wait_log(rf"hostile probe-waiting {job_id} ")
    time.sleep(lease)  # a few heartbeats: the lease is renewed, as in a healthy worker
    freeze(worker, happ)
    try:
        time.sleep(2.5 * lease)
        mine = _reap_and_take_over(happ, job_id)
    finally:
        os.kill(worker.pid, signal.SIGCONT)
    # Its first step after the freeze sees the loss; or (async) a heartbeat caught mid-call by
    # the freeze answers first and the handler is cancelled at its await, never taking a step.
    steps = "resumed" if kind == "sync" else "(?:resumed|cancelled)"
    [found] = worker.wait_log(rf"hostile probe-{steps} {job_id} attempt=1 lease_lost=(\w+)")
    assert found.group(1) == "True", "ctx.lease_lost was False right after the freeze"
    happ.complete(mine, {"by": "test"})
    job = happ.get_job(job_id)
    assert (job.status, job.worker_id, job.result) == ("succeeded", "test-claimer", {"by": "test"})
    assert_still_working(happ, worker, worker_id)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_defect_12_ensure_owned_stops_a_side_effect_after_a_takeover(
    happ: App, spawn_hostile, tmp_path: Path, kind: str
) -> None:
    """`ctx.ensure_owned()` (sync) / `await ctx.aensure_owned()` (async) checks ownership
    against the database right before a side effect, raising claimq.LeaseLost when the job
    is no longer owned. An owned job passes it (control); a worker frozen for 2.5x its lease
    whose job was taken over meanwhile performs no side effect after resuming."""
    lease = 1.0
    effects = tmp_path / "effects.jsonl"
    worker = spawn_hostile(happ.url, concurrency=2, lease=lease, poll_interval=0.1, grace=1.0)
    worker_id = worker.wait_started()
    task = f"h.guarded_effect_{kind}"

    control = happ.enqueue(task, {"folder": str(tmp_path), "lease": lease, "freeze": False})
    wait_done(happ, [worker], [control], timeout=20)
    check_outcome(happ, control, ARCHIVE, attempts=1)
    assert [json.loads(x)["job"] for x in effects.read_text().splitlines()] == [control]

    job_id = happ.enqueue(task, {"folder": str(tmp_path), "lease": lease})
    worker.wait_log(rf"hostile guard-waiting {job_id} ")
    time.sleep(lease)
    freeze(worker, happ)
    try:
        time.sleep(2.5 * lease)
        mine = _reap_and_take_over(happ, job_id)
    finally:
        os.kill(worker.pid, signal.SIGCONT)
    worker.wait_log(rf"hostile guard-refused {job_id} attempt=1", timeout=15)
    done = [json.loads(x)["job"] for x in effects.read_text().splitlines()]
    assert done == [control], f"side effects after the takeover: {done}"
    happ.complete(mine, {"by": "test"})
    job = happ.get_job(job_id)
    assert (job.status, job.worker_id, job.attempts) == ("succeeded", "test-claimer", 2)
    assert_still_working(happ, worker, worker_id)
