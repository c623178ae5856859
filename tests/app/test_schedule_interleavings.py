"""A runtime edit of a schedule meeting a scheduler's firing of it (issue 24, defect 4), forced
with the pause points on every backend: the edit stopped between its read and its write while a
scheduler fires the tick to completion, and the firing stopped between its read and its write
while the edit runs. Either way the tick is enqueued exactly once, the firing's next_run_at
stays, and the edit lands. Also an edit (change, a worker's sync_declared) stopped after its read
while an operator pauses the schedule: the pause stays."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from claimq import App
from claimq._pause import set_hook
from claimq.clock import FakeClock
from claimq.schedules import Schedule, Schedules

WAIT = 20.0  # seconds: only ever reached when the interleaving could not be forced


class Stop:
    """The first thread to reach `point` stops there until `go` is set (`block=False`: it only
    says it got there)."""

    def __init__(self, point: str, *, block: bool = True) -> None:
        self.point, self.block = point, block
        self.reached, self.go = threading.Event(), threading.Event()
        self._taken = threading.Lock()

    def __call__(self) -> None:
        first = self._taken.acquire(blocking=False)
        self.reached.set()
        if first and self.block:
            assert self.go.wait(WAIT), f"{self.point} was never released"


@contextmanager
def stops(*points: Stop) -> Iterator[None]:
    by_name = {s.point: s for s in points}

    def hook(point: str) -> None:
        stop = by_name.get(point)
        if stop is not None:
            stop()

    previous = set_hook(hook)
    try:
        yield
    finally:
        set_hook(previous)
        for s in points:
            s.go.set()


class Run:
    """`fn()` in a thread; `result()` joins it and returns its value or raises its error."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._out: list[tuple[bool, Any]] = []
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[], Any]) -> None:
        try:
            self._out.append((True, fn()))
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            self._out.append((False, exc))

    def result(self) -> Any:
        self._thread.join(WAIT)
        assert not self._thread.is_alive(), "the operation did not finish"
        ok, value = self._out[0]
        if not ok:
            raise value
        return value


EDITS: dict[str, tuple[Callable[[Schedules], Any], Callable[[Schedule], bool]]] = {
    "change": (lambda s: s.change("tick", payload={"v": 2}), lambda got: got.payload == {"v": 2}),
    "pause": (lambda s: s.pause("tick"), lambda got: got.paused),
}


@pytest.fixture
def start() -> datetime:
    return datetime.now(UTC).replace(microsecond=0) + timedelta(days=1)


@pytest.fixture
def pair(db_url: str, start: datetime) -> Iterator[tuple[App, App, FakeClock]]:
    """The scheduler's App and an operator's App on one database and one clock, with the
    schedule `tick` (every minute) due at start + 60 s, the clock there."""
    clock = FakeClock(start)
    scheduler, operator = App(db_url, clock=clock), App(db_url, clock=clock)
    scheduler.migrate()
    scheduler.schedules.add("tick", "t.tick", every=60, payload={"v": 1})
    clock.advance(60)
    yield scheduler, operator, clock
    operator.close()
    scheduler.close()


def _ticks(app: App) -> list[datetime]:
    jobs = [j for table in ("live", "archive", "dead")
            for j in app.list_jobs(table, limit=1000)  # type: ignore[arg-type]
            if "schedule:tick" in j.tags]
    return sorted(j.run_at for j in jobs if j.run_at is not None)


def _check(app: App, start: datetime, landed: Callable[[Schedule], bool]) -> None:
    stored = app.schedules.get("tick")
    assert stored.next_run_at == start + timedelta(seconds=120), "the firing was undone"
    assert landed(stored), "the edit was lost"
    assert app.schedules.fire_due() == {}, "the tick fired again"
    assert _ticks(app) == [start + timedelta(seconds=60)]


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_paused_after_its_read_does_not_undo_a_firing(
        pair: tuple[App, App, FakeClock], start: datetime, edit: str) -> None:
    scheduler, operator, _ = pair
    run_edit, landed = EDITS[edit]
    at_read = Stop("schedule.edit_read")
    with stops(at_read):
        editing = Run(lambda: run_edit(operator.schedules))
        assert at_read.reached.wait(WAIT), "the edit never reached schedule.edit_read"
        fired = scheduler.schedules.fire_due()  # to completion while the edit waits
        assert len(fired["tick"]) == 1
        at_read.go.set()
        editing.result()
    _check(scheduler, start, landed)


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_firing_paused_after_its_read_is_not_undone_by_an_edit(
        pair: tuple[App, App, FakeClock], start: datetime, edit: str) -> None:
    scheduler, operator, _ = pair
    run_edit, landed = EDITS[edit]
    at_fire = Stop("schedule.fire_due")
    edit_read = Stop("schedule.edit_read", block=False)
    with stops(at_fire, edit_read):
        firing = Run(scheduler.schedules.fire_due)
        assert at_fire.reached.wait(WAIT), "the firing never reached schedule.fire_due"
        editing = Run(lambda: run_edit(operator.schedules))
        # the edit has read the row the firing holds (its write then waits for the firing's
        # lock, or is refused after it)
        assert edit_read.reached.wait(WAIT), "the edit never reached schedule.edit_read"
        at_fire.go.set()
        assert len(firing.result()["tick"]) == 1
        editing.result()
    _check(scheduler, start, landed)


def _declare_changed(app: App) -> int:
    """A worker's start whose code declares `tick` anew (every 2 minutes)."""

    def tick() -> None: ...

    app.periodic(every=120, name="tick")(app.task(name="t.tick")(tick))
    return app.schedules.sync_declared()


LATE_EDITS: dict[str, Callable[[App], Any]] = {
    "change": lambda app: app.schedules.change("tick", payload={"v": 2}),
    "sync_declared": _declare_changed,
}


@pytest.mark.parametrize("edit", sorted(LATE_EDITS))
def test_an_edit_paused_after_its_read_does_not_undo_a_pause(
        pair: tuple[App, App, FakeClock], edit: str) -> None:
    scheduler, operator, _ = pair
    at_read = Stop("schedule.edit_read")
    with stops(at_read):
        editing = Run(lambda: LATE_EDITS[edit](operator))
        assert at_read.reached.wait(WAIT), "the edit never reached schedule.edit_read"
        assert scheduler.schedules.pause("tick").paused  # passes the point: not the first
        at_read.go.set()
        editing.result()
    stored = scheduler.schedules.get("tick")
    assert stored.paused, "the pause was undone"
    assert scheduler.schedules.fire_due() == {}
    assert stored.payload == {"v": 2} if edit == "change" else stored.every == 120
