"""Backends: pick one by URL."""

from __future__ import annotations

from typing import Any

from claimq.backends._url import parse_postgres_url, redact, with_option
from claimq.backends.base import Backend, Capabilities
from claimq.clock import Clock
from claimq.errors import InvalidInput


def _backend_class(url: str) -> Any:
    """The backend class of the URL's scheme."""
    if not isinstance(url, str):
        raise InvalidInput(f"database URL must be a string, got {url!r}")
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "sqlite":
        from claimq.backends.sqlite import SQLiteBackend

        return SQLiteBackend
    if scheme in ("postgresql", "postgres"):
        from claimq.backends.postgres import PostgresBackend

        return PostgresBackend
    if scheme in ("mysql", "mariadb"):
        from claimq.backends.mysql import MySQLBackend

        return MySQLBackend
    raise InvalidInput(
        f"unsupported database URL {url!r}: use sqlite:///path.db, postgresql://… or "
        "mysql://…"
    )


def open_backend(url: str, *, clock: Clock | None = None) -> Backend:
    """`sqlite:///path.db`, `postgresql://…` or `mysql://…` (`mariadb://…`); the scheme picks
    the backend. `clock` (default: the system clock) gives every time the backend computes;
    tests pass a FakeClock."""
    backend: Backend = _backend_class(url)(url, clock=clock)
    return backend


def fresh_url(url: str, prefix: str, *, replace: bool = False) -> str:
    """For a throwaway run of a tool (the benchmark, the demo): `url` changed to name an empty
    place of its own beside the one it names: a new schema `PREFIX_xxxxxxxx` (PostgreSQL), a
    new database `PREFIX_xxxxxxxx` made now on the same server (MariaDB/MySQL), a new file
    `stem-xxxxxxxx.db` beside the URL's (SQLite; with `replace`, the URL's own file emptied
    instead). `open_backend(url).drop_all()` removes it again."""
    fresh: str = _backend_class(url).fresh_url(url, prefix, replace=replace)
    return fresh


__all__ = ["Backend", "Capabilities", "fresh_url", "open_backend", "parse_postgres_url", "redact",
           "with_option"]
