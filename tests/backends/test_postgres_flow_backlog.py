"""PostgreSQL's flow claim does not read the backlog (issue 27, item 3): with 20,000 pending jobs
in one queue, held back by one concurrency key at its limit, or spread over 8 sequences, or over
10 priority levels under aging, no scan of the jobs table in the claim statement's plan
(EXPLAIN ANALYZE of claim_flow.sql / claim_keyed.sql, as the worker runs them) reads or filters
more than a few hundred rows. (Before, the held-back jobs were filtered out row by row, and the
sequences' keys came from a DISTINCT over all their jobs.)"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import backlog
import psycopg
import pytest
from psycopg.rows import tuple_row

from claimq import App
from claimq.backends.base import ClaimRequest
from claimq.backends.postgres.backend import _flow_steps, _keys_only, _settle_params

pytestmark = pytest.mark.postgres

BACKLOG = 20_000
BOUND = 500  # rows a scan of jobs may touch (read or filter out), whatever the backlog

FILL = """
INSERT INTO {s}.jobs (queue, task, payload, priority, run_at, created_at, updated_at,
                      concurrency_key, concurrency_limit, sequence_key, sequence_wait)
SELECT t.queue, t.task, t.payload, {priority}, t.run_at, t.created_at, t.updated_at,
       t.concurrency_key, t.concurrency_limit, {sequence}, t.sequence_wait
FROM {s}.jobs t CROSS JOIN generate_series(1, %(n)s) AS g(i)
WHERE t.id = %(id)s
"""


@pytest.fixture
def app(pg_base_url: str) -> Iterator[tuple[App, str]]:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    instance = App(f"{pg_base_url}?schema={schema}")
    instance.migrate()
    try:
        yield instance, schema
    finally:
        instance.close()
        with psycopg.connect(pg_base_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _backlog(app: App, schema: str, case: str) -> None:
    """BACKLOG pending jobs in queue q: a template enqueued, copied by SQL."""
    template = backlog.template(app, case)
    priority = "g.i %% 10" if case == "aging" else "t.priority"
    sequence = "'s' || (g.i %% 8)" if case == "sequences" else "t.sequence_key"
    with psycopg.connect(app.backend.conninfo, autocommit=True) as conn:
        conn.execute(FILL.format(s=schema, priority=priority, sequence=sequence),
                     {"n": BACKLOG - 1, "id": template})
        conn.execute(f"ANALYZE {schema}.jobs")


def _touched(plan: str) -> list[tuple[int, str]]:
    """Each scan of jobs in an EXPLAIN ANALYZE: the rows it returned and filtered out, over all
    its loops."""
    lines = plan.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = re.search(r"Scan .*on jobs .*rows=(\d+) loops=(\d+)", line)
        if not m:
            continue
        rows, loops = int(m[1]), int(m[2])
        removed = 0
        for follow in lines[i + 1:i + 6]:
            r = re.search(r"Rows Removed by (?:Filter|Index Recheck): (\d+)", follow)
            if r:
                removed += int(r[1])
        found.append(((rows + removed) * loops, line.strip()))
    return found


@pytest.mark.parametrize("case", backlog.CASES)
def test_a_flow_claim_reads_no_more_rows_than_it_needs(app: tuple[App, str], case: str) -> None:
    instance, schema = app
    _backlog(instance, schema, case)
    if case == "hot key":  # the key's one slot taken: the claim finds nothing
        assert len(instance.claim("holder", ["q"], limit=1)) == 1
    backend = instance.backend
    claim = ClaimRequest("w", ["q"], 10, None, True)
    params = _settle_params((), claim, None)
    assert params is not None
    with backend._conn() as conn, conn.transaction():  # type: ignore[attr-defined]
        locked = conn.execute(backend._q.lock_limited_queues, params).fetchall()  # type: ignore[attr-defined]
        assert [r["name"] for r in locked] == ["q"]
        steps = _flow_steps(params, ["q"], claim)
        statement = backend._flow_statement(10, _keys_only(locked))  # type: ignore[attr-defined]
        cur = conn.cursor(row_factory=tuple_row)
        plan = "\n".join(r[0] for r in cur.execute(
            "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + statement.query, steps.flow).fetchall())
    claimed = re.search(r"Update on jobs .*rows=(\d+)", plan)
    assert claimed is not None, plan
    assert int(claimed[1]) == backlog.CLAIMED[case], plan
    scans = _touched(plan)
    assert scans, plan
    assert max(n for n, _ in scans) <= BOUND, "\n".join(f"{n}: {s}" for n, s in scans)

