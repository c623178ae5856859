"""How the MariaDB backend classifies a driver error it cannot provoke at will: a session killed
while its statement opened a trigger answers 1064 "Unknown trigger has an error in its body"
(seen in CI under tests/chaos/test_chaos_mariadb.py, where the worker took it for a bug in its
SQL and stopped). It is transient, like the kill codes; a real syntax error is not."""

from __future__ import annotations

import pymysql

from claimq.backends.mysql._errors import translate
from claimq.errors import DatabaseError, DatabaseUnavailable


def test_a_session_killed_inside_a_trigger_is_transient() -> None:
    killed = pymysql.err.ProgrammingError(
        1064, "Unknown trigger has an error in its body: 'Query was empty'")
    assert isinstance(translate(killed, "mysql://db"), DatabaseUnavailable)


def test_a_real_syntax_error_is_not() -> None:
    wrong = pymysql.err.ProgrammingError(
        1064, "You have an error in your SQL syntax; check the manual near 'SELEC 1'")
    found = translate(wrong, "mysql://db")
    assert isinstance(found, DatabaseError) and not isinstance(found, DatabaseUnavailable)
