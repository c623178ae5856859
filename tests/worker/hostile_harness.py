"""Harness of the hostile-handler suite and the runtime regressions: real worker processes that
run hostile_app, their fixtures, and the checks over the runs that the handlers record.

It reuses the worker tests' process class (logs, waits, signals, group kill) and the chaos
suite's run records and invariant checker (tests/chaos: chaos_biz, chaos_harness)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CHAOS = HERE.parent / "chaos"
if str(CHAOS) not in sys.path:  # chaos_biz / chaos_harness, when only tests/worker is collected
    sys.path.insert(0, str(CHAOS))

import chaos_biz as biz  # noqa: E402
import hostile_app  # noqa: E402
from chaos_harness import Expect, check_invariants, drop_schema  # noqa: E402, F401 - re-exported
from polling import archived, dead, finished_ids, live, wait_until  # noqa: E402, F401 - re-exported
from worker_harness import WorkerProcess  # noqa: E402

from claimq import App  # noqa: E402

OPTIONS: dict[str, Any] = {"concurrency": 4, "lease": 2.0, "poll_interval": 0.1, "grace": 2.0}


class HostileWorker(WorkerProcess):
    """`python -c "import hostile_app; hostile_app.main()"` in its own process group; `prefix`
    runs it under another command (e.g. `ip netns exec NAME`)."""

    def __init__(self, url: str, log_path: Path, env: dict[str, str] | None = None,
                 prefix: Sequence[str] = (), **options: Any) -> None:
        self.url = url
        self.log_path = log_path
        full_env = {
            **os.environ,
            "CLAIMQ_DATABASE_URL": url,
            "CLAIMQ_TEST_WORKER": json.dumps(options),
            "PYTHONPATH": os.pathsep.join(
                [str(HERE), str(CHAOS), *filter(None, [os.environ.get("PYTHONPATH")])]
            ),
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in kill()/wait()
        self.proc = subprocess.Popen(
            [*prefix, sys.executable, "-c", "import hostile_app; hostile_app.main()"],
            cwd=HERE,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.pid = self.proc.pid

    def kill(self) -> None:
        for sig in (signal.SIGCONT, signal.SIGKILL):  # a frozen worker too
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)
        self._log.close()

    def stop(self, timeout: float = 20.0) -> int:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGCONT)
        return super().stop(timeout)


def prepare(url: str) -> App:
    """A migrated App on `url` with the business tables, the hostile tasks registered (so that
    enqueue by name takes their defaults) and the max_workers=1 queue configured."""
    instance = App(url)
    instance.migrate()
    biz.create_tables(instance)
    hostile_app.register(instance)
    instance.configure_queue(hostile_app.SINGLE_QUEUE, max_workers=1)
    return instance


# -- waits --------------------------------------------------------------------------------------


def wait_done(app: App, workers: Iterable[WorkerProcess], ids: Iterable[int],
              timeout: float = 20.0) -> None:
    """Wait until every job is in archive or dead letters; fails at once if a worker exits."""
    wanted = set(ids)
    procs = list(workers)

    def done() -> bool:
        for w in procs:
            if not w.alive():
                raise AssertionError(
                    f"worker {w.pid} exited ({w.proc.returncode}) with jobs unfinished "
                    f"{sorted(wanted - finished_ids(app))[:10]}; live: "
                    f"{[(j.id, j.status, j.attempts) for j in live(app)][:10]}\n"
                    + w.log()[-3000:]
                )
        return wanted <= finished_ids(app)

    try:
        wait_until(done, timeout, "jobs to finish", interval=0.1)
    except AssertionError as exc:
        if "timed out" not in str(exc):
            raise
        raise AssertionError(
            f"{exc}: unfinished {sorted(wanted - finished_ids(app))[:10]}; live: "
            f"{[(j.id, j.status, j.attempts, j.worker_id) for j in live(app)][:10]}"
        ) from None


def freeze(worker: WorkerProcess, app: App) -> None:
    """SIGSTOP the worker, never while it holds SQLite's write lock (nobody else could write
    until it resumed). On PostgreSQL any moment will do."""
    for _ in range(100):
        os.kill(worker.pid, signal.SIGSTOP)
        if app.backend.kind != "sqlite":
            return
        probe = sqlite3.connect(app.backend.path, timeout=0.2, isolation_level=None)  # type: ignore[attr-defined]
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
            return
        except sqlite3.OperationalError:
            os.kill(worker.pid, signal.SIGCONT)
            time.sleep(0.03)
        finally:
            probe.close()
    raise AssertionError("could not stop the worker outside a write transaction")


# -- checks over the recorded runs --------------------------------------------------------------


def runs_by_job(app: App) -> dict[int, list[biz.Run]]:
    by_job: dict[int, list[biz.Run]] = defaultdict(list)
    for r in biz.runs(app):
        by_job[r.job_id].append(r)
    for runs in by_job.values():
        runs.sort(key=lambda r: r.started)
    return by_job


def overlaps(runs: list[biz.Run]) -> list[tuple[biz.Run, biz.Run]]:
    """Pairs of runs (sorted by start) where the earlier had not ended when the later began."""
    ordered = sorted(runs, key=lambda r: r.started)
    return [(a, b) for a, b in zip(ordered, ordered[1:], strict=False)
            if a.ended is None or a.ended > b.started]


def assert_no_overlap(app: App, ids: Iterable[int]) -> None:
    """No two attempts of one job ran at the same time (each ended before the next began)."""
    by_job = runs_by_job(app)
    bad = {i: [(a.attempt, b.attempt) for a, b in overlaps(by_job.get(i, []))] for i in ids}
    bad = {i: pairs for i, pairs in bad.items() if pairs}
    assert not bad, f"attempts of one job overlapped (job: [(attempt, attempt)]): {bad}"


def max_open_at_once(runs: list[biz.Run]) -> int:
    """The most runs open at one moment (a run not ended counts as open to the end)."""
    events = []
    for r in runs:
        events.append((r.started, 1))
        events.append((r.ended if r.ended is not None else float("inf"), -1))
    events.sort(key=lambda e: (e[0], e[1]))  # an end before a start at the same instant
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak


def file_runs(path: Path) -> dict[int, list[dict[str, Any]]]:
    """The runs hostile_app.file_sleep recorded: per job, one dict per attempt with start/end."""
    runs: dict[tuple[int, str], dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            run = runs.setdefault((rec["job"], rec["token"]), {"job": rec["job"],
                                  "attempt": rec["attempt"], "start": None, "end": None})
            run[rec["event"]] = rec["t"]
    by_job: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for run in runs.values():
        by_job[run["job"]].append(run)
    for v in by_job.values():
        v.sort(key=lambda r: r["start"])
    return by_job


def check_outcome(app: App, job_id: int, want: Expect, error: str | None = None,
                  attempts: int | None = None) -> None:
    """The job is in the expected table with the expected reason; with `error`, every entry of
    its history names that exception class; with `attempts`, it used exactly that many."""
    job = app.get_job(job_id)
    where = "archive" if job.status == "succeeded" else "dead" if job.status == "dead" else "live"
    history = [(e.get("attempt"), e.get("error"), str(e.get("message"))[:80]) for e in job.errors]
    assert (where, job.reason if where == "dead" else None) == (want.table, want.reason), (
        f"job {job_id} ({job.task}) ended in {where} (status {job.status}, reason "
        f"{job.reason}), expected {want.table} {want.reason or ''}; history {history}"
    )
    if error is not None:
        assert history and all(e[1] == error for e in history), (
            f"job {job_id}: history should name {error} at every attempt: {history}"
        )
    if attempts is not None:
        assert job.attempts == attempts, f"job {job_id}: {job.attempts} attempts, not {attempts}"


class UnstartedSampler(threading.Thread):
    """Every 0.1 s, in one read: jobs of `queue` that are claimed (fetched or processing) while
    no run of their current token has started. Records, per (job, token), how long that lasted
    at most: a job a worker claimed (its lease renewed, nobody else allowed to take it) that it
    could not start."""

    def __init__(self, app: App, queue: str) -> None:
        super().__init__(daemon=True)
        self.app = app
        self.queue = queue
        self.stop = threading.Event()
        self.first_seen: dict[tuple[int, str], float] = {}
        self.longest: dict[tuple[int, str], float] = {}
        self.errors: list[BaseException] = []

    def read(self) -> tuple[list[tuple[int, str]], set[str]]:
        schema = getattr(self.app.backend, "schema", None)
        with self.app.transaction() as conn:
            if self.app.backend.kind == "postgresql":
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                jobs = [(r["id"], str(r["claim_token"])) for r in conn.execute(
                    f"SELECT id, claim_token FROM {schema}.jobs"
                    " WHERE status IN ('fetched', 'processing') AND queue = %s", (self.queue,))]
                tokens = {str(r["token"]) for r in conn.execute(
                    f"SELECT token FROM {schema}.chaos_runs")}
            else:
                jobs = [(r[0], r[1]) for r in conn.execute(
                    "SELECT id, claim_token FROM claimq_jobs"
                    " WHERE status IN ('fetched', 'processing') AND queue = ?", (self.queue,))]
                tokens = {r[0] for r in conn.execute("SELECT token FROM chaos_runs")}
        return jobs, tokens

    def run(self) -> None:
        while not self.stop.wait(0.1):
            try:
                jobs, tokens = self.read()
            except Exception as exc:  # noqa: BLE001 - reported by the test
                self.errors.append(exc)
                continue
            now = time.monotonic()
            for key in jobs:
                if key[1] in tokens:
                    continue
                first = self.first_seen.setdefault(key, now)
                self.longest[key] = now - first


def assert_still_working(app: App, worker: WorkerProcess, worker_id: str) -> None:
    """The worker is alive, claims and finishes a fresh job, and stops cleanly (exit 0)."""
    assert worker.alive(), f"the worker exited ({worker.proc.returncode}):\n{worker.log()[-3000:]}"
    fresh = app.enqueue("h.normal_async", {})
    wait_done(app, [worker], [fresh], timeout=20)
    job = app.get_job(fresh)
    assert (job.status, job.worker_id) == ("succeeded", worker_id), (
        f"fresh job {fresh}: {job.status} by {job.worker_id}, expected succeeded by {worker_id}"
    )
    assert worker.stop() == 0
