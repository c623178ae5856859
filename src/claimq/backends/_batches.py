"""Deleting in bounded batches, for every backend: short transactions, never a long lock."""

from __future__ import annotations

from collections.abc import Callable

PURGE_BATCH = 10_000  # rows deleted per transaction by an operator's purge


def all_batches(batch: Callable[[], int], size: int = PURGE_BATCH,
                between: Callable[[], None] | None = None) -> int:
    """Runs `batch` (deleting at most `size` rows) until it deletes fewer; the total.
    `between` runs between two batches (it may raise to stop)."""
    total = 0
    while True:
        deleted = batch()
        total += deleted
        if deleted < size:
            return total
        if between is not None:
            between()
