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
              "lease": None, "start": False, "limited": "{}", "now": None}
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
