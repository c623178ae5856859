"""PostgreSQL's rows into Jobs: settle.sql's columns as the backend names them, and the worker's
async claim path (the libpq statement) decoding a row that cannot be read exactly."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

pytestmark = pytest.mark.postgres

psycopg = pytest.importorskip("psycopg")

from claimq import App  # noqa: E402
from claimq.backends.base import ClaimRequest  # noqa: E402
from claimq.backends.postgres.backend import _SETTLE_COLUMNS  # noqa: E402
from claimq.job import CorruptRow  # noqa: E402


@pytest.fixture
def pg_app(pg_base_url: str) -> Iterator[App]:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    app = App(f"{pg_base_url}?schema={schema}")
    app.migrate()
    yield app
    app.close()
    with psycopg.connect(pg_base_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def test_settle_columns_are_the_statements(pg_app: App) -> None:
    backend: object = pg_app.backend
    sql = backend._settle_sql(5)  # type: ignore[attr-defined]
    params = {"ids": "{}", "tokens": "{}", "results": "{}", "worker_id": "w", "queues": None,
              "lease": None, "start": False, "limited": "{}", "now": None,
              "skip": None}
    with psycopg.connect(backend.conninfo, autocommit=True) as conn:  # type: ignore[attr-defined]
        cur = conn.execute(sql, params)
        assert tuple(c.name for c in cur.description) == _SETTLE_COLUMNS


def test_the_async_claim_returns_a_batch_holding_an_unreadable_payload(pg_app: App) -> None:
    """Defect 4: a jsonb payload of 10**400 made orjson raise inside the worker's claim, after
    the claim had committed, stranding the whole batch in processing."""
    ids = pg_app.enqueue_many([{"task": "t", "queue": "q", "payload": {"n": i}}
                               for i in range(3)])
    backend = pg_app.backend
    with psycopg.connect(backend.conninfo, autocommit=True) as conn:  # type: ignore[attr-defined]
        conn.execute(f"UPDATE {backend.schema}.jobs SET payload = %s::jsonb"  # type: ignore[attr-defined]
                     " WHERE id = %s", ('{"n": ' + "9" * 400 + "}", ids[1]))

    async def claim() -> list[object]:
        await backend.open_async()  # type: ignore[attr-defined]
        try:
            settled = await backend.asettle(  # type: ignore[attr-defined]
                [], [], ClaimRequest("w", ["q"], 10, 30.0, True))
            return list(settled.claimed)
        finally:
            await backend.close_async()  # type: ignore[attr-defined]

    jobs = {j.id: j for j in asyncio.run(claim())}  # type: ignore[attr-defined]
    assert set(jobs) == set(ids)
    assert isinstance(jobs[ids[1]].payload, CorruptRow)  # type: ignore[attr-defined]
    assert "payload" in jobs[ids[1]].payload  # type: ignore[attr-defined]
    assert jobs[ids[0]].payload == {"n": 0}  # type: ignore[attr-defined]


def test_the_async_claim_of_a_limited_queue_survives_the_server_losing_its_statement(
        pg_app: App) -> None:
    """A max_workers queue claims inside a transaction (lock_limited_queues, then settle.sql):
    when the server has lost the prepared settle statement (DEALLOCATE ALL, a pooler), the
    failed run aborts that transaction; the claim runs the transaction again rather than fail
    with 'current transaction is aborted' (as it did in CI, dropping outcomes)."""
    pg_app.configure_queue("q", max_workers=2)
    ids = pg_app.enqueue_many([{"task": "t", "queue": "q", "payload": {"n": i}}
                               for i in range(4)])
    backend = pg_app.backend

    async def claim_twice() -> tuple[list[int], list[int]]:
        await backend.open_async()  # type: ignore[attr-defined]
        try:
            first = await backend.asettle(  # type: ignore[attr-defined]
                [], [], ClaimRequest("w", ["q"], 1, 30.0, True))
            kept = backend._async_pools[asyncio.get_running_loop()]  # type: ignore[attr-defined]
            for conn, _ in kept._idle:
                await conn.execute("DEALLOCATE ALL")
            second = await backend.asettle(  # type: ignore[attr-defined]
                [], [], ClaimRequest("w", ["q"], 1, 30.0, True))  # the same statement
            third = await backend.asettle(  # type: ignore[attr-defined]
                [], [], ClaimRequest("w", ["q"], 1, 30.0, True))
            return ([j.id for j in first.claimed],
                    [j.id for j in (*second.claimed, *third.claimed)])
        finally:
            await backend.close_async()  # type: ignore[attr-defined]

    first, second = asyncio.run(claim_twice())
    assert len(first) == 1 and len(second) == 1  # max_workers=2 holds: the third gets none
    assert set(first + second) <= set(ids)
