"""Scheduler processes for test_schedules: each opens its own App on the shared database with a
FakeClock of its own, and at every tick all of them (a barrier) fire the due schedules at once."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from claimq import App
from claimq.clock import FakeClock


def race_ticks(url: str, start: datetime, step: float, ticks: int, barrier: Any,
               out: Any) -> None:
    """Puts how many jobs this process enqueued (or the error it met) on `out`."""
    try:
        out.put(_race(url, start, step, ticks, barrier))
    except BaseException as exc:
        out.put(repr(exc))
        raise


def _race(url: str, start: datetime, step: float, ticks: int, barrier: Any) -> int:
    clock = FakeClock(start)
    app = App(url, clock=clock)
    fired = 0
    try:
        for n in range(1, ticks + 1):
            clock.set(start + timedelta(seconds=n * step))
            barrier.wait(60)
            fired += sum(len(ids) for ids in app.schedules.fire_due().values())
    finally:
        app.close()
    return fired
