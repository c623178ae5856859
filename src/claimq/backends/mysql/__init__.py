"""The MariaDB/MySQL backend (`mysql://…`, `mariadb://…`)."""

from __future__ import annotations

import secrets
from urllib.parse import urlparse

from claimq.backends.mysql.backend import MySQLBackend


def fresh_database(url: str, prefix: str) -> str:
    """Creates a new, empty database `PREFIX_xxxxxxxx` on the server of `url` (through the
    database `url` names) and returns `url` naming it instead: for the bench and the demo."""
    name = f"{prefix}_{secrets.token_hex(4)}"
    server = MySQLBackend(url)
    try:
        server.run_sql(f"CREATE DATABASE {name}")
    finally:
        server.close()
    return urlparse(url)._replace(path=f"/{name}").geturl()


__all__ = ["MySQLBackend", "fresh_database"]
