"""The mysql:// backend runs on MariaDB >= 10.6 only; MySQL is refused at connect, with a
message that says why (issue 24). No MySQL server exists here: the check is a function of the
server's version string, tested with the strings servers send."""

from __future__ import annotations

import pytest

from claimq import InvalidInput
from claimq.backends.mysql._server import check_server


@pytest.mark.parametrize(("version", "expected"), [
    ("10.6.0-MariaDB", (10, 6)),
    ("10.11.6-MariaDB-0+deb12u1", (10, 11)),
    ("5.5.5-10.11.19-MariaDB-0+deb12u1", (10, 11)),  # the prefix old clients are sent
    ("5.5.5-10.6.12-MariaDB-log", (10, 6)),
    ("11.4.2-MariaDB", (11, 4)),
    ("11.8.1-MariaDB-ubu2404", (11, 8)),
])
def test_mariadb_from_10_6_is_accepted(version: str, expected: tuple[int, int]) -> None:
    assert check_server(version) == expected


@pytest.mark.parametrize("version", [
    "8.0.36", "8.4.0", "9.1.0", "8.0.36-0ubuntu0.22.04.1", "8.0.35-27-Percona Server",
    "5.7.44-log", "8.0.32-google",
])
def test_mysql_is_refused_clearly(version: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        check_server(version, "mysql://db:3306/app")
    message = str(refused.value)
    assert "not MariaDB" in message and "MariaDB 10.6 or later" in message
    assert "RETURNING" in message and "mysql://db:3306/app" in message


@pytest.mark.parametrize("version", ["10.5.23-MariaDB", "5.5.5-10.4.32-MariaDB", "10.3.39-MariaDB"])
def test_mariadb_before_10_6_is_refused(version: str) -> None:
    with pytest.raises(InvalidInput, match=r"MariaDB 10\.6 or later"):
        check_server(version)


@pytest.mark.parametrize("version", ["", "MariaDB", "garbage", "x.y-MariaDB"])
def test_an_unreadable_version_is_refused(version: str) -> None:
    with pytest.raises(InvalidInput, match="not MariaDB"):
        check_server(version)


def test_the_backend_checks_the_server_it_connects_to(mariadb_server: str) -> None:
    """The real server (MariaDB here) passes the check at the first connection; a server that
    answered as MySQL would be refused there, its connection closed."""
    from claimq.backends.mysql import MySQLBackend

    backend = MySQLBackend(f"{mariadb_server}/mysql")
    try:
        assert backend.run_sql("SELECT 1") == [(1,)]
        assert backend._server_checked
    finally:
        backend.close()


def test_a_mysql_server_is_refused_at_connect(mariadb_server: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import pymysql

    from claimq.backends.mysql import MySQLBackend

    monkeypatch.setattr(pymysql.connections.Connection, "get_server_info",
                        lambda self: "8.0.36")
    backend = MySQLBackend(f"{mariadb_server}/mysql")
    try:
        with pytest.raises(InvalidInput, match="not MariaDB"):
            backend.run_sql("SELECT 1")
        assert backend._idle == []
    finally:
        backend.close()
