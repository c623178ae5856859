"""The app of test_schedule_workers' worker processes: two schedules, on a clock that every
process reads from one file (the test moves it), the scheduler looking for due ticks often."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import claimq._worker.scheduler as scheduler
from claimq import App

scheduler.SCHEDULE_EVERY = 0.02  # a pass every 10-30 ms (normally about a second)


class FileClock:
    """The time written in a file (ISO 8601), the same for every process that reads it."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)

    def now(self) -> datetime:
        return datetime.fromisoformat(self.path.read_text())


app = App(os.environ["CLAIMQ_DATABASE_URL"], clock=FileClock(os.environ["CLAIMQ_TEST_CLOCK"]))


@app.periodic(every=60, name="tick")
def tick() -> int:
    return 1


@app.periodic("* * * * *", tz="Europe/Lisbon", name="cron")
def cron() -> int:
    return 2
