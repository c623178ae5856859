"""MariaDB's flow claim does not read the backlog (issue 27, item 3): with 20,000 pending jobs in
one queue, held back by one concurrency key at its limit, or spread over 8 sequences, or over 10
priority levels under aging, a claim reads no more index and table rows (the session's
Handler_read_% counters) than with a few hundred. (Before, the held-back jobs were filtered row
by row, the sequences' keys came from a DISTINCT over all their jobs, and aging's levels from a
DISTINCT priority over all due jobs.)"""

from __future__ import annotations

from collections.abc import Iterator

import backlog
import pytest
from dbs import mariadb_database

from claimq import App
from claimq.backends.base import Completion

pytestmark = [pytest.mark.mariadb, pytest.mark.timeout(180)]

BACKLOG = 20_000
BOUND = 3_000  # rows one claim reads, whatever the backlog (under 400 here)

FILL = """
INSERT INTO claimq_jobs (queue, task, payload, priority, run_at, created_at, updated_at,
                         concurrency_key, concurrency_limit, sequence_key, sequence_wait)
SELECT t.queue, t.task, t.payload, {priority}, t.run_at, t.created_at, t.updated_at,
       t.concurrency_key, t.concurrency_limit, {sequence}, t.sequence_wait
FROM claimq_jobs t CROSS JOIN seq_1_to_{n} AS g
WHERE t.id = %s
"""


@pytest.fixture
def app(mariadb_server: str) -> Iterator[App]:
    with mariadb_database(mariadb_server) as url:
        instance = App(url)
        instance.migrate()
        try:
            yield instance
        finally:
            instance.close()


def _backlog(app: App, case: str) -> None:
    """BACKLOG pending jobs in queue q: a template enqueued, copied by SQL."""
    template = backlog.template(app, case)
    priority = "g.seq %% 10" if case == "aging" else "t.priority"
    sequence = "CONCAT('s', g.seq %% 8)" if case == "sequences" else "t.sequence_key"
    app.backend.run_sql(FILL.format(priority=priority, sequence=sequence, n=BACKLOG - 1),
                        (template,))
    app.backend.analyze()


def _reads(app: App) -> int:
    """The rows the pooled connection's session has read so far (its Handler_read_% sum)."""
    rows = app.backend.run_sql("SHOW SESSION STATUS LIKE 'Handler_read%%'")
    return sum(int(v) for _, v in rows)


@pytest.mark.parametrize("case", backlog.CASES)
def test_a_flow_claim_reads_no_more_rows_than_it_needs(app: App, case: str) -> None:
    _backlog(app, case)
    backend = app.backend
    if case == "hot key":  # the key's one slot taken: every claim finds nothing
        assert len(backend.claim("holder", ["q"], 1, None)) == 1
    else:  # a first claim, finished (the sequences' heads move on)
        jobs = backend.claim("w", ["q"], 10, None, True)
        backend.complete([Completion(j.id, j.claim_token or "") for j in jobs])
    pool = backend._idle  # type: ignore[attr-defined]
    with backend._lock:  # type: ignore[attr-defined]
        for conn in pool[1:]:  # one pooled connection: the counters, the claim, the counters
            conn.close()
        del pool[1:]
    before = _reads(app)
    claimed = backend.claim("w", ["q"], 10, None, True)
    read = _reads(app) - before
    assert len(pool) == 1
    assert len(claimed) == backlog.CLAIMED[case]
    assert read <= BOUND, read


def _statements(app: App) -> int:
    """The statements the pooled connection's session has run so far."""
    [(_, value)] = app.backend.run_sql("SHOW SESSION STATUS LIKE 'Questions'")
    return int(value)


def test_aging_reads_the_levels_that_hold_jobs_not_every_level_of_its_cap(app: App) -> None:
    """With aging_cap=1000 and jobs at two priorities, a claim probed each of the 1,000 levels
    below the top one (a statement each: the chaos flood test's claims took seconds, its
    workers timed out); now it reads the levels that exist."""
    app.configure_queue("q", aging=0.05, aging_cap=1000)
    app.enqueue("t", queue="q", priority=0)
    app.enqueue_many([{"task": "t", "queue": "q", "priority": 10} for _ in range(20)])
    backend = app.backend
    pool = backend._idle  # type: ignore[attr-defined]
    backend.claim("w", ["q"], 1, None, True)  # the pool's connection, warmed
    with backend._lock:  # type: ignore[attr-defined]
        for conn in pool[1:]:
            conn.close()
        del pool[1:]
    before = _statements(app)
    assert len(backend.claim("w", ["q"], 5, None, True)) == 5
    ran = _statements(app) - before - 1  # less the second SHOW
    assert len(pool) == 1
    assert ran <= 40, ran
