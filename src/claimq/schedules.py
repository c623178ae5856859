"""Periodic schedules: cron expressions in a named time zone, or fixed intervals, stored in the
database and fired by every worker's scheduler with no leader.

Each schedule row holds `next_run_at`, its first tick not enqueued yet. A scheduler locks the
due rows (SKIP LOCKED on PostgreSQL; SQLite's single writer), enqueues one job per tick and
moves `next_run_at` on in the same transaction: a tick becomes exactly one job whichever
worker, on whichever host, gets there first, and a worker that arrives later finds the row
already moved. A tick's job runs at (`run_at`) the tick's time.

Ticks missed while no worker ran are handled by the schedule's `missed` policy: "latest" (the
default) enqueues the latest missed tick only, "all" every one of them (at most MAX_CATCH_UP
per pass; the rest follow at the next passes), "skip" none but a tick at most SKIP_GRACE
seconds late.

Cron ticks are computed in the schedule's zone (zoneinfo) by cronsim (`pip install
'claimq[cron]'`), which keeps cron's DST rules: a time that a spring-forward day skips runs once,
when the clock jumps; one that a fall-back day repeats runs once, at its first occurrence.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

import orjson

from claimq import _audit, _validate
from claimq._json import loads
from claimq._pause import pause
from claimq.backends.base import SchedulePlan, ScheduleRow
from claimq.errors import ClaimqError, InvalidInput, JobNotFound

if TYPE_CHECKING:
    from claimq._results import JobHandle
    from claimq.app import App
    from claimq.task import Task

log = logging.getLogger("claimq.schedules")

Missed = Literal["latest", "all", "skip"]
MISSED: tuple[str, ...] = ("latest", "all", "skip")
MAX_CATCH_UP = 1000  # missed="all": ticks enqueued per schedule and pass
SKIP_GRACE = 60.0  # missed="skip": how late a tick may be and still run
MIN_EVERY = 1.0  # seconds: schedulers look for due ticks about once a second
TAG = "schedule:"  # a tick's job carries the tag schedule:<name>
MAX_NAME = _validate.MAX_TAG_LEN - len(TAG)
EDIT_TRIES = 20  # an edit made again from a fresh read when the row moved under it
_MAX_STEPS = 1_000_000  # cron ticks walked in one plan before giving up on a definition


@dataclass(frozen=True)
class Schedule:
    """A schedule as stored. `declared`: code declared it (`@app.periodic`)."""

    name: str
    task: str
    payload: dict[str, Any]
    queue: str
    cron: str | None
    every: float | None
    tz: str
    missed: str
    paused: bool
    next_run_at: datetime
    last_run_at: datetime | None
    last_job_id: int | None
    priority: int
    max_attempts: int
    timeout: float | None
    declared: bool

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        for key in ("next_run_at", "last_run_at"):
            out[key] = None if out[key] is None else out[key].isoformat()
        return out


def _zone(tz: object) -> Any:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if not isinstance(tz, str) or not tz:
        raise InvalidInput(f"tz must be a time zone name such as 'Europe/Lisbon', got {tz!r}")
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(f"unknown time zone {tz!r}") from None


def _cronsim() -> Any:
    try:
        import cronsim
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise InvalidInput("cron schedules need cronsim: pip install 'claimq[cron]'") from None
    return cronsim


def _check_cron(expr: object) -> str:
    if not isinstance(expr, str) or not expr.strip():
        raise InvalidInput(f"cron must be a cron expression such as '*/5 * * * *', got {expr!r}")
    cronsim = _cronsim()
    try:
        cronsim.CronSim(expr, datetime(2030, 1, 1, tzinfo=UTC))
    except cronsim.CronSimError as exc:
        raise InvalidInput(f"bad cron expression {expr!r}: {exc}") from None
    return expr.strip()


def _cron_ticks(expr: str, tz: str, after: datetime) -> Iterator[datetime]:
    """The cron ticks strictly after `after`, in UTC, computed in the zone `tz`."""
    for tick in _cronsim().CronSim(expr, after.astimezone(_zone(tz))):
        yield tick.astimezone(UTC)


def first_tick(cron: str | None, every: float | None, tz: str, now: datetime) -> datetime:
    """A new (or changed, or resumed) schedule's first tick: the first after `now`."""
    if cron is not None:
        return next(_cron_ticks(cron, tz, now))
    assert every is not None
    return now + timedelta(seconds=every)


def plan(row: ScheduleRow, now: datetime) -> SchedulePlan:
    """What the due schedule `row` does at `now`: the ticks to enqueue by its missed policy, the
    last of them, and its next tick after `now`."""
    due: list[datetime] = []
    tick = row.next_run_at
    if row.every is not None:
        step = timedelta(seconds=row.every)
        behind = int((now - tick) / step)  # ticks after next_run_at that are due too
        if row.missed == "all":
            due = [tick + n * step for n in range(min(behind + 1, MAX_CATCH_UP))]
            following = due[-1] + step
        else:
            due = [tick + behind * step]
            following = due[0] + step
    else:
        assert row.cron is not None
        ticks = _cron_ticks(row.cron, row.tz, tick)
        latest, following, steps = tick, next(ticks), 0
        if row.missed == "all":
            due = [tick]
            while following <= now and len(due) < MAX_CATCH_UP:
                due.append(following)
                following = next(ticks)
        else:
            while following <= now:
                steps += 1
                if steps > _MAX_STEPS:  # a very long outage: start again from a day ago
                    ticks = _cron_ticks(row.cron, row.tz, now - timedelta(days=1))
                    steps = -_MAX_STEPS
                latest, following = following, next(ticks)
            due = [latest]
    if row.missed == "skip" and (now - due[-1]).total_seconds() > SKIP_GRACE:
        return SchedulePlan((), None, following)
    return SchedulePlan([_job(row, t) for t in due], due[-1], following)


def _job(row: ScheduleRow, tick: datetime) -> _validate.NewJob:
    return _validate.new_job(
        task=row.task, payload=loads(row.payload_json), queue=row.queue, priority=row.priority,
        run_at=tick, max_attempts=row.max_attempts, timeout=row.timeout,
        tags=(TAG + row.name,), default_max_attempts=row.max_attempts,
        payload_limit=64 * 2**20,
    )


def _public(row: ScheduleRow) -> Schedule:
    return Schedule(
        name=row.name, task=row.task, payload=loads(row.payload_json), queue=row.queue,
        cron=row.cron, every=row.every, tz=row.tz, missed=row.missed, paused=row.paused,
        next_run_at=row.next_run_at, last_run_at=row.last_run_at, last_job_id=row.last_job_id,
        priority=row.priority, max_attempts=row.max_attempts, timeout=row.timeout,
        declared=row.declared is not None,
    )


_TIMING = ("cron", "every", "tz")


class Schedules:
    """`app.schedules`: the runtime API over the schedules table (the CLI's `claimq schedules`
    speaks it too). Code declares schedules with `@app.periodic(...)`; a worker writes them
    at start (a declaration changed in code replaces the stored one; otherwise what was
    changed at runtime stays)."""

    def __init__(self, app: App) -> None:
        self._app = app
        self.declared: dict[str, ScheduleRow] = {}

    # -- definitions ---------------------------------------------------------------------------

    def _definition(
        self,
        name: str,
        task: str | Task[Any, Any],
        *,
        cron: str | None,
        every: float | timedelta | None,
        tz: str,
        missed: str,
        payload: dict[str, Any] | None,
        queue: str | None,
        priority: int | None,
        max_attempts: int | None,
        timeout: float | None,
        paused: bool,
    ) -> ScheduleRow:
        from claimq.task import Task

        _name(name)
        if isinstance(task, str) and task in self._app.tasks:
            task = self._app.tasks[task]
        if isinstance(task, Task):
            queue = queue or task.queue
            priority = task.priority if priority is None else priority
            max_attempts = max_attempts or task.max_attempts
            timeout = timeout or task.timeout
            payload = task.dump_arguments(payload)  # checked as enqueue checks it
            task = task.name
        if (cron is None) == (every is None):
            raise InvalidInput("a schedule takes cron or every (seconds), exactly one of them")
        seconds = None
        if every is not None:
            seconds = _validate.seconds(every, "every", allow_zero=False)
            if seconds < MIN_EVERY:
                raise InvalidInput(f"every must be at least {MIN_EVERY:g} second(s)")
        _zone(tz)
        if missed not in MISSED:
            raise InvalidInput(f"missed must be one of {list(MISSED)}, got {missed!r}")
        _validate.boolean(paused, "paused")
        job = _validate.new_job(
            task=task, payload=payload, queue=queue or "default", priority=priority or 0,
            max_attempts=max_attempts, timeout=timeout,
            default_max_attempts=self._app.default_max_attempts,
            payload_limit=self._app.payload_limit,
        )
        return ScheduleRow(
            name=name, task=job.task, payload_json=job.payload_json, queue=job.queue,
            priority=job.priority, max_attempts=job.max_attempts, timeout=job.timeout,
            cron=None if cron is None else _check_cron(cron), every=seconds, tz=tz,
            missed=missed, paused=bool(paused), next_run_at=datetime(1970, 1, 1, tzinfo=UTC),
        )

    def declare(self, name: str, task: Task[Any, Any], **options: Any) -> None:
        """A schedule code declares (`@app.periodic`): written by workers at start."""
        row = self._definition(name, task, paused=False, **options)
        self.declared[name] = replace(row, declared=_declaration(row))

    def sync_declared(self) -> int:
        """Writes the declared schedules: a missing one is added; a stored one whose code
        declaration changed is replaced (its pause kept). Returns how many it wrote."""
        if not self.declared:
            return 0
        backend = self._app.backend
        stored: dict[str, ScheduleRow | None] = {
            r.name: r for r in backend.list_schedules()}
        written = 0
        for name, row in self.declared.items():
            for _ in range(EDIT_TRIES):
                old = stored.get(name)
                if old is not None and old.declared == row.declared:
                    break
                now = backend.now()
                fresh = replace(row, next_run_at=first_tick(row.cron, row.every, row.tz, now))
                pause("schedule.edit_read")
                if old is None:
                    written += backend.insert_schedule(fresh)  # False: another worker's insert
                    break
                if backend.update_schedule(replace(fresh, paused=old.paused), old):
                    written += 1
                    break
                # fired or changed since it was read: read it again
                stored[name] = next(iter(backend.list_schedules(name)), None)
            else:
                raise _kept_changing(name)
        return written

    # -- the runtime API -----------------------------------------------------------------------

    def list(self) -> list[Schedule]:
        return [_public(r) for r in self._app.backend.list_schedules()]

    def get(self, name: str) -> Schedule:
        return _public(self._row(name))

    def _row(self, name: str) -> ScheduleRow:
        _name(name)
        rows = self._app.backend.list_schedules(name)
        if not rows:
            raise JobNotFound(f"no schedule {name!r}")
        return rows[0]

    def add(
        self,
        name: str,
        task: str | Task[Any, Any],
        *,
        cron: str | None = None,
        every: float | timedelta | None = None,
        tz: str = "UTC",
        missed: Missed = "latest",
        payload: dict[str, Any] | None = None,
        queue: str | None = None,
        priority: int | None = None,
        max_attempts: int | None = None,
        timeout: float | None = None,
        paused: bool = False,
    ) -> Schedule:
        """Adds a schedule at runtime (InvalidInput if the name is taken)."""
        row = self._definition(
            name, task, cron=cron, every=every, tz=tz, missed=missed, payload=payload,
            queue=queue, priority=priority, max_attempts=max_attempts, timeout=timeout,
            paused=paused)
        backend = self._app.backend
        row = replace(row, next_run_at=first_tick(row.cron, row.every, row.tz, backend.now()))
        if not backend.insert_schedule(row):
            raise InvalidInput(f"a schedule named {name!r} exists already (change it instead)")
        added = self.get(name)
        _audit.record(backend, "schedule add", f"schedule {name}", added.as_dict(), 1)
        return added

    def change(self, name: str, **changes: Any) -> Schedule:
        """Changes fields of a stored schedule (cron, every, tz, missed, task, payload, queue,
        priority, max_attempts, timeout). A new timing takes effect at its next tick after
        now, in every worker."""
        known = {"cron", "every", "tz", "missed", "task", "payload", "queue", "priority",
                 "max_attempts", "timeout"}
        unknown = set(changes) - known
        if unknown:
            raise InvalidInput(f"unknown schedule field(s) {sorted(unknown)}; known: "
                               f"{sorted(known)}")

        def edit(old: ScheduleRow) -> ScheduleRow:
            fields: dict[str, Any] = {
                "cron": old.cron, "every": old.every, "tz": old.tz, "missed": old.missed,
                "task": old.task, "payload": loads(old.payload_json), "queue": old.queue,
                "priority": old.priority, "max_attempts": old.max_attempts,
                "timeout": old.timeout,
            }
            if "cron" in changes and changes["cron"] is not None:
                fields["every"] = None
            if "every" in changes and changes["every"] is not None:
                fields["cron"] = None
            fields.update(changes)
            row = self._definition(name, paused=old.paused, **fields)
            timing = any(getattr(row, k) != getattr(old, k) for k in _TIMING)
            next_run_at = (first_tick(row.cron, row.every, row.tz, self._app.backend.now())
                           if timing else old.next_run_at)
            return replace(row, next_run_at=next_run_at, declared=old.declared)

        self._edit(name, edit)
        changed = self.get(name)
        _audit.record(self._app.backend, "schedule change", f"schedule {name}",
                      {"changes": changes}, 1)
        return changed

    def pause(self, name: str) -> Schedule:
        """No ticks while paused (those that fall meanwhile are not caught up)."""
        self._edit(name, lambda old: replace(old, paused=True))
        _audit.record(self._app.backend, "schedule pause", f"schedule {name}", {}, 1)
        return self.get(name)

    def resume(self, name: str) -> Schedule:
        def edit(old: ScheduleRow) -> ScheduleRow | None:
            if not old.paused:
                return None
            now = self._app.backend.now()
            return replace(old, paused=False,
                           next_run_at=first_tick(old.cron, old.every, old.tz, now))

        self._edit(name, edit)
        _audit.record(self._app.backend, "schedule resume", f"schedule {name}", {}, 1)
        return self.get(name)

    def remove(self, name: str) -> None:
        _name(name)
        if not self._app.backend.delete_schedule(name):
            raise JobNotFound(f"no schedule {name!r}")
        _audit.record(self._app.backend, "schedule remove", f"schedule {name}", {}, 1)

    def run_now(self, name: str) -> JobHandle:
        """Enqueues the schedule's job now, outside its ticks (which stay as they are)."""
        row = self._row(name)
        handle = self._app.enqueue(
            row.task, loads(row.payload_json), queue=row.queue, priority=row.priority,
            max_attempts=row.max_attempts, timeout=row.timeout, tags=(TAG + name,))
        _audit.record(self._app.backend, "schedule run_now", f"schedule {name}",
                      {"job": int(handle)}, 1)
        return handle

    def fire_due(self, limit: int = 100) -> dict[str, builtins.list[int]]:
        """One scheduler pass: enqueues the due ticks of up to `limit` schedules; returns the
        ids enqueued per schedule. Every worker runs it about once a second; any process may
        call it at any time."""
        return self._app.backend.fire_schedules(
            _safe_plan, _validate.integer(limit, "limit", 1, 10_000),
            self._app.idempotency_retention)

    def next_due_in(self) -> float | None:
        """Seconds until the earliest tick of the unpaused schedules is due, by the database's
        clock (0 or less: one is due now); None when there is none. The scheduler's wait."""
        return self._app.backend.next_schedule_in()

    def _edit(self, name: str, edit: Callable[[ScheduleRow], ScheduleRow | None]) -> None:
        """Read, `edit`, write back, guarded: the write takes effect only if the row still
        has the next_run_at and paused it was read with. A scheduler that fired the schedule
        in between (or another edit) makes it write nothing, and the edit is made again from
        the row as it is now, so a firing is never undone and its tick never fires twice.
        `edit` returning None: nothing to write."""
        for _ in range(EDIT_TRIES):
            old = self._row(name)  # JobNotFound once it is gone
            row = edit(old)
            if row is None:
                return
            pause("schedule.edit_read")
            if self._app.backend.update_schedule(row, old):
                return
        raise _kept_changing(name)


def _kept_changing(name: str) -> ClaimqError:
    return ClaimqError(f"schedule {name!r} changed under the edit {EDIT_TRIES} times in a row "
                       "(schedulers or other edits); nothing written, try again")


def _name(name: object) -> str:
    _validate.task_name(name)
    assert isinstance(name, str)
    if len(name) > MAX_NAME:
        raise InvalidInput(f"a schedule's name has at most {MAX_NAME} characters, got {name!r}")
    return name


def default_name(task_name: str) -> str:
    """A declared schedule's name when none is given: its task's, or that name's last
    MAX_NAME characters."""
    return task_name[-MAX_NAME:].lstrip(".")


def _declaration(row: ScheduleRow) -> str:
    fields = {k: getattr(row, k) for k in (
        "task", "payload_json", "queue", "priority", "max_attempts", "timeout", "cron",
        "every", "tz", "missed")}
    return orjson.dumps(fields, option=orjson.OPT_SORT_KEYS).decode()


def _safe_plan(row: ScheduleRow, now: datetime) -> SchedulePlan | None:
    """plan(), or None (the row left as it is) for a definition that cannot be planned (changed
    by hand to something unreadable): said at every pass until someone fixes it."""
    try:
        return plan(row, now)
    except Exception as exc:  # noqa: BLE001 - one bad row must not stop the other schedules
        log.error("schedule.broken: schedule %r cannot be planned (%r); it does not fire until "
                  "fixed", row.name, exc, extra={"event": "schedule.broken",
                                                 "schedule": row.name})
        return None

