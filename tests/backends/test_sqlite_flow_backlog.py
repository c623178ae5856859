"""SQLite's flow claim does not read the backlog (issue 27, item 3): with 20,000 pending jobs in
one queue, held back by one concurrency key at its limit, or spread over 8 sequences, or over 10
priority levels under aging, a claim runs no more SQLite VM steps than with a few hundred (a
progress handler counts them; before, the held-back jobs were read row by row, and the
sequences' keys came from a DISTINCT over all their jobs)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import backlog
import pytest

from claimq import App
from claimq.backends.base import Completion

BACKLOG = 20_000
BOUND = 30_000  # VM steps of one claim, whatever the backlog (about 2,000-7,000 here)
EVERY = 100  # the progress handler's period, in VM steps

FILL = """
INSERT INTO claimq_jobs (queue, task, payload, priority, run_at, created_at, updated_at,
                         concurrency_key, concurrency_limit, sequence_key, sequence_wait)
SELECT t.queue, t.task, t.payload, {priority}, t.run_at, t.created_at, t.updated_at,
       t.concurrency_key, t.concurrency_limit, {sequence}, t.sequence_wait
FROM claimq_jobs t
CROSS JOIN (WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?)
            SELECT i FROM s) AS g
WHERE t.id = ?
"""


@pytest.fixture
def app(tmp_path: os.PathLike[str]) -> Iterator[App]:
    instance = App(f"sqlite:///{tmp_path}/flow.db")
    instance.migrate()
    yield instance
    instance.close()


def _backlog(app: App, case: str) -> None:
    """BACKLOG pending jobs in queue q: a template enqueued, copied by SQL."""
    template = backlog.template(app, case)
    priority = "g.i % 10" if case == "aging" else "t.priority"
    sequence = "'s' || (g.i % 8)" if case == "sequences" else "t.sequence_key"
    app.backend.run_sql(FILL.format(priority=priority, sequence=sequence),
                        (BACKLOG - 1, template))


@pytest.mark.parametrize("case", backlog.CASES)
def test_a_flow_claim_runs_no_more_steps_than_it_needs(app: App, case: str) -> None:
    _backlog(app, case)
    backend = app.backend
    if case == "hot key":  # the key's one slot taken: every claim finds nothing
        assert len(backend.claim("holder", ["q"], 1, None)) == 1
    else:  # a first claim, finished (the sequences' heads move on)
        jobs = backend.claim("w", ["q"], 10, None, True)
        backend.complete([Completion(j.id, j.claim_token or "") for j in jobs])
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += EVERY
        return 0

    conn = backend._conn()  # type: ignore[attr-defined]  # this thread's: the claim's
    conn.set_progress_handler(count, EVERY)
    try:
        claimed = backend.claim("w", ["q"], 10, None, True)
    finally:
        conn.set_progress_handler(None, EVERY)
    assert len(claimed) == backlog.CLAIMED[case]
    assert steps <= BOUND, steps
