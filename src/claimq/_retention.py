"""Retention: the pruner every worker runs, one at a time across all of them.

A pass takes the database's `pruner` lease (a row: held by one process, renewed between
batches, run out after LEASE seconds if its holder dies), then deletes what the policies say
in batches of `batch` rows, each its own short transaction that waits on no row lock, with a
pause between them (twice as long as the batch took) so that the workers' own writes go
first; then what finished jobs leave behind (expired idempotency keys, progress rows, rate
buckets full again) and audit entries older than App.audit_age. Policies live in the database
(app.set_retention), per queue, with '*' for every queue that has none of its own; without a
'*' row, DEFAULT applies.
"""

from __future__ import annotations

import functools
import os
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Protocol

from claimq import _validate
from claimq.backends._batches import all_batches
from claimq.backends.base import Backend, PruneBatch, RetentionPolicy


class AppView(Protocol):
    """What of a claimq.App retention reads: its database and the ages it keeps keys and
    audit entries for."""

    @property
    def backend(self) -> Backend: ...
    @property
    def idempotency_retention(self) -> float: ...
    @property
    def audit_age(self) -> float | None: ...

LEASE_NAME = "pruner"
LEASE = 60.0  # seconds a pass holds the lease without renewing it
PAUSE = 0.01  # seconds between two batches, at least
YIELD = 2.0  # and at least this many times as long as the batch took: the database's time goes
# to the workers' claims two thirds of the time, while the pruner deletes
DAY = 86400.0
PARTITIONS_AHEAD = 3  # a partitioned archive: days of partitions made ahead of today
DEFAULT = RetentionPolicy("*", archive_age=14 * DAY, dead_age=30 * DAY)
ALL_QUEUES = "*"


def policy(queue: str | None, archive_age: object, archive_rows: object, dead_age: object,
           dead_rows: object) -> RetentionPolicy:
    """A checked policy (InvalidInput on a bad value); queue None is '*'."""
    if queue is not None and queue != ALL_QUEUES:
        _validate.queue_name(queue)

    def age(value: object, what: str) -> float | None:
        return None if value is None else _validate.seconds(value, what)

    def rows(value: object, what: str) -> int | None:
        return None if value is None else _validate.integer(value, what, 0, 2**62)

    return RetentionPolicy(
        queue or ALL_QUEUES, age(archive_age, "archive_age"), rows(archive_rows, "archive_rows"),
        age(dead_age, "dead_age"), rows(dead_rows, "dead_rows"))


def policies(app: AppView) -> list[RetentionPolicy]:
    """Every policy in force: '*' first (DEFAULT when none is stored), then per queue."""
    stored = {p.queue: p for p in app.backend.list_retention()}
    default = stored.pop(ALL_QUEUES, DEFAULT)
    return [default, *(stored[q] for q in sorted(stored))]


def drop_before(found: list[RetentionPolicy], now: datetime) -> datetime | None:
    """Where a partitioned archive's whole partitions may go: before the longest archive age
    of every policy (None: some policy keeps the archive without an age limit)."""
    ages = [p.archive_age for p in found]
    if any(age is None for age in ages):
        return None
    return now - timedelta(seconds=max(a for a in ages if a is not None))


def holder() -> str:
    return f"{os.getpid()}:{uuid.uuid4().hex[:12]}"


def batches(found: list[RetentionPolicy], size: int) -> list[PruneBatch]:
    """The deletes the policies ask for: the default's over every queue without a policy of
    its own (its row limit counts those queues' rows together), then each queue's own."""
    default, own = found[0], found[1:]
    others = [p.queue for p in own]
    plans: list[PruneBatch] = []
    for table in ("archive", "dead"):
        for p in (default, *own):
            age = p.archive_age if table == "archive" else p.dead_age
            rows = p.archive_rows if table == "archive" else p.dead_rows
            if age is None and rows is None:
                continue
            queue = None if p.queue == ALL_QUEUES else p.queue
            plans.append(PruneBatch(table, queue, others if queue is None else (), age, rows,
                                    size))
    return plans


def prune(app: AppView, who: str, size: int,
          stop: Callable[[], bool] = lambda: False) -> dict[str, int] | None:
    """One pruning pass; None when another process holds the lease (is pruning now). `stop`
    is asked between batches (a worker that stops ends its pass there)."""
    _validate.integer(size, "batch", 1, 100_000)
    backend = app.backend
    if not backend.take_lease(LEASE_NAME, who, LEASE):
        return None
    counts = {"archive": 0, "dead": 0, "idempotency_keys": 0, "progress": 0, "rate_keys": 0,
              "audit": 0, "archive_partitions": 0}
    try:
        found = policies(app)
        if backend.capabilities.partitions:
            counts["archive_partitions"] = len(backend.maintain_partitions(
                PARTITIONS_AHEAD, drop_before(found, backend.now()))[1])
        for plan in batches(found, size):
            _drain(app, who, size, functools.partial(backend.prune, plan), stop, counts,
                   plan.table)
        _drain(app, who, size,
               lambda: backend.prune_idempotency_keys(app.idempotency_retention, size), stop,
               counts, "idempotency_keys")
        # then what the finished jobs left (progress of jobs gone from every table), per-key
        # rate buckets full again, and audit entries past the App's audit_age: every table
        # claimq writes has a bound the pruner enforces
        _drain(app, who, size, lambda: backend.prune_progress(size), stop, counts, "progress")
        _drain(app, who, size, lambda: backend.prune_rate_keys(size), stop, counts, "rate_keys")
        audit_age = app.audit_age
        if audit_age is not None:
            _drain(app, who, size, lambda: backend.prune_audit(audit_age, size), stop, counts,
                   "audit")
    except _Interrupted:
        pass  # stopping, or another pruner took over (this one stalled past LEASE)
    finally:
        backend.drop_lease(LEASE_NAME, who)
    return counts


class _Interrupted(Exception):
    pass


def _drain(app: AppView, who: str, size: int, batch: Callable[[], int],
           stop: Callable[[], bool], counts: dict[str, int], key: str) -> int:
    """Batches until one deletes fewer than `size` rows, each counted in counts[key] as it
    goes (a pass interrupted between batches reports what it did)."""
    took = 0.0

    def timed() -> int:
        nonlocal took
        start = time.monotonic()
        deleted = batch()
        took = time.monotonic() - start
        counts[key] += deleted
        return deleted

    def between() -> None:
        if stop() or not app.backend.take_lease(LEASE_NAME, who, LEASE):  # renewed, or lost
            raise _Interrupted
        time.sleep(max(PAUSE, YIELD * took))

    return all_batches(timed, size, between)

