"""Backends: pick one by URL."""

from __future__ import annotations

from claimq.backends._url import parse_postgres_url, redact, with_option
from claimq.backends.base import Backend, Capabilities
from claimq.clock import Clock
from claimq.errors import InvalidInput


def open_backend(url: str, *, clock: Clock | None = None) -> Backend:
    """`sqlite:///path.db`, `postgresql://…` or `mysql://…` (`mariadb://…`); the scheme picks
    the backend. `clock` (default: the system clock) gives every time the backend computes;
    tests pass a FakeClock."""
    if not isinstance(url, str):
        raise InvalidInput(f"database URL must be a string, got {url!r}")
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "sqlite":
        from claimq.backends.sqlite import SQLiteBackend

        return SQLiteBackend(url, clock=clock)
    if scheme in ("postgresql", "postgres"):
        from claimq.backends.postgres import PostgresBackend

        return PostgresBackend(url, clock=clock)
    if scheme in ("mysql", "mariadb"):
        from claimq.backends.mysql import MySQLBackend

        return MySQLBackend(url, clock=clock)
    raise InvalidInput(
        f"unsupported database URL {url!r}: use sqlite:///path.db, postgresql://… or "
        "mysql://…"
    )


__all__ = ["Backend", "Capabilities", "open_backend", "parse_postgres_url", "redact",
           "with_option"]
