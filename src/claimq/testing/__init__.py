"""Aids for testing code that uses claimq, and backends that implement it.

- `drain(app, queue=None)` runs the due jobs of a queue (or of all) in the test's own process,
  with the real worker, until none is due or running; `await adrain(...)` from async tests.
- `assert_enqueued(app, task, **args)`, `refute_enqueued(...)` and `all_enqueued(...)` look at
  what is waiting to run.
- `use_database(app, url)` points an App (your module's) at a test's own database.
- `FakeClock` (from `claimq.clock`): pass it as `App(url, clock=...)` and move time with
  `advance()`; leases expire, delays fall due and retention windows close without sleeping.
- `claimq.testing.conformance`: the backend conformance suite (pytest), which every backend
  passes unchanged; its docstring says how to run it against a backend.
"""

from claimq.clock import FakeClock
from claimq.testing._helpers import (
    Drained,
    adrain,
    all_enqueued,
    assert_enqueued,
    drain,
    refute_enqueued,
    use_database,
)

__all__ = [
    "Drained",
    "FakeClock",
    "adrain",
    "all_enqueued",
    "assert_enqueued",
    "drain",
    "refute_enqueued",
    "use_database",
]
