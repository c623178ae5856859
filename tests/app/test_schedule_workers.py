"""Four real worker processes (`claimq worker`) fire the same schedules on one clock that the
test moves a minute at a time: over 200 ticks, every tick of each schedule becomes exactly one
job, whichever worker gets there first."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from claimq import App

HERE = Path(__file__).resolve().parent
CLAIMQ = str(Path(sys.executable).with_name("claimq"))
TICKS = 200


def _set_clock(path: Path, when: datetime) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(when.isoformat())
    os.replace(tmp, path)


def _counts(app: App) -> dict[str, list[datetime]]:
    """The ticks (run_at) of each schedule's jobs, one per job id: read live first, then the
    archive, a job that moves between the two reads is seen (once) all the same."""
    jobs = {j.id: j for table in ("live", "archive", "dead")
            for j in app.list_jobs(table, limit=10_000)}  # type: ignore[arg-type]
    found: dict[str, list[datetime]] = {"tick": [], "cron": []}
    for job in jobs.values():
        for name in found:
            if f"schedule:{name}" in job.tags and job.run_at is not None:
                found[name].append(job.run_at)
    return found


def _wait(what: str, check: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def test_four_worker_processes_make_one_job_per_tick(db_url: str, tmp_path: Path) -> None:
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) + timedelta(days=1)
    clock_file = tmp_path / "clock"
    _set_clock(clock_file, start)
    App(db_url).migrate()
    env = {**os.environ, "CLAIMQ_DATABASE_URL": db_url, "CLAIMQ_TEST_CLOCK": str(clock_file),
           "PYTHONPATH": os.pathsep.join([str(HERE), *filter(None, [os.environ.get(
               "PYTHONPATH")])]), "PYTHONUNBUFFERED": "1"}
    logs = [tmp_path / f"worker{n}.log" for n in range(4)]
    procs = []
    for log in logs:
        with open(log, "wb") as out:
            procs.append(subprocess.Popen(
                [CLAIMQ, "worker", "schedule_worker_app:app", "--concurrency", "2",
                 "--poll-interval", "0.05"],
                cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True))
    app = App(db_url)
    try:
        _wait("four workers started",
              lambda: all("started" in log.read_text() for log in logs), 60)
        _wait("the declared schedules", lambda: len(app.schedules.list()) == 2)
        for n in range(1, TICKS + 1):
            _set_clock(clock_file, start + timedelta(minutes=n))
            _wait(f"tick {n}", lambda n=n: all(len(t) >= n for t in _counts(app).values()))
        time.sleep(0.2)  # time for a second job of the last tick, were one to come
        expected = [start + timedelta(minutes=n) for n in range(1, TICKS + 1)]
        for name, ticks in _counts(app).items():
            assert sorted(ticks) == expected, f"{name}: not exactly one job per tick"
        assert all(p.poll() is None for p in procs), "a worker died"
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
        app.close()
