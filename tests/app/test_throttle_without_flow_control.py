"""Throttled on a backend without flow control (capabilities.flow_control false: none of claimq's
own, a third party's may be): a handler's Throttled is a plain retry after its `after`, the queue
is not paused. tests/app/test_flow_*.py cover flow control itself on every backend; the
conformance suite's TestFlowControlRefused is for a backend without it."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from claimq import App, Throttled
from claimq.clock import FakeClock
from claimq.testing import drain

pytestmark = pytest.mark.parametrize("db_url", ["sqlite", "mariadb"], indirect=True)


@pytest.fixture(autouse=True)
def _without_flow_control(app: App) -> None:
    """The app's backend as one without flow control (the app and the worker ask its flag)."""
    app.backend.capabilities = replace(app.backend.capabilities, flow_control=False)


def _live(app: App) -> list[int]:
    return [j.id for j in app.list_jobs("live")]


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
