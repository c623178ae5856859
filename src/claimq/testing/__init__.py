"""Aids for testing code that uses claimq, and backends that implement it.

- `FakeClock` (from `claimq.clock`): pass it as `App(url, clock=...)` and move time with
  `advance()`; leases expire, delays fall due and retention windows close without sleeping.
- `claimq.testing.conformance`: the backend conformance suite (pytest), which every backend
  passes unchanged; its docstring says how to run it against a backend.
"""

from claimq.clock import FakeClock

__all__ = ["FakeClock"]
