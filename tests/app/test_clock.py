"""The injectable clock: every time a backend computes follows it, on both backends, so leases
expire, delays fall due and retention windows close without any test sleeping."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from claimq import App, DeadReason, InvalidInput, Status
from claimq.backends.base import Failure
from claimq.clock import FakeClock, SystemClock

START = datetime(2031, 5, 6, 7, 8, 9, tzinfo=UTC)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=START)


@pytest.fixture
def fake_app(db_url: str, clock: FakeClock) -> Iterator[App]:
    app = App(db_url, clock=clock)
    app.migrate()
    yield app
    app.close()


def test_fake_clock_moves_only_when_told() -> None:
    clock = FakeClock(start=START)
    assert clock.now() == clock.now() == START
    assert clock.advance(90) == START + timedelta(seconds=90) == clock.now()
    clock.advance(timedelta(minutes=-1))
    assert clock.now() == START + timedelta(seconds=30)
    clock.set(datetime(2040, 1, 1, 1, tzinfo=UTC))
    assert clock.now() == datetime(2040, 1, 1, 1, tzinfo=UTC)
    ticking = FakeClock(start=START, tick=0.5)
    assert [ticking.now() for _ in range(3)] == [
        START, START + timedelta(seconds=0.5), START + timedelta(seconds=1)]
    with pytest.raises(InvalidInput):
        FakeClock(start=datetime(2031, 1, 1))  # naive: which zone?
    with pytest.raises(InvalidInput):
        App("sqlite:///x.db", clock=lambda: START)  # type: ignore[arg-type]


def test_every_time_written_is_the_clocks(fake_app: App, clock: FakeClock) -> None:
    job_id = fake_app.enqueue("t", {}, queue="clocked")
    job = fake_app.get_job(job_id)
    assert job.created_at == job.updated_at == job.run_at == START
    assert fake_app.backend.now() == START
    clock.advance(5)
    [claimed] = fake_app.claim("w", ["clocked"], lease=30, start=True)
    assert claimed.started_at == claimed.heartbeat_at == START + timedelta(seconds=5)
    assert claimed.lease_until == START + timedelta(seconds=35)
    clock.advance(7)
    fake_app.complete(claimed, {"ok": True})
    done = fake_app.get_job(job_id)
    assert done.status == Status.SUCCEEDED
    assert done.finished_at == START + timedelta(seconds=12)


def test_a_lease_expires_and_is_reaped_when_the_clock_passes_it(
    fake_app: App, clock: FakeClock
) -> None:
    job_id = fake_app.enqueue("t", {}, queue="lease", max_attempts=2)
    [job] = fake_app.claim("w-old", ["lease"], lease=30, start=True)
    clock.advance(29)
    assert fake_app.reap().requeued == []  # one second left: nothing to reap
    assert fake_app.heartbeat(job, lease=30) is False  # renewed: now due at +59
    clock.advance(30)
    assert fake_app.reap().requeued == []
    clock.advance(1)
    assert fake_app.reap().requeued == [job_id]
    again = fake_app.get_job(job_id)
    assert again.status == Status.PENDING and again.errors[-1]["error"] == "LeaseExpired"
    [second] = fake_app.claim("w-new", ["lease"], lease=10, start=True)
    clock.advance(11)
    assert fake_app.reap().dead == [job_id]  # its last attempt expired too
    assert fake_app.get_job(job_id).reason == DeadReason.LEASE_EXPIRED
    assert second.attempts == 2


def test_delay_and_backoff_fall_due_on_the_clock(fake_app: App, clock: FakeClock) -> None:
    job_id = fake_app.enqueue("t", {}, queue="later", delay=60)
    assert fake_app.claim("w", ["later"]) == []
    clock.advance(60)
    [job] = fake_app.claim("w", ["later"], start=True)
    failure = Failure(job.id, job.claim_token or "", {"error": "E"}, 120.0, "retries_exhausted")
    assert fake_app.backend.fail([failure]).retried == {job_id}
    assert fake_app.get_job(job_id).run_at == START + timedelta(seconds=180)
    clock.advance(119)
    assert fake_app.claim("w", ["later"]) == []
    clock.advance(1)
    assert [j.id for j in fake_app.claim("w", ["later"])] == [job_id]


def test_the_idempotency_window_closes_on_the_clock(fake_app: App, clock: FakeClock) -> None:
    app = fake_app
    first = app.enqueue("t", {}, queue="keys", idempotency_key="k")
    [job] = app.claim("w", ["keys"], start=True)
    app.complete(job)
    clock.advance(app.idempotency_retention - 1)
    assert app.enqueue("t", {}, queue="keys", idempotency_key="k") == first
    clock.advance(2)
    assert app.enqueue("t", {}, queue="keys", idempotency_key="k") != first


def test_cancel_and_purge_follow_the_clock(fake_app: App, clock: FakeClock) -> None:
    job_id = fake_app.enqueue("t", {}, queue="gone")
    clock.advance(3)
    assert fake_app.cancel(job_id) == "cancelled"
    assert fake_app.get_job(job_id).finished_at == START + timedelta(seconds=3)
    clock.advance(100)
    assert fake_app.purge("dead", older_than=101) == 0
    assert fake_app.purge("dead", older_than=99) == 1


def test_the_system_clock_is_the_databases(db_url: str) -> None:
    """Without a clock the backend runs on the system clock: on PostgreSQL the server's now()
    (the statements get NULL for their `now`), on SQLite this machine's time."""
    with App(db_url) as app:
        app.migrate()
        assert isinstance(app.backend.clock, SystemClock)  # type: ignore[attr-defined]
        job = app.get_job(app.enqueue("t", {}))
        assert job.created_at is not None
        assert abs((app.backend.now() - job.created_at).total_seconds()) < 60
        assert abs((datetime.now(UTC) - app.backend.now()).total_seconds()) < 60
