"""PostgreSQL's claim of a flow queue that uses concurrency keys only (claim_keyed.sql, chosen by
lock_limited_queues.sql's keys_only): the key limits hold on it, a queue that gains any other
flow feature goes back to claim_flow.sql, and a sequence job enqueued between the check and the
claim is left for the next claim rather than taken out of order."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator

import psycopg
import pytest
from psycopg.rows import tuple_row

from claimq import App
from claimq.backends.base import ClaimRequest
from claimq.backends.postgres.backend import _flow_steps, _settle_params

pytestmark = pytest.mark.postgres


@pytest.fixture
def app(pg_base_url: str) -> Iterator[App]:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    instance = App(f"{pg_base_url}?schema={schema}")
    instance.migrate()
    try:
        yield instance
    finally:
        instance.close()
        with psycopg.connect(pg_base_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _keys(jobs: list) -> Counter[str | None]:  # type: ignore[type-arg]
    return Counter(j.payload.get("key") for j in jobs)


def _statements_used(app: App) -> tuple[bool, bool]:
    """(claim_keyed.sql ran, claim_flow.sql ran) since the caches were last cleared."""
    backend = app.backend
    used = (bool(backend._keyed_by_limit), bool(backend._flow_by_limit))  # type: ignore[attr-defined]
    backend._keyed_by_limit.clear()  # type: ignore[attr-defined]
    backend._flow_by_limit.clear()  # type: ignore[attr-defined]
    return used


def _enqueue_keyed(app: App, key: str, n: int, limit: int) -> None:
    for i in range(n):
        app.enqueue("t", {"key": key, "n": i}, queue="q", concurrency_key=key,
                    concurrency_limit=limit)


def test_key_limits_hold_on_the_keys_only_claim(app: App) -> None:
    _enqueue_keyed(app, "a", 5, 1)
    _enqueue_keyed(app, "b", 5, 2)
    app.enqueue("t", {}, queue="q")  # no key: not held
    first = app.claim("w1", ["q"], limit=10, start=True)
    assert _keys(first) == {"a": 1, "b": 2, None: 1}
    assert _statements_used(app) == (True, False)
    assert app.claim("w2", ["q"], limit=10) == [], "every key at its limit"
    done = next(j for j in first if j.payload.get("key") == "b")
    app.complete(done)
    assert _keys(app.claim("w2", ["q"], limit=10)) == {"b": 1}, "one b slot freed"


def test_a_queue_with_any_other_flow_feature_takes_the_full_claim(app: App) -> None:
    _enqueue_keyed(app, "a", 3, 1)
    assert len(app.claim("w", ["q"], limit=10)) == 1
    assert _statements_used(app) == (True, False)
    app.configure_queue("q", rate_limit="100/s")
    assert app.claim("w", ["q"], limit=10) == []
    assert _statements_used(app) == (False, True)
    app.configure_queue("q", rate_limit=None)
    app.enqueue("t", {"s": 1}, queue="q", sequence_key="s")
    app.enqueue("t", {"s": 2}, queue="q", sequence_key="s")
    (head,) = app.claim("w", ["q"], limit=10)
    assert head.payload == {"s": 1}, "only the sequence's head"
    assert _statements_used(app) == (False, True)


def test_the_keys_only_claim_leaves_a_sequence_job_enqueued_since_the_check(app: App) -> None:
    """claim_keyed.sql run on a queue that has sequence jobs, as when one is enqueued between
    lock_limited_queues.sql's check and the claim: it takes the other jobs and none of those."""
    _enqueue_keyed(app, "a", 2, 1)
    app.enqueue("t", {"s": 1}, queue="q", sequence_key="s")
    app.enqueue("t", {"s": 2}, queue="q", sequence_key="s")
    backend = app.backend
    claim = ClaimRequest("w", ["q"], 10, None, True)
    params = _settle_params((), claim, None)
    assert params is not None
    with backend._conn() as conn, conn.transaction():  # type: ignore[attr-defined]
        locked = conn.execute(backend._q.lock_limited_queues, params).fetchall()  # type: ignore[attr-defined]
        assert [(r["name"], r["keys_only"]) for r in locked] == [("q", False)]
        steps = _flow_steps(params, ["q"], claim)
        statement = backend._flow_statement(10, keys_only=True)  # type: ignore[attr-defined]
        rows = conn.cursor(row_factory=tuple_row).execute(statement.query, steps.flow).fetchall()
    claimed = [r[4] for r in rows if r[1] is not None]  # payloads
    assert claimed == [{"key": "a", "n": 0}]
