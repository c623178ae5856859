"""PostgreSQL migrations: concurrent migrate() calls on a fresh schema apply each migration once
(a transaction-scoped advisory lock; a session lock would outlive its server session behind a
transaction pooler), directly and through PgBouncer in transaction mode."""

from __future__ import annotations

import sys
import threading
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.postgres

psycopg = pytest.importorskip("psycopg")

sys.path.insert(0, str(Path(__file__).parent.parent))
from pgbouncer import PgBouncer, require_pgbouncer  # noqa: E402

from claimq import App  # noqa: E402
from claimq.backends._sqlfiles import load_migrations  # noqa: E402


def _migrate_at_once(url: str, n: int = 4) -> list[list[int]]:
    results: list[list[int]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def run() -> None:
        with App(url) as app:
            start.wait()
            try:
                results.append(app.migrate())
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    return results


def _check(results: list[list[int]], base_url: str, schema: str) -> None:
    versions = [v for v, _, _ in load_migrations("claimq.backends.postgres")]
    assert sorted(v for r in results for v in r) == versions  # each applied by one caller
    with psycopg.connect(base_url, autocommit=True) as conn:
        rows = conn.execute(f"SELECT version FROM {schema}.migrations ORDER BY 1").fetchall()
        assert [r[0] for r in rows] == versions
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def test_concurrent_migrations_apply_each_once(pg_base_url: str) -> None:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    _check(_migrate_at_once(f"{pg_base_url}?schema={schema}"), pg_base_url, schema)


def test_concurrent_migrations_through_a_transaction_pooler(pg_base_url: str) -> None:
    require_pgbouncer()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with PgBouncer("transaction", pool_size=2) as bouncer:
        url = bouncer.url(pg_base_url.rsplit("/", 1)[1], f"?schema={schema}&pooler=transaction")
        _check(_migrate_at_once(url), pg_base_url, schema)
