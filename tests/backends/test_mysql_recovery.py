"""MariaDB: a deadlock or a lock-wait timeout inside one of claimq's own transactions is retried
and counted (`backend.retries`), never raised to the caller; each test provokes one on purpose
with a transaction of its own on another connection. Pooled connections killed while idle
(`KILL CONNECTION`, a server restart) are replaced without an error. Concurrent migrations
take turns."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from dbs import mariadb_admin, mariadb_database
from polling import in_thread, wait_until

from claimq.backends import open_backend
from claimq.backends.base import Completion
from claimq.backends.mysql import MySQLBackend
from claimq.testing.conformance._harness import job_spec

pytestmark = [pytest.mark.mariadb, pytest.mark.timeout(120)]
WAIT = 60.0  # generous: each wait ends on an event the test watches for


@pytest.fixture
def url(mariadb_server: str) -> Iterator[str]:
    with mariadb_database(mariadb_server) as fresh:
        yield fresh


def _running(backend: MySQLBackend, count: int) -> list[Any]:
    backend.migrate()
    backend.enqueue([job_spec(queue="r") for _ in range(count)], 3600.0)
    jobs = backend.claim("w1", ["r"], count, 300.0, start=True)
    assert len(jobs) == count
    return sorted(jobs, key=lambda j: j.id)


def _lock_waits(other: Any) -> int:
    cur = other.cursor()
    cur.execute("SELECT count(*) FROM information_schema.INNODB_LOCK_WAITS")
    return int(cur.fetchone()[0])


def test_a_deadlock_is_retried_and_counted_not_raised(url: str) -> None:
    backend = open_backend(url)
    assert isinstance(backend, MySQLBackend)
    try:
        first, second = _running(backend, 2)
        other = backend.connect()
        cur = other.cursor()
        cur.execute("CREATE TABLE scratch (n INT)")
        cur.execute("START TRANSACTION")
        # Written rows make this transaction the heavier one: InnoDB rolls back the lighter.
        cur.execute("INSERT INTO scratch VALUES " + ",".join(["(1)"] * 500))
        cur.execute("SELECT id FROM claimq_jobs WHERE id = %s FOR UPDATE", (second.id,))
        done = [Completion(j.id, j.claim_token or "") for j in (first, second)]
        thread, out = in_thread(lambda: backend.complete(done))
        watcher = backend.connect()
        # It holds `first` and waits on `second`.
        wait_until(lambda: _lock_waits(watcher) > 0, WAIT, "claimq's transaction to wait")
        watcher.close()
        cur.execute("SELECT id FROM claimq_jobs WHERE id = %s FOR UPDATE", (first.id,))
        other.rollback()
        thread.join(WAIT)
        assert not thread.is_alive()
        assert "error" not in out, out
        assert out["result"] == {first.id, second.id}
        assert backend.retries["deadlock"] >= 1
        assert [j.id for j in backend.list_jobs("archive")] == [second.id, first.id]
        other.close()
    finally:
        backend.close()


def test_a_lock_wait_timeout_is_retried_and_counted_not_raised(url: str) -> None:
    backend = open_backend(url + ("&" if "?" in url else "?") + "lock_wait_timeout=1")
    assert isinstance(backend, MySQLBackend)
    try:
        [job] = _running(backend, 1)
        other = backend.connect()
        cur = other.cursor()
        cur.execute("START TRANSACTION")
        cur.execute("SELECT id FROM claimq_jobs WHERE id = %s FOR UPDATE", (job.id,))
        thread, out = in_thread(
            lambda: backend.complete([Completion(job.id, job.claim_token or "")]))
        # It timed out once and runs its transaction again.
        wait_until(lambda: backend.retries["lock_wait_timeout"] >= 1, WAIT, "a lock-wait retry")
        other.rollback()
        thread.join(WAIT)
        assert not thread.is_alive()
        assert "error" not in out, out
        assert out["result"] == {job.id}
        other.close()
    finally:
        backend.close()


def _kill_sessions_of(database: str) -> int:
    admin = mariadb_admin()
    try:
        cur = admin.cursor()
        cur.execute("SELECT id FROM information_schema.PROCESSLIST WHERE db = %s"
                    " AND id <> CONNECTION_ID()", (database,))
        ids = [row[0] for row in cur.fetchall()]
        for session in ids:
            cur.execute(f"KILL CONNECTION {int(session)}")
        return len(ids)
    finally:
        admin.close()


def test_idle_connections_killed_by_the_server_are_replaced_without_an_error(url: str) -> None:
    backend = open_backend(url)
    assert isinstance(backend, MySQLBackend)
    try:
        backend.migrate()
        [first] = backend.enqueue([job_spec(queue="k")], 3600.0)
        assert _kill_sessions_of(backend.database) >= 1
        assert [q.name for q in backend.list_queues()] == ["k"]  # a read on a new connection
        assert _kill_sessions_of(backend.database) >= 1
        [second] = backend.enqueue([job_spec(queue="k")], 3600.0)  # a write, likewise
        assert _kill_sessions_of(backend.database) >= 1
        claimed = backend.claim("w1", ["k"], 5, 30.0, start=True)
        assert sorted(j.id for j in claimed) == [first, second]
        assert _kill_sessions_of(backend.database) >= 1
        with backend.transaction() as conn:  # the caller's transaction, likewise
            done = [Completion(j.id, j.claim_token or "") for j in claimed]
            assert backend.complete(done, conn) == {first, second}
        assert len(backend.list_jobs("archive")) == 2
    finally:
        backend.close()


def test_concurrent_migrations_apply_each_version_once(url: str) -> None:
    backends = [open_backend(url) for _ in range(4)]
    try:
        threads = [in_thread(b.migrate) for b in backends]
        for thread, _ in threads:
            thread.join(WAIT)
        results = [out.get("result", out.get("error")) for _, out in threads]
        applied = [r for r in results if r != []]
        assert len(applied) == 1 and results.count([]) == 3, results
        assert isinstance(applied[0], list) and applied[0] == sorted(set(applied[0]))
        assert {b.schema_version() for b in backends} == {applied[0][-1]}
    finally:
        for b in backends:
            b.close()
