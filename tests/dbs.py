"""Fresh databases for tests: a SQLite file, a PostgreSQL schema, a MariaDB database."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

MARIADB_URL = os.environ.get("CLAIMQ_TEST_MARIADB", "mysql://root@127.0.0.1:3306")
REQUIRE_MARIADB = os.environ.get("CLAIMQ_REQUIRE_MARIADB") == "1"
# The backend's driver in the tests' URLs (pymysql, the default, or mysqlclient).
MARIADB_DRIVER = os.environ.get("CLAIMQ_TEST_MARIADB_DRIVER", "")


def drop_schema(base_url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def mariadb_admin() -> Any:
    """A connection to the MariaDB server (no database); skips (or fails, under CI) without."""
    try:
        import pymysql

        parsed = urlparse(MARIADB_URL)
        return pymysql.connect(
            host=parsed.hostname or "127.0.0.1", port=parsed.port or 3306,
            user=parsed.username or "root", password=parsed.password or "", autocommit=True,
            connect_timeout=5)
    except Exception as exc:  # noqa: BLE001 - any failure to reach the server means the same
        if REQUIRE_MARIADB:
            pytest.fail(f"MariaDB is required (CLAIMQ_REQUIRE_MARIADB=1) but unreachable: {exc}")
        pytest.skip(f"MariaDB not reachable: {exc}")


@contextlib.contextmanager
def mariadb_database(server: str) -> Iterator[str]:
    """A new, empty database on the MariaDB server for one test: its URL; dropped after."""
    name = f"cq_{uuid.uuid4().hex[:12]}"
    conn = mariadb_admin()
    try:
        conn.cursor().execute(f"CREATE DATABASE {name}")
        yield f"{server}/{name}" + (f"?driver={MARIADB_DRIVER}" if MARIADB_DRIVER else "")
    finally:
        conn.cursor().execute(f"DROP DATABASE IF EXISTS {name}")
        conn.close()


def fresh_db_url(request: pytest.FixtureRequest, kind: str, tmp_path: os.PathLike[str]
                 ) -> Iterator[str]:
    """A fresh, empty database URL of `kind`: a new SQLite file, a new PG schema, or a new
    MariaDB database."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path}/claimq.db"
        return
    if kind == "mariadb":
        with mariadb_database(request.getfixturevalue("mariadb_server")) as url:
            yield url
        return
    base = request.getfixturevalue("pg_base_url")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    yield f"{base}?schema={schema}"
    drop_schema(base, schema)


