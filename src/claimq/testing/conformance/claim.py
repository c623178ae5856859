"""Claim: which jobs, in which order, under which queue settings, with what lease."""

from __future__ import annotations

from claimq.backends.base import ClaimRequest, Completion
from claimq.job import Status
from claimq.testing.conformance._harness import Subject, job_spec, token


class TestClaim:
    def test_order_is_priority_then_run_at_then_id(self, subject: Subject) -> None:
        a = subject.enqueue(run_at=subject.at(-10))
        b = subject.enqueue(priority=5, run_at=subject.at(-1))
        c = subject.enqueue(priority=5, run_at=subject.at(-5))
        d = subject.enqueue(run_at=subject.at(-10))  # a's twin, a later id
        subject.enqueue(priority=9, delay=10)  # not due
        low = subject.enqueue(priority=-3)
        order = [c, b, a, d, low]
        assert [j.id for j in subject.claim(limit=2)] == order[:2]
        assert [j.id for j in subject.claim(limit=10)] == order[2:]
        assert subject.claim(limit=10) == []

    def test_one_call_returns_its_jobs_in_claim_order(self, subject: Subject) -> None:
        ids = [subject.enqueue(queue=f"q{n % 3}", priority=n % 4) for n in range(12)]
        got = subject.claim(limit=12)
        by_priority = sorted(ids, key=lambda i: (-(ids.index(i) % 4), i))
        assert [j.id for j in got] == by_priority

    def test_a_claimed_job_is_fetched_and_owned_by_the_claimer(self, subject: Subject) -> None:
        job_id = subject.enqueue(queue="q")
        subject.advance(2)
        job = subject.claim_one("w-a", lease=45)
        assert job.id == job_id and job.status == Status.FETCHED and job.worker_id == "w-a"
        assert job.attempts == 0 and job.claim_token
        assert job.lease_until == subject.at(47)
        stored = subject.job(job_id)
        assert (stored.status, stored.worker_id, stored.claim_token) == (
            Status.FETCHED, "w-a", job.claim_token)
        assert stored.lease_until == subject.at(47)
        assert subject.claim("w-b", limit=5) == [], "a claimed job is not handed out again"

    def test_claim_and_start_in_one_step(self, subject: Subject) -> None:
        job_id = subject.enqueue()
        job = subject.claim_one(start=True, lease=10)
        assert (job.id, job.status, job.attempts) == (job_id, Status.PROCESSING, 1)
        assert job.started_at == job.heartbeat_at == subject.at(0)
        stored = subject.job(job_id)
        assert (stored.status, stored.attempts, stored.started_at) == (
            Status.PROCESSING, 1, subject.at(0))

    def test_every_claim_makes_a_new_token(self, subject: Subject) -> None:
        subject.enqueue()
        first = subject.claim_one(lease=5)
        subject.advance(6)
        subject.backend.reap()
        second = subject.claim_one(lease=5)
        assert first.id == second.id and token(first) != token(second)

    def test_without_a_lease_the_queue_lease_applies(self, subject: Subject) -> None:
        subject.backend.configure_queue("slow", lease_seconds=120)
        subject.enqueue(queue="slow")
        subject.enqueue(queue="fast")
        slow = subject.claim_one(queue="slow", lease=None)
        fast = subject.claim_one(queue="fast", lease=None)
        assert slow.lease_until == subject.at(120)
        assert fast.lease_until == subject.at(30)  # the default queue lease

    def test_queues_filter_and_all_queues(self, subject: Subject) -> None:
        a = subject.enqueue(queue="a")
        b = subject.enqueue(queue="b")
        c = subject.enqueue(queue="c")
        assert [j.id for j in subject.claim(queues=["b", "nothing"], limit=5)] == [b]
        assert subject.claim(queues=[], limit=5) == []
        assert [j.id for j in subject.claim(queues=None, limit=5)] == [a, c]

    def test_limit_zero_claims_nothing(self, subject: Subject) -> None:
        subject.enqueue()
        assert subject.claim(limit=0) == []
        assert subject.job(subject.jobs("live")[0].id).status == Status.PENDING


class TestQueueSettings:
    def test_a_paused_queue_is_not_claimed_until_resumed(self, subject: Subject) -> None:
        backend = subject.backend
        info = backend.configure_queue("p", paused=True)
        assert info.paused is True and info.active is True
        job_id = subject.enqueue(queue="p")
        other = subject.enqueue(queue="open")
        assert [j.id for j in subject.claim(limit=5)] == [other]
        assert backend.configure_queue("p", paused=False).paused is False
        assert [j.id for j in subject.claim(limit=5)] == [job_id]

    def test_an_inactive_queue_is_not_claimed_until_activated(self, subject: Subject) -> None:
        backend = subject.backend
        subject.enqueue(queue="off")
        assert backend.configure_queue("off", active=False).active is False
        assert subject.claim(limit=5) == []
        backend.configure_queue("off", active=True)
        assert len(subject.claim(limit=5)) == 1

    def test_max_workers_bounds_jobs_in_flight_across_claims_and_clients(
        self, subject: Subject
    ) -> None:
        backend = subject.backend
        backend.configure_queue("bulk", max_workers=2)
        subject.enqueue_many([job_spec(queue="bulk") for _ in range(5)])
        first = subject.claim("w1", ["bulk"], limit=5, start=True)
        assert len(first) == 2
        other = subject.other_client()
        assert other.claim("w2", ["bulk"], 5, 30.0, False) == []
        assert subject.claim("w1", None, limit=5) == []
        assert subject.complete(first[0]) == {first[0].id}
        assert len(other.claim("w2", ["bulk"], 5, 30.0, False)) == 1
        assert subject.claim("w1", ["bulk"], limit=5) == []

    def test_a_settle_that_completes_frees_its_slots_for_its_own_claim(
        self, subject: Subject
    ) -> None:
        backend = subject.backend
        backend.configure_queue("one", max_workers=1)
        subject.enqueue_many([job_spec(queue="one") for _ in range(3)])
        [job] = subject.claim(queues=["one"], limit=3, start=True)
        settled = backend.settle([Completion(job.id, token(job))], [],
                                 ClaimRequest("w1", ["one"], 3, 30.0, True))
        assert settled.completed == {job.id}
        assert len(settled.claimed) == 1 and settled.claimed[0].id != job.id

    def test_configure_queue_changes_only_what_it_is_given(self, subject: Subject) -> None:
        backend = subject.backend
        info = backend.configure_queue("q", max_workers=3, lease_seconds=90, timeout_seconds=5)
        assert (info.max_workers, info.lease_seconds, info.timeout_seconds) == (3, 90, 5)
        info = backend.configure_queue("q", paused=True)
        assert (info.paused, info.max_workers, info.lease_seconds, info.timeout_seconds) == (
            True, 3, 90, 5)
        info = backend.configure_queue("q", max_workers=None, timeout_seconds=None)
        assert (info.max_workers, info.timeout_seconds, info.lease_seconds) == (None, None, 90)
        assert [q.name for q in backend.list_queues()] == ["q"]

    def test_list_queues_counts_jobs_by_state_on_the_clock(self, subject: Subject) -> None:
        backend = subject.backend
        subject.enqueue_many([job_spec(queue="q", run_at=subject.at(-40)), job_spec(queue="q"),
                              job_spec(queue="q", delay=100)])
        subject.enqueue_many([job_spec(queue="q") for _ in range(4)])
        fetched = subject.claim(queues=["q"], limit=2, lease=10)
        running = subject.claim(queues=["q"], limit=2, lease=50, start=True)
        subject.complete(running[0])
        subject.advance(20)
        [info] = backend.list_queues()
        assert (info.pending, info.scheduled, info.fetched, info.processing) == (2, 1, 2, 1)
        assert info.past_lease == 2  # the fetched jobs' 10 s leases
        assert (info.archived, info.dead) == (1, 0)
        assert info.oldest_due_age is not None
        assert abs(info.oldest_due_age - 20) < 1e-3  # the oldest due pending job's wait
        assert fetched and running
