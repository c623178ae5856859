"""Real worker processes for the chaos tests, waits with timeouts, and the invariant checks
that every scenario runs at its end."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import chaos_biz as biz
from polling import ALL, archived, dead, finished_ids, live, wait_until  # noqa: F401 - the tests import them from here
from procfs import child_pids, cmdline, pid_alive

from claimq import App

HERE = Path(__file__).resolve().parent
T = TypeVar("T")
SOAK = os.environ.get("CLAIMQ_CHAOS_SOAK") == "1"


def wait_finished(app: App, ids: Iterable[int], timeout: float = 30.0) -> None:
    """Until every job of `ids` is archived or dead, reading through database outages."""
    from pgcluster import through_outage

    wanted = set(ids)

    def done() -> bool:
        return wanted <= through_outage(lambda: finished_ids(app))

    try:
        wait_until(done, timeout, "jobs to reach archive or dead letters", interval=0.1)
    except AssertionError:
        missing = sorted(wanted - finished_ids(app))
        states = [(j.id, j.status, j.attempts, j.worker_id) for j in live(app)][:20]
        raise AssertionError(
            f"{len(missing)} job(s) not finished after {timeout}s, e.g. {missing[:10]}; "
            f"live: {states}"
        ) from None


# -- worker processes ---------------------------------------------------------------------------


class WorkerProcess:
    """One `python -c "import chaos_app; chaos_app.main()"` process, in its own process group.

    `prefix` runs it under another command (e.g. `ip netns exec NAME`)."""

    def __init__(
        self,
        url: str,
        log_path: Path,
        env: dict[str, str] | None = None,
        prefix: Sequence[str] = (),
        **options: Any,
    ) -> None:
        self.url = url
        self.log_path = log_path
        full_env = {
            **os.environ,
            "CLAIMQ_DATABASE_URL": url,
            "CHAOS_WORKER": json.dumps(options),
            "PYTHONPATH": os.pathsep.join(
                [str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])]
            ),
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        self._log = open(log_path, "ab")  # noqa: SIM115 - closed in kill()/wait()
        self.proc = subprocess.Popen(
            [*prefix, sys.executable, "-c", "import chaos_app; chaos_app.main()"],
            cwd=HERE,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: cleanup reaches its children too
        )
        self.pid = self.proc.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_log(self, pattern: str, timeout: float = 20.0, count: int = 1) -> list[re.Match[str]]:
        rx = re.compile(pattern)

        def found() -> list[re.Match[str]] | None:
            matches = list(rx.finditer(self.log()))
            if len(matches) >= count:
                return matches
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"worker exited ({self.proc.returncode}) before logging {pattern!r}:\n"
                    + self.log()[-4000:]
                )
            return None

        try:
            return wait_until(found, timeout, f"log line {pattern!r} x{count}")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- log tail ---\n{self.log()[-3000:]}") from None

    def wait_started(self, timeout: float = 30.0) -> str:
        """Wait for the worker's start line; returns its worker id."""
        return self.wait_log(r"worker (\S+) started:", timeout)[0].group(1)

    def worker_ids(self) -> list[str]:
        return re.findall(r"worker (\S+) started:", self.log())

    def counters(self) -> dict[str, int]:
        lines = re.findall(r"worker \S+ stopped: (\{.*\})", self.log())
        assert lines, "the worker logged no final counters line:\n" + self.log()[-4000:]
        return ast.literal_eval(lines[-1])  # type: ignore[no-any-return]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float) -> int:
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"worker did not exit within {timeout}s:\n" + self.log()[-4000:]
            ) from None
        self._log.close()
        return rc

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM (graceful) and wait for the exit code."""
        if self.proc.poll() is None:
            os.kill(self.pid, signal.SIGCONT)
        self.signal(signal.SIGTERM)
        return self.wait(timeout)

    def sigkill(self) -> None:
        """SIGKILL this process only (not its group) and reap it."""
        self.proc.kill()
        self.proc.wait(10)

    def kill(self) -> None:
        """Kill the process and its whole process group (children of a supervisor too)."""
        for sig in (signal.SIGCONT, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)
        self._log.close()


def worker_children(supervisor_pid: int) -> list[int]:
    """The worker processes of a `run_worker(processes=N)` supervisor (spawned children)."""
    return [
        p for p in child_pids(supervisor_pid)
        if "spawn_main" in cmdline(p) and "resource_tracker" not in cmdline(p) and pid_alive(p)
    ]


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
            elif self.app.backend.kind == "mysql":
                cur = conn.cursor()
                cur.execute("SELECT job_id, token, pid FROM chaos_runs WHERE ended IS NULL")
                runs = [tuple(r) for r in cur.fetchall()]
                cur.execute("SELECT id, claim_token, lease_until > UTC_TIMESTAMP(6)"
                            " FROM claimq_jobs WHERE status = 'processing'")
                jobs = {r[0]: (r[1], bool(r[2])) for r in cur.fetchall()}
            else:
                runs = [tuple(r) for r in conn.execute(
                    "SELECT job_id, token, pid FROM chaos_runs WHERE ended IS NULL")]
                now = self.app.backend.now().timestamp()
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


# -- invariants ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    """Where a job must end: "archive", or "dead" with a reason (None: any reason)."""

    table: str = "archive"
    reason: str | None = None


ARCHIVE = Expect()


def check_invariants(
    app: App,
    expected: dict[int, Expect],
    *,
    effects_for_archived: bool = True,
    allow_invalid_start: bool = False,
) -> dict[str, Any]:
    """The four invariants of issue 4 on the final state; returns a summary for the report.

    - no job lost: every expected job is in archive or dead letters (as expected), none live;
    - no two live owners: every handler run had its own claim token; a run began only with the
      job's current token and a valid lease (unless allow_invalid_start: then such a run never
      produced the outcome that stands); two runs of one job that overlapped in time could not
      both hold the lease (the later one's token was current at its start, so the earlier one's
      was not), and the earlier one's lease loss is in the job's history;
    - no stale write: the outcome that stands comes from the last run (the archive's worker and
      attempt are those of the run that completed it), and no run whose token was replaced
      recorded a completion;
    - duplicates harmless and visible: the business table holds each archived job's key exactly
      once; every run but the one that finished the job left an entry in the job's history.
    """
    jobs = {j.id: j for j in archived(app)} | {j.id: j for j in dead(app)}
    still_live = [j for j in live(app) if j.id in expected]
    assert not still_live, f"jobs still live: {[(j.id, j.status) for j in still_live][:20]}"
    missing = sorted(set(expected) - set(jobs))
    assert not missing, f"jobs lost (in no table): {missing[:20]}"
    for job_id, want in expected.items():
        job = jobs[job_id]
        where = "archive" if job.status == "succeeded" else "dead"
        assert where == want.table, (
            f"job {job_id} ended in {where} ({job.reason}), expected {want.table}: "
            f"errors={[e.get('error') for e in job.errors]}"
        )
        if want.reason is not None:
            assert job.reason == want.reason, f"job {job_id}: reason {job.reason} != {want.reason}"

    all_runs = biz.runs(app)
    tokens = [r.token for r in all_runs]
    assert len(tokens) == len(set(tokens)), "two handler runs had the same claim token"
    by_job: dict[int, list[biz.Run]] = defaultdict(list)
    for r in all_runs:
        by_job[r.job_id].append(r)

    effects = {e.key: e for e in biz.effects(app)}
    overlaps = 0
    extra_runs = 0
    for job_id in expected:
        job = jobs[job_id]
        runs = sorted(by_job.get(job_id, []), key=lambda r: r.started)
        history = {e.get("attempt") for e in job.errors}
        if not allow_invalid_start:
            bad = [r for r in runs if not r.valid_at_start]
            assert not bad, f"job {job_id}: run(s) began without the current token/lease: {bad}"
        completed = [r for r in runs if r.outcome == "completed"]
        assert len(completed) <= 1, f"job {job_id} was completed by two runs: {completed}"
        if job.status == "succeeded":
            assert job.attempts >= 1
            finisher = [r for r in runs if r.attempt == job.attempts and r.worker == job.worker_id]
            if runs:
                assert finisher, (
                    f"job {job_id}: archived by {job.worker_id} attempt {job.attempts}, "
                    f"which no run recorded: {runs}"
                )
                assert finisher[-1].valid_at_start, f"job {job_id}: finished by a stale run"
                assert len(runs) <= job.attempts, (
                    f"job {job_id}: {len(runs)} runs but {job.attempts} attempts"
                )
            if completed:
                assert completed[0] in finisher, (
                    f"job {job_id}: completed by {completed[0]} but archived as "
                    f"{job.worker_id} attempt {job.attempts}"
                )
            if effects_for_archived and runs:
                key = job.effective_key
                assert key in effects, f"job {job_id}: no business effect for key {key}"
                assert effects[key].job_id == job_id
            others = [r for r in runs if r not in finisher]
        else:
            others = runs
        for r in others:
            extra_runs += 1
            assert r.attempt in history, (
                f"job {job_id}: run {r} (attempt {r.attempt}) left no entry in the history "
                f"{[(e.get('attempt'), e.get('error')) for e in job.errors]}"
            )
        for a, b in zip(runs, runs[1:], strict=False):
            if a.ended is None or a.ended > b.started:
                overlaps += a.ended is not None
                # b's token was current at b's start (checked in b's own transaction) and
                # tokens are unique, so a no longer held the lease; its loss is in the history.
                if b.valid_at_start:
                    assert a.outcome != "completed", f"job {job_id}: {a} completed after {b}"
                    assert a.attempt in history, (
                        f"job {job_id}: run {a} lost its lease without a history entry"
                    )
    keys = [e.key for e in effects.values()]
    assert len(keys) == len(set(keys))
    return {"jobs": len(expected), "runs": len(all_runs), "extra_runs": extra_runs,
            "overlapping_runs": overlaps, "effects": len(effects)}


def start_outage_scenario(
    app: App, spawn: Callable[..., WorkerProcess], options: dict[str, Any]
) -> tuple[list[WorkerProcess], Feeder, Sampler]:
    """The start of a database-outage scenario: claimq's and the business tables, two started
    workers, and a feeder and a sampler running."""
    app.migrate()
    biz.create_tables(app)
    workers = [spawn(app.url, **options) for _ in range(2)]
    for w in workers:
        w.wait_started()
    feeder = Feeder(app, slow=0.5, every=0.2)
    sampler = Sampler(app)
    feeder.start()
    sampler.start()
    return workers, feeder, sampler


def end_run(app: App, ids: list[int], sampler: Sampler, workers: Sequence[Any], *,
            died: str, timeout: float = 90) -> None:
    """Every job of `ids` finished, the sampler stopped, and each worker (or host) still alive
    (else: `died`, with its log) and stopped cleanly."""
    wait_finished(app, ids, timeout=timeout)
    sampler.stop.set()
    sampler.join(10)
    for w in workers:
        assert w.alive(), f"{died}:\n" + w.log()[-3000:]
        assert w.stop(timeout=30) == 0


def finish_outage_scenario(
    app: App, ids: list[int], sampler: Sampler, workers: Sequence[WorkerProcess]
) -> tuple[dict[str, Any], list[Any]]:
    """The end of a database-outage scenario: every job of `ids` archived, the workers alive
    and stopped cleanly, the invariants held (a run may have begun on a lease the outage took),
    some job reaped (work was in flight through the outage), no two valid owners sampled, the
    outage and the recovery in the workers' logs. Returns the summary and the reaped jobs."""
    end_run(app, ids, sampler, workers, died="a worker died of the outage")
    summary = check_invariants(app, dict.fromkeys(ids, ARCHIVE), allow_invalid_start=True)
    # The outage outlasted the leases in flight: the reaper recovered some jobs.
    reaped = [j for j in map(app.get_job, ids)
              if any(e["error"] == "LeaseExpired" for e in j.errors)]
    assert reaped, "no job was in flight through the outage: the scenario proved nothing"
    assert sampler.samples > 20, (sampler.samples, sampler.errors[-3:])
    assert not sampler.violations, sampler.violations[:5]
    logs = "".join(w.log() for w in workers)
    assert "database unavailable" in logs and "database reachable again" in logs
    return summary, reaped


def drop_schema(base_url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def job_row(app: App, job_id: int) -> tuple[Any, ...]:
    """Everything stored about a job, wherever it lives (to show a stale write changed nothing)."""
    j = app.get_job(job_id)
    return (j.status, j.attempts, j.worker_id, j.claim_token, j.lease_until, j.finished_at,
            j.result, j.reason, json.dumps(j.errors, sort_keys=True, default=str), j.payload)


class Feeder(threading.Thread):
    """Enqueues batches of 10 `chaos.work` jobs (atomic and separate effects; every fifth one
    sleeps `slow` s) every `every` s until stopped, through outages; `ids` are the acknowledged
    ones."""

    def __init__(self, app: App, *, slow: float, every: float) -> None:
        super().__init__(daemon=True)
        self.app, self.slow, self.every = app, slow, every
        self.ids: list[int] = []
        self.feeding = threading.Event()
        self.feeding.set()

    def run(self) -> None:
        from pgcluster import through_outage

        n = 0
        while self.feeding.is_set():
            # Keyed: a batch whose commit landed but whose answer the outage took is sent again
            # by through_outage, and must come back as the same jobs (else its first ids are
            # never acknowledged, and their effects count as extra).
            batch = [{"task": "chaos.work", "idempotency_key": f"feed-{n + i}",
                      "payload": {"n": n + i, "mode": ("atomic", "separate")[i % 2],
                                  "sleep": self.slow if i % 5 == 0 else 0.0}}
                     for i in range(10)]
            self.ids.extend(through_outage(lambda b=batch: self.app.enqueue_many(b)))
            n += 10
            time.sleep(self.every)

    def stop(self) -> None:
        self.feeding.clear()
        self.join(60)


def max_overlap(intervals: list[tuple[float, float]]) -> int:
    """The most intervals open at one moment."""
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    depth = best = 0
    for _, step in events:
        depth += step
        best = max(best, depth)
    return best
