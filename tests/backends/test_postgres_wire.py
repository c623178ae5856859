"""The settle statement's libpq path (backends/postgres/_wire.py) on a real server: parameters
and rows as psycopg's cursors would give them, server errors as psycopg's exception classes,
a statement the server lost prepared again, and a connection abandoned mid-exchange never
handed out again."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

pytestmark = pytest.mark.postgres

psycopg = pytest.importorskip("psycopg")

from claimq.backends.postgres._wire import Statement  # noqa: E402
from claimq.backends.postgres.backend import _configure_async  # noqa: E402


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def on_connection(url: str, body: Callable[[Any], Awaitable[None]]) -> None:
    """Runs `body` with an AsyncConnection set up as the worker's are (autocommit, UTC, JSON)."""
    async def go() -> None:
        c = await psycopg.AsyncConnection.connect(url, autocommit=True)
        await _configure_async(c)
        try:
            await body(c)
        finally:
            await c.close()

    run(go())


def test_placeholders_numbered_once_each() -> None:
    s = Statement("SELECT %(a)s::int, %(b)s::text, %(a)s::int + 1")
    assert s.names == ("a", "b")
    assert s.sql == b"SELECT $1::int, $2::text, $1::int + 1"
    assert s.name == Statement("SELECT %(a)s::int, %(b)s::text, %(a)s::int + 1").name
    assert s.name != Statement("SELECT %(a)s::int").name


def test_rows_decode_like_psycopg(pg_base_url: str) -> None:
    async def body(c: Any) -> None:
        s = Statement(
            "SELECT %(n)s::bigint AS n, %(t)s::text AS t, %(b)s::boolean AS b, "
            "%(j)s::jsonb AS j, %(arr)s::text[] AS arr, %(none)s::int AS none, "
            "'2026-01-02 03:04:05+02'::timestamptz AS ts, g "
            "FROM generate_series(1, 3) g"
        )
        params = {"n": 7, "t": "grüße ☃", "b": False, "j": '{"k": [1, 2]}',
                  "arr": '{"a b",c}', "none": None}
        rows = await s.rows(c, params)
        expected = await (await c.cursor(row_factory=psycopg.rows.tuple_row).execute(
            "SELECT %(n)s::bigint, %(t)s::text, %(b)s::boolean, %(j)s::jsonb, "
            "%(arr)s::text[], %(none)s::int, "
            "'2026-01-02 03:04:05+02'::timestamptz, g FROM generate_series(1, 3) g",
            params)).fetchall()
        assert rows == expected
        assert rows[0][:6] == (7, "grüße ☃", False, {"k": [1, 2]}, ["a b", "c"], None)
        assert rows[0][6].utcoffset().total_seconds() == 0  # the connection's zone: UTC
        assert [r[7] for r in rows] == [1, 2, 3]
        # Prepared once: the second run does not prepare again.
        prepared = await (await c.execute(
            "SELECT count(*) AS n FROM pg_prepared_statements WHERE name = %s",
            (s.name.decode(),))).fetchone()
        assert prepared[0] == 1
        assert (await s.rows(c, params)) == expected

    on_connection(pg_base_url, body)


def test_server_error_is_psycopgs_class_and_connection_stays_usable(pg_base_url: str) -> None:
    async def body(c: Any) -> None:
        s = Statement("SELECT 1 / %(d)s::int AS q")
        with pytest.raises(psycopg.errors.DivisionByZero):
            await s.rows(c, {"d": 0})
        assert await s.rows(c, {"d": 1}) == [(1,)]
        bad = Statement("SELECT no_such_column FROM pg_class WHERE relname = %(x)s")
        with pytest.raises(psycopg.errors.UndefinedColumn):
            await bad.rows(c, {"x": "x"})
        assert c.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE

    on_connection(pg_base_url, body)


def test_statement_lost_by_the_server_is_prepared_again(pg_base_url: str) -> None:
    async def body(c: Any) -> None:
        s = Statement("SELECT %(x)s::int * 2")
        assert await s.rows(c, {"x": 2}) == [(4,)]
        await c.execute("DEALLOCATE ALL")  # as DISCARD ALL or a pooler would
        assert await s.rows(c, {"x": 3}) == [(6,)]

    on_connection(pg_base_url, body)


def test_statement_lost_inside_a_transaction_is_reported_not_retried_in_the_aborted_one(
        pg_base_url: str) -> None:
    """Inside a transaction block the failed EXECUTE aborts the transaction, so preparing again
    there can only fail with 'current transaction is aborted' (seen in CI). The statement must
    raise the server's own error, forget the name, and work again in the next transaction."""
    async def body(c: Any) -> None:
        s = Statement("SELECT %(x)s::int * 2")
        assert await s.rows(c, {"x": 2}) == [(4,)]
        await c.execute("DEALLOCATE ALL")
        with pytest.raises(psycopg.errors.InvalidSqlStatementName):
            async with c.transaction():
                await s.rows(c, {"x": 3})
        async with c.transaction():
            assert await s.rows(c, {"x": 4}) == [(8,)]

    on_connection(pg_base_url, body)


def test_a_rolled_back_transaction_does_not_take_the_statement_with_it(pg_base_url: str) -> None:
    """psycopg answers a rollback with DEALLOCATE ALL once it has prepared statements of its
    own; the worker's connections leave psycopg's preparing off so the settle statement, which
    this module prepares, survives any rollback on them."""
    from claimq.backends.postgres.backend import ASYNC_CONNECTION_KWARGS

    async def go() -> None:
        c = await psycopg.AsyncConnection.connect(pg_base_url, **ASYNC_CONNECTION_KWARGS)
        await _configure_async(c)
        try:
            s = Statement("SELECT %(x)s::int * 2")
            assert await s.rows(c, {"x": 1}) == [(2,)]
            for _ in range(10):  # past psycopg's prepare threshold, had it one
                await c.execute("SELECT 1 WHERE %s::int > 0", (1,))
            with pytest.raises(psycopg.errors.DivisionByZero):
                async with c.transaction():
                    await c.execute("SELECT 1 / 0")
            listed = await (await c.execute(
                "SELECT count(*) FROM pg_prepared_statements WHERE name = %s",
                (s.name.decode(),))).fetchone()
            assert listed is not None and listed["count"] == 1
        finally:
            await c.close()

    run(go())


def test_missing_parameter_is_an_error_before_anything_is_sent(pg_base_url: str) -> None:
    async def body(c: Any) -> None:
        with pytest.raises(KeyError):
            await Statement("SELECT %(x)s::int").rows(c, {})
        assert c.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE

    on_connection(pg_base_url, body)


def test_cancelled_mid_statement_connection_is_not_reused(pg_base_url: str) -> None:
    """A caller cancelled while its statement runs gives back a connection with a query in
    flight: the pool must throw it away, and the next caller gets a working one."""
    from psycopg_pool import AsyncConnectionPool

    async def go() -> None:
        pool = AsyncConnectionPool(pg_base_url, min_size=1, max_size=1, open=False,
                                   kwargs={"autocommit": True})
        await pool.open(wait=True)
        try:
            async with pool.connection() as c:
                first_pid = c.pgconn.backend_pid
            slow = Statement("SELECT pg_sleep(%(s)s::float8)")

            async def use() -> None:
                async with pool.connection() as c:
                    await slow.rows(c, {"s": 30})

            task = asyncio.create_task(use())
            await asyncio.sleep(0.5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            async with pool.connection() as c:
                rows = await Statement("SELECT %(x)s::int + 1").rows(c, {"x": 1})
                assert rows == [(2,)]
                assert c.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE
                assert c.pgconn.backend_pid != first_pid  # a new connection, not the busy one
        finally:
            await pool.close()
    run(go())


def _kept(pg_base_url: str, keep: int = 2) -> Any:
    from psycopg_pool import AsyncConnectionPool

    from claimq.backends.postgres._wire import KeptConnections

    pool = AsyncConnectionPool(pg_base_url, min_size=1, max_size=2, open=False,
                               kwargs={"autocommit": True})
    return KeptConnections(pool, keep=keep)


def test_kept_connection_is_reused_without_going_back_to_the_pool(pg_base_url: str) -> None:
    async def go() -> None:
        kept = _kept(pg_base_url)
        await kept.pool.open(wait=True)
        try:
            async with kept.connection() as c:
                pid = c.pgconn.backend_pid
            assert kept.pool.get_stats()["pool_available"] == 0  # still ours
            async with kept.connection() as c:
                assert c.pgconn.backend_pid == pid
        finally:
            await kept.close()
        assert kept.pool.closed

    run(go())


def test_connection_left_in_a_transaction_or_failed_goes_back(pg_base_url: str) -> None:
    """Only an idle connection is kept: one left inside a transaction goes back to the pool,
    which rolls it back; one whose use raised goes back too, and a dead one is replaced."""
    async def go() -> None:
        kept = _kept(pg_base_url)
        await kept.pool.open(wait=True)
        try:
            async with kept.connection() as c:
                await c.execute("BEGIN")
                await c.execute("CREATE TEMP TABLE wire_left_open (x int)")
            assert kept.pool.get_stats()["pool_available"] >= 1
            async with kept.connection() as c:
                assert c.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE
                rows = await Statement(
                    "SELECT count(*) FROM pg_tables WHERE tablename = %(t)s").rows(
                    c, {"t": "wire_left_open"})
                assert rows == [(0,)]  # rolled back, not carried into the next use
                victim = c.pgconn.backend_pid
            with psycopg.connect(pg_base_url, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (victim,))
            with pytest.raises(psycopg.OperationalError):
                async with kept.connection() as c:
                    assert c.pgconn.backend_pid == victim
                    await Statement("SELECT %(x)s::int").rows(c, {"x": 1})
            for _ in range(100):  # the pool replaces the dead connection in the background
                try:
                    async with kept.connection() as c:
                        rows = await Statement("SELECT %(x)s::int").rows(c, {"x": 5})
                    break
                except psycopg.OperationalError:
                    await asyncio.sleep(0.05)
            assert rows == [(5,)]
            assert c.pgconn.backend_pid != victim
        finally:
            await kept.close()

    run(go())


def test_statement_whose_table_changed_shape_is_prepared_again(pg_base_url: str) -> None:
    """A migration that changes what the statement returns makes the server refuse the cached
    plan (0A000); the statement is dropped and prepared again, not failed for good."""
    table = "wire_shape_" + uuid.uuid4().hex[:8]

    async def body(c: Any) -> None:
        try:
            await c.execute(f"CREATE TABLE {table} (a int)")
            await c.execute(f"INSERT INTO {table} VALUES (1)")
            s = Statement(f"SELECT * FROM {table} WHERE a = %(a)s::int")
            assert await s.rows(c, {"a": 1}) == [(1,)]
            await c.execute(f"ALTER TABLE {table} ADD COLUMN b text DEFAULT 'x'")
            assert await s.rows(c, {"a": 1}) == [(1, "x")]
            assert await s.rows(c, {"a": 1}) == [(1, "x")]
        finally:
            await c.execute(f"DROP TABLE IF EXISTS {table}")

    on_connection(pg_base_url, body)


def test_statement_left_on_the_connection_is_replaced(pg_base_url: str) -> None:
    """A connection may still hold the statement when its state says otherwise (an earlier
    re-prepare failed inside an aborted transaction): preparing drops the old one first."""
    from claimq.backends.postgres._wire import _state

    async def body(c: Any) -> None:
        s = Statement("SELECT %(x)s::int + 10")
        assert await s.rows(c, {"x": 1}) == [(11,)]
        _state(c).prepared.clear()  # forgets it; the server still has it
        assert await s.rows(c, {"x": 2}) == [(12,)]

    on_connection(pg_base_url, body)


def test_behind_a_transaction_pooler_nothing_is_prepared_by_name(pg_base_url: str) -> None:
    """`pooler=transaction`: psycopg's preparing and the libpq settle path are off and the
    worker polls (no LISTEN): each transaction may run on another server session."""
    from claimq import App

    plain = App(pg_base_url).backend
    pooled = App(f"{pg_base_url}?pooler=transaction").backend
    assert plain.raw_libpq_settle and plain.capabilities.listen_notify  # type: ignore[attr-defined]
    assert not pooled.raw_libpq_settle  # type: ignore[attr-defined]
    assert not pooled.capabilities.listen_notify
    assert pooled._pool.kwargs["prepare_threshold"] is None  # type: ignore[attr-defined]
    assert "pooler" not in pooled.conninfo  # type: ignore[attr-defined]
