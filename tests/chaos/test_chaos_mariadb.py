"""MariaDB: `KILL CONNECTION` of a worker's sessions while jobs flow. Every 0.3 s the test kills
every session the worker holds (idle in its pool, or in the middle of a claim, a completion or a
handler's own transaction); the worker's calls fail over to new connections or are retried, and
every job still ends in the archive exactly once, its business effect written once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import chaos_biz as biz
import pytest
from chaos_harness import ARCHIVE, check_invariants, wait_finished
from dbs import mariadb_admin, mariadb_database

from claimq import App

pytestmark = [pytest.mark.mariadb, pytest.mark.timeout(180)]

OPTIONS = {"concurrency": 8, "lease": 3.0, "poll_interval": 0.1, "grace": 2.0}


def _kill_sessions(database: str, admin: Any) -> int:
    cur = admin.cursor()
    cur.execute("SELECT id FROM information_schema.PROCESSLIST WHERE db = %s"
                " AND id <> CONNECTION_ID()", (database,))
    killed = 0
    for (session,) in cur.fetchall():
        try:
            cur.execute(f"KILL CONNECTION {int(session)}")
            killed += 1
        except Exception as exc:  # noqa: BLE001 - a session that ended meanwhile: 1094
            if not (exc.args and exc.args[0] == 1094):
                raise
    return killed


@pytest.fixture
def capp(mariadb_server: str) -> Iterator[App]:
    """A migrated App with the chaos business tables on a fresh MariaDB database."""
    with mariadb_database(mariadb_server) as url:
        instance = App(url)
        instance.migrate()
        biz.create_tables(instance)
        yield instance
        instance.close()


def test_killed_worker_sessions_lose_no_job(capp: App, spawn) -> None:
    ids = capp.enqueue_many(
        {"task": "chaos.work",
         "payload": {"n": i, "mode": ("atomic", "separate")[i % 2], "sleep": 0.02}}
        for i in range(300))
    worker = spawn(capp.url, **OPTIONS)
    worker.wait_started()
    admin = mariadb_admin()
    stop = threading.Event()
    kills: list[int] = []
    errors: list[BaseException] = []

    def killer() -> None:
        while not stop.wait(0.3):
            try:
                kills.append(_kill_sessions(capp.backend.database, admin))  # type: ignore[attr-defined]
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)
                return

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        wait_finished(capp, ids, timeout=120)
    finally:
        stop.set()
        thread.join(10)
        admin.close()
    assert errors == []
    assert sum(kills) >= 5, f"the test killed too few sessions to mean anything: {kills}"
    assert worker.stop() == 0
    check_invariants(capp, dict.fromkeys(ids, ARCHIVE))
