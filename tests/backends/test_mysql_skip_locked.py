"""MariaDB: the scheduler and the pruner never wait on a row another transaction holds (FOR
UPDATE SKIP LOCKED). Each test holds rows in a transaction of its own on another connection;
the backend's lock-wait timeout is one second, so a statement that waited would time out and be
retried, and `backend.retries` (which counts those) stays empty. A claim does not wait on a
flow-controlled queue's row either."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from dbs import mariadb_database

from claimq.backends.base import Completion, PruneBatch, RateLimit, SchedulePlan, ScheduleRow
from claimq.backends.mysql import MySQLBackend
from claimq.clock import FakeClock
from claimq.testing.conformance._harness import job_spec

pytestmark = [pytest.mark.mariadb, pytest.mark.timeout(120)]


@pytest.fixture
def backend(mariadb_server: str) -> Iterator[MySQLBackend]:
    with mariadb_database(mariadb_server) as url:
        sep = "&" if "?" in url else "?"
        clock = FakeClock(start=datetime.now(UTC).replace(microsecond=0))
        opened = MySQLBackend(f"{url}{sep}lock_wait_timeout=1", clock=clock)
        opened.migrate()
        yield opened
        opened.close()


def _holding(backend: MySQLBackend, sql: str, *params: object) -> object:
    """Another connection inside a transaction that holds the rows `sql` locks."""
    other = backend.connect()
    cur = other.cursor()
    cur.execute("START TRANSACTION")
    cur.execute(sql, params)
    assert cur.fetchall(), "the statement locked no row"
    return other


def _clock(backend: MySQLBackend) -> FakeClock:
    assert isinstance(backend.clock, FakeClock)
    return backend.clock


def test_the_scheduler_skips_a_schedule_another_one_is_firing(backend: MySQLBackend) -> None:
    now = backend.now()
    for name in ("a", "b"):
        assert backend.insert_schedule(ScheduleRow(
            name=name, task="t", payload_json="{}", queue="q", priority=0, max_attempts=3,
            timeout=None, cron=None, every=60.0, tz="UTC", missed="latest", paused=False,
            next_run_at=now))

    def plan(row: ScheduleRow, at: datetime) -> SchedulePlan:
        return SchedulePlan([job_spec(queue="q")], row.next_run_at,
                            row.next_run_at + timedelta(seconds=60))

    other = _holding(backend, "SELECT name FROM claimq_schedules WHERE name = 'a' FOR UPDATE")
    try:
        fired = backend.fire_schedules(plan, 10, 3600.0)
        assert set(fired) == {"b"} and len(fired["b"]) == 1
    finally:
        other.rollback()  # type: ignore[attr-defined]
        other.close()  # type: ignore[attr-defined]
    fired = backend.fire_schedules(plan, 10, 3600.0)
    assert set(fired) == {"a"} and len(fired["a"]) == 1
    assert backend.fire_schedules(plan, 10, 3600.0) == {}
    assert backend.retries == Counter()


def test_a_prune_batch_skips_rows_another_transaction_holds(backend: MySQLBackend) -> None:
    ids = backend.enqueue([job_spec(queue="q") for _ in range(3)], 3600.0)
    jobs = backend.claim("w", ["q"], 3, 30.0, start=True)
    assert backend.complete([Completion(j.id, j.claim_token or "") for j in jobs]) == set(ids)
    _clock(backend).advance(100)
    batch = PruneBatch("archive", "q", (), older_than=10.0, keep_rows=None, limit=100)
    other = _holding(backend, "SELECT id FROM claimq_archive WHERE id = %s FOR UPDATE", ids[0])
    try:
        assert backend.prune(batch) == 2
        assert backend.prune(batch) == 0  # the held row waits for a later pass
    finally:
        other.rollback()  # type: ignore[attr-defined]
        other.close()  # type: ignore[attr-defined]
    assert backend.prune(batch) == 1
    assert backend.list_jobs("archive") == []
    assert backend.retries == Counter()


def test_pruning_keys_skips_a_key_being_taken(backend: MySQLBackend) -> None:
    [done] = backend.enqueue([job_spec(queue="q", idempotency_key="old")], 3600.0)
    [job] = backend.claim("w", ["q"], 1, 30.0, start=True)
    assert backend.complete([Completion(job.id, job.claim_token or "")]) == {done}
    _clock(backend).advance(7200)
    other = backend.connect()
    cur = other.cursor()
    cur.execute("START TRANSACTION")
    # What an enqueue does first: the key taken for a job not inserted yet (job_id 0).
    cur.execute("INSERT INTO claimq_idempotency (`key`, job_id, created_at) "
                "VALUES ('new', 0, UTC_TIMESTAMP(6))")
    try:
        assert backend.prune_idempotency_keys(3600.0, 100) == 1  # "old", not "new"
    finally:
        other.commit()
    cur.execute("SELECT `key` FROM claimq_idempotency")
    assert [r[0] for r in cur.fetchall()] == ["new"]
    other.close()
    assert backend.retries == Counter()


def test_a_claim_skips_a_flow_queue_whose_row_another_transaction_holds(
    backend: MySQLBackend,
) -> None:
    """A flow-controlled queue's claimers take turns on its row: one that finds it held (here by
    an operator's transaction, as by another claim) leaves that queue alone instead of waiting,
    and takes the other queues' jobs."""
    backend.configure_queue("rated", rate_limit=RateLimit(100, 1.0))
    keyed = backend.enqueue([job_spec(queue="keyed", concurrency_key="a", concurrency_limit=1)
                             for _ in range(2)], 3600.0)
    rated = backend.enqueue([job_spec(queue="rated") for _ in range(2)], 3600.0)
    plain = backend.enqueue([job_spec(queue="plain")], 3600.0)
    other = _holding(backend, "SELECT name FROM claimq_queues WHERE name IN ('keyed', 'rated')"
                              " FOR UPDATE")
    try:
        assert [j.id for j in backend.claim("w", None, 10, 30.0)] == plain
    finally:
        other.rollback()  # type: ignore[attr-defined]
        other.close()  # type: ignore[attr-defined]
    claimed = sorted(j.id for j in backend.claim("w", None, 10, 30.0))
    assert claimed == sorted([keyed[0], *rated]), "one of key a, both rated"
    assert backend.retries == Counter()
