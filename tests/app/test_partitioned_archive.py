"""PostgreSQL's partitioned archive: the existing rows stay readable, completions land in the
day's partition, waiters are still woken, and retention drops whole expired partitions. SQLite
and MariaDB/MySQL refuse the option."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from claimq import App, InvalidInput
from claimq.clock import FakeClock

DAY = 86400


def _complete(app: App, result: object) -> int:
    job_id = app.enqueue("t", queue="q")
    job = app.claim("w", ["q"], limit=1)[0]
    app.start(job)
    app.complete(job, result)
    return job_id


def _partitions(app: App) -> list[str]:
    rows = app.backend.run_sql(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = to_regclass(%s) ORDER BY 1", [f"{app.backend.schema}.archive"])
    return [r[0] for r in rows]


@pytest.fixture
def pg(pg_base_url: str) -> Iterator[tuple[App, FakeClock]]:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    clock = FakeClock(datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0))
    app = App(f"{pg_base_url}?schema={schema}", clock=clock)
    app.migrate()
    yield app, clock
    app.backend.run_sql(f"DROP SCHEMA {schema} CASCADE")
    app.close()


@pytest.mark.postgres
def test_partitioned_archive_keeps_rows_and_drops_whole_days(pg: tuple[App, FakeClock]) -> None:
    app, clock = pg
    before = _complete(app, {"old": 1})
    assert app.partition_archive() is True
    assert app.partition_archive() is False
    today = clock.now()
    day = [f"archive_p{today + timedelta(days=n):%Y%m%d}" for n in range(9)]
    # the old table holds everything up to tomorrow; the next days have partitions
    assert _partitions(app) == ["archive_before", "archive_default", *day[1:4]]
    assert app.result(before, timeout=0) == {"old": 1}
    fresh = _complete(app, "today")
    clock.advance(DAY)
    tomorrow = _complete(app, "tomorrow")
    schema = app.backend.schema
    assert app.backend.run_sql(f"SELECT id FROM {schema}.archive_before ORDER BY id") == [
        (before,), (fresh,)]
    assert app.backend.run_sql(f"SELECT id FROM {schema}.{day[1]}") == [(tomorrow,)]
    # a waiter is still woken by the notice the partitioned table's trigger sends
    waiting = app.enqueue("t", queue="w")
    box: dict[str, object] = {}
    thread = threading.Thread(target=lambda: box.update(r=app.result(waiting, timeout=30)))
    thread.start()
    job = app.claim("w", ["w"], limit=1)[0]
    app.start(job)
    app.complete(job, "woken")
    thread.join(40)
    assert box == {"r": "woken"}
    # day 5: the pass drops whole days past 2 days (the old table, days 1 and 2) and makes
    # the partitions of days 6 to 8; day 5's row went to the default partition (no pass had
    # made its day yet), so day 5 keeps no partition of its own
    app.set_retention(archive_age=2 * DAY)
    clock.advance(4 * DAY)
    late = _complete(app, "late")
    counts = app.prune()
    assert counts is not None and counts["archive_partitions"] == 3
    assert _partitions(app) == ["archive_default", day[3], *day[6:9]]
    assert {j.id for j in app.list_jobs("archive", limit=100)} == {late}
    assert app.result(late, timeout=0) == "late"


# Only the backends without capabilities.partitions: PostgreSQL's are the tests above.
@pytest.mark.parametrize("db_url", ["sqlite", "mariadb"], indirect=True)
def test_without_partitions_the_archive_is_refused(db_url: str) -> None:
    app = App(db_url)
    app.migrate()
    assert not app.backend.capabilities.partitions
    assert app.backend.maintain_partitions(3, datetime.now(UTC)) == ([], [])
    try:
        with pytest.raises(InvalidInput, match="PostgreSQL"):
            app.partition_archive()
        assert app.prune() == {"archive": 0, "dead": 0, "idempotency_keys": 0, "progress": 0,
                               "rate_keys": 0, "audit": 0, "archive_partitions": 0}
    finally:
        app.close()
