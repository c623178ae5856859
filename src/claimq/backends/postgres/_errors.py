"""psycopg's exceptions as claimq's own: the one place the PostgreSQL backend classifies them."""

from __future__ import annotations

import re

import psycopg
from psycopg_pool import PoolTimeout

from claimq.errors import (
    ClaimqError,
    DatabaseError,
    DatabaseMissing,
    DatabaseUnavailable,
    PermissionDenied,
    SchemaMissing,
)

# SQLSTATEs a retry can outlast: serialization failure, deadlock, lock or statement timeout,
# too many connections, out of resources, and the server shutting down or starting up. Class
# 08 (connection exceptions) is matched by its prefix.
_TRANSIENT = frozenset({
    "40001", "40P01", "55P03", "57014", "53000", "53100", "53200", "53300", "53400",
    "57P01", "57P02", "57P03", "57P04", "57P05", "58000", "58030",
})
# A relation, schema, column or function of claimq's is not there: unmigrated, or migrated by
# an older claimq.
_SCHEMA = frozenset({"42P01", "3F000", "42703", "42883"})
_DB_MISSING = "3D000"
_NO_PRIVILEGE = "42501"
# Connection failures carry no SQLSTATE in psycopg; the server's FATAL text names the cause.
_NO_DATABASE_RE = re.compile(r'database "(?P<name>[^"]*)" does not exist')
_REFUSED_LOGIN_RE = re.compile(
    r"password authentication failed|role \"[^\"]*\" does not exist|no pg_hba\.conf entry"
    r"|authentication failed|permission denied"
)


def first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split("\n")[0].split())
    return text or type(exc).__name__


def translate(exc: psycopg.Error, schema: str, where: str) -> ClaimqError:
    """The claimq error for `exc` (raise it `from exc`). `where` names the database (a URL
    without its password) for messages about reaching it."""
    text = first_line(exc)
    if isinstance(exc, PoolTimeout):
        return DatabaseUnavailable(f"cannot connect to {where} in time: {text}")
    state = exc.sqlstate
    if state is None:
        if isinstance(exc, psycopg.OperationalError):
            return _connection_error(exc, text, where)
        return DatabaseError(f"database error: {text}")
    if state in _SCHEMA:
        return SchemaMissing(
            f"claimq's tables in schema {schema!r} are missing or older than this claimq "
            f"({text}): run `claimq migrate` (or app.migrate())"
        )
    if state == _DB_MISSING:
        return DatabaseMissing(f"{text} ({where})")
    if state in _TRANSIENT or state.startswith("08"):
        return DatabaseUnavailable(f"database unavailable: {text}")
    if state == _NO_PRIVILEGE:
        return PermissionDenied(f"database error: {text}")
    return DatabaseError(f"database error: {text}")


def _connection_error(exc: psycopg.OperationalError, text: str, where: str) -> ClaimqError:
    """A failure to connect, or a connection lost, which psycopg reports without a SQLSTATE."""
    full = str(exc)
    missing = _NO_DATABASE_RE.search(full)
    if missing:
        return DatabaseMissing(
            f"database {missing['name']!r} does not exist on the server of {where}: create "
            "it (CREATE DATABASE), or fix the URL"
        )
    if _REFUSED_LOGIN_RE.search(full):
        return DatabaseError(f"the server of {where} refused the login: {text}")
    if text.startswith("connection failed") or isinstance(exc, psycopg.errors.ConnectionTimeout):
        return DatabaseUnavailable(f"cannot connect to {where}: {text}")
    return DatabaseUnavailable(f"lost the connection to {where}: {text}")
