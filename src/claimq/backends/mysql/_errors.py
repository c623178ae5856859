"""The MySQL drivers' exceptions as claimq's own: the one place the MariaDB/MySQL backend
classifies them. PyMySQL and mysqlclient both put the server's error number first in `args`."""

from __future__ import annotations

from claimq.errors import (
    ClaimqError,
    DatabaseError,
    DatabaseMissing,
    DatabaseUnavailable,
    SchemaMissing,
)

DEADLOCK = 1213  # the server rolled the whole transaction back
LOCK_WAIT_TIMEOUT = 1205  # only the statement was rolled back
RETRYABLE = frozenset({DEADLOCK, LOCK_WAIT_TIMEOUT})
DUPLICATE_KEY = 1062  # a unique key's value is taken
# A retry can outlast these: too many connections, the server shutting down, a connection
# killed, interrupted or idle too long, and the client's codes for a connection refused or lost.
_TRANSIENT = frozenset({
    DEADLOCK, LOCK_WAIT_TIMEOUT, 1040, 1053, 1077, 1078, 1079, 1080, 1152, 1158, 1159, 1160,
    1161, 1317, 1927, 4031, 2002, 2003, 2005, 2006, 2011, 2012, 2013, 2014, 2026, 2055,
})
# The connection itself is gone or in an unknown state: it must not be used again.
BROKEN = frozenset({1053, 1077, 1080, 1152, 1158, 1159, 1160, 1161, 1927, 4031, 2006, 2013,
                    2014, 2055, 0})
_SCHEMA = frozenset({1146, 1054})  # no such table, no such column
_SYNTAX = 1064
# A session killed (KILL CONNECTION) while its statement opened a table's trigger: MariaDB
# answers 1064 "Unknown trigger has an error in its body: 'Query was empty'" (the trigger's
# text was cut short), not one of the kill codes. The statement did not run and the connection
# is going: transient. (A chaos test's worker took it for a bug in its SQL and stopped.)
_KILLED_IN_TRIGGER = "trigger has an error in its body"
_NO_DATABASE = 1049
_REFUSED_LOGIN = frozenset({1044, 1045, 1698})


def error_code(exc: BaseException) -> int:
    """The server's (or client library's) error number, 0 when there is none."""
    first = exc.args[0] if exc.args else None
    return first if isinstance(first, int) else 0


def _text(exc: BaseException) -> str:
    if len(exc.args) >= 2:
        return f"({exc.args[0]}) {' '.join(str(exc.args[1]).split())}"
    return " ".join(str(exc).split()) or type(exc).__name__


def translate(exc: BaseException, where: str) -> ClaimqError:
    """The claimq error for `exc` (raise it `from exc`); `where` names the database (a URL
    without its password)."""
    code, text = error_code(exc), _text(exc)
    if code in _SCHEMA:
        return SchemaMissing(
            f"claimq's tables in {where} are missing or older than this claimq ({text}): "
            "run `claimq migrate` (or app.migrate())"
        )
    if code == _NO_DATABASE:
        return DatabaseMissing(
            f"the database of {where} does not exist ({text}): create it (CREATE DATABASE), "
            "or fix the URL"
        )
    if code in _REFUSED_LOGIN:
        return DatabaseError(f"the server of {where} refused the login: {text}")
    if code in _TRANSIENT or (code == _SYNTAX and _KILLED_IN_TRIGGER in text):
        return DatabaseUnavailable(f"database unavailable ({where}): {text}")
    if type(exc).__name__ in ("OperationalError", "InterfaceError") and code in BROKEN:
        return DatabaseUnavailable(f"lost the connection to {where}: {text}")
    return DatabaseError(f"database error ({where}): {text}")
