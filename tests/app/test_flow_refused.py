"""Flow control on a backend without it (MariaDB/MySQL: capabilities.flow_control is false): each
feature is refused with InvalidInput and writes nothing, and a handler's Throttled is a plain
retry after its `after` (the queue is not paused). tests/app/test_flow_*.py cover the feature
itself on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from claimq import App, Throttled
from claimq.clock import FakeClock
from claimq.errors import InvalidInput
from claimq.testing import drain

pytestmark = pytest.mark.parametrize("db_url", ["mariadb"], indirect=True)

NEEDS = "needs PostgreSQL or SQLite"


def _live(app: App) -> list[int]:
    return [j.id for j in app.list_jobs("live")]


def test_the_backend_says_it_has_no_flow_control(app: App) -> None:
    assert app.backend.capabilities.flow_control is False


@pytest.mark.parametrize("options", [
    {"idempotency_key": "k", "unique": "pending"},
    {"idempotency_key": "k", "unique": "active"},
    {"idempotency_key": "k", "on_conflict": "replace"},
    {"concurrency_key": "acct:1", "concurrency_limit": 1},
    {"sequence_key": "user:1"},
    {"sequence_key": "user:1", "on_failure": "skip"},
    {"rate_key": "customer:1"},
])
def test_flow_options_are_refused_and_write_nothing(app: App, options: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput, match=NEEDS):
        app.enqueue("t", {"n": 1}, queue="q", **options)
    with pytest.raises(InvalidInput, match=NEEDS):
        app.enqueue_many([{"task": "t", "queue": "q"}, {"task": "t", "queue": "q", **options}])
    assert _live(app) == []
    assert [q.name for q in app.queues()] == []


def test_a_task_with_a_concurrency_key_is_refused_at_enqueue(app: App) -> None:
    @app.task(queue="billing", concurrency_key="account_id", concurrency_limit=1)
    def charge(account_id: int) -> None: ...

    with pytest.raises(InvalidInput, match=NEEDS):
        charge.enqueue(account_id=7)
    assert _live(app) == []


def test_a_circuit_breaker_is_refused(app: App) -> None:
    with pytest.raises(InvalidInput, match=NEEDS):
        app.configure_breaker("t", failures=3, queue="api")
    assert app.breakers() == [] and app.stats().breakers == []
    assert app.throttled_keys() == [] and app.stats().throttled_keys == []
    assert app.configure_breaker("t", failures=None, queue="api") is None


def test_rate_limit_and_aging_are_refused(app: App) -> None:
    app.enqueue("t", {}, queue="api")
    with pytest.raises(InvalidInput, match=NEEDS):
        app.configure_queue("api", rate_limit="10/s")
    with pytest.raises(InvalidInput, match=NEEDS):
        app.configure_queue("api", aging=30, aging_cap=10)
    with pytest.raises(InvalidInput, match=NEEDS):
        app.configure_queue("api", key_rate_limit="10/s")
    [info] = app.queues()
    assert (info.rate_limit, info.aging) == (None, None)
    assert app.configure_queue("api", rate_limit=None, aging=None).rate_limit is None


def test_unique_for_holds_the_key_that_long_after_finishing(app: App, clock: FakeClock) -> None:
    first = app.enqueue("t", {}, idempotency_key="k", unique_for=10)
    app.complete(app.claim("w", limit=1, start=True)[0])
    clock.advance(9)
    assert app.enqueue("t", {}, idempotency_key="k", unique_for=10) == first
    clock.advance(2)
    assert app.enqueue("t", {}, idempotency_key="k", unique_for=10) != first


def test_throttled_is_a_plain_retry_after_its_delay(app: App, clock: FakeClock) -> None:
    app.enqueue("t", {"n": 0}, queue="api")
    app.enqueue("t", {"n": 1}, queue="api")
    first = app.claim("w1", ["api"], limit=1, start=True)[0]
    assert app.fail(first, Throttled(after=30), attempt=1) == "retried"
    job = app.get_job(first.id)
    assert job.run_at == clock.now() + timedelta(seconds=30)
    assert (job.attempts, job.errors[-1]["error"]) == (1, "Throttled")
    assert [q.throttled_until for q in app.queues()] == [None]
    assert [j.payload["n"] for j in app.claim("w2", ["api"], limit=5)] == [1], "not paused"


def test_a_worker_retries_a_throttled_job_and_runs_the_rest_of_its_queue(app: App) -> None:
    ran: list[int] = []

    @app.task(queue="api")
    def call(n: int) -> None:
        if n == 0:
            raise Throttled(after=60)
        ran.append(n)

    ids = [call.enqueue(n=n) for n in range(3)]
    drained = drain(app, "api")
    assert (drained.succeeded, drained.retried, drained.dead) == (2, 1, 0)
    assert sorted(ran) == [1, 2]
    assert _live(app) == [ids[0]]
    assert app.get_job(ids[0]).run_at > app.get_job(ids[0]).updated_at
