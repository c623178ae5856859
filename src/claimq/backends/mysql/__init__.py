"""The MariaDB/MySQL backend (`mysql://…`, `mariadb://…`)."""

from __future__ import annotations

from claimq.backends.mysql.backend import MySQLBackend


def fresh_database(url: str, prefix: str) -> str:
    """Creates a new, empty database `PREFIX_xxxxxxxx` on the server of `url` (through the
    database `url` names) and returns `url` naming it instead: for the bench and the demo."""
    return MySQLBackend.fresh_url(url, prefix)


__all__ = ["MySQLBackend", "fresh_database"]
