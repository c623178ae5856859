"""A row another transaction holds locked must not stall the batched heartbeat (defect 3 of
issue 12): the other jobs are renewed at once, the locked one comes back busy (not lost)."""

from __future__ import annotations

import threading
from typing import Any

from app_support import execute, running, table
from polling import in_thread

from claimq import App
from claimq.backends.base import HeartbeatResult, Owned

WAIT = 30.0  # generous: the fixed statement returns at once; the old one waited on the lock


def _beat_in_thread(
    app: App, owned: list[Owned], lease: float
) -> tuple[threading.Thread, dict[str, Any]]:
    return in_thread(lambda: app.backend.heartbeat(owned, lease))


def test_a_row_locked_elsewhere_is_busy_and_the_others_are_renewed(app: App) -> None:
    jobs = [running(app, lease=30.0) for _ in range(4)]
    owned = [Owned(j.id, j.claim_token or "") for j in jobs]
    before = {j.id: app.get_job(j.id).lease_until for j in jobs}  # type: ignore[union-attr]
    if not app.backend.capabilities.row_locks:
        # SQLite locks the whole database, not rows: nothing is ever busy.
        result = app.backend.heartbeat(owned, 600.0)
        assert result == HeartbeatResult(alive={j.id for j in jobs})
        return
    locked = jobs[0]
    with app.backend.transaction() as conn:
        execute(conn, f"SELECT 1 FROM {table(app, 'jobs')} WHERE id = %s FOR UPDATE",
                (locked.id,))
        thread, out = _beat_in_thread(app, owned, 600.0)
        thread.join(WAIT)
        stalled = thread.is_alive()
    thread.join(WAIT)  # the lock is gone: a stalled heartbeat finishes now
    assert not stalled, "the heartbeat waited on the locked row"
    assert "error" not in out, out
    result: HeartbeatResult = out["result"]
    assert result.busy == {locked.id}
    assert result.alive == {j.id for j in jobs[1:]}
    assert result.lost == set(), "a busy job is not lost"
    for j in jobs[1:]:
        now = app.get_job(j.id)
        assert now is not None and now.lease_until is not None
        assert now.lease_until > before[j.id]  # type: ignore[operator]
    still = app.get_job(locked.id)
    assert still is not None and still.lease_until == before[locked.id], "not renewed"
    # Once the lock is gone, the next beat renews it like the others.
    again = app.backend.heartbeat(owned, 600.0)
    assert again.alive == {j.id for j in jobs} and again.busy == set() and again.lost == set()


def test_a_busy_row_whose_token_changed_is_lost_not_busy(app: App) -> None:
    """Only a row that still shows the caller's token counts as busy."""
    mine, other = running(app, lease=30.0), running(app, lease=30.0)
    stale = Owned(other.id, "00000000-0000-0000-0000-000000000001")
    if not app.backend.capabilities.row_locks:
        # SQLite: no row locks, so nothing is busy; the stale token is lost all the same.
        result = app.backend.heartbeat([Owned(mine.id, mine.claim_token or ""), stale], 60.0)
        assert result.busy == set() and result.lost == {other.id}
        assert result.alive == {mine.id}
        return
    with app.backend.transaction() as conn:
        execute(conn, f"SELECT 1 FROM {table(app, 'jobs')} WHERE id IN (%s, %s) FOR UPDATE",
                (mine.id, other.id))
        thread, out = _beat_in_thread(app, [Owned(mine.id, mine.claim_token or ""), stale], 60.0)
        thread.join(WAIT)
        stalled = thread.is_alive()
    thread.join(WAIT)
    assert not stalled
    result: HeartbeatResult = out["result"]
    assert result.busy == {mine.id} and result.lost == {other.id} and result.alive == set()
