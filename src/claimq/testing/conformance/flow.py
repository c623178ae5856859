"""Flow control: uniqueness by state and debounce (enqueue), concurrency keys, rate limits and
throttles (claim, for flow-controlled queues only), as NewJob's, Failure's and
configure_queue()'s fields say.

These classes are for a backend with `capabilities.flow_control` (marked `flow_control`); a
backend without it runs TestFlowControlRefused instead (marked `no_flow_control`), which checks
that each of those features is refused with InvalidInput and writes nothing. A class run on the
wrong kind of backend fails, saying so: select by marker (e.g. `-m "not flow_control"`)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from claimq.backends.base import (
    Backend,
    ClaimRequest,
    Completion,
    Failure,
    JobFilter,
    PriorityAging,
    RateLimit,
    Settled,
)
from claimq.errors import InvalidInput
from claimq.job import Job
from claimq.testing.conformance._harness import Subject, job_spec, token

flow_control = pytest.mark.flow_control  # needs capabilities.flow_control
no_flow_control = pytest.mark.no_flow_control  # for a backend without it


class _FlowControlled:
    """A class of tests for a backend with flow control (a backend without it fails here)."""

    @pytest.fixture(autouse=True)
    def _with_flow_control(self, subject: Subject) -> None:
        assert subject.backend.capabilities.flow_control, (
            f"{type(subject.backend).__name__} has no flow control (capabilities.flow_control):"
            " run TestFlowControlRefused on it instead (deselect these with -m 'not flow_control')")


def _keyed(key: str, limit: int, n: int = 0, queue: str = "q") -> object:
    return job_spec(payload={"key": key, "n": n}, queue=queue, concurrency_key=key,
                    concurrency_limit=limit)


def _asettle(backend: Backend, done: list[Completion], claim: ClaimRequest) -> Settled:
    async def run() -> Settled:
        await backend.open_async()
        try:
            return await backend.asettle(done, (), claim)
        finally:
            await backend.close_async()

    return asyncio.run(run())


class TestUniqueFor:
    """unique="until_done" (the default) for `unique_for` seconds after finishing: the key's
    retention, which every backend keeps (flow control or not)."""

    def test_until_done_holds_for_unique_for_after_finishing(self, subject: Subject) -> None:
        first = subject.enqueue(idempotency_key="k", unique_for=10)
        subject.complete(subject.claim_one(start=True))
        subject.advance(9)
        assert subject.enqueue(idempotency_key="k", unique_for=10) == first
        subject.advance(2)
        assert subject.enqueue(idempotency_key="k", unique_for=10) != first


@flow_control
class TestUniqueness(_FlowControlled):
    def test_pending_scope_frees_the_key_once_its_job_runs(self, subject: Subject) -> None:
        first = subject.enqueue(idempotency_key="k", unique="pending")
        assert subject.enqueue(idempotency_key="k", unique="pending") == first
        subject.claim_one(start=True)
        second = subject.enqueue(idempotency_key="k", unique="pending")
        assert second != first
        assert subject.enqueue(idempotency_key="k", unique="active") == second

    def test_active_scope_frees_the_key_when_its_job_finishes(self, subject: Subject) -> None:
        first = subject.enqueue(idempotency_key="k", unique="active")
        job = subject.claim_one(start=True)
        assert subject.enqueue(idempotency_key="k", unique="active") == first
        assert subject.complete(job) == {first}
        assert subject.enqueue(idempotency_key="k", unique="active") != first

    def test_replace_gives_a_pending_holder_the_new_payload_and_run_at(
        self, subject: Subject
    ) -> None:
        first = subject.enqueue(payload={"n": 1}, idempotency_key="k", delay=5)
        subject.advance(3)
        again = subject.enqueue(payload={"n": 2}, idempotency_key="k", on_conflict="replace",
                                delay=5)
        assert again == first
        job = subject.job(first)
        assert (job.payload, job.run_at) == ({"n": 2}, subject.at(8))
        assert subject.claim(limit=5) == []
        subject.advance(5)
        claimed = subject.claim_one(start=True)
        assert subject.enqueue(payload={"n": 3}, idempotency_key="k",
                               on_conflict="replace") == first
        assert subject.job(claimed.id).payload == {"n": 2}, "a running holder is left alone"


@flow_control
class TestConcurrencyKeys(_FlowControlled):
    def test_in_flight_per_key_stays_within_its_limit_across_clients(
        self, subject: Subject
    ) -> None:
        specs = [_keyed("a", 1, n) for n in range(3)] + [_keyed("b", 2, n) for n in range(3)]
        subject.enqueue_many([*specs, job_spec(queue="q")])  # type: ignore[list-item]
        first = subject.claim(queues=["q"], limit=10, start=True)
        keys = sorted(str(j.payload.get("key")) for j in first)
        assert keys == ["None", "a", "b", "b"]
        other = subject.other_client()
        assert other.claim("w2", ["q"], 10, 30.0, False) == []
        assert [q.keyed for q in subject.backend.list_queues() if q.name == "q"] == [True]

    def test_settle_completes_and_claims_the_keys_next_job_in_one_call(
        self, subject: Subject
    ) -> None:
        subject.enqueue_many([_keyed("a", 1, n) for n in range(3)])  # type: ignore[misc]
        job = subject.claim_one(start=True)
        request = ClaimRequest("w1", ["q"], 5, 30.0, True)
        settled = subject.backend.settle([Completion(job.id, token(job))], (), request)
        assert settled.completed == {job.id}
        assert [j.payload["n"] for j in settled.claimed] == [1]
        nxt = settled.claimed[0]
        settled = _asettle(subject.backend, [Completion(nxt.id, token(nxt))], request)
        assert settled.completed == {nxt.id}
        assert [j.payload["n"] for j in settled.claimed] == [2]

    def test_one_claim_takes_flow_and_plain_queues_within_its_limit(
        self, subject: Subject
    ) -> None:
        keyed = subject.enqueue_many([_keyed("a", 2, n) for n in range(4)])  # type: ignore[misc]
        plain = subject.enqueue_many([job_spec(queue="plain") for _ in range(5)])
        got = subject.claim(limit=3)
        assert sorted(j.id for j in got) == sorted(keyed[:2] + plain[:1])
        assert len(subject.claim(limit=10)) == 4, "the rest of the plain queue, no more keyed"


@flow_control
class TestRateLimits(_FlowControlled):
    def test_the_bucket_is_shared_spent_refilled_and_lifted(self, subject: Subject) -> None:
        backend = subject.backend
        info = backend.configure_queue("r", rate_limit=RateLimit(2, 1.0))
        assert info.rate_limit == RateLimit(2, 1.0)
        subject.enqueue_many([job_spec(queue="r") for _ in range(8)])
        assert len(subject.claim(queues=["r"], limit=8)) == 2
        assert subject.other_client().claim("w2", ["r"], 8, 30.0, False) == []
        subject.advance(0.5)
        assert len(subject.claim(queues=["r"], limit=8)) == 1
        assert backend.configure_queue("r", rate_limit=RateLimit(1, 60.0, 2)).rate_limit == (
            RateLimit(1, 60.0, 2))
        assert len(subject.claim(queues=["r"], limit=8)) == 2, "a new limit: a full bucket"
        assert subject.claim(queues=["r"], limit=8) == []
        assert backend.configure_queue("r", paused=False).rate_limit == RateLimit(1, 60.0, 2)
        assert backend.configure_queue("r", rate_limit=None).rate_limit is None
        assert len(subject.claim(queues=["r"], limit=8)) == 3


@flow_control
class TestThrottle(_FlowControlled):
    def test_a_throttled_failure_pauses_its_queue_for_every_client(
        self, subject: Subject
    ) -> None:
        subject.enqueue_many([job_spec(queue="api") for _ in range(3)])
        subject.enqueue(queue="other")
        job = subject.claim_one(queue="api", start=True)
        error = {"attempt": 1, "error": "Throttled", "message": "429"}
        failed = subject.backend.fail([Failure(job.id, token(job), error, 10.0,
                                               "retries_exhausted", throttle=10.0)])
        assert failed.retried == {job.id}
        [info] = [q for q in subject.backend.list_queues() if q.name == "api"]
        assert info.throttled_until == subject.at(10)
        other = subject.other_client()
        assert [j.queue for j in other.claim("w2", None, 10, 30.0, False)] == ["other"]
        subject.advance(10)
        assert len(other.claim("w2", ["api"], 10, 30.0, False)) == 3
        assert [q.throttled_until for q in subject.backend.list_queues()
                if q.name == "api"] == [None]


@flow_control
class TestLimitedState(_FlowControlled):
    """The live state "limited" (find_jobs' JobFilter.state, count_states, list_limited): a due
    job that flow control holds back now, for the first of LIMIT_REASONS that holds, and then
    not also due. The rule is the database's state only, the same on every backend."""

    def _throttle(self, subject: Subject, job: Job, seconds: float) -> None:
        error = {"attempt": 1, "error": "Throttled", "message": "429"}
        assert subject.backend.fail([Failure(job.id, token(job), error, seconds,
                                             "retries_exhausted", throttle=seconds)]).retried

    def _world(self, subject: Subject) -> dict[str, list[int]]:
        """A due job held back for each reason, and next to each a due job that is not."""
        backend = subject.backend
        ids: dict[str, list[int]] = {}
        # concurrency: key k (limit 1) has one running; key k2 (limit 2) has one, so room
        subject.enqueue_many([job_spec(payload={"key": k, "n": n}, queue="c",
                                       concurrency_key=k, concurrency_limit=limit)
                              for k, limit, n in (("k", 1, 0), ("k", 1, 1), ("k", 1, 2),
                                                  ("k2", 2, 0), ("k2", 2, 1))])
        assert subject.claim_one(queue="c", start=True).payload["key"] == "k"
        assert subject.claim_one(queue="c", start=True).payload["key"] == "k2"  # k is full
        pending = subject.jobs("live", queue="c", status="pending")
        ids["concurrency"] = [j.id for j in pending if j.payload["key"] == "k"]
        ids["due"] = [j.id for j in pending if j.payload["key"] == "k2"]
        # max_workers: one running of at most one
        backend.configure_queue("m", max_workers=1)
        subject.enqueue_many([job_spec(queue="m") for _ in range(2)])
        subject.claim_one(queue="m")
        ids["max_workers"] = [j.id for j in subject.jobs("live", queue="m", status="pending")]
        # paused (with a key at its limit too: counted once, under the queue's reason)
        subject.enqueue(queue="p", concurrency_key="k", concurrency_limit=1)
        subject.claim_one(queue="p", start=True)
        ids["paused"] = [subject.enqueue(queue="p"),
                         subject.enqueue(queue="p", concurrency_key="k", concurrency_limit=1)]
        backend.configure_queue("p", paused=True)
        # inactive
        ids["inactive"] = [subject.enqueue(queue="i")]
        backend.configure_queue("i", active=False)
        # a Throttled pauses queue t (its job retries later: retrying, not limited)
        subject.enqueue(queue="t")
        self._throttle(subject, subject.claim_one(queue="t", start=True), 60)
        ids["throttled"] = [subject.enqueue(queue="t")]
        # a Throttled pauses rate key a of queue r (not key b)
        subject.enqueue(queue="r", rate_key="a")
        self._throttle(subject, subject.claim_one(queue="r", start=True), 30)
        ids["rate_key"] = [subject.enqueue(queue="r", rate_key="a")]
        ids["due"].append(subject.enqueue(queue="r", rate_key="b"))
        return ids

    def _found(self, subject: Subject, state: str) -> list[int]:
        return [j.id for j in subject.backend.find_jobs("live", JobFilter(state=state), None,
                                                         100)]

    def test_find_and_count_a_held_back_job_as_limited_not_due(self, subject: Subject) -> None:
        ids = self._world(subject)
        limited = sorted((i for reason, found in ids.items() if reason != "due"
                          for i in found), reverse=True)
        assert self._found(subject, "limited") == limited
        assert self._found(subject, "due") == sorted(ids["due"], reverse=True)
        counts = {(c.queue, c.state): c.jobs for c in subject.backend.count_states()}
        assert {k: n for k, n in counts.items() if k[1] in ("due", "limited")} == {
            ("c", "limited"): 2, ("c", "due"): 1, ("m", "limited"): 1, ("p", "limited"): 2,
            ("i", "limited"): 1, ("t", "limited"): 1, ("r", "limited"): 1, ("r", "due"): 1}
        assert counts[("t", "retrying")] == counts[("r", "retrying")] == 1
        assert self._found(subject, "running") == sorted(
            (j.id for j in subject.jobs("live") if j.status in ("fetched", "processing")),
            reverse=True)

    def test_list_limited_groups_by_queue_reason_and_key(self, subject: Subject) -> None:
        self._world(subject)
        rows = {(r.queue, r.reason, r.key): r for r in subject.backend.list_limited()}
        assert {k: (r.waiting, r.running, r.limit, r.until) for k, r in rows.items()} == {
            ("c", "concurrency", "k"): (2, 1, 1, None),
            ("m", "max_workers", None): (1, 1, 1, None),
            ("p", "paused", None): (2, 1, None, None),
            ("i", "inactive", None): (1, 0, None, None),
            ("t", "throttled", None): (1, 0, None, subject.at(60)),
            ("r", "rate_key", "a"): (1, 0, None, subject.at(30)),
        }
        waiting = [r.waiting for r in subject.backend.list_limited()]
        assert waiting == sorted(waiting, reverse=True), "the most waiting first"

    def test_limit_reasons_says_why_each_limited_job_waits(self, subject: Subject) -> None:
        ids = self._world(subject)
        every = [j.id for j in subject.jobs("live")]
        keys = {"concurrency": "k", "rate_key": "a"}
        assert subject.backend.limit_reasons(every) == {
            i: (reason, keys.get(reason)) for reason, found in ids.items() if reason != "due"
            for i in found}
        assert subject.backend.limit_reasons([]) == {}

    def test_a_job_held_by_both_keys_counts_once_under_its_concurrency_key(
        self, subject: Subject
    ) -> None:
        subject.enqueue(queue="x", concurrency_key="k", concurrency_limit=1, rate_key="a")
        self._throttle(subject, subject.claim_one(queue="x", start=True), 30)  # pauses a
        subject.enqueue(queue="x", concurrency_key="k", concurrency_limit=1)
        subject.claim_one(queue="x", start=True)  # k is full now
        both = subject.enqueue(queue="x", concurrency_key="k", concurrency_limit=1,
                               rate_key="a")
        rate_only = subject.enqueue(queue="x", rate_key="a")
        assert subject.backend.limit_reasons([both, rate_only]) == {
            both: ("concurrency", "k"), rate_only: ("rate_key", "a")}
        counts = {c.state: c.jobs for c in subject.backend.count_states()}
        assert (counts["limited"], counts.get("due")) == (2, None)
        assert [(r.reason, r.key, r.waiting, r.running) for r in
                subject.backend.list_limited()] == [("concurrency", "k", 1, 1),
                                                     ("rate_key", "a", 1, 0)]
        assert self._found(subject, "limited") == [rate_only, both]

    def test_a_limited_job_is_due_again_when_its_limit_lifts(self, subject: Subject) -> None:
        ids = self._world(subject)
        backend = subject.backend
        for running in subject.jobs("live", queue="c", status="processing"):
            if running.payload["key"] == "k":
                subject.complete(running)
        backend.configure_queue("m", max_workers=None)
        backend.configure_queue("p", paused=False)
        backend.configure_queue("i", active=True)
        subject.advance(30)  # rate key a's throttle ends, queue t's not yet
        # p's keyed job is still held back: by its key now (one of p's k is running)
        assert self._found(subject, "limited") == sorted(ids["throttled"] + ids["paused"][1:],
                                                         reverse=True)
        assert [(r.queue, r.reason, r.key, r.waiting) for r in backend.list_limited()] == [
            ("p", "concurrency", "k", 1), ("t", "throttled", None, 1)]
        subject.advance(30)
        assert self._found(subject, "limited") == ids["paused"][1:]
        due = set(self._found(subject, "due"))
        assert due >= {*ids["concurrency"], *ids["max_workers"], ids["paused"][0],
                       *ids["inactive"], *ids["throttled"], *ids["rate_key"]}


@no_flow_control
class TestFlowControlRefused:
    """A backend without capabilities.flow_control refuses every flow-control feature it does
    not do with InvalidInput, before writing anything (unique_for, which every backend keeps:
    TestUniqueFor)."""

    @pytest.fixture(autouse=True)
    def _without_flow_control(self, subject: Subject) -> None:
        assert not subject.backend.capabilities.flow_control, (
            f"{type(subject.backend).__name__} has flow control: it runs the flow_control "
            "classes, not this one")

    @pytest.mark.parametrize("options", [
        {"idempotency_key": "k", "unique": "pending"},
        {"idempotency_key": "k", "unique": "active"},
        {"idempotency_key": "k", "on_conflict": "replace"},
        {"concurrency_key": "a", "concurrency_limit": 1},
    ])
    def test_flow_options_of_a_job_are_refused_and_write_nothing(
        self, subject: Subject, options: dict[str, Any]
    ) -> None:
        before = subject.state()
        with pytest.raises(InvalidInput, match="needs PostgreSQL or SQLite"):
            subject.enqueue_many([job_spec(queue="q"), job_spec(queue="q", **options)])
        assert subject.state() == before
        assert subject.backend.list_queues() == []

    def test_rate_limit_and_aging_are_refused_and_lifting_them_is_a_no_op(
        self, subject: Subject
    ) -> None:
        backend = subject.backend
        with pytest.raises(InvalidInput, match="needs PostgreSQL or SQLite"):
            backend.configure_queue("r", rate_limit=RateLimit(2, 1.0))
        with pytest.raises(InvalidInput, match="needs PostgreSQL or SQLite"):
            backend.configure_queue("r", aging=PriorityAging(30.0, 10))
        assert backend.list_queues() == []
        info = backend.configure_queue("r", rate_limit=None, aging=None)
        assert (info.rate_limit, info.aging, info.keyed) == (None, None, False)

    def test_a_throttled_failure_is_refused_and_the_job_stays_running(
        self, subject: Subject
    ) -> None:
        subject.enqueue(queue="api")
        job = subject.claim_one(queue="api", start=True)
        error = {"attempt": 1, "error": "Throttled", "message": "429"}
        throttled = Failure(job.id, token(job), error, 10.0, "retries_exhausted", throttle=10.0)
        with pytest.raises(InvalidInput, match="needs PostgreSQL or SQLite"):
            subject.backend.fail([throttled])
        with pytest.raises(InvalidInput, match="needs PostgreSQL or SQLite"):
            subject.backend.settle((), [throttled])
        assert subject.job(job.id).status == "processing"
