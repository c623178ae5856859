"""The clock a backend reads for every time it computes: lease expiry, due times, backoff,
retention windows, the times written into rows.

`SystemClock` (the default) is the real time. On PostgreSQL it means the server's own clock:
the statements get no time from Python, so hosts whose clocks disagree cannot disagree about a
lease. `FakeClock` moves only when told, for tests: a lease expires by `advance()`, never by
sleeping.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

from claimq.errors import InvalidInput


@runtime_checkable
class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...


class SystemClock:
    """The real time (on PostgreSQL: the database server's `now()`)."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def __repr__(self) -> str:
        return "SystemClock()"


class FakeClock:
    """A clock that stands still until `advance()` or `set()` moves it.

    `tick` (seconds, default 0) is added after every reading, for tests that need successive
    operations to happen at distinct, increasing times as they would on a real clock.
    """

    def __init__(self, start: datetime | None = None, *, tick: float = 0.0) -> None:
        self._now = _aware(start) if start is not None else datetime(2030, 1, 1, tzinfo=UTC)
        self._tick = timedelta(seconds=tick)

    def now(self) -> datetime:
        current = self._now
        if self._tick:
            self._now = current + self._tick
        return current

    def advance(self, seconds: float | timedelta) -> datetime:
        """Moves the clock forward (or back, for a negative amount); returns the new time."""
        step = seconds if isinstance(seconds, timedelta) else timedelta(seconds=seconds)
        self._now += step
        return self._now

    def set(self, when: datetime) -> None:
        self._now = _aware(when)

    def __repr__(self) -> str:
        return f"FakeClock({self._now.isoformat()})"


def is_system(clock: Clock) -> bool:
    """Whether `clock` is the real time, which PostgreSQL then takes from the server."""
    return type(clock) is SystemClock


def _aware(when: datetime) -> datetime:
    if not isinstance(when, datetime) or when.tzinfo is None or when.utcoffset() is None:
        raise InvalidInput(f"a clock's time must be a timezone-aware datetime, got {when!r}")
    return when.astimezone(UTC)


__all__ = ["Clock", "FakeClock", "SystemClock"]
