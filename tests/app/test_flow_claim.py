"""Concurrency by key and rate limits (README "Flow control"), enforced by the claim, on a
FakeClock: exact counts, no sleeping."""

from __future__ import annotations

from datetime import timedelta

import pytest

from claimq import App
from claimq.clock import FakeClock
from claimq.errors import InvalidInput

# Every backend has flow control (capabilities.flow_control).
pytestmark = pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"], indirect=True)


def _keys(jobs: list) -> list[str]:  # type: ignore[type-arg]
    return sorted(j.payload["account"] for j in jobs)


def test_at_most_n_running_per_key_across_claimers(app: App) -> None:
    @app.task(name="sync_account", queue="acct", concurrency_key="account", concurrency_limit=1)
    def sync_account(account: str, n: int) -> None:
        pass

    for n in range(3):
        for account in ("a", "b"):
            sync_account.enqueue(account=account, n=n)
    app.enqueue("other", {"account": "z"}, queue="acct")  # no key: no limit
    first = app.claim("w1", ["acct"], limit=10, start=True)
    assert _keys(first) == ["a", "b", "z"]
    assert app.claim("w2", ["acct"], limit=10) == [], "each key has its one job running"
    a = next(j for j in first if j.payload["account"] == "a")
    app.complete(a)
    again = app.claim("w2", ["acct"], limit=10)
    assert [(j.payload["account"], j.payload["n"]) for j in again] == [("a", 1)]
    info = next(q for q in app.queues() if q.name == "acct")
    assert info.keyed


def test_a_limit_above_one_and_release_and_failure_free_the_slot(app: App) -> None:
    for n in range(5):
        app.enqueue("t", {"account": "a", "n": n}, queue="q", concurrency_key="acct:a",
                    concurrency_limit=2)
    got = app.claim("w", ["q"], limit=10, start=True)
    assert [j.payload["n"] for j in got] == [0, 1]
    app.release(got[0])
    app.fail(got[1], RuntimeError("boom"), attempt=1)
    assert sorted(j.payload["n"] for j in app.claim("w", ["q"], limit=10)) == [0, 2]


def test_other_queues_claim_as_before_next_to_a_keyed_one(app: App) -> None:
    app.enqueue("t", {}, queue="plain")
    app.enqueue("t", {}, queue="plain", priority=5)
    app.enqueue("t", {"k": 1}, queue="keyed", concurrency_key="k", concurrency_limit=1)
    app.enqueue("t", {"k": 2}, queue="keyed", concurrency_key="k", concurrency_limit=1)
    got = app.claim("w", limit=10)
    assert sorted(j.queue for j in got) == ["keyed", "plain", "plain"]
    assert next(q for q in app.queues() if q.name == "plain").keyed is False


def test_rate_limit_spends_a_bucket_shared_by_claimers(app: App, clock: FakeClock) -> None:
    info = app.configure_queue("api", rate_limit="2/s")
    assert str(info.rate_limit) == "2/s"
    for n in range(10):
        app.enqueue("t", {"n": n}, queue="api")
    assert len(app.claim("w1", ["api"], limit=10)) == 2, "a full bucket: the burst"
    assert app.claim("w2", ["api"], limit=10) == []
    clock.advance(0.5)
    assert len(app.claim("w2", ["api"], limit=10)) == 1
    clock.advance(0.25)
    assert app.claim("w1", ["api"], limit=10) == []
    clock.advance(0.25)
    assert len(app.claim("w1", ["api"], limit=10)) == 1
    clock.advance(60)  # a long quiet spell refills the bucket up to its burst only
    assert len(app.claim("w1", ["api"], limit=10)) == 2


def test_rate_limit_changes_at_runtime_and_lifts(app: App, clock: FakeClock) -> None:
    for n in range(20):
        app.enqueue("t", {"n": n}, queue="api")
    app.configure_queue("api", rate_limit="1/m", rate_burst=1)
    assert len(app.claim("w", ["api"], limit=20)) == 1
    clock.advance(30)
    assert app.claim("w", ["api"], limit=20) == []
    info = app.configure_queue("api", rate_limit="5/2s", rate_burst=3)
    assert info.rate_limit is not None and (info.rate_limit.count, info.rate_limit.period,
                                             info.rate_limit.burst) == (5, 2.0, 3)
    assert len(app.claim("w", ["api"], limit=20)) == 3
    clock.advance(0.4)
    assert len(app.claim("w", ["api"], limit=20)) == 1
    assert app.configure_queue("api", rate_limit=None).rate_limit is None
    assert len(app.claim("w", ["api"], limit=20)) == 15
    assert app.configure_queue("api", paused=True).rate_limit is None


def test_rate_limit_with_keys_and_max_workers(app: App, clock: FakeClock) -> None:
    app.configure_queue("q", rate_limit="3/s", max_workers=2)
    for n in range(6):
        app.enqueue("t", {"n": n}, queue="q", concurrency_key=f"k{n % 2}", concurrency_limit=1)
    got = app.claim("w", ["q"], limit=10, start=True)
    assert len(got) == 2
    for job in got:
        app.complete(job)
    got = app.claim("w", ["q"], limit=10, start=True)
    assert len(got) == 1, "one token left of the burst of 3"
    clock.advance(1)
    app.complete(got[0])
    assert len(app.claim("w", ["q"], limit=10)) == 2


@pytest.mark.parametrize("rate", ["10", "ten/s", "0/s", "10/0s", "10/y", 10])
def test_bad_rate_limits_are_refused(app: App, rate: object) -> None:
    with pytest.raises(InvalidInput):
        app.configure_queue("q", rate_limit=rate)  # type: ignore[arg-type]


def test_bad_concurrency_options_are_refused(app: App) -> None:
    with pytest.raises(InvalidInput):
        app.enqueue("t", {}, concurrency_key="k")
    with pytest.raises(InvalidInput):
        app.enqueue("t", {}, concurrency_key="k", concurrency_limit=0)

    @app.task(name="needs_field", concurrency_key="account", concurrency_limit=1)
    def needs_field(n: int) -> None:
        pass

    with pytest.raises(InvalidInput):
        needs_field.enqueue(n=1)
    with pytest.raises(InvalidInput):
        app.task(name="half", concurrency_key="account")(lambda: None)
    assert app.list_jobs() == []


def test_priority_aging_lifts_a_waiting_job_over_a_flood(app: App, clock: FakeClock) -> None:
    info = app.configure_queue("aged", aging=10, aging_cap=3)
    assert str(info.aging) == "+1/10s (max +3)"
    low = app.enqueue("t", {"n": "low"}, queue="aged", priority=0)
    clock.advance(25)  # low counts 2 now
    flood = [app.enqueue("t", {"n": i}, queue="aged", priority=3) for i in range(6)]
    assert [j.id for j in app.claim("w", ["aged"], limit=2)] == flood[:2]
    clock.advance(5)  # low counts 3: a tie with the flood, and it has waited longer
    assert [j.id for j in app.claim("w", ["aged"], limit=1)] == [low]
    assert [j.id for j in app.claim("w", ["aged"], limit=1)] == [flood[2]]


def test_priority_aging_is_capped_and_lifts(app: App, clock: FakeClock) -> None:
    app.configure_queue("aged", aging=1, aging_cap=2)
    low = app.enqueue("t", {}, queue="aged", priority=0)
    clock.advance(1000)  # capped at +2
    high = [app.enqueue("t", {}, queue="aged", priority=3) for _ in range(2)]
    assert [j.id for j in app.claim("w", ["aged"], limit=1)] == high[:1]
    assert app.configure_queue("aged", aging=None).aging is None
    app.enqueue("t", {}, queue="aged", priority=1)
    assert [j.id for j in app.claim("w", ["aged"], limit=1)] == [high[1]]
    assert len(app.claim("w", ["aged"], limit=1)) == 1
    assert [j.id for j in app.claim("w", ["aged"], limit=1)] == [low]


def test_priority_aging_with_levels_between(app: App, clock: FakeClock) -> None:
    app.configure_queue("aged", aging=5, aging_cap=10)
    ids = {p: app.enqueue("t", {"p": p}, queue="aged", priority=p) for p in (0, 2, 4)}
    clock.advance(12)  # all count +2: 2, 4, 6; a fresh 5 goes between
    five = app.enqueue("t", {"p": 5}, queue="aged", priority=5)
    assert [j.id for j in app.claim("w", ["aged"], limit=1)] == [ids[4]]
    assert [j.id for j in app.claim("w", ["aged"], limit=1)] == [five]
    assert {j.id for j in app.claim("w", ["aged"], limit=1)} == {ids[2]}


@pytest.mark.parametrize("options", [{"aging": 0}, {"aging": -1}, {"aging": 5, "aging_cap": 0}])
def test_bad_aging_is_refused(app: App, options: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        app.configure_queue("q", **options)  # type: ignore[arg-type]


def test_throttled_pauses_the_whole_queue_for_every_claimer(app: App, clock: FakeClock) -> None:
    from claimq import Throttled

    for n in range(4):
        app.enqueue("t", {"n": n}, queue="api")
    app.enqueue("t", {}, queue="other")
    first = app.claim("w1", ["api"], limit=1, start=True)[0]
    assert app.fail(first, Throttled(after=30), attempt=1) == "retried"
    info = next(q for q in app.queues() if q.name == "api")
    assert info.throttled_until == clock.now() + timedelta(seconds=30)
    assert app.claim("w2", ["api"], limit=5) == []
    assert [j.queue for j in app.claim("w2", limit=5)] == ["other"], "other queues flow on"
    clock.advance(29)
    assert app.claim("w3", ["api"], limit=5) == []
    clock.advance(1)
    assert len(app.claim("w3", ["api"], limit=5)) == 4, "the throttled job is due again too"
    assert next(q for q in app.queues() if q.name == "api").throttled_until is None
    job = app.get_job(first.id)
    assert job.attempts == 1 and job.errors[-1]["error"] == "Throttled"


def test_a_stale_throttle_writes_nothing(app: App) -> None:
    from dataclasses import replace

    from claimq import LeaseLost, Throttled

    app.enqueue("t", {}, queue="api")
    job = app.claim("w1", ["api"], limit=1, start=True)[0]
    with pytest.raises(LeaseLost):
        app.fail(replace(job, claim_token="0" * 32), Throttled(after=30), attempt=1)
    assert next(q for q in app.queues() if q.name == "api").throttled_until is None
