"""The benchmark: how fast this machine and database run claimq, checked job by job.

    .venv/bin/python benchmarks/bench.py --database postgresql://…/db --mode burn --jobs 20000

A tool beside the library, not in it: claimq's package never imports it (tests/test_layering.py).

Three modes, each on a fresh schema (PostgreSQL), file (SQLite) or database (MariaDB) unless
`--reuse`:

- **burn**: bulk-enqueue N no-op jobs (timed: enqueue jobs/s) into a paused queue, start W
  worker processes of C slots each, open the queue and time the drain from the first handler
  call to the last completion (drain jobs/s).
- **sustained**: a producer enqueues at a fixed rate (optionally held back by a backlog cap)
  while the workers drain; completed jobs/s, and enqueue->start / start->finish latency
  p50/p95/p99 from the archive's timestamps (the database clock).
- **idle**: single jobs enqueued one at a time into idle workers; enqueue->start latency.

At the end the bench checks by SQL that every job it enqueued finished exactly once: the
archive holds each id once with one attempt, and no job is left live or dead.

The no-op tasks live here, on `bench_app`, so that `claimq worker bench:bench_app` (run in
benchmarks/, or with it on PYTHONPATH) runs them too; the bench's own worker processes are
started with multiprocessing's spawn method and build their App with `make_app(url)`. Other
scripts of benchmarks/ import it as `bench` (their own directory is on sys.path).
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import platform
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

import claimq
from claimq.app import App
from claimq.backends import Backend, fresh_url, open_backend, redact
from claimq.errors import InvalidInput

DEFAULT_URL = "sqlite:///claimq-bench.db"
QUEUE = "claimq-bench"
NOOP = "bench.noop"
NOOP_SYNC = "bench.noop_sync"
MODES = ("burn", "sustained", "idle")
DEFAULT_JOBS = {"burn": 20_000, "sustained": 20_000, "idle": 100}

# Per worker process, in a shared array of doubles (monotonic clock, same on every process).
_COMPLETED, _LAST_DONE, _FIRST_CALL, _STARTED, _READY, _WIDTH = range(6)
# Often enough for the progress bar; the drain's end is the worker's own time of its last
# completion, not the moment this copy saw it (a tighter loop would steal the worker's CPU).
_REPORT_EVERY = 0.05

# -- the tasks ----------------------------------------------------------------------------------

_first_call: float | None = None


async def noop() -> None:
    """The no-op job (async handler, runs on the worker's event loop)."""
    global _first_call
    if _first_call is None:
        _first_call = time.monotonic()


def noop_sync() -> None:
    """The no-op job as a sync handler (runs in the worker's handler thread pool)."""
    global _first_call
    if _first_call is None:
        _first_call = time.monotonic()


def make_app(url: str | None = None) -> App:
    """An App on `url` with the bench's tasks registered."""
    app = App(url)
    app.task(name=NOOP, queue=QUEUE)(noop)
    app.task(name=NOOP_SYNC, queue=QUEUE)(noop_sync)
    return app


bench_app = make_app()

# -- the database, for setup, checks and clean-up (plain SQL, outside the engine) ---------------


@dataclass
class Target:
    """The database a run uses: its URL (with the fresh schema, database or file) and a
    backend of its own for the bench's plain SQL (its checks run beside the App's)."""

    url: str
    fresh: bool
    _backend: Backend | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def make(cls, url: str, fresh: bool) -> Target:
        try:
            target = cls(fresh_url(url, "bench") if fresh else url, fresh)
            target.backend()  # a URL it cannot use is refused here (nothing connects yet)
        except InvalidInput as exc:
            raise click.BadParameter(str(exc), param_hint="--database") from None
        return target

    @property
    def kind(self) -> str:
        """The backend's name for its database, for the report."""
        return self.backend().kind

    def table(self, name: str) -> str:
        return self.backend().table(name)

    def backend(self) -> Backend:
        if self._backend is None:
            self._backend = open_backend(self.url)
        return self._backend

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """`sql` with `%s` for each parameter (the backend's own placeholder replaces it)."""
        backend = self.backend()
        return backend.run_sql(sql.replace("%s", backend.placeholder), params)

    def seconds(self, later: str, earlier: str) -> str:
        """SQL for `later - earlier` in seconds."""
        return self.backend().seconds_between(later, earlier)

    def notify(self, app: App) -> None:
        """Wake idle PostgreSQL workers (their LISTEN channel) after the queue opens."""
        app.backend.wake_workers([QUEUE])

    def analyze(self) -> None:
        """Bring the planner's statistics up to date (as autovacuum would, a little later)."""
        self.backend().analyze()

    def drop(self) -> None:
        if not self.fresh:
            return
        self.backend().drop_all()
        self._backend = None


# -- worker processes ---------------------------------------------------------------------------


def _worker_process(
    url: str, options: dict[str, Any], slot: int, stats: Any, results: Any
) -> None:
    """One bench worker process: a claimq Worker plus a thread that copies its counters into
    shared memory every few milliseconds. SIGTERM stops it gracefully."""
    from claimq.worker import Worker

    app = make_app(url)
    worker = Worker(app, queues=[QUEUE], **options)
    base = slot * _WIDTH
    done = threading.Event()

    def report() -> None:
        last = -1
        while not done.wait(_REPORT_EVERY):
            if worker.supervisor is None:
                continue
            counters = worker.counters
            completed = counters.get("completed")
            if completed != last:
                last = completed
                stats[base + _LAST_DONE] = counters.last_completed_at
                stats[base + _COMPLETED] = completed
            stats[base + _STARTED] = counters.get("started")
            if _first_call is not None and not stats[base + _FIRST_CALL]:
                stats[base + _FIRST_CALL] = _first_call
            stats[base + _READY] = 1.0

    reporter = threading.Thread(target=report, name="claimq-bench-report", daemon=True)
    reporter.start()
    try:
        counters = worker.run(install_signals=True)
        counters["cpu_ms"] = int(time.process_time() * 1000)  # the whole process, start to stop
    finally:
        done.set()
        reporter.join()
        app.close()
    results.put((slot, counters))


class Workers:
    """W spawned worker processes and the shared counters they report into."""

    def __init__(self, url: str, processes: int, options: dict[str, Any]) -> None:
        self.ctx = multiprocessing.get_context("spawn")
        self.stats: Any = self.ctx.Array("d", processes * _WIDTH, lock=False)
        self.results: Any = self.ctx.Queue()
        self.procs = [
            self.ctx.Process(
                target=_worker_process,
                args=(url, options, i, self.stats, self.results),
                name=f"claimq-bench-worker-{i}",
            )
            for i in range(processes)
        ]
        self.counters: dict[str, int] = {}

    def start(self, timeout: float = 60.0) -> None:
        for p in self.procs:
            p.start()
        deadline = time.monotonic() + timeout
        while not all(self._col(_READY)):
            if time.monotonic() > deadline or any(not p.is_alive() for p in self.procs):
                self.stop()
                raise click.ClickException("bench worker processes did not start")
            time.sleep(0.01)

    def _col(self, index: int) -> list[float]:
        return [self.stats[i * _WIDTH + index] for i in range(len(self.procs))]

    @property
    def completed(self) -> int:
        return int(sum(self._col(_COMPLETED)))

    @property
    def started(self) -> int:
        return int(sum(self._col(_STARTED)))

    @property
    def first_call(self) -> float | None:
        calls = [t for t in self._col(_FIRST_CALL) if t]
        return min(calls) if calls else None

    @property
    def last_done(self) -> float:
        return max(self._col(_LAST_DONE))

    def alive(self) -> bool:
        return all(p.is_alive() for p in self.procs)

    def stop(self, timeout: float = 60.0) -> dict[str, int]:
        for p in self.procs:
            if p.is_alive():
                p.terminate()  # SIGTERM: the worker's graceful stop
        deadline = time.monotonic() + timeout
        got = 0
        while got < len(self.procs) and time.monotonic() < deadline:
            try:
                _slot, counters = self.results.get(timeout=0.2)
            except Exception:  # noqa: BLE001 - queue.Empty: check whether anyone is left
                if not any(p.is_alive() for p in self.procs):
                    break
                continue
            got += 1
            for key, value in counters.items():
                self.counters[key] = self.counters.get(key, 0) + int(value)
        for p in self.procs:
            p.join(timeout=max(deadline - time.monotonic(), 0.1))
            if p.is_alive():
                p.kill()
                p.join()
        return self.counters


# -- measuring ----------------------------------------------------------------------------------


@dataclass
class Settings:
    mode: str
    jobs: int
    processes: int
    concurrency: int
    batch: int | None
    rate: float
    backlog_cap: int | None
    enqueue_batch: int
    poll_interval: float
    sync: bool
    timeout: float
    idle_gap: float
    analyze: bool = False
    keys: int | None = None  # burn: jobs spread over this many concurrency keys (limit 1 each)
    queue_rate: str | None = None  # burn: the queue's rate limit ("1000/s")
    queue_burst: int | None = None
    metrics: bool = False  # the workers serve Prometheus /metrics (on a free port)
    prefetch: int | None = None  # jobs claimed ahead of free slots, at most (None: the worker's)

    @property
    def task(self) -> str:
        return NOOP_SYNC if self.sync else NOOP

    def worker_options(self) -> dict[str, Any]:
        return {
            "concurrency": self.concurrency,
            "batch": self.batch,
            "prefetch": self.prefetch,
            "poll_interval": self.poll_interval,
            "grace": 10.0,
            **({"metrics_port": 0, "metrics_host": "127.0.0.1", "metrics_no_token": True}
               if self.metrics else {}),
        }


@dataclass
class Report:
    settings: Settings
    target: Target
    results: dict[str, Any] = field(default_factory=dict)
    ids: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        s = self.settings
        return {
            "claimq_version": claimq.__version__,
            "mode": s.mode,
            "backend": self.target.kind,
            "database": redact(self.target.url),
            "jobs": s.jobs,
            "processes": s.processes,
            "concurrency": s.concurrency,
            "batch": s.batch or s.concurrency,
            "prefetch": "default" if s.prefetch is None else s.prefetch,
            "handler": "sync" if s.sync else "async",
            "enqueue_batch": s.enqueue_batch,
            "poll_interval": s.poll_interval,
            "analyze_after_enqueue": s.analyze,
            "metrics_served": s.metrics,
            **({"rate": s.rate, "backlog_cap": s.backlog_cap} if s.mode == "sustained" else {}),
            **self.results,
            "python": platform.python_version(),
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
            "command": " ".join(sys.argv),
        }


def percentiles(values: Sequence[float]) -> dict[str, float | None]:
    """p50/p95/p99/max (linear interpolation between closest ranks), in the values' unit."""
    ordered = sorted(values)
    if not ordered:
        return {"p50": None, "p95": None, "p99": None, "max": None}

    def at(q: float) -> float:
        pos = q * (len(ordered) - 1)
        lo, hi = math.floor(pos), math.ceil(pos)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)

    return {"p50": at(0.50), "p95": at(0.95), "p99": at(0.99), "max": ordered[-1]}


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


class Bench:
    def __init__(self, settings: Settings, target: Target, console: Console, show: bool) -> None:
        self.s = settings
        self.target = target
        self.console = console
        self.show = show
        self.report = Report(settings, target)

    def progress(self) -> Progress:
        return Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            console=self.console,
            disable=not self.show,
            transient=False,
        )

    def run(self) -> Report:
        app = make_app(self.target.url)
        try:
            app.migrate()
            {"burn": self.burn, "sustained": self.sustained, "idle": self.idle}[self.s.mode](app)
        finally:
            app.close()
        self.report.results["verify"] = self.verify()
        return self.report

    # -- burn-down -----------------------------------------------------------------------------

    def _enqueue(self, app: App, count: int, progress: Progress | None = None) -> list[int]:
        spec: dict[str, Any] = {"task": self.s.task, "queue": QUEUE}
        keys = self.s.keys
        ids: list[int] = []
        task = None if progress is None else progress.add_task("enqueue", total=count, rate="")
        started = time.perf_counter()
        for offset in range(0, count, self.s.enqueue_batch):
            n = min(self.s.enqueue_batch, count - offset)
            batch = [spec] * n if keys is None else [
                {**spec, "concurrency_key": f"k{(offset + i) % keys}", "concurrency_limit": 1}
                for i in range(n)]
            ids.extend(app.enqueue_many(batch))
            if progress is not None and task is not None:
                elapsed = time.perf_counter() - started
                progress.update(task, completed=len(ids),
                                rate=f"{_rate(len(ids), elapsed):,.0f} jobs/s")
        return ids

    def burn(self, app: App) -> None:
        s = self.s
        app.configure_queue(QUEUE, paused=True)  # the workers all start before any job runs
        if s.queue_rate is not None:
            app.configure_queue(QUEUE, rate_limit=s.queue_rate, rate_burst=s.queue_burst)
        with self.progress() as progress:
            t0 = time.perf_counter()
            self.report.ids = ids = self._enqueue(app, s.jobs, progress)
            enqueue_seconds = time.perf_counter() - t0
            if s.analyze:
                self.target.analyze()
            workers = Workers(self.target.url, s.processes, s.worker_options())
            workers.start()
            try:
                opened = time.monotonic()
                app.resume(QUEUE)
                self.target.notify(app)
                drain = progress.add_task("drain", total=len(ids), rate="")
                self._wait(workers, len(ids), progress, drain)
            finally:
                counters = workers.stop()
        first, last = workers.first_call or opened, workers.last_done
        self.report.results.update(
            enqueue={"jobs": len(ids), "seconds": enqueue_seconds,
                     "jobs_per_s": _rate(len(ids), enqueue_seconds)},
            drain={"jobs": len(ids), "seconds": last - first,
                   "jobs_per_s": _rate(len(ids), last - first),
                   "open_to_first_start_s": first - opened},
            counters=counters,
        )

    def _wait(self, workers: Workers, total: int, progress: Progress, task: Any,
              producer: Callable[[], None] | None = None) -> None:
        deadline = time.monotonic() + self.s.timeout
        shown = 0.0
        while True:
            if producer is not None:
                producer()
            done = workers.completed
            now = time.monotonic()
            if done >= total and producer is None:
                break
            if now - shown > 0.1:
                shown = now
                first = workers.first_call
                rate = "" if not first or now <= first else f"{done / (now - first):,.0f} jobs/s"
                progress.update(task, completed=done, rate=rate)
            if now > deadline:
                raise click.ClickException(
                    f"timed out after {self.s.timeout:.0f}s with {done} of {total} jobs done"
                )
            if not workers.alive():
                raise click.ClickException("a bench worker process died")
            time.sleep(0.01)
        progress.update(task, completed=workers.completed)

    # -- sustained -----------------------------------------------------------------------------

    def sustained(self, app: App) -> None:
        s = self.s
        spec = {"task": s.task, "queue": QUEUE}
        ids = self.report.ids
        cap = s.backlog_cap
        workers = Workers(self.target.url, s.processes, s.worker_options())
        workers.start()
        state = {"held": 0.0}
        try:
            with self.progress() as progress:
                produced = progress.add_task("enqueue", total=s.jobs, rate="")
                drained = progress.add_task("complete", total=s.jobs, rate="")
                begin = time.monotonic()

                def produce() -> None:
                    if len(ids) >= s.jobs:
                        return
                    now = time.monotonic()
                    due = s.jobs if s.rate <= 0 else min(int((now - begin) * s.rate), s.jobs)
                    want = due - len(ids)
                    if cap is not None:
                        room = cap - (len(ids) - workers.completed)
                        if room < want:
                            state["held"] += 1
                        want = min(want, room)
                    want = min(want, s.enqueue_batch)
                    if want > 0:
                        ids.extend(app.enqueue_many([spec] * want))
                        progress.update(produced, completed=len(ids),
                                        rate=f"{_rate(len(ids), now - begin):,.0f} jobs/s")

                def until_done() -> None:
                    produce()
                    if len(ids) >= s.jobs and workers.completed >= s.jobs:
                        raise _Done

                try:
                    self._wait(workers, s.jobs, progress, drained, until_done)
                except _Done:
                    progress.update(drained, completed=workers.completed)
                end_produce = time.monotonic()
        finally:
            counters = workers.stop()
        first, last = workers.first_call or begin, workers.last_done
        self.report.results.update(
            produced={"jobs": len(ids), "seconds": end_produce - begin,
                      "jobs_per_s_target": s.rate, "held_by_backlog_cap": int(state["held"])},
            completed={"jobs": len(ids), "seconds": last - first,
                       "jobs_per_s": _rate(len(ids), last - first)},
            latency_ms=self.latencies(),
            counters=counters,
        )

    # -- idle latency --------------------------------------------------------------------------

    def idle(self, app: App) -> None:
        s = self.s
        ids = self.report.ids
        workers = Workers(self.target.url, s.processes, s.worker_options())
        workers.start()
        try:
            time.sleep(max(s.poll_interval, 0.5))  # let the fetchers back off: really idle
            with self.progress() as progress:
                task = progress.add_task("probe", total=s.jobs, rate="")
                deadline = time.monotonic() + s.timeout
                for n in range(s.jobs):
                    ids.append(app.enqueue(s.task, queue=QUEUE))
                    while workers.completed <= n:
                        if time.monotonic() > deadline or not workers.alive():
                            raise click.ClickException(f"probe {n + 1} did not finish")
                        time.sleep(0.0005)
                    progress.update(task, completed=n + 1, rate="")
                    time.sleep(s.idle_gap)
        finally:
            counters = workers.stop()
        self.report.results.update(latency_ms=self.latencies(), counters=counters)

    # -- checks and latencies from the tables --------------------------------------------------

    def _archived(self, columns: str) -> list[tuple[Any, ...]]:
        ids = self.report.ids
        if not ids:
            return []
        return self.target.rows(
            f"SELECT id, {columns} FROM {self.target.table('archive')}"
            " WHERE id BETWEEN %s AND %s",
            (min(ids), max(ids)),
        )

    def latencies(self) -> dict[str, Any]:
        t = self.target
        rows = self._archived(
            f"{t.seconds('started_at', 'run_at')}, {t.seconds('finished_at', 'started_at')}"
        )
        mine = set(self.report.ids)
        rows = [r for r in rows if r[0] in mine]
        return {
            "enqueue_to_start": {k: _ms(v) for k, v in percentiles([r[1] for r in rows]).items()},
            "start_to_finish": {k: _ms(v) for k, v in percentiles([r[2] for r in rows]).items()},
            "clock": "database",
        }

    def verify(self) -> dict[str, Any]:
        """Every enqueued job finished exactly once: in the archive once, with one attempt;
        none live, none dead."""
        ids = self.report.ids
        mine = set(ids)
        if not ids:
            return {"ok": True, "enqueued": 0}
        lo, hi = min(ids), max(ids)
        archived = [r for r in self._archived("attempts") if r[0] in mine]
        archived_ids = [r[0] for r in archived]
        count = "SELECT id FROM {} WHERE id BETWEEN %s AND %s"
        live = [r for r in self.target.rows(count.format(self.target.table("jobs")), (lo, hi))
                if r[0] in mine]
        dead = [r for r in self.target.rows(count.format(self.target.table("dead")), (lo, hi))
                if r[0] in mine]
        attempts = [r[1] for r in archived]
        result = {
            "enqueued": len(ids),
            "enqueued_distinct": len(mine),
            "archived": len(archived_ids),
            "archived_distinct": len(set(archived_ids)),
            "live": len(live),
            "dead": len(dead),
            "max_attempts": max(attempts, default=0),
        }
        result["ok"] = (
            len(mine) == len(ids) == len(archived_ids) == len(set(archived_ids))
            and set(archived_ids) == mine and not live and not dead
            and all(a == 1 for a in attempts)
        )
        return result


class _Done(Exception):
    pass


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000.0


# -- output -------------------------------------------------------------------------------------


def summary_table(data: dict[str, Any]) -> Table:
    table = Table(title=f"claimq benchmark: {data['mode']} on {data['backend']}", show_header=True)
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("jobs", f"{data['jobs']:,}")
    table.add_row(
        "workers",
        f"{data['processes']} process(es) x {data['concurrency']} slots, "
        f"claim batch {data['batch']}, prefetch {data.get('prefetch', 'default')}, "
        f"{data['handler']} handler",
    )
    for key, label in (("enqueue", "bulk enqueue"), ("drain", "drain"),
                       ("completed", "completed (sustained)")):
        if key in data:
            part = data[key]
            table.add_row(label, f"{part['jobs_per_s']:,.0f} jobs/s  ({part['seconds']:.2f} s)")
    if "produced" in data:
        p = data["produced"]
        target = (f"target {p['jobs_per_s_target']:,.0f} jobs/s" if p["jobs_per_s_target"]
                  else f"as fast as backlog cap {data['backlog_cap']:,} allows")
        table.add_row("producer", f"{p['jobs']:,} jobs in {p['seconds']:.2f} s ({target})")
    if "latency_ms" in data:
        for key, label in (("enqueue_to_start", "enqueue->start"),
                           ("start_to_finish", "start->finish")):
            pct = data["latency_ms"][key]
            if pct["p50"] is not None:
                table.add_row(
                    f"{label} ms",
                    f"p50 {pct['p50']:.1f}  p95 {pct['p95']:.1f}  p99 {pct['p99']:.1f}  "
                    f"max {pct['max']:.1f}",
                )
    counters = data.get("counters") or {}
    if counters.get("claims"):
        table.add_row("claims", f"{counters['claims']:,} "
                      f"({counters.get('started', 0) / counters['claims']:.1f} jobs per claim)")
    if counters.get("cpu_ms") and counters.get("started"):
        table.add_row("worker CPU", f"{counters['cpu_ms'] / 1000:.2f} s "
                      f"({1000 * counters['cpu_ms'] / counters['started']:.0f} µs per job, "
                      "process start to stop)")
    v = data["verify"]
    table.add_row(
        "exactly once",
        ("[green]ok[/]" if v["ok"] else "[red]FAILED[/]")
        + f"  archived {v.get('archived', 0):,}/{v['enqueued']:,}, live {v.get('live', 0)}, "
        f"dead {v.get('dead', 0)}, max attempts {v.get('max_attempts', 0)}",
    )
    return table


@click.command("bench")
@click.option("--database", "database", default=None, metavar="URL",
              help="Database URL (default $CLAIMQ_DATABASE_URL, else sqlite:///claimq-bench.db).")
@click.option("--mode", type=click.Choice(MODES), default="burn", show_default=True,
              help="burn: enqueue then drain; sustained: producer at a rate; idle: latency probe.")
@click.option("--jobs", type=click.IntRange(1), default=None,
              help="Jobs to run (default 20,000; idle: 100 probes).")
@click.option("--processes", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Worker processes.")
@click.option("--concurrency", type=click.IntRange(1, 10_000), default=20, show_default=True,
              help="Slots per worker process.")
@click.option("--batch", type=click.IntRange(1, 10_000), default=None,
              help="Largest claim batch (default: the concurrency).")
@click.option("--prefetch", type=click.IntRange(0, 10_000), default=None,
              help="Jobs claimed ahead of free slots, at most (default: the concurrency; "
                   "none on SQLite).")
@click.option("--rate", type=click.FloatRange(0), default=2000.0, show_default=True,
              help="Sustained: jobs enqueued per second (0: as fast as the backlog cap allows).")
@click.option("--backlog-cap", type=click.IntRange(1), default=None,
              help="Sustained: never let more than this many jobs wait (default none; 1,000 "
                   "with --rate 0).")
@click.option("--enqueue-batch", type=click.IntRange(1, 100_000), default=5000,
              show_default=True, help="Jobs per enqueue_many call.")
@click.option("--poll-interval", type=click.FloatRange(0.001), default=1.0, show_default=True,
              help="Workers' longest idle poll (PostgreSQL also wakes them by NOTIFY).")
@click.option("--idle-gap", type=click.FloatRange(0), default=0.1, show_default=True,
              help="Idle: seconds between one probe's completion and the next enqueue.")
@click.option("--sync", "sync", is_flag=True, help="Use a sync no-op handler (thread pool).")
@click.option("--timeout", type=click.FloatRange(1), default=600.0, show_default=True,
              help="Give up when the jobs are not done after this many seconds.")
@click.option("--analyze", is_flag=True,
              help="Burn: ANALYZE the tables after the enqueue (not timed), before the drain.")
@click.option("--reuse", is_flag=True,
              help="Use the URL's schema/file as is (default: a fresh one, removed after).")
@click.option("--keep", is_flag=True, help="Keep the fresh schema/file after the run.")
@click.option("--keys", type=click.IntRange(1), default=None,
              help="Burn: spread the jobs over N concurrency keys, at most one running per key.")
@click.option("--queue-rate", default=None, metavar="RATE",
              help="Burn: give the queue this rate limit (e.g. 1000/s).")
@click.option("--queue-burst", type=click.IntRange(1), default=None,
              help="Burn: with --queue-rate, its burst (default: the rate's count).")
@click.option("--metrics", is_flag=True,
              help="Workers serve Prometheus /metrics while they run (the metrics extra).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout.")
def command(
    database: str | None, mode: str, jobs: int | None, processes: int, concurrency: int,
    batch: int | None, prefetch: int | None, rate: float, backlog_cap: int | None,
    enqueue_batch: int, poll_interval: float, idle_gap: float, sync: bool, timeout: float,
    analyze: bool, reuse: bool, keep: bool, keys: int | None, queue_rate: str | None,
    queue_burst: int | None, metrics: bool, as_json: bool,
) -> None:
    """Benchmark claimq on a database: bulk enqueue and drain (burn), a steady producer
    (sustained) or idle latency (idle); then check that every job ran exactly once."""
    url = database or os.environ.get("CLAIMQ_DATABASE_URL") or DEFAULT_URL
    if mode == "sustained" and rate <= 0 and backlog_cap is None:
        backlog_cap = 1000
    settings = Settings(
        mode=mode, jobs=jobs or DEFAULT_JOBS[mode], processes=processes,
        concurrency=concurrency, batch=batch, prefetch=prefetch, rate=rate,
        backlog_cap=backlog_cap,
        enqueue_batch=enqueue_batch, poll_interval=poll_interval, sync=sync, timeout=timeout,
        idle_gap=idle_gap, analyze=analyze, keys=keys, queue_rate=queue_rate,
        queue_burst=queue_burst, metrics=metrics,
    )
    target = Target.make(url, fresh=not reuse)
    console = Console(stderr=True)
    try:
        report = Bench(settings, target, console, show=console.is_terminal or not as_json).run()
    finally:
        if not keep:
            try:
                target.drop()
            except Exception as exc:  # noqa: BLE001 - report, but keep the real error
                console.print(f"[yellow]could not remove the bench database: {exc}[/]")
    data = report.as_dict()
    if as_json:
        click.echo(json.dumps(data, indent=2, default=str))
    else:
        Console().print(summary_table(data))
    if not data["verify"]["ok"]:
        raise SystemExit(1)


__all__ = ["bench_app", "command", "make_app", "noop", "noop_sync", "percentiles"]

if __name__ == "__main__":
    # The command of the module `bench` (this file's directory is on sys.path), not of
    # `__main__`: the spawned worker processes import it by that name.
    from bench import command as _command

    _command()
