"""Periodic schedules on both backends, on the injectable clock: one job per tick however many
schedulers race (separate processes), the missed-tick policies after an outage, DST in named
zones, runtime changes, declarations from code, and a real worker's scheduler service."""

from __future__ import annotations

import dataclasses
import multiprocessing
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import schedule_procs
from app_support import run_threads, worker_running

from claimq import App, InvalidInput, JobNotFound, Worker
from claimq.clock import FakeClock
from claimq.schedules import MAX_NAME, default_name

ALL = 100_000


def _hour(now: datetime) -> datetime:
    return now.replace(minute=0, second=0, microsecond=0)


@pytest.fixture
def start() -> datetime:
    return _hour(datetime.now(UTC)) + timedelta(days=1)


@pytest.fixture
def sched(db_url: str, start: datetime) -> Iterator[tuple[App, FakeClock]]:
    clock = FakeClock(start)
    app = App(db_url, clock=clock)
    app.migrate()
    yield app, clock
    app.close()


def _jobs(app: App, name: str) -> list[datetime]:
    """The run_at (the tick) of every job of schedule `name`, in order."""
    jobs = [j for table in ("live", "archive", "dead")
            for j in app.list_jobs(table, limit=ALL)  # type: ignore[arg-type]
            if f"schedule:{name}" in j.tags]
    ticks = [j.run_at for j in jobs]
    assert all(t is not None for t in ticks)
    return sorted(t for t in ticks if t is not None)


def _step_until(app: App, clock: FakeClock, end: datetime, step: timedelta) -> None:
    """Moves the clock to `end` in steps, firing the due schedules at each."""
    while clock.now() < end:
        clock.advance(step)
        app.schedules.fire_due()


def test_an_interval_schedule_fires_once_per_tick(sched: tuple[App, FakeClock],
                                                  start: datetime) -> None:
    app, clock = sched
    made = app.schedules.add("tick", "t.tick", every=90, payload={"a": 1}, queue="cron")
    assert made.next_run_at == start + timedelta(seconds=90) and not made.paused
    assert app.schedules.fire_due() == {}
    clock.advance(90)
    fired = app.schedules.fire_due()
    assert list(fired) == ["tick"] and len(fired["tick"]) == 1
    assert app.schedules.fire_due() == {}  # the tick is spent
    job = app.get_job(fired["tick"][0])
    assert (job.task, job.queue, job.payload, job.run_at) == (
        "t.tick", "cron", {"a": 1}, start + timedelta(seconds=90))
    shown = app.schedules.get("tick")
    assert shown.next_run_at == start + timedelta(seconds=180)
    assert shown.last_run_at == start + timedelta(seconds=90)
    assert shown.last_job_id == fired["tick"][0]


def test_four_processes_over_200_ticks_make_exactly_one_job_per_tick(
    sched: tuple[App, FakeClock], db_url: str, start: datetime
) -> None:
    app, _ = sched
    app.schedules.add("every-minute", "t.cron", cron="* * * * *", tz="Europe/Lisbon")
    app.schedules.add("every-60s", "t.every", every=60)
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=schedule_procs.race_ticks,
                         args=(db_url, start, 60.0, 200, barrier, out)) for _ in range(4)]
    for p in procs:
        p.start()
    try:
        fired = [out.get(timeout=240) for _ in procs]
    finally:
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.kill()
    assert all(isinstance(n, int) for n in fired), fired
    assert sum(fired) == 400
    expected = [start + timedelta(minutes=n) for n in range(1, 201)]
    for name in ("every-minute", "every-60s"):
        ticks = _jobs(app, name)
        assert Counter(ticks).most_common(1)[0][1] == 1, f"{name}: a tick made two jobs"
        assert ticks == expected


def test_two_racing_for_the_same_tick_make_one_job(db_url: str, start: datetime,
                                                   sched: tuple[App, FakeClock]) -> None:
    app, _ = sched
    app.schedules.add("race", "t.race", every=60, missed="all")
    clocks = [FakeClock(start), FakeClock(start)]
    apps = [App(db_url, clock=c) for c in clocks]
    barrier = threading.Barrier(2)
    counts = [0, 0]

    def racer(n: int) -> None:
        for tick in range(1, 31):
            clocks[n].set(start + timedelta(minutes=tick))
            barrier.wait(30)
            counts[n] += sum(len(ids) for ids in apps[n].schedules.fire_due().values())

    run_threads(racer, [(0,), (1,)])
    for a in apps:
        a.close()
    assert sum(counts) == 30
    assert _jobs(app, "race") == [start + timedelta(minutes=n) for n in range(1, 31)]


@pytest.mark.parametrize("missed, expected", [("latest", 1), ("all", 18), ("skip", 0)])
def test_missed_ticks_after_an_outage(sched: tuple[App, FakeClock], start: datetime,
                                      missed: str, expected: int) -> None:
    app, clock = sched
    app.schedules.add("every10", "t.i", every=600, missed=missed)  # type: ignore[arg-type]
    app.schedules.add("hourly", "t.c", cron="0 * * * *", missed=missed)  # type: ignore[arg-type]
    clock.advance(timedelta(hours=3, minutes=5))  # no scheduler ran meanwhile
    app.schedules.fire_due()
    ticks = _jobs(app, "every10")
    assert len(ticks) == expected
    if missed == "all":
        assert ticks == [start + timedelta(minutes=10 * n) for n in range(1, 19)]
    if missed == "latest":
        assert ticks == [start + timedelta(hours=3)]
    hourly = _jobs(app, "hourly")
    assert len(hourly) == {"latest": 1, "all": 3, "skip": 0}[missed]
    if hourly:
        assert hourly[-1] == start + timedelta(hours=3)
    # then on time again, whatever the policy
    assert app.schedules.get("every10").next_run_at == start + timedelta(hours=3, minutes=10)
    clock.advance(timedelta(minutes=5))
    app.schedules.fire_due()
    assert _jobs(app, "every10")[-1] == start + timedelta(hours=3, minutes=10)


def test_missed_all_catches_up_a_bounded_batch_per_pass(sched: tuple[App, FakeClock],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from claimq import schedules

    monkeypatch.setattr(schedules, "MAX_CATCH_UP", 4)
    app, clock = sched
    app.schedules.add("burst", "t.b", every=60, missed="all")
    clock.advance(timedelta(minutes=10))
    assert [len(app.schedules.fire_due().get("burst", [])) for _ in range(4)] == [4, 4, 2, 0]
    assert len(set(_jobs(app, "burst"))) == 10


@pytest.mark.parametrize("zone, expr, day, local_times", [
    # spring forward: 02:00 -> 03:00 in New York; 02:30 does not exist that day: once, at 03:00
    ("America/New_York", "30 2 * * *", datetime(2030, 3, 10),
     ["2030-03-09T02:30", "2030-03-10T03:00", "2030-03-11T02:30"]),
    # Lisbon springs forward at 01:00 -> 02:00: 01:30 runs once, at 02:00
    ("Europe/Lisbon", "30 1 * * *", datetime(2030, 3, 31),
     ["2030-03-30T01:30", "2030-03-31T02:00", "2030-04-01T01:30"]),
    # fall back: 02:00 -> 01:00; 01:30 happens twice that day and runs once
    ("America/New_York", "30 1 * * *", datetime(2030, 11, 3),
     ["2030-11-02T01:30", "2030-11-03T01:30", "2030-11-04T01:30"]),
    ("Europe/Lisbon", "30 1 * * *", datetime(2030, 10, 27),
     ["2030-10-26T01:30", "2030-10-27T01:30", "2030-10-28T01:30"]),
])
def test_dst_transitions_in_a_named_zone(db_url: str, zone: str, expr: str, day: datetime,
                                         local_times: list[str]) -> None:
    tz = ZoneInfo(zone)
    begin = (day - timedelta(days=1)).replace(tzinfo=tz).astimezone(UTC)
    clock = FakeClock(begin)
    app = App(db_url, clock=clock)
    app.migrate()
    try:
        app.schedules.add("daily", "t.daily", cron=expr, tz=zone)
        _step_until(app, clock, begin + timedelta(days=3), timedelta(minutes=15))
        ticks = _jobs(app, "daily")
        assert [t.astimezone(tz).strftime("%Y-%m-%dT%H:%M") for t in ticks] == local_times
        assert len(set(ticks)) == 3
    finally:
        app.close()


def test_a_runtime_change_takes_effect_at_the_next_tick_in_every_worker(
    sched: tuple[App, FakeClock], db_url: str, start: datetime
) -> None:
    app, clock = sched
    other = App(db_url, clock=clock)  # another worker's App on the same database
    try:
        app.schedules.add("report", "t.report", every=60)
        clock.advance(60)
        assert len(other.schedules.fire_due()["report"]) == 1
        changed = app.schedules.change("report", every=300, payload={"v": 2})
        assert changed.every == 300 and changed.next_run_at == clock.now() + timedelta(
            seconds=300)
        clock.advance(240)
        assert other.schedules.fire_due() == {}  # the old 60 s ticks are gone
        clock.advance(60)
        (job_id,) = other.schedules.fire_due()["report"]
        assert other.get_job(job_id).payload == {"v": 2}
        # to a cron expression, then paused: no ticks; resumed: from the next one after now
        app.schedules.change("report", cron="0 * * * *")
        assert app.schedules.get("report").every is None
        app.schedules.pause("report")
        clock.advance(timedelta(hours=3))
        assert other.schedules.fire_due() == {}
        resumed = app.schedules.resume("report")
        assert resumed.next_run_at > clock.now() and resumed.next_run_at.minute == 0
        # run-now enqueues outside the ticks, which stay as they are
        handle = app.schedules.run_now("report")
        assert app.get_job(handle).tags == ("schedule:report",)
        assert app.schedules.get("report").next_run_at == resumed.next_run_at
        app.schedules.remove("report")
        with pytest.raises(JobNotFound):
            app.schedules.get("report")
        assert app.schedules.list() == []
    finally:
        other.close()


def test_declared_schedules_are_written_once_and_code_changes_replace_them(
    sched: tuple[App, FakeClock], db_url: str
) -> None:
    app, clock = sched

    @app.periodic(every=90, payload={"x": 1})
    def heartbeat(x: int) -> None: ...

    @app.periodic("*/5 * * * *", tz="Europe/Lisbon", missed="skip", name="five")
    def five() -> None: ...

    assert heartbeat.name in app.tasks and five.name in app.tasks
    assert app.schedules.sync_declared() == 2
    assert app.schedules.sync_declared() == 0
    names = {s.name: s for s in app.schedules.list()}
    assert names["five"].cron == "*/5 * * * *" and names["five"].missed == "skip"
    beat_name = default_name(heartbeat.name)
    assert len(heartbeat.name) > MAX_NAME and heartbeat.name.endswith(beat_name)
    assert names["five"].declared and names[beat_name].payload == {"x": 1}
    assert names[beat_name].task == heartbeat.name
    # a runtime change survives a restart whose code declares the same
    app.schedules.change("five", missed="all")
    again = App(db_url, clock=clock)
    again.periodic("*/5 * * * *", tz="Europe/Lisbon", missed="skip", name="five")(five.fn)
    assert again.schedules.sync_declared() == 0
    assert again.schedules.get("five").missed == "all"
    # a declaration changed in code replaces the stored one
    newer = App(db_url, clock=clock)
    newer.periodic("*/10 * * * *", tz="Europe/Lisbon", name="five")(five.fn)
    assert newer.schedules.sync_declared() == 1
    assert newer.schedules.get("five").cron == "*/10 * * * *"
    for a in (again, newer):
        a.close()


def test_bad_schedules_are_refused_and_write_nothing(sched: tuple[App, FakeClock]) -> None:
    app, _ = sched
    bad = [
        {"cron": "not a cron"},
        {"cron": "61 * * * *"},
        {"cron": "* * * * *", "every": 60},
        {},
        {"every": 0.5},
        {"every": -1},
        {"cron": "* * * * *", "tz": "Mars/Olympus"},
        {"every": 60, "missed": "sometimes"},
        {"every": 60, "payload": [1]},
    ]
    for options in bad:
        with pytest.raises(InvalidInput):
            app.schedules.add("bad", "t.bad", **options)  # type: ignore[arg-type]
    assert app.schedules.list() == []
    app.schedules.add("good", "t.good", every=60)
    with pytest.raises(InvalidInput, match="exists already"):
        app.schedules.add("good", "t.good", every=60)
    with pytest.raises(InvalidInput):
        app.schedules.change("good", color="red")
    with pytest.raises(InvalidInput):
        app.schedules.change("good", tz="Nowhere/Here")
    assert app.schedules.get("good").tz == "UTC"
    with pytest.raises(JobNotFound):
        app.schedules.pause("missing")


def test_a_worker_runs_its_apps_schedules(db_url: str, start: datetime) -> None:
    clock = FakeClock(start)
    app = App(db_url, clock=clock)
    app.migrate()
    ran = threading.Event()

    @app.periodic(every=60)
    def beat() -> str:
        ran.set()
        return "beat"

    try:
        with worker_running(Worker(app, concurrency=1, poll_interval=0.05)):
            for _ in range(600):  # until the scheduler has written the declaration
                if app.schedules.list():
                    break
                threading.Event().wait(0.05)
            clock.advance(60)
            assert ran.wait(30), "the worker's scheduler never enqueued the tick"
    finally:
        app.close()


@dataclasses.dataclass
class Report:
    kind: str


def test_a_registered_tasks_schedule_payload_is_checked_like_its_enqueue(
        sched: tuple[App, FakeClock]) -> None:
    """Issue 24 (newcomer): the App knows the handler, so a schedule's payload is checked as
    enqueue checks it (typed arguments validated and dumped), at add, change and declare."""
    app, _ = sched

    @app.task(name="t.digest", queue="mail", max_attempts=5)
    def digest(report: Report) -> None: ...

    with pytest.raises(InvalidInput, match="handler's parameters"):
        app.schedules.add("d", "t.digest", every=60, payload={"user": 1})
    with pytest.raises(InvalidInput, match="handler's parameters"):
        app.schedules.add("d", digest, every=60)
    assert app.schedules.list() == []
    made = app.schedules.add("d", "t.digest", every=60, payload={"report": Report("daily")})
    assert (made.queue, made.max_attempts, made.payload) == ("mail", 5, {"report": {
        "kind": "daily"}})
    with pytest.raises(InvalidInput, match="handler's parameters"):
        app.schedules.change("d", payload={"x": 1})
    assert app.schedules.get("d") == made
    with pytest.raises(InvalidInput, match="handler's parameters"):
        app.periodic(every=60, name="declared", payload={"x": 1})(digest)


def test_the_scheduler_sleeps_until_a_tick_due_before_its_next_regular_pass(
        sched: tuple[App, FakeClock], monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's scheduler waits its regular (jittered) pass, or until just after the next
    tick when that is due sooner, so a tick is not enqueued up to a pass late. Its sleeps are
    recorded, not slept: each moves the FakeClock on instead."""
    import asyncio

    from claimq._worker import scheduler
    from claimq._worker.dbcall import DB
    from claimq._worker.inflight import Counters

    app, clock = sched
    t0 = clock.now()
    app.schedules.add("soon", "t", every=30)  # next tick at t0 + 30
    app.schedules.add("paused", "t", every=5, paused=True)  # earlier, but paused
    monkeypatch.setattr(scheduler.random, "random", lambda: 1.0)  # the regular wait: 1.5 s
    stopping = asyncio.Event()
    steps = [29.75, 0.26, None]  # where the clock goes during each wait (None: stop)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        step = steps.pop(0)
        if step is None:
            stopping.set()
        else:
            clock.advance(step)

    monkeypatch.setattr(scheduler.asyncio, "sleep", sleep)
    db = DB()
    try:
        loop = scheduler.Scheduler(app, db, Counters(), stopping=stopping)
        asyncio.run(loop.run())
    finally:
        db.close()
    # t0: the tick 30 s away, past the regular pass; t0 + 29.75: it is 0.25 s away, so the
    # wait ends 10 ms (WAKE_AFTER) after it; t0 + 30.01: fired, the next tick 30 s away again
    assert waits == pytest.approx([1.5, 0.26, 1.5])
    assert _jobs(app, "soon") == [t0 + timedelta(seconds=30)]
    assert _jobs(app, "paused") == []


@pytest.mark.parametrize(("due_in", "wait"), [
    (None, 1.2),  # no schedule: the regular pass
    (3600.0, 1.2),  # a tick an hour away: the regular pass
    (1.3, 1.2),  # a tick just past the regular pass: the regular pass
    (0.4, 0.41),  # a tick before it: just after the tick
    (0.0, 1.2),  # due still after the pass (another worker fires it, or it cannot be planned)
    (-5.0, 1.2),
])
def test_the_schedulers_wait_is_until_the_next_tick_when_that_comes_first(
        due_in: float | None, wait: float) -> None:
    from claimq._worker.scheduler import next_wait

    assert next_wait(due_in, 1.2) == pytest.approx(wait)
