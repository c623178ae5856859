"""PostgreSQL plans of the worker's statement once statistics exist: a prepared statement runs
its generic plan, and that plan must not scan the jobs table (a claim would then cost time in
proportion to the backlog)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from claimq import App
from claimq.backends.base import ClaimRequest, Completion

JOBS = 20000


@pytest.fixture
def analyzed(pg_base_url: str) -> Iterator[tuple[App, str]]:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    app = App(f"{pg_base_url}?schema={schema}")
    try:
        app.migrate()
        app.enqueue_many([{"task": "t", "queue": "plans"}] * JOBS)
        with psycopg.connect(pg_base_url, autocommit=True) as conn:
            for table in ("jobs", "archive", "queues"):
                conn.execute(f"ANALYZE {schema}.{table}")
        yield app, schema
    finally:
        app.close()
        with psycopg.connect(pg_base_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def test_settle_runs_a_generic_plan_with_key_lookups(analyzed: tuple[App, str]) -> None:
    app, schema = analyzed
    backend = app.backend
    claim = ClaimRequest("w-plans", ["plans"], 20, None, True)
    done: list[Completion] = []
    for _ in range(12):  # past psycopg's prepare threshold and PostgreSQL's 5 custom plans
        settled = backend.settle(done, [], claim)
        assert len(settled.claimed) == 20 and settled.completed == {c.id for c in done}
        done = [Completion(j.id, j.claim_token or "", None) for j in settled.claimed]
    values = {"ids": "{}", "tokens": "{}", "results": "{}", "worker_id": "w", "limit": 20,
              "queues": ["plans"], "lease": None, "start": True, "limited": [], "now": None,
              "skip": None}
    types = {"ids": "text", "tokens": "text", "results": "text", "worker_id": "text",
             "limit": "int", "queues": "text[]", "lease": "float8", "start": "bool",
             "limited": "text[]", "now": "timestamptz", "skip": "text[]"}
    # What the backend runs (the limit written in), and the file as it is (the limit a
    # parameter, which a generic plan can only guess): both prepared, both run generic.
    for n, sql in enumerate((backend._settle_sql(20), backend._q.settle)):
        names = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", sql)))
        numbered = sql
        for i, name in enumerate(names, 1):
            numbered = numbered.replace(f"%({name})s", f"${i}")
        with psycopg.connect(app.backend.conninfo, autocommit=True) as conn:
            conn.execute("SET plan_cache_mode = force_generic_plan")
            conn.execute(f"PREPARE plan{n} ({', '.join(types[k] for k in names)}) AS {numbered}")
            args = ", ".join(f"%({k})s::{types[k]}" for k in names)
            cur = psycopg.ClientCursor(conn)
            plan = "\n".join(r[0] for r in cur.execute(
                f"EXPLAIN EXECUTE plan{n}({args})", values).fetchall())
        assert "Seq Scan on jobs" not in plan, plan
        assert "jobs_claimable" in plan and "jobs_pkey" in plan, plan


def test_a_claim_with_nothing_to_complete_reads_no_job_in_flight(
    analyzed: tuple[App, str],
) -> None:
    """The fetcher's claims carry no completions. Their statement's delete must not run at all:
    with statistics taken while nothing ran, its plan reads the in-flight index, and would
    scan every job that every worker holds on each claim."""
    app, _ = analyzed
    backend = app.backend
    held = app.claim("w-held", queues=["plans"], limit=2000, start=True)
    assert len(held) == 2000
    sql = backend._settle_sql(20)
    names = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", sql)))
    numbered = sql
    for i, name in enumerate(names, 1):
        numbered = numbered.replace(f"%({name})s", f"${i}")
    values = {"ids": "{}", "tokens": "{}", "results": "{}", "worker_id": "w", "queues": "{plans}",
              "lease": None, "start": True, "limited": "{}", "now": None, "skip": None}
    with psycopg.connect(backend.conninfo, autocommit=True) as conn:
        conn.execute("SET plan_cache_mode = force_generic_plan")
        conn.execute(f"PREPARE claim_only AS {numbered}")
        args = ", ".join("NULL" if values[k] is None else f"'{values[k]}'" for k in names)
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE claim_only({args})"
        ).fetchall())
    delete = plan[plan.index("Delete on jobs"):plan.index("CTE archived")]
    assert "(actual rows=0 loops=1)" in delete.splitlines()[0], plan
    # Nothing under the delete ran: no scan of any index of jobs.
    assert all("never executed" in line for line in delete.splitlines()
               if "Scan" in line), plan
    assert "Index Scan using jobs_claimable" in plan  # and the claim itself did run
