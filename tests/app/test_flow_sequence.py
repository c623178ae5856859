"""Ordered sequences (README "Flow control"): jobs with one sequence key run one at a time in
enqueue order, enforced by the claim for every claimer; on a FakeClock, exact, no sleeping."""

from __future__ import annotations

import pytest

from claimq import App, Retry
from claimq.clock import FakeClock
from claimq.errors import InvalidInput

pytestmark = pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"],
                                     indirect=True)


def _ns(jobs: list) -> list[object]:  # type: ignore[type-arg]
    return [j.payload["n"] for j in jobs]


def test_one_at_a_time_in_enqueue_order_for_every_claimer(app: App) -> None:
    @app.task(name="apply", queue="events", sequence_key="user")
    def apply(user: str, n: int) -> None:
        pass

    for n in range(3):
        for user in ("u1", "u2"):
            apply.enqueue(user=user, n=n)
    app.enqueue("other", {"n": "free"}, queue="events")  # no sequence: claimed as usual
    first = app.claim("w1", ["events"], limit=10, start=True)
    assert sorted((j.payload.get("user", ""), j.payload["n"]) for j in first) == [
        ("", "free"), ("u1", 0), ("u2", 0)]
    assert app.claim("w2", ["events"], limit=10) == [], "each sequence has its head running"
    for job in first:
        if job.payload.get("user") == "u1":
            app.complete(job)
    assert [(j.payload["user"], j.payload["n"]) for j in app.claim("w2", ["events"],
                                                                     limit=10)] == [("u1", 1)]
    assert next(q for q in app.queues() if q.name == "events").keyed


def test_order_is_id_order_not_priority_nor_run_at(app: App, clock: FakeClock) -> None:
    a = app.enqueue("t", {"n": 0}, queue="q", sequence_key="s", delay=10)
    b = app.enqueue("t", {"n": 1}, queue="q", sequence_key="s", priority=100)
    assert app.claim("w", ["q"], limit=5) == [], "the head is not due yet: the rest waits"
    clock.advance(10)
    assert [j.id for j in app.claim("w", ["q"], limit=5, start=True)] == [a]
    app.complete(app.get_job(a))
    assert [j.id for j in app.claim("w", ["q"], limit=5)] == [b]


def test_wait_holds_the_sequence_through_retries_until_dead(app: App, clock: FakeClock) -> None:
    ids = [app.enqueue("t", {"n": n}, queue="q", sequence_key="s", max_attempts=2)
           for n in range(3)]
    job = app.claim("w", ["q"], limit=5, start=True)[0]
    assert app.fail(job, Retry(after=30), attempt=1) == "retried"
    assert app.claim("w", ["q"], limit=5) == [], "the failed head waits for its retry"
    clock.advance(30)
    job = app.claim("w", ["q"], limit=5, start=True)[0]
    assert job.id == ids[0]
    assert app.fail(job, RuntimeError("boom"), attempt=2) == "dead"
    assert [j.id for j in app.claim("w", ["q"], limit=5)] == [ids[1]], "dead: the next runs"


def test_skip_lets_the_next_start_while_the_failed_one_waits(app: App, clock: FakeClock) -> None:
    ids = [app.enqueue("t", {"n": n}, queue="q", sequence_key="s", on_failure="skip")
           for n in range(3)]
    job = app.claim("w", ["q"], limit=5, start=True)[0]
    assert app.fail(job, Retry(after=30), attempt=1) == "retried"
    second = app.claim("w", ["q"], limit=5, start=True)
    assert [j.id for j in second] == [ids[1]]
    clock.advance(30)
    assert app.claim("w", ["q"], limit=5) == [], "still one at a time: the second runs"
    app.complete(second[0])
    assert [j.id for j in app.claim("w", ["q"], limit=5)] == [ids[0]], "the retry comes first"


def test_sequences_with_concurrency_keys_and_release(app: App) -> None:
    for n in range(2):
        for s in ("a", "b"):
            app.enqueue("t", {"n": n, "s": s}, queue="q", sequence_key=s,
                        concurrency_key="acct", concurrency_limit=1)
    got = app.claim("w", ["q"], limit=5, start=True)
    assert [(j.payload["s"], j.payload["n"]) for j in got] == [("a", 0)], "the key's limit"
    app.release(got[0])
    assert [(j.payload["s"], j.payload["n"]) for j in app.claim("w", ["q"], limit=5)] == [
        ("a", 0)], "a released head is the head again"


def test_a_task_default_key_from_the_payload_and_enqueue_many(app: App) -> None:
    @app.task(name="step", queue="q", sequence_key="order", on_failure="skip")
    def step(order: int, n: int) -> None:
        pass

    app.enqueue_many([{"task": "step", "payload": {"order": 1, "n": n}} for n in range(3)])
    step.enqueue(order=2, n=0)
    jobs = app.list_jobs()
    assert len(jobs) == 4
    got = app.claim("w", ["q"], limit=10)
    assert sorted((j.payload["order"], j.payload["n"]) for j in got) == [(1, 0), (2, 0)]


def test_bad_sequence_options_are_refused(app: App) -> None:
    with pytest.raises(InvalidInput):
        app.enqueue("t", {}, on_failure="wait")
    with pytest.raises(InvalidInput):
        app.enqueue("t", {}, sequence_key="s", on_failure="retry")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        app.enqueue("t", {}, sequence_key="")
    with pytest.raises(InvalidInput):
        app.task(name="half", on_failure="skip")(lambda: None)

    @app.task(name="needs_field", sequence_key="order")
    def needs_field(n: int) -> None:
        pass

    with pytest.raises(InvalidInput):
        needs_field.enqueue(n=1)
    assert app.list_jobs() == []


def test_a_bulk_enqueue_keeps_its_sequences(app: App) -> None:
    """250 jobs in one enqueue_many (PostgreSQL copies them: COPY from 200 on), 5 sequences,
    with and without skip and a concurrency key: each sequence's jobs come one at a time in
    id order."""
    specs = [{"task": "t", "queue": "bulk", "payload": {"n": n}, "sequence_key": f"s{n % 5}",
              **({"on_failure": "skip"} if n % 2 else {}),
              **({"concurrency_key": "k", "concurrency_limit": 5} if n % 3 == 0 else {})}
             for n in range(250)]
    ids = app.enqueue_many(specs)
    order: dict[str, list[int]] = {}
    while True:
        got = app.claim("w", ["bulk"], limit=50, start=True)
        if not got:
            break
        assert len({j.payload["n"] % 5 for j in got}) == len(got), "two of one sequence at once"
        for job in got:
            order.setdefault(f"s{job.payload['n'] % 5}", []).append(job.id)
            app.complete(job)
    assert {s: ids_ == sorted(ids_) for s, ids_ in order.items()} == {
        f"s{k}": True for k in range(5)}
    assert sorted(i for ids_ in order.values() for i in ids_) == sorted(ids)
