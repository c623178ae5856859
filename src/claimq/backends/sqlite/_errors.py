"""sqlite3's exceptions as claimq's own: the one place the SQLite backend classifies them."""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from claimq.errors import (
    ClaimqError,
    DatabaseError,
    DatabaseMissing,
    DatabaseUnavailable,
    SchemaMissing,
)

# Primary result codes (the low byte of an extended one) a retry can outlast: busy and locked
# (another writer), an I/O error or a full disk, out of memory, interrupted, a WAL protocol race.
_TRANSIENT = frozenset({5, 6, 7, 9, 10, 13, 15})
_CANTOPEN = 14


def translate(exc: sqlite3.Error, path: str) -> ClaimqError:
    """The claimq error for `exc` (raise it `from exc`); `path` is the database file's."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if "no such table" in text or "no such column" in text:
        return SchemaMissing(
            f"claimq's tables in {path} are missing or older than this claimq ({text}): "
            "run `claimq migrate` (or app.migrate())"
        )
    code = getattr(exc, "sqlite_errorcode", None)
    primary = None if code is None else code & 0xFF
    if primary == _CANTOPEN or "unable to open database file" in text:
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            return DatabaseMissing(
                f"directory {directory} of the SQLite database {path} does not exist: "
                "create it, or fix the URL"
            )
        return DatabaseError(f"cannot open the SQLite database {path}: {text}")
    if primary in _TRANSIENT or (primary is None and "locked" in text):
        return DatabaseUnavailable(f"database unavailable ({path}): {text}")
    return DatabaseError(f"database error ({path}): {text}")


class _HasPath(Protocol):
    path: str


S = TypeVar("S", bound=_HasPath)
P = ParamSpec("P")
R = TypeVar("R")


def mapped(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """A backend method whose sqlite3 errors become claimq's (for the methods that do not run
    inside the backend's write transaction, which maps its own)."""

    @functools.wraps(method)
    def call(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    return call
