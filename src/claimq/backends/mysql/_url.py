"""`mysql://user:password@host:port/database?driver=pymysql&lock_wait_timeout=10` (or
`mariadb://…`): claimq's MariaDB/MySQL URLs. `read_timeout` (default 120 s) bounds the wait for
one statement's answer, so a server that stops answering is noticed; it must stay above
`lock_wait_timeout` (default 10 s), the longest a statement waits for a row lock."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlparse

from claimq.errors import InvalidInput

SCHEMES = ("mysql", "mariadb")
DRIVERS = ("pymysql", "mysqlclient")
DEFAULT_DRIVER = "pymysql"
OPTIONS = ("driver", "lock_wait_timeout", "connect_timeout", "read_timeout", "pool_size")


@dataclass(frozen=True, slots=True)
class MySQLURL:
    host: str
    port: int
    user: str
    password: str
    database: str
    driver: str
    lock_wait_timeout: int  # seconds a statement waits for a row lock (then retried)
    connect_timeout: int
    read_timeout: int  # seconds a statement's answer may take before the link counts as dead
    pool_size: int  # idle connections kept


def parse_mysql_url(url: str) -> MySQLURL:
    try:
        parsed = urlparse(url)
        options = dict(parse_qsl(parsed.query))
        port = parsed.port or 3306
    except ValueError as exc:
        raise InvalidInput(f"invalid database URL: {exc}") from None
    if parsed.scheme.lower() not in SCHEMES:
        raise InvalidInput("not a MariaDB/MySQL URL (want mysql://user@host/db)")
    unknown = set(options) - set(OPTIONS)
    if unknown:
        raise InvalidInput(f"unknown MySQL URL option(s): {sorted(unknown)}")
    database = unquote(parsed.path.lstrip("/"))
    if not database or "/" in database:
        raise InvalidInput("a MySQL URL names its database: mysql://user@host:3306/DATABASE")
    driver = options.get("driver", DEFAULT_DRIVER)
    if driver not in DRIVERS:
        raise InvalidInput(f"driver must be one of {list(DRIVERS)}, got {driver!r}")

    def whole(name: str, default: int, low: int, high: int) -> int:
        text = options.get(name, str(default))
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise InvalidInput(f"{name} must be a whole number from {low} to {high}, got {text!r}")
        return value

    lock_wait = whole("lock_wait_timeout", 10, 1, 3600)
    read = whole("read_timeout", 120, 2, 86_400)
    if read <= lock_wait:
        raise InvalidInput("read_timeout must be longer than lock_wait_timeout")
    return MySQLURL(
        host=parsed.hostname or "127.0.0.1",
        port=port,
        user=unquote(parsed.username or "root"),
        password=unquote(parsed.password or ""),
        database=database,
        driver=driver,
        lock_wait_timeout=lock_wait,
        connect_timeout=whole("connect_timeout", 5, 1, 600),
        read_timeout=read,
        pool_size=whole("pool_size", 16, 1, 10_000),
    )


def mysqldb_driver() -> str:
    """Which driver the importable `MySQLdb` module is: "mysqlclient", or "pymysql" when PyMySQL
    is installed as MySQLdb (Django's MySQL backend uses whichever it is)."""
    import MySQLdb

    return "pymysql" if MySQLdb.__name__ == "pymysql" else "mysqlclient"
