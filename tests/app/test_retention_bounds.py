"""Issue 24, defects 6 and 7, on every backend and the FakeClock: retention keeps an
idempotency key held for its whole `until_done` window whether or not the finished job's row
is still there, and every table claimq writes has a bound that the pruner enforces."""

from __future__ import annotations

import pytest

from claimq import App
from claimq.backends.base import Completion
from claimq.clock import FakeClock

DAY = 86400.0


def _finish(app: App, queue: str = "q", ok: bool = True) -> int:
    """Claims the queue's one job and archives it (ok), or cancels the pending job into the
    dead letters."""
    if not ok:
        job_id = app.list_jobs("live", queue=queue)[0].id
        assert app.cancel(job_id) == "cancelled"
        return job_id
    job = app.claim("w", [queue], limit=1, start=True)[0]
    assert app.backend.complete([Completion(job.id, job.claim_token or "", None)]) == {job.id}
    return job.id


@pytest.mark.parametrize("policy", [{"archive_age": 1.0, "dead_age": 1.0},
                                    {"archive_rows": 0, "dead_rows": 0}],
                         ids=["age", "rows"])
@pytest.mark.parametrize("ok", [True, False], ids=["archived", "dead"])
def test_a_pruned_job_keeps_its_key_for_the_window(app: App, clock: FakeClock,
                                                   policy: dict[str, float], ok: bool) -> None:
    """Defect 6: archive_age shorter than the 24 h window, or a row limit, pruned the finished
    job's row, then the key was taken as free (and pruned): a duplicate was accepted."""
    app.set_retention(**policy)  # type: ignore[arg-type]
    first = app.enqueue("t", idempotency_key="k", queue="q", unique_for=DAY)
    assert _finish(app, ok=ok) == first
    clock.advance(10)
    counts = app.prune()
    assert counts is not None and counts["archive" if ok else "dead"] == 1  # the row is gone
    assert counts["idempotency_keys"] == 0  # ... its key is not
    assert app.enqueue("t", idempotency_key="k", queue="q", unique_for=DAY) == first
    clock.advance(DAY - 20)  # still inside the window
    app.prune()
    assert app.enqueue("t", idempotency_key="k", queue="q", unique_for=DAY) == first
    clock.advance(20)  # past it: the key is free, then pruned
    assert app.enqueue("t", idempotency_key="k2", queue="q") != first
    counts = app.prune()
    assert counts is not None and counts["idempotency_keys"] == 1
    assert app.enqueue("t", idempotency_key="k", queue="q", unique_for=DAY) != first


def test_a_key_taken_over_holds_for_its_new_job(app: App, clock: FakeClock) -> None:
    """The finished time belongs to the job that held the key: a new holder starts live."""
    first = app.enqueue("t", idempotency_key="k", queue="q", unique_for=60)
    _finish(app)
    clock.advance(120)
    second = app.enqueue("t", idempotency_key="k", queue="q", unique_for=60)
    assert second != first
    clock.advance(DAY * 2)  # the new holder is live (pending): held, never pruned
    app.prune()
    assert app.enqueue("t", idempotency_key="k", queue="q", unique_for=60) == second
