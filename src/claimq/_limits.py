"""Bounds shared by the exceptions, the retry policy and the input checks: a module of
constants that imports nothing of claimq, so each of them can build on it."""

from __future__ import annotations

# The longest span of time any entry point takes (delay, run_at from now, lease, timeout,
# retention, Retry(after=...), a retry policy's cap): 100 years. Past it, a datetime or a
# database timestamp overflows somewhere (Python's year 9999, SQLite's float seconds read back
# as datetimes, PostgreSQL's interval), and no real job waits that long.
MAX_SECONDS = 100 * 365.25 * 86400
