"""Everything the dashboard reads from or does to claimq, in one place: through `claimq.App`
(and, for the audit table, the Backend Protocol it holds)."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

import orjson

from claimq.app import App
from claimq.backends.base import (
    LIVE_STATES,
    AuditEntry,
    Edge,
    QueueInfo,
    RateLimit,
    WorkerInfo,
    WorkflowInfo,
)
from claimq.errors import ClaimqError, InvalidInput, JobNotFound, KeyHeld
from claimq.job import Job
from claimq.schedules import Schedule
from claimq.stats import TaskStats
from claimq.workflow import workflow_state

Table = Literal["live", "archive", "dead"]
BULK_LIMIT = 10_000  # a bulk action acts on at most this many jobs (the preview says so)
BULK_ACTIONS: dict[str, tuple[str, ...]] = {
    "live": ("cancel", "run_now"),
    "archive": ("purge",),
    "dead": ("resurrect", "purge"),
}
FILTER_KEYS = ("queue", "task", "status", "tag", "text", "state")
# The states the page lists, each with its count: the live ones (LIVE_STATES, as find_jobs'
# `state` reads them), then the dead letters and the succeeded (archived) jobs.
STATES = (*LIVE_STATES, "dead", "succeeded")
WORKFLOW_JOBS = 1000  # a workflow's page lists at most this many of its jobs (by id)
GRAPH_JOBS = 300  # and draws its graph only up to this many


def dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS)


def queue_row(q: QueueInfo, now: datetime) -> dict[str, Any]:
    state = "inactive" if not q.active else "paused" if q.paused else "active"
    return {
        "name": q.name, "state": state, "paused": q.paused, "active": q.active,
        "max_workers": q.max_workers, "depth": q.pending + q.scheduled,
        "pending": q.pending, "scheduled": q.scheduled, "running": q.fetched + q.processing,
        "past_lease": q.past_lease, "oldest_due_age": q.oldest_due_age,
        "archived": q.archived, "dead": q.dead,
    }


RUNNING_JOBS = 1000  # the workers' view lists at most this many running jobs (newest first)


def worker_state(w: WorkerInfo) -> str:
    """alive; silent (no refresh within the liveness window: killed or cut off); dead (a
    reaper marked it so), as `claimq workers` says."""
    return "alive" if w.alive else "silent" if w.dead_at is None else "dead"


def workers(app: App) -> list[dict[str, Any]]:
    """The worker registry (`app.workers()`, as `claimq workers` reads it), each with its
    `state` and, alive, `up_for` (seconds since it started)."""
    now = app.backend.now()
    return [{**dataclasses.asdict(w), "state": worker_state(w),
             "up_for": (now - w.started_at).total_seconds() if w.alive else None}
            for w in app.workers()]


def workers_with_jobs(app: App) -> dict[str, Any]:
    """The workers' view: each worker (`workers()`) with the running jobs it holds (the newest
    RUNNING_JOBS running jobs, each with its elapsed seconds), and the running jobs of no
    listed worker (a worker pruned from the registry before its jobs' leases ran out)."""
    rows = workers(app)
    now = app.backend.now()
    running = app.find_jobs("live", state="running", limit=RUNNING_JOBS + 1)
    by_worker: dict[str | None, list[dict[str, Any]]] = {}
    for job in running[:RUNNING_JOBS]:
        summary = job_summary(job, now)
        by_worker.setdefault(job.worker_id, []).append(
            {k: summary[k] for k in ("id", "queue", "task", "started_at", "elapsed")})
    for row in rows:
        row["jobs"] = by_worker.pop(row["id"], [])
    return {"workers": rows, "unlisted": [j for jobs in by_worker.values() for j in jobs],
            "truncated": len(running) > RUNNING_JOBS, "running_limit": RUNNING_JOBS}


def schedule_row(s: Schedule) -> dict[str, Any]:
    """A schedule as the page lists it (`claimq schedules list`'s columns; not its payload)."""
    return {"name": s.name, "task": s.task, "queue": s.queue, "cron": s.cron, "every": s.every,
            "tz": s.tz, "missed": s.missed, "paused": s.paused, "next_run_at": s.next_run_at,
            "last_run_at": s.last_run_at, "last_job_id": s.last_job_id, "declared": s.declared}


def schedules(app: App) -> list[dict[str, Any]]:
    """Every schedule (`app.schedules.list()`, as `claimq schedules list`)."""
    return [schedule_row(s) for s in app.schedules.list()]


SCHEDULE_ACTIONS = ("pause", "resume", "run_now")


def schedule_action(app: App, name: str, action: str) -> tuple[str, dict[str, Any]]:
    """A schedule action of the page, through the methods `claimq schedules pause|resume|
    run-now` use: (outcome, the schedule's row and, for run_now, the job it enqueued)."""
    if action == "pause":
        return "paused", {"schedule": schedule_row(app.schedules.pause(name))}
    if action == "resume":
        return "resumed", {"schedule": schedule_row(app.schedules.resume(name))}
    if action == "run_now":
        job_id = int(app.schedules.run_now(name))
        return f"enqueued job {job_id}", {"schedule": schedule_row(app.schedules.get(name)),
                                          "job": job_id}
    raise InvalidInput("action must be pause, resume or run_now")


def _rate(rate: RateLimit | None) -> dict[str, Any] | None:
    return None if rate is None else {"count": rate.count, "period": rate.period,
                                      "burst": rate.burst, "text": str(rate)}


def flow(app: App) -> dict[str, Any]:
    """Flow control, as `claimq queues list` and `claimq stats` read it: each queue's worker
    limit, rate limits (the queue's, per rate key), priority aging, whether it takes jobs by
    concurrency key, and until when a handler's Throttled pauses it (app.queues()); the rate
    keys a Throttled pauses (app.throttled_keys()); what holds due jobs back, per queue, reason
    and key (app.limited(): waiting, running, limit, until); the circuit breakers
    (app.breakers())."""
    now = app.backend.now()
    return {
        "now": now, "flow_control": app.backend.capabilities.flow_control,
        "queues": [{"name": q.name, "state": queue_row(q, now)["state"],
                    "max_workers": q.max_workers, "running": q.fetched + q.processing,
                    "rate_limit": _rate(q.rate_limit), "key_rate_limit": _rate(q.key_rate_limit),
                    "aging": None if q.aging is None else {"step": q.aging.step,
                                                            "cap": q.aging.cap},
                    "keyed": q.keyed, "throttled_until": q.throttled_until}
                   for q in app.queues()],
        "throttled_keys": [dataclasses.asdict(k) for k in app.throttled_keys()],
        "limited": [dataclasses.asdict(g) for g in app.limited()],
        "breakers": [dataclasses.asdict(b) for b in app.breakers()],
    }


LATENCY_WINDOWS = (300, 3600, 86400)  # the windows the page offers: 5 min, 1 h, 24 h


def _done(row: TaskStats) -> dict[str, Any]:
    return {"name": row.name, "completed_per_minute": row.completed_per_minute,
            "failed_per_minute": row.failed_per_minute, "attempts_per_job": row.attempts_per_job,
            "wait": dataclasses.asdict(row.wait), "run": dataclasses.asdict(row.run)}


def latency(app: App, window: float) -> dict[str, Any]:
    """What finished over the last `window` seconds, per queue and per task, as `claimq stats`
    reads it (app.stats()): wait (due to start) and run (start to finish) p50/p95/p99 in
    seconds over `count` jobs, attempts per job, completions and failures per minute over
    `measured` seconds."""
    stats = app.stats(window=window)
    return {"at": stats.at, "window": stats.window,
            "measured": stats.window if stats.measured is None else stats.measured,
            "queues": [_done(q) for q in stats.queues], "tasks": [_done(t) for t in stats.tasks]}


HISTORY_HOURS = 24  # a history looks back at most a day
HISTORY_BUCKETS = 288  # in at most this many buckets (5 min over a day)
HISTORY_SERIES = 20  # the queues, and the tasks, that finished the most jobs: the rest summed


def _series(totals: dict[str, list[list[int]]]) -> list[dict[str, Any]]:
    """Per name, by jobs finished (most first), its succeeded and dead per bucket; past
    HISTORY_SERIES names, the others summed under `others` (their number)."""
    ranked = sorted(totals, key=lambda n: (-sum(map(sum, totals[n])), n))
    shown: list[dict[str, Any]] = [{"name": n, "succeeded": totals[n][0], "dead": totals[n][1]}
             for n in ranked[:HISTORY_SERIES]]
    rest = ranked[HISTORY_SERIES:]
    if rest:
        size = len(totals[rest[0]][0])
        shown.append({"name": None, "others": len(rest),
                      "succeeded": [sum(totals[n][0][i] for n in rest) for i in range(size)],
                      "dead": [sum(totals[n][1][i] for n in rest) for i in range(size)]})
    return shown


def history(app: App, hours: int, bucket_minutes: int) -> dict[str, Any]:
    """Jobs finished (succeeded, dead) per bucket of `bucket_minutes` over the last `hours`,
    per queue and per task, from the archive's and the dead letters' finished_at (a range of
    their indexes). Bounded: at most HISTORY_HOURS, HISTORY_BUCKETS buckets."""
    if not 1 <= hours <= HISTORY_HOURS:
        raise InvalidInput(f"hours must be between 1 and {HISTORY_HOURS}")
    buckets, rest = divmod(hours * 60, bucket_minutes) if bucket_minutes > 0 else (0, 1)
    if rest or not 1 <= buckets <= HISTORY_BUCKETS:
        raise InvalidInput(f"bucket (minutes) must divide the hours into 1 to "
                           f"{HISTORY_BUCKETS} buckets")
    now, rows = app.backend.finished_history(buckets, bucket_minutes * 60.0)
    queues: dict[str, list[list[int]]] = {}
    tasks: dict[str, list[list[int]]] = {}
    for r in rows:
        index = min(max(r.bucket, 0), buckets - 1)  # finished at `now`: the last bucket
        for found, name in ((queues, r.queue), (tasks, r.task)):
            series = found.setdefault(name, [[0] * buckets, [0] * buckets])
            series[0][index] += r.succeeded
            series[1][index] += r.dead
    return {"now": now, "start": now - timedelta(hours=hours), "hours": hours,
            "bucket": bucket_minutes * 60, "buckets": buckets,
            "queues": _series(queues), "tasks": _series(tasks)}


def retention(app: App) -> list[dict[str, Any]]:
    """The retention policies in force, as `claimq retention list` reads them
    (app.retention()): the default ('*', every queue without a policy of its own) first, then
    each queue's own; ages in seconds, None: no limit of that kind."""
    return [dataclasses.asdict(p) for p in app.retention()]


def metrics_text(app: App) -> str | None:
    """Prometheus text exposition of claimq.metrics (app.stats() at each scrape); None without
    the metrics extra."""
    try:
        from claimq.metrics import metrics_text as stats_text
    except ClaimqError:  # prometheus-client is not installed
        return None
    return stats_text(app).decode()


def overview(app: App) -> dict[str, Any]:
    now = app.backend.now()
    queues = app.queues()
    return {
        "now": now.isoformat(),
        "queues": [queue_row(q, now) for q in queues],
        "states": state_counts(app, queues),
        "workers": workers(app),
        "breakers": [dataclasses.asdict(b) for b in app.breakers()],
    }


def state_counts(app: App, queues: Sequence[QueueInfo]) -> dict[str, int]:
    """How many jobs are in each of STATES, over every queue: the live ones by
    app.count_states(), the dead letters and the succeeded ones from the queues' counts."""
    counts = dict.fromkeys(STATES, 0)
    for row in app.count_states():
        counts[row.state] += row.jobs
    counts["dead"] = sum(q.dead for q in queues)
    counts["succeeded"] = sum(q.archived for q in queues)
    return counts


def job_summary(job: Job, now: datetime | None = None) -> dict[str, Any]:
    """A job's row in a list. With `now` (the database's): `elapsed`, the seconds since a
    claimed job started, or since a pending job's run_at (negative: still ahead)."""
    last = job.errors[-1] if job.errors else None
    running = str(job.status) in ("fetched", "processing")
    since = job.started_at if running else job.run_at if str(job.status) == "pending" else None
    return {
        "id": job.id, "queue": job.queue, "task": job.task, "status": str(job.status),
        "reason": job.reason, "priority": job.priority, "attempts": job.attempts,
        "max_attempts": job.max_attempts, "tags": list(job.tags), "worker_id": job.worker_id,
        "created_at": job.created_at, "run_at": job.run_at, "started_at": job.started_at,
        "finished_at": job.finished_at, "workflow_id": job.workflow_id,
        "elapsed": None if now is None or since is None else (now - since).total_seconds(),
        "last_error": None if not isinstance(last, dict) else
        f"{last.get('error', '')}: {last.get('message', '')}",
    }


def job_detail(job: Job) -> dict[str, Any]:
    detail = {f.name: getattr(job, f.name) for f in dataclasses.fields(job)}
    detail.pop("claim_token")  # the fencing token stays with its worker
    detail["status"] = str(job.status)
    detail["tags"] = list(job.tags)
    detail["errors"] = list(job.errors)
    detail["timings"] = {
        "waited": _seconds(job.run_at, job.started_at),  # due -> (last) start
        "ran": _seconds(job.started_at, job.finished_at),  # (last) start -> finish
        "total": _seconds(job.created_at, job.finished_at),  # enqueued -> finish
    }
    return detail


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return None if start is None or end is None else (end - start).total_seconds()


def workflow_row(info: WorkflowInfo) -> dict[str, Any]:
    """A workflow as the list shows it: its row, its jobs by status and its state."""
    return {"id": info.id, "name": info.name, "key": info.key, "on_failure": info.on_failure,
            "state": workflow_state(info.counts), "counts": dict(info.counts),
            "created_at": info.created_at, "finished_at": info.finished_at}


def workflow_detail(app: App, workflow_id: int) -> dict[str, Any] | None:
    """A workflow's page: its row, its jobs (the first WORKFLOW_JOBS by id), each with the ids
    it waits for, its edges, and (up to GRAPH_JOBS jobs) where each job sits in the drawn
    graph; None when there is no such workflow."""
    info = app.backend.get_workflow(workflow_id)
    if info is None:
        return None
    jobs, edges = app.backend.workflow_graph(workflow_id)
    shown = jobs[:WORKFLOW_JOBS]
    ids = {job.id for job in shown}
    edges = [e for e in edges if e.child in ids and e.parent in ids]
    waits: dict[int, list[int]] = {}
    for edge in edges:
        waits.setdefault(edge.child, []).append(edge.parent)
    place = graph_layout([job.id for job in shown], edges) if len(jobs) <= GRAPH_JOBS else {}
    rows = []
    for job in shown:
        row = {**job_summary(job), "waits_for": waits.get(job.id, [])}
        if job.id in place:
            row["layer"], row["row"] = place[job.id]
        rows.append(row)
    return {"workflow": workflow_row(info), "jobs": rows,
            "edges": [edge._asdict() for edge in edges], "jobs_total": len(jobs),
            "graph": bool(place), "graph_limit": GRAPH_JOBS}


def graph_layout(ids: Sequence[int], edges: Sequence[Edge]) -> dict[int, tuple[int, int]]:
    """Where to draw each job: (layer, row). A job's layer is one past its deepest dependency
    (dependencies to its left); within a layer, jobs sit by the mean row of what they wait
    for (fewer crossings), then by id. A cycle (never written by claimq) goes last."""
    children: dict[int, list[int]] = {i: [] for i in ids}
    parents: dict[int, list[int]] = {i: [] for i in ids}
    for edge in edges:
        if edge.parent in children and edge.child in parents:
            children[edge.parent].append(edge.child)
            parents[edge.child].append(edge.parent)
    waiting = {i: len(parents[i]) for i in ids}
    layer = dict.fromkeys(ids, 0)
    ready = [i for i in ids if waiting[i] == 0]
    done: list[int] = []
    while ready:
        job = ready.pop()
        done.append(job)
        for child in children[job]:
            layer[child] = max(layer[child], layer[job] + 1)
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
    last = max((layer[i] for i in done), default=-1)
    for job in ids:
        if waiting[job] > 0:
            layer[job] = last + 1
    place: dict[int, tuple[int, int]] = {}
    for depth in range(max(layer.values(), default=-1) + 1):
        members = [i for i in ids if layer[i] == depth]

        def weight(job: int) -> tuple[float, int]:
            rows = [place[p][1] for p in parents[job] if p in place]
            return (sum(rows) / len(rows) if rows else -1.0, job)

        for n, job in enumerate(sorted(members, key=weight)):
            place[job] = (depth, n)
    return place


def job_filter(params: object) -> dict[str, str]:
    if not isinstance(params, dict):
        raise InvalidInput("the filter must be an object of queue, task, status, tag, text")
    where = {}
    for key in FILTER_KEYS:
        value = params.get(key)
        if value not in (None, ""):
            if not isinstance(value, str):
                raise InvalidInput(f"filter {key} must be a string")
            where[key] = value
    return where


def table_of(value: object) -> Table:
    if value not in ("live", "archive", "dead"):
        raise InvalidInput("table must be live, archive or dead")
    return value


def find(app: App, table: Table, where: dict[str, str], before: int | None,
         limit: int) -> list[Job]:
    return app.find_jobs(table, before=before, limit=limit, **where)


def job_page(app: App, table: Table, where: dict[str, str], before: int | None,
             limit: int) -> dict[str, Any]:
    """A page of the job browser: up to `limit` rows and the `next` page's `before` (None on
    the last page). The running jobs' rows carry their last reported progress; the limited
    jobs' rows why each waits (`limit_reason`, one of LIMIT_REASONS) and its key."""
    found = find(app, table, where, before, limit + 1)
    page = found[:limit]
    now = app.backend.now()
    rows = [job_summary(job, now) for job in page]
    if where.get("state") == "running":
        for row in rows:
            try:
                progress = app.get_progress(row["id"])
            except JobNotFound:  # gone since the page was read
                progress = None
            row["progress"] = None if progress is None else {
                "fraction": progress.fraction, "note": progress.note}
    elif where.get("state") == "limited":
        # why each waits, read again now: a job its limit let go since shows none
        reasons = app.backend.limit_reasons([row["id"] for row in rows]) if rows else {}
        for row in rows:
            row["limit_reason"], row["limit_key"] = reasons.get(row["id"], (None, None))
    return {"jobs": rows, "next": page[-1].id if len(found) > limit else None}


def bulk_ids(app: App, table: Table, where: dict[str, str]) -> tuple[list[int], bool]:
    """The ids the filter matches now (at most BULK_LIMIT) and whether there were more."""
    ids: list[int] = []
    before = None
    while len(ids) <= BULK_LIMIT:
        page = find(app, table, where, before, 1000)
        ids.extend(j.id for j in page)
        if len(page) < 1000:
            break
        before = page[-1].id
    return ids[:BULK_LIMIT], len(ids) > BULK_LIMIT


class Snapshots:
    """Signs the id set a preview showed so that the action acts on that set and only on it."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def sign(self, table: str, action: str, where: dict[str, str], ids: Sequence[int]) -> str:
        text = dumps([table, action, sorted(where.items()), list(ids)])
        return hmac.new(self._key, text, hashlib.sha256).hexdigest()

    def check(self, table: str, action: str, where: dict[str, str], ids: Sequence[int],
              signature: str) -> None:
        expected = self.sign(table, action, where, ids)
        if not hmac.compare_digest(expected.encode(), signature.encode()):
            raise InvalidInput("the ids are not those of a preview of this action: preview again")


def bulk_apply(app: App, table: Table, action: str, ids: list[int],
               refused: list[dict[str, Any]] | None = None) -> list[int]:
    """Does `action` to each of `ids` that is still in the state it needs; the ids it changed.
    A dead letter whose idempotency key another job holds is not resurrected: it goes into
    `refused` ({"id", "key", "holder_id", "error"}) and the others go on (without `refused`,
    KeyHeld is raised)."""
    if action not in BULK_ACTIONS[table]:
        raise InvalidInput(f"{action} is not an action on {table} jobs")
    if action == "purge":
        return app.purge_jobs(table, ids)  # type: ignore[arg-type]
    if action == "run_now":
        return app.run_now(ids)
    done = []
    for job_id in ids:
        if action == "cancel":
            try:
                if app.cancel(job_id) in ("cancelled", "cancel_requested"):
                    done.append(job_id)
            except JobNotFound:
                pass
        else:  # resurrect
            try:
                app.resurrect(job_id)
                done.append(job_id)
            except JobNotFound:
                pass
            except KeyHeld as exc:
                if refused is None:
                    raise
                refused.append({"id": job_id, "key": exc.key, "holder_id": exc.holder_id,
                                "error": str(exc)})
    return done


def audit(app: App, before: int | None, limit: int) -> list[AuditEntry]:
    return app.backend.list_audit(before, limit)


__all__ = ["BULK_ACTIONS", "BULK_LIMIT", "ClaimqError", "Snapshots"]
