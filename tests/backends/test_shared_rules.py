"""The rules every backend (and the worker) shares, written once: dead or retry, the reaper's,
a row becoming a Job, the rate keys' buckets. Each backend's behaviour is the conformance
tests'; these pin the shared functions themselves."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from claimq.backends._flow import KeyBuckets, aged_priority, claim_order
from claimq.backends._rows import job_from_row, json_text, lease_expired_error
from claimq.job import CorruptRow, DeadReason, Status, ends_job, expired_lease_reason


def test_dead_or_retry() -> None:
    assert ends_job(True, 1, 5)
    assert ends_job(False, 5, 5)
    assert not ends_job(False, 4, 5)


def test_the_reapers_rule() -> None:
    assert expired_lease_reason("fetched", 5, 5, False) is None  # never started: none used
    assert expired_lease_reason("processing", 4, 5, False) is None
    assert expired_lease_reason("processing", 5, 5, False) is DeadReason.LEASE_EXPIRED
    assert expired_lease_reason("fetched", 1, 5, True) is DeadReason.CANCELLED
    at = datetime(2026, 1, 1, tzinfo=UTC)
    row = {"attempts": 2, "worker_id": "w", "status": "processing"}
    assert lease_expired_error(row, at) == {
        "attempt": 2, "at": at.isoformat(), "worker": "w", "error": "LeaseExpired",
        "message": "lease expired while processing"}


_ROW = {"id": 7, "queue": "q", "task": "t", "payload": '{"a": 1}', "tags": '["x"]',
        "priority": 3, "attempts": 1, "max_attempts": 4, "idempotency_key": None,
        "run_at": 1.5, "created_at": 1.0}


def test_a_row_becomes_a_job_with_what_the_claim_wrote() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    job = job_from_row(_ROW, json_text, lambda v: datetime.fromtimestamp(v, UTC),
                       status=Status.PROCESSING, worker_id="w", claim_token="tok",
                       started_at=at, updated_at=at)
    assert (job.id, job.payload, job.tags, job.status, job.worker_id, job.claim_token) == (
        7, {"a": 1}, ("x",), Status.PROCESSING, "w", "tok")
    assert job.run_at == datetime.fromtimestamp(1.5, UTC) and job.started_at == at
    assert (job.errors, job.retry, job.result, job.reason, job.lease_until) == (
        (), None, None, None, None)
    assert job_from_row(_ROW, json_text).status is Status.PENDING  # no status column


def test_a_time_that_is_no_time_makes_the_payload_corrupt() -> None:
    job = job_from_row({**_ROW, "created_at": "soon"}, json_text,
                       lambda v: datetime.fromtimestamp(v, UTC))
    assert isinstance(job.payload, CorruptRow)
    assert "created_at holds 'soon', not a time" in job.payload
    assert job.created_at is None


def test_key_buckets_read_alike_with_either_time() -> None:
    """SQLite's times are seconds, MariaDB's datetimes: the same state, the same tokens."""
    state = {"key_rate_count": 2, "key_rate_period": 1.0, "key_rate_burst": 3}
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    spent: list[tuple[str, object, int]] = []
    seconds = KeyBuckets(state, 100.0, lambda key: (100.5, None),
                         lambda *a: spent.append(a))
    dates = KeyBuckets(state, t0, lambda key: (t0 + timedelta(seconds=0.5), None),
                       lambda *a: spent.append(a), timedelta.total_seconds)
    for buckets in (seconds, dates):
        taken = [buckets.take({"rate_key": "k", "id": i}) for i in range(4)]
        assert taken == [True, True, False, False]  # burst 3, one interval (0.5 s) ahead
        assert buckets.take({"rate_key": None, "id": 9})
        buckets.spend({0, 1})
    assert spent == [("k", 100.5, 2), ("k", t0 + timedelta(seconds=0.5), 2)]
    throttled = KeyBuckets(state, 100.0, lambda key: (None, 200.0), lambda *a: None)
    assert not throttled.take({"rate_key": "k", "id": 1})


def test_aging_and_the_claim_order() -> None:
    assert aged_priority(1, 25.0, 10.0, 5) == 3
    assert aged_priority(1, 1000.0, 10.0, 5) == 6
    assert aged_priority(1, 1000.0, None, None) == 1
    assert sorted([claim_order(1, 2.0, 3), claim_order(2, 5.0, 4), claim_order(2, 5.0, 1)]) == [
        (-2, 5.0, 1), (-2, 5.0, 4), (-1, 2.0, 3)]
