"""claimq's backend conformance suite, run against SQLite and PostgreSQL (conftest.py)."""

from claimq.testing.conformance import *  # noqa: F403
