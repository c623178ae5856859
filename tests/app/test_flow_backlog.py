"""Flow claims under a backlog (issue 27, item 3), on every backend: when the first jobs in claim
order are held back (a concurrency key at its limit, a long sequence), the claim reads on past
them (by key) and takes the jobs behind them, in claim order, within their keys' room."""

from __future__ import annotations

import pytest

from claimq import App, Throttled

pytestmark = pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"],
                                     indirect=True)


@pytest.mark.parametrize("aging", [False, True])
def test_jobs_behind_a_key_at_its_limit_are_claimed(app: App, aging: bool) -> None:
    """More jobs of a key at its limit than the claim's first rows hold, ahead in claim order:
    the claim reads on by key and takes the jobs behind them, within their keys' room and in
    claim order."""
    instance = app
    if aging:  # another flow feature (PostgreSQL: claim_flow.sql rather than claim_keyed.sql)
        instance.configure_queue("q", aging=3600)
    for i in range(100):
        instance.enqueue("t", {"n": i}, queue="q", priority=5, concurrency_key="hot",
                         concurrency_limit=1)
    first = instance.claim("w", ["q"], limit=1)
    assert [j.payload for j in first] == [{"n": 0}]
    for i in range(3):
        instance.enqueue("t", {"b": i}, queue="q", priority=1, concurrency_key="b",
                         concurrency_limit=2)
        instance.enqueue("t", {"plain": i}, queue="q")
    claimed = instance.claim("w", ["q"], limit=10)
    assert [j.payload for j in claimed] == [{"b": 0}, {"b": 1}, {"plain": 0}, {"plain": 1},
                                            {"plain": 2}]


def test_jobs_behind_a_long_sequence_are_claimed(app: App) -> None:
    """A sequence's jobs fill the claim's first rows: its head and the jobs behind are taken."""
    instance = app
    for i in range(100):
        instance.enqueue("t", {"n": i}, queue="q", priority=5, sequence_key="s")
    instance.enqueue("t", {"plain": 0}, queue="q")
    instance.enqueue("t", {"k": 0}, queue="q", concurrency_key="k", concurrency_limit=1)
    claimed = instance.claim("w", ["q"], limit=10)
    assert sorted(map(str, (j.payload for j in claimed))) == sorted(
        map(str, [{"n": 0}, {"plain": 0}, {"k": 0}]))


def test_jobs_behind_a_throttled_rate_key_are_claimed(app: App) -> None:
    """A handler's Throttled pauses rate key a, whose jobs fill more than the claim's first
    rows: the claim passes over them and takes the jobs of other keys behind them (CI: the
    chaos test of a throttled key saw customer b's jobs wait out a's pause on PostgreSQL)."""
    instance = app
    instance.enqueue("t", {"k": 0}, queue="q", concurrency_key="k", concurrency_limit=1)
    for i in range(100):
        instance.enqueue("t", {"a": i}, queue="q", priority=5, rate_key="a")
    [first] = instance.claim("w", ["q"], limit=1)
    assert first.payload == {"a": 0}
    instance.fail(first, Throttled(after=600))
    assert [(k.queue, k.key) for k in instance.throttled_keys()] == [("q", "a")]
    instance.enqueue("t", {"b": 0}, queue="q", priority=1, rate_key="b")
    claimed = instance.claim("w", ["q"], limit=10)
    assert sorted(map(str, (j.payload for j in claimed))) == sorted(
        map(str, [{"b": 0}, {"k": 0}]))
