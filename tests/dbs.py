"""Fresh databases for tests: a SQLite file, a PostgreSQL schema, a MariaDB database.

A test that migrates its database anyway (it uses one of MIGRATING_FIXTURES) gets one from its
test process's pool of migrated PostgreSQL schemas and MariaDB databases: migrating one costs
0.6-2 s of DDL, putting it back as it was just after migrating costs tens of milliseconds. A
database goes back to the pool only when nothing of the test still talks to it and its
structure is the one migrate() made; its rows (but the migrations') are deleted and its
sequences restarted. Anything else is dropped, as a fresh database always is."""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

MARIADB_URL = os.environ.get("CLAIMQ_TEST_MARIADB", "mysql://root@127.0.0.1:3306")
REQUIRE_MARIADB = os.environ.get("CLAIMQ_REQUIRE_MARIADB") == "1"
# The backend's driver in the tests' URLs (pymysql, the default, or mysqlclient).
MARIADB_DRIVER = os.environ.get("CLAIMQ_TEST_MARIADB_DRIVER", "")
# Fixtures that migrate the test's database before the test runs: such a test may be handed a
# database migrated before (`CLAIMQ_TEST_DB_POOL=0` turns the pool off).
MIGRATING_FIXTURES = frozenset({"app", "capp", "conformance_backend_factory", "open_world"})
POOLED = os.environ.get("CLAIMQ_TEST_DB_POOL", "1") != "0"


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


def _mariadb_url(server: str, name: str) -> str:
    return f"{server}/{name}" + (f"?driver={MARIADB_DRIVER}" if MARIADB_DRIVER else "")


@contextlib.contextmanager
def mariadb_database(server: str) -> Iterator[str]:
    """A new, empty database on the MariaDB server for one test: its URL; dropped after."""
    name = f"cq_{uuid.uuid4().hex[:12]}"
    conn = mariadb_admin()
    try:
        conn.cursor().execute(f"CREATE DATABASE {name}")
        yield _mariadb_url(server, name)
    finally:
        conn.cursor().execute(f"DROP DATABASE IF EXISTS {name}")
        conn.close()


class _Pool:
    """Migrated databases of one kind that finished tests gave back, in this test process."""

    # How long a finished test's sessions may take to go (a killed worker's server session
    # ends a moment after the process).
    LINGER = 3.0

    def __init__(self) -> None:
        self.idle: list[str] = []
        self.pristine: Any = None  # the structure right after migrate()
        self._admin: Any = None

    def lend(self, request: pytest.FixtureRequest) -> Iterator[str]:
        name = self.idle.pop() if self.idle else self._create(request)
        yield self._url(request, name)
        try:
            reusable = self._quiet(name) and self._structure(name) == self.pristine
            if reusable:
                self._reset(name)
        except Exception:  # noqa: BLE001 - a database that cannot be reset is dropped instead
            reusable = False
            self._admin = None
        if reusable:
            self.idle.append(name)
        else:
            self._drop(name)

    def _create(self, request: pytest.FixtureRequest) -> str:
        from claimq import App

        name = self._new_name()
        app = App(self._url(request, name))
        try:
            app.migrate()
        finally:
            app.close()
        if self.pristine is None:
            self.pristine = self._structure(name)
        return name

    def _quiet(self, name: str) -> bool:
        """True once no session but ours uses the database (waits LINGER for them to end)."""
        deadline = time.monotonic() + self.LINGER
        while self._sessions(name):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def _url(self, request: pytest.FixtureRequest, name: str) -> str:
        raise NotImplementedError

    def _new_name(self) -> str:
        raise NotImplementedError

    def _sessions(self, name: str) -> int:
        raise NotImplementedError

    def _structure(self, name: str) -> Any:
        raise NotImplementedError

    def _reset(self, name: str) -> None:
        raise NotImplementedError

    def _drop(self, name: str) -> None:
        raise NotImplementedError


class _PostgresPool(_Pool):
    def __init__(self) -> None:
        super().__init__()
        self.base = ""

    def _url(self, request: pytest.FixtureRequest, name: str) -> str:
        # Its sessions carry the schema's name as application_name, so that _sessions finds
        # them between statements too.
        self.base = request.getfixturevalue("pg_base_url")
        return f"{self.base}?application_name={name}&schema={name}"

    def _new_name(self) -> str:
        return f"t_{uuid.uuid4().hex[:12]}"

    def _conn(self) -> Any:
        import psycopg

        if self._admin is None or self._admin.closed:
            self._admin = psycopg.connect(self.base, autocommit=True)
            self._admin.execute("SET lock_timeout = '5s'")
        return self._admin

    def _sessions(self, name: str) -> int:
        # Or, where a test named its own application_name, a session whose last statement
        # named the schema (claimq names it in every statement).
        row = self._conn().execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()"
            " AND (application_name = %s OR position(%s in query) > 0)",
            (name, name + ".")).fetchone()
        return int(row[0])

    def _structure(self, name: str) -> Any:
        sql = f"""
            SELECT
              (SELECT string_agg(c.relname::text || c.relkind::text
                                 || coalesce(c.relacl::text, ''), ',' ORDER BY c.relname)
                 FROM pg_class c WHERE c.relnamespace = n.oid),
              (SELECT string_agg(c.relname::text || a.attname::text || a.atttypid::text
                                 || a.attnotnull::text
                                 || coalesce(pg_get_expr(d.adbin, d.adrelid), ''), ','
                                 ORDER BY c.relname, a.attnum)
                 FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
                 LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
                WHERE c.relnamespace = n.oid AND NOT a.attisdropped),
              (SELECT string_agg(p.proname::text || md5(p.prosrc), ',' ORDER BY p.proname)
                 FROM pg_proc p WHERE p.pronamespace = n.oid),
              (SELECT string_agg(t.tgname::text || t.tgenabled::text, ',' ORDER BY t.tgname)
                 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                WHERE c.relnamespace = n.oid),
              (SELECT string_agg(conname::text, ',' ORDER BY conname) FROM pg_constraint
                WHERE connamespace = n.oid),
              (SELECT count(*) FROM {name}.migrations),
              coalesce(n.nspacl::text, '')
            FROM pg_namespace n WHERE n.nspname = %s"""
        return self._conn().execute(sql, (name,)).fetchone()

    def _reset(self, name: str) -> None:
        conn = self._conn()
        tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tablename <> 'migrations'",
            (name,))]
        with conn.transaction():
            conn.execute("TRUNCATE " + ", ".join(f"{name}.{t}" for t in tables))
            conn.execute("SELECT setval(format('%%I.%%I', schemaname, sequencename), start_value,"
                         " false) FROM pg_sequences WHERE schemaname = %s", (name,))

    def _drop(self, name: str) -> None:
        self._admin = None
        drop_schema(self.base, name)


class _MariaDBPool(_Pool):
    def __init__(self) -> None:
        super().__init__()
        self.server = ""

    def _url(self, request: pytest.FixtureRequest, name: str) -> str:
        self.server = request.getfixturevalue("mariadb_server")
        return _mariadb_url(self.server, name)

    def _new_name(self) -> str:
        name = f"cq_{uuid.uuid4().hex[:12]}"
        self._conn().cursor().execute(f"CREATE DATABASE {name}")
        return name

    def _conn(self) -> Any:
        if self._admin is None or not self._admin.open:
            self._admin = mariadb_admin()
            self._admin.cursor().execute("SET SESSION innodb_lock_wait_timeout = 5")
        return self._admin

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        cur = self._conn().cursor()
        cur.execute(sql, args)
        return list(cur.fetchall())

    def _sessions(self, name: str) -> int:
        return int(self._query(
            "SELECT count(*) FROM information_schema.processlist WHERE db = %s"
            " AND id <> connection_id()", (name,))[0][0])

    def _structure(self, name: str) -> Any:
        return (
            self._query(
                "SELECT table_name, column_name, column_type, is_nullable, column_default, extra"
                " FROM information_schema.columns WHERE table_schema = %s"
                " ORDER BY table_name, ordinal_position", (name,)),
            self._query(
                "SELECT table_name, index_name, seq_in_index, column_name FROM"
                " information_schema.statistics WHERE table_schema = %s"
                " ORDER BY table_name, index_name, seq_in_index", (name,)),
            self._query(
                "SELECT trigger_name, action_statement FROM information_schema.triggers"
                " WHERE trigger_schema = %s ORDER BY trigger_name", (name,)),
            self._query(f"SELECT count(*) FROM {name}.claimq_migrations"),
        )

    def _reset(self, name: str) -> None:
        tables = self._query(
            "SELECT table_name, auto_increment FROM information_schema.tables"
            " WHERE table_schema = %s AND table_type = 'BASE TABLE'"
            " AND table_name <> 'claimq_migrations'", (name,))
        cur = self._conn().cursor()
        cur.execute("SET SESSION foreign_key_checks = 0")
        try:
            for table, _ in tables:
                cur.execute(f"DELETE FROM {name}.`{table}`")
            for table, next_id in tables:
                if next_id is not None and next_id > 1:
                    cur.execute(f"ALTER TABLE {name}.`{table}` AUTO_INCREMENT = 1")
        finally:
            cur.execute("SET SESSION foreign_key_checks = 1")

    def _drop(self, name: str) -> None:
        self._admin = None
        conn = mariadb_admin()
        try:
            conn.cursor().execute(f"DROP DATABASE IF EXISTS {name}")
        finally:
            conn.close()


_POOLS: dict[str, _Pool] = {"postgresql": _PostgresPool(), "mariadb": _MariaDBPool()}


def fresh_db_url(request: pytest.FixtureRequest, kind: str, tmp_path: os.PathLike[str]
                 ) -> Iterator[str]:
    """A fresh database URL of `kind`: a new SQLite file, a new PG schema, or a new MariaDB
    database; for a test that migrates it anyway, one just as migrate() left it (the pool)."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path}/claimq.db"
        return
    if POOLED and kind in _POOLS and MIGRATING_FIXTURES & set(request.fixturenames):
        yield from _POOLS[kind].lend(request)
        return
    if kind == "mariadb":
        with mariadb_database(request.getfixturevalue("mariadb_server")) as url:
            yield url
        return
    base = request.getfixturevalue("pg_base_url")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    yield f"{base}?schema={schema}"
    drop_schema(base, schema)
