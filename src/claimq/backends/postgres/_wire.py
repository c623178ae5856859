"""The worker's settle statement straight through libpq, on a pooled AsyncConnection.

A fast path, isolated here: the backend uses `Statement.rows` only from `_settle_rows`, and only
while its `raw_libpq_settle` flag is on (RAW_LIBPQ_SETTLE in backend.py); off, the same
statement goes through psycopg's async cursor. It bought about 8 % of the drain's CPU when it
was written; it stays only while a paired benchmark (benchmarks/ab.py) shows >= 5 %. The
conformance tests run asettle on both paths, and test_postgres_wire.py tests this module alone.
`KeptConnections` (below) serves both paths.

psycopg's cursor layer (query conversion, its prepare manager, the connection lock, a timer and
a reader registration per wait, the result bookkeeping) cost about as much CPU per batch as
decoding the rows it returns. The hot path runs one statement over and over, so it is prepared
once per connection under its own name and then sent with psycopg's libpq wrapper (`pq`), and
its rows are decoded by psycopg's own Transformer (the same loaders, JSON and time zone
included). Everything else keeps psycopg's cursors.

A connection given back to the pool in the middle of an exchange (cancelled, or the socket
failed) still has its query in flight: libpq reports it ACTIVE and the pool discards it.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import errors, pq
from psycopg.adapt import Transformer
from psycopg_pool import AsyncConnectionPool

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
# Errors after which the statement is prepared again (once) rather than failed: the server lost
# it (26000: a pooler in between, DISCARD ALL), or a table it reads changed shape (0A000: the
# server keeps the statement but refuses its cached plan).
_REPREPARE = (b"26000", b"0A000")
_DUPLICATE = b"42P05"  # preparing a name the connection still has: a stale one, dropped first


HOLD_AT_MOST = 60.0  # seconds a kept connection stays out of its pool (max_lifetime, checks)


class KeptConnections:
    """A pool's connections kept out of it between one batch and the next: the worker runs a
    statement every few milliseconds, and a pool's checkout and return (its locks, its state
    checks, a commit) cost about as much as the statement's own bookkeeping. A connection goes
    back to the pool after HOLD_AT_MOST, and at once when a use of it fails or leaves it in any
    state but idle (the pool then checks, resets or replaces it)."""

    def __init__(self, pool: AsyncConnectionPool[Any], keep: int) -> None:
        self.pool = pool
        self.keep = keep
        self._idle: list[tuple[psycopg.AsyncConnection[Any], float]] = []

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        if self._idle:
            conn, since = self._idle.pop()
        else:
            conn, since = await self.pool.getconn(), time.monotonic()
        try:
            yield conn
        except BaseException:
            await self.pool.putconn(conn)
            raise
        if (conn.pgconn.transaction_status == pq.TransactionStatus.IDLE
                and len(self._idle) < self.keep
                and time.monotonic() - since < HOLD_AT_MOST):
            self._idle.append((conn, since))
        else:
            await self.pool.putconn(conn)

    async def close(self) -> None:
        """Gives every kept connection back, then closes the pool."""
        idle, self._idle = self._idle, []
        for conn, _ in idle:
            await self.pool.putconn(conn)
        await self.pool.close()


class Statement:
    """One query with %(name)s placeholders, as a named server-side prepared statement."""

    def __init__(self, sql: str) -> None:
        names: list[str] = []

        def number(m: re.Match[str]) -> str:
            if m.group(1) not in names:
                names.append(m.group(1))
            return f"${names.index(m.group(1)) + 1}"

        self.query = sql  # as written, for psycopg's cursors
        self.sql = _PLACEHOLDER.sub(number, sql).encode()
        self.names = tuple(names)
        self.name = b"claimq_" + hashlib.sha1(self.sql).hexdigest()[:20].encode()

    async def rows(
        self, conn: psycopg.AsyncConnection[Any], params: dict[str, Any]
    ) -> list[tuple[Any, ...]]:
        """Runs the statement with `params` (autocommit: one implicit transaction) and
        returns its rows as tuples."""
        state = _state(conn)
        values = [_text(params[n], state.encoding) for n in self.names]
        for attempt in (1, 2):
            if self.name not in state.prepared:
                await self._prepare(conn.pgconn, state)
            conn.pgconn.send_query_prepared(self.name, values, result_format=pq.Format.BINARY)
            result = await _result(conn.pgconn)
            if (result.status != pq.ExecStatus.TUPLES_OK
                    and result.error_field(pq.DiagnosticField.SQLSTATE) in _REPREPARE):
                # A server that lost one statement (DEALLOCATE ALL, another session behind a
                # pooler) lost them all: each is prepared again at its next use.
                state.prepared.clear()
                # In a transaction block the failure aborted the transaction: preparing again
                # there can only fail. The caller retries the whole transaction (is_stale).
                if attempt == 1 and conn.pgconn.transaction_status == pq.TransactionStatus.IDLE:
                    continue
            _check(result, state.encoding, pq.ExecStatus.TUPLES_OK)
            state.loader.set_pgresult(result)
            return state.loader.load_rows(0, result.ntuples, tuple)  # type: ignore[no-any-return]
        raise AssertionError("unreachable")

    async def _prepare(self, pgconn: Any, state: _ConnState) -> None:
        pgconn.send_prepare(self.name, self.sql)
        result = await _result(pgconn)
        if result.error_field(pq.DiagnosticField.SQLSTATE) == _DUPLICATE:
            pgconn.send_query(b"DEALLOCATE " + self.name)
            _check(await _result(pgconn), state.encoding, pq.ExecStatus.COMMAND_OK)
            pgconn.send_prepare(self.name, self.sql)
            result = await _result(pgconn)
        _check(result, state.encoding, pq.ExecStatus.COMMAND_OK)
        state.prepared.add(self.name)


def is_stale(exc: BaseException) -> bool:
    """Whether `exc` is a prepared statement the server no longer has (or cannot run as
    prepared) raised inside a transaction block: running the transaction again will do."""
    return getattr(exc, "sqlstate", None) in {code.decode() for code in _REPREPARE}


@dataclass(eq=False)
class _ConnState:
    loader: Any  # a Transformer bound to the connection's adapters (its JSON loads, its zone)
    encoding: str
    prepared: set[bytes] = field(default_factory=set)


_states: weakref.WeakKeyDictionary[Any, _ConnState] = weakref.WeakKeyDictionary()


def _state(conn: psycopg.AsyncConnection[Any]) -> _ConnState:
    # Keyed by the libpq connection: a reconnect is a new one, with nothing prepared.
    state = _states.get(conn.pgconn)
    if state is None:
        state = _states[conn.pgconn] = _ConnState(Transformer(conn), conn.info.encoding)
    return state


def _text(value: Any, encoding: str) -> bytes | None:
    """A parameter in PostgreSQL's text format; the statement's casts give its type."""
    if value is None:
        return None
    if value is True or value is False:
        return b"t" if value else b"f"
    return str(value).encode(encoding)


def _check(result: Any, encoding: str, wanted: pq.ExecStatus) -> None:
    if result.status != wanted:
        if result.status == pq.ExecStatus.FATAL_ERROR:
            raise errors.error_from_result(result, encoding=encoding)
        raise psycopg.InterfaceError(f"unexpected result status {result.status!r}")


async def _result(pgconn: Any) -> Any:
    """Sends what is queued, then waits for the command's results; returns the last one."""
    loop = asyncio.get_running_loop()
    fd = pgconn.socket
    while pgconn.flush():  # the send buffer is full: wait until the socket takes more
        await _ready(loop, fd, write=True)
    last = None
    while True:
        pgconn.consume_input()
        while not pgconn.is_busy():
            result = pgconn.get_result()
            if result is None:
                if last is None:
                    raise psycopg.InterfaceError("the server sent no result")
                return last
            last = result
        await _ready(loop, fd, write=False)


async def _ready(loop: asyncio.AbstractEventLoop, fd: int, *, write: bool) -> None:
    future = loop.create_future()

    def wake() -> None:
        if not future.done():
            future.set_result(None)

    if write:
        loop.add_writer(fd, wake)
    else:
        loop.add_reader(fd, wake)
    try:
        await future
    finally:
        if write:
            loop.remove_writer(fd)
        else:
            loop.remove_reader(fd)
