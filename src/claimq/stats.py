"""What `App.stats()` returns (and `App.workers()`: WorkerInfo): per queue and per task, the
live depths, the oldest due job's age, dead letters by reason, and what finished within a recent
window (throughput, latency percentiles, attempts per job). Plain frozen dataclasses: a
dashboard, a metrics exporter or a script reads them; `dataclasses.asdict()` makes them
JSON-ready (datetimes aside)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from claimq.backends.base import (
    BreakerInfo,
    LatencyRow,
    Limited,
    LiveRow,
    RecentRow,
    StatsRows,
    ThrottledKey,
    WorkerInfo,
)

DEFAULT_WINDOW = 300.0  # seconds of finished jobs the rates and percentiles look at
# seconds: the least time rates are divided by (a first second's few jobs make no rate a minute)
MIN_MEASURED = 10.0


@dataclass(frozen=True, slots=True)
class Latency:
    """Seconds at the 50th, 95th and 99th percentile, over `count` jobs (None without any)."""

    count: int = 0
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None


@dataclass(frozen=True, slots=True)
class TaskStats:
    """The figures of one task (over every queue it runs in); QueueStats has the same ones.

    pending: due now; scheduled: due later; running: fetched or processing; past_lease: running
    jobs whose lease ran out (their worker stalled or died: the reaper takes them back);
    oldest_due_age: seconds the oldest due job has waited (a single stuck job shows here even
    when the depth looks fine); held: workflow jobs waiting for their dependencies;
    dead_by_reason: dead letters held now. Over the last `window`
    seconds: completed_per_minute (archived), failed_per_minute (dead-lettered, cancels not
    counted), attempts_per_job (mean over the jobs that finished), wait (due -> start of the
    attempt that completed) and run (start -> finish) percentiles of the completed jobs."""

    name: str
    pending: int = 0
    scheduled: int = 0
    running: int = 0
    past_lease: int = 0
    oldest_due_age: float | None = None
    dead_by_reason: dict[str, int] = field(default_factory=dict)
    held: int = 0
    completed_per_minute: float = 0.0  # over Stats.measured seconds, not always the window
    failed_per_minute: float = 0.0
    attempts_per_job: float | None = None
    wait: Latency = field(default_factory=Latency)
    run: Latency = field(default_factory=Latency)

    @property
    def dead(self) -> int:
        return sum(self.dead_by_reason.values())


@dataclass(frozen=True, slots=True)
class QueueStats(TaskStats):
    """A queue's figures (see TaskStats) and its settings."""

    paused: bool = False
    active: bool = True
    max_workers: int | None = None
    throttled_until: datetime | None = None  # a handler raised Throttled: no claims until then


@dataclass(frozen=True, slots=True)
class Stats:
    """One reading, at the database's time `at`, with latency and attempts over the last
    `window` seconds and rates over the last `measured` seconds: the window, unless the
    database holds nothing that finished before it (a new database, or one just started):
    then the time since the first of the jobs that finished within it was created (at least
    MIN_MEASURED), so that a queue that ran for 30 s does not show a tenth of its rate."""

    at: datetime
    window: float
    queues: list[QueueStats]
    tasks: list[TaskStats]
    breakers: list[BreakerInfo] = field(default_factory=list)  # circuit breakers, by queue
    throttled_keys: list[ThrottledKey] = field(default_factory=list)  # paused rate keys
    measured: float | None = None  # seconds the rates are over (None: the window)

    def queue(self, name: str) -> QueueStats | None:
        return next((q for q in self.queues if q.name == name), None)

    def task(self, name: str) -> TaskStats | None:
        return next((t for t in self.tasks if t.name == name), None)


class _Sums:
    __slots__ = ("pending", "scheduled", "running", "past_lease", "oldest", "dead",
                 "completed", "failed", "finished", "attempts", "held")

    def __init__(self) -> None:
        self.pending = self.scheduled = self.running = self.past_lease = self.held = 0
        self.completed = self.failed = self.finished = self.attempts = 0
        self.oldest: float | None = None
        self.dead: dict[str, int] = {}

    def add_live(self, row: LiveRow) -> None:
        self.pending += row.pending
        self.scheduled += row.scheduled
        self.running += row.running
        self.past_lease += row.past_lease
        self.held += row.held
        if row.oldest_due_age is not None:
            self.oldest = max(self.oldest or 0.0, row.oldest_due_age)

    def add_recent(self, row: RecentRow) -> None:
        self.completed += row.completed
        self.failed += row.failed
        self.finished += row.finished
        self.attempts += row.attempts


def _latency(row: LatencyRow | None, which: str) -> Latency:
    if row is None:
        return Latency()
    values = row.wait if which == "wait" else row.run
    if values is None:
        return Latency(row.jobs)
    return Latency(row.jobs, *values)


def measured_seconds(rows: StatsRows, window: float) -> float:
    """The seconds the rates are over (see Stats): the window, or less when nothing finished
    before it: since the first of the jobs that finished within it was created."""
    firsts = [r.first_created for r in rows.recent if r.first_created is not None]
    if rows.covered or not firsts:
        return window
    since = (rows.now - min(firsts)).total_seconds()
    return min(window, max(since, MIN_MEASURED))


def _figures(
    name: str, sums: _Sums, measured: float, latency: dict[str, LatencyRow]
) -> dict[str, object]:
    minutes = measured / 60.0
    return {
        "name": name, "pending": sums.pending, "scheduled": sums.scheduled,
        "running": sums.running, "past_lease": sums.past_lease,
        "oldest_due_age": sums.oldest, "dead_by_reason": dict(sorted(sums.dead.items())),
        "held": sums.held,
        "completed_per_minute": sums.completed / minutes,
        "failed_per_minute": sums.failed / minutes,
        "attempts_per_job": sums.attempts / sums.finished if sums.finished else None,
        "wait": _latency(latency.get(name), "wait"), "run": _latency(latency.get(name), "run"),
    }


def build(rows: StatsRows, window: float) -> Stats:
    """Stats from the backend's rows (grouped by queue and task): summed per queue and per
    task; the percentiles come per queue and per task from the backend itself."""
    by_queue: dict[str, _Sums] = {q.name: _Sums() for q in rows.queues}
    by_task: dict[str, _Sums] = {}

    def both(queue: str, task: str) -> Iterable[_Sums]:
        yield by_queue.setdefault(queue, _Sums())
        yield by_task.setdefault(task, _Sums())

    for live in rows.live:
        for s in both(live.queue, live.task):
            s.add_live(live)
    for dead in rows.dead:
        for s in both(dead.queue, dead.task):
            s.dead[dead.reason] = s.dead.get(dead.reason, 0) + dead.jobs
    for recent in rows.recent:
        for s in both(recent.queue, recent.task):
            s.add_recent(recent)
    measured = measured_seconds(rows, window)
    queue_latency = {r.name: r for r in rows.latency if r.kind == "queue"}
    task_latency = {r.name: r for r in rows.latency if r.kind == "task"}
    settings = {q.name: q for q in rows.queues}
    queues = []
    for name in sorted(by_queue):
        q = settings.get(name)
        queues.append(QueueStats(
            **_figures(name, by_queue[name], measured, queue_latency),  # type: ignore[arg-type]
            paused=q.paused if q else False, active=q.active if q else True,
            max_workers=q.max_workers if q else None,
            throttled_until=q.throttled_until if q else None,
        ))
    tasks = [TaskStats(**_figures(name, by_task[name], measured, task_latency))  # type: ignore[arg-type]
             for name in sorted(by_task)]
    return Stats(rows.now, window, queues, tasks, measured=measured)


__all__ = ["DEFAULT_WINDOW", "BreakerInfo", "Latency", "Limited", "QueueStats", "Stats",
           "TaskStats", "ThrottledKey", "WorkerInfo"]
