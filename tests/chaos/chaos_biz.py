"""The business tables the chaos handlers write, in the same database as the queue.

- chaos_runs: one row per handler run (job id, claim token, attempt, worker, pid, start and end
  time, whether the token was the job's current one with a valid lease when the run began, and
  how the run ended: completed / returned / failed / stale-refused; NULL when the process died).
- chaos_effects: the side effect, keyed by the job's idempotency key (primary key): inserted
  with ON CONFLICT DO NOTHING, so a rerun repeats no business effect.

Used by the handlers (in worker processes) and by the tests (to create and read the tables).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from claimq import App

_SQLITE_DDL = [
    """CREATE TABLE IF NOT EXISTS chaos_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id INTEGER NOT NULL, token TEXT NOT NULL, attempt INTEGER NOT NULL,
        worker TEXT NOT NULL, pid INTEGER NOT NULL,
        started REAL NOT NULL, ended REAL, valid_at_start INTEGER NOT NULL, outcome TEXT)""",
    """CREATE TABLE IF NOT EXISTS chaos_effects (
        key TEXT PRIMARY KEY, job_id INTEGER NOT NULL, attempt INTEGER NOT NULL,
        worker TEXT NOT NULL, token TEXT NOT NULL, at REAL NOT NULL)""",
]

_PG_DDL = [
    """CREATE TABLE IF NOT EXISTS {s}.chaos_runs (
        id bigserial PRIMARY KEY,
        job_id bigint NOT NULL, token text NOT NULL, attempt integer NOT NULL,
        worker text NOT NULL, pid integer NOT NULL,
        started double precision NOT NULL, ended double precision,
        valid_at_start boolean NOT NULL, outcome text)""",
    """CREATE TABLE IF NOT EXISTS {s}.chaos_effects (
        key text PRIMARY KEY, job_id bigint NOT NULL, attempt integer NOT NULL,
        worker text NOT NULL, token text NOT NULL, at double precision NOT NULL)""",
]


_MYSQL_DDL = [
    """CREATE TABLE IF NOT EXISTS chaos_runs (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        job_id BIGINT NOT NULL, token VARCHAR(64) NOT NULL, attempt INT NOT NULL,
        worker VARCHAR(255) NOT NULL, pid INT NOT NULL,
        started DOUBLE NOT NULL, ended DOUBLE, valid_at_start BOOLEAN NOT NULL,
        outcome VARCHAR(32))""",
    """CREATE TABLE IF NOT EXISTS chaos_effects (
        `key` VARCHAR(255) PRIMARY KEY, job_id BIGINT NOT NULL, attempt INT NOT NULL,
        worker VARCHAR(255) NOT NULL, token VARCHAR(64) NOT NULL, at DOUBLE NOT NULL)""",
]


def _mysql(app: App) -> bool:
    return app.backend.kind == "mysql"


def _cursor(conn: Any, sql: str, params: tuple[Any, ...] = ()) -> Any:
    """A PyMySQL connection's statement, through a cursor (its `%s` placeholders)."""
    cur = conn.cursor()
    cur.execute(sql, params or None)
    return cur


def _pg(app: App) -> str | None:
    """The schema of a PostgreSQL app, None for SQLite."""
    return getattr(app.backend, "schema", None) if app.backend.kind == "postgresql" else None


def create_tables(app: App) -> None:
    schema = _pg(app)
    with app.transaction() as conn:
        if _mysql(app):
            for ddl in _MYSQL_DDL:
                _cursor(conn, ddl)
            return
        for ddl in _PG_DDL if schema else _SQLITE_DDL:
            conn.execute(ddl.format(s=schema))


# -- written by handlers ------------------------------------------------------------------------


def run_started(app: App, ctx: Any) -> int:
    """Record a run; checks, in the same transaction, that the run's token is the job's current
    one, the job is processing and its lease is still valid."""
    schema = _pg(app)
    token = ctx.job.claim_token
    now = time.time()
    with app.transaction() as conn:
        if _mysql(app):
            row = _cursor(
                conn,
                "SELECT claim_token = %s AND status = 'processing'"
                " AND lease_until > UTC_TIMESTAMP(6) FROM claimq_jobs WHERE id = %s"
                " LOCK IN SHARE MODE", (token, ctx.id)).fetchone()
            return int(_cursor(
                conn,
                "INSERT INTO chaos_runs (job_id, token, attempt, worker, pid, started,"
                " valid_at_start) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (ctx.id, token, ctx.attempt, ctx.worker_id, os.getpid(), now,
                 bool(row and row[0]))).fetchone()[0])
        if schema:
            row = conn.execute(
                f"SELECT (claim_token = %s::uuid AND status = 'processing'"
                f" AND lease_until > now()) AS ok FROM {schema}.jobs WHERE id = %s FOR SHARE",
                (token, ctx.id),
            ).fetchone()
            valid = bool(row and row["ok"])
            return int(conn.execute(
                f"INSERT INTO {schema}.chaos_runs (job_id, token, attempt, worker, pid, started,"
                " valid_at_start) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (ctx.id, token, ctx.attempt, ctx.worker_id, os.getpid(), now, valid),
            ).fetchone()["id"])
        row = conn.execute(
            "SELECT claim_token = ? AND status = 'processing' AND lease_until > ?"
            " FROM claimq_jobs WHERE id = ?",
            (token, app.backend.now().timestamp(), ctx.id),
        ).fetchone()
        valid = bool(row and row[0])
        return int(conn.execute(
            "INSERT INTO chaos_runs (job_id, token, attempt, worker, pid, started, valid_at_start)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (ctx.id, token, ctx.attempt, ctx.worker_id, os.getpid(), now, int(valid)),
        ).fetchone()[0])


def run_ended_in(app: App, conn: Any, run_id: int, outcome: str) -> None:
    schema = _pg(app)
    if _mysql(app):
        _cursor(conn, "UPDATE chaos_runs SET ended = %s, outcome = %s WHERE id = %s",
                (time.time(), outcome, run_id))
    elif schema:
        conn.execute(
            f"UPDATE {schema}.chaos_runs SET ended = %s, outcome = %s WHERE id = %s",
            (time.time(), outcome, run_id),
        )
    else:
        conn.execute(
            "UPDATE chaos_runs SET ended = ?, outcome = ? WHERE id = ?",
            (time.time(), outcome, run_id),
        )


def run_ended(app: App, run_id: int, outcome: str) -> None:
    with app.transaction() as conn:
        run_ended_in(app, conn, run_id, outcome)


def effect_in(app: App, conn: Any, ctx: Any) -> bool:
    """The side effect, once per idempotency key; returns whether this call wrote it."""
    schema = _pg(app)
    args = (ctx.idempotency_key, ctx.id, ctx.attempt, ctx.worker_id, ctx.job.claim_token,
            time.time())
    if _mysql(app):
        cur = _cursor(
            conn,
            "INSERT IGNORE INTO chaos_effects (`key`, job_id, attempt, worker, token, at)"
            " VALUES (%s, %s, %s, %s, %s, %s)", args)
    elif schema:
        cur = conn.execute(
            f"INSERT INTO {schema}.chaos_effects (key, job_id, attempt, worker, token, at)"
            " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING",
            args,
        )
    else:
        cur = conn.execute(
            "INSERT INTO chaos_effects (key, job_id, attempt, worker, token, at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
            args,
        )
    return bool(cur.rowcount == 1)


def effect(app: App, ctx: Any) -> bool:
    with app.transaction() as conn:
        return effect_in(app, conn, ctx)


# -- read by the tests --------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    id: int
    job_id: int
    token: str
    attempt: int
    worker: str
    pid: int
    started: float
    ended: float | None
    valid_at_start: bool
    outcome: str | None


@dataclass(frozen=True)
class Effect:
    key: str
    job_id: int
    attempt: int
    worker: str
    token: str


def _rows(app: App, table: str, columns: str) -> list[tuple[Any, ...]]:
    schema = _pg(app)
    with app.transaction() as conn:
        if _mysql(app):
            quoted = columns.replace("key,", "`key`,")
            return [tuple(r) for r in _cursor(
                conn, f"SELECT {quoted} FROM {table} ORDER BY 1").fetchall()]
        if schema:
            cur = conn.execute(f"SELECT {columns} FROM {schema}.{table} ORDER BY 1")
            return [tuple(r.values()) for r in cur.fetchall()]
        return [tuple(r) for r in conn.execute(f"SELECT {columns} FROM {table} ORDER BY 1")]


def runs(app: App) -> list[Run]:
    cols = "id, job_id, token, attempt, worker, pid, started, ended, valid_at_start, outcome"
    return [
        Run(r[0], r[1], str(r[2]), r[3], r[4], r[5], r[6], r[7], bool(r[8]), r[9])
        for r in _rows(app, "chaos_runs", cols)
    ]


def effects(app: App) -> list[Effect]:
    return [
        Effect(r[0], r[1], r[2], r[3], str(r[4]))
        for r in _rows(app, "chaos_effects", "key, job_id, attempt, worker, token")
    ]
