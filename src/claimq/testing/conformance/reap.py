"""Lease expiry on the clock, the reaper, and the fence that keeps a stale owner out."""

from __future__ import annotations

from claimq.backends.base import Completion
from claimq.job import DeadReason, Status
from claimq.testing.conformance._harness import Subject, failure, job_spec, owned, token


class TestReap:
    def test_a_lease_runs_out_only_when_the_clock_passes_it(self, subject: Subject) -> None:
        job = subject.running(lease=30)
        subject.advance(30)
        assert subject.backend.reap().requeued == [], "lease_until itself is not yet past"
        subject.advance(0.5)
        assert subject.backend.reap().requeued == [job.id]

    def test_an_expired_fetched_job_goes_back_with_its_attempts(self, subject: Subject) -> None:
        subject.enqueue()
        job = subject.claim_one("w-old", lease=5)
        subject.advance(6)
        result = subject.backend.reap()
        assert (result.requeued, result.dead) == ([job.id], [])
        stored = subject.job(job.id)
        assert (stored.status, stored.attempts, stored.claim_token, stored.worker_id) == (
            Status.PENDING, 0, None, None)
        [error] = stored.errors
        assert error["error"] == "LeaseExpired" and error["worker"] == "w-old"

    def test_an_expired_running_job_with_attempts_left_goes_back(self, subject: Subject) -> None:
        job = subject.running(lease=5, max_attempts=3)
        subject.advance(6)
        assert subject.backend.reap().requeued == [job.id]
        stored = subject.job(job.id)
        assert stored.status == Status.PENDING and stored.attempts == 1
        again = subject.claim_one(start=True)
        assert again.id == job.id and again.attempts == 2

    def test_an_expired_last_attempt_goes_to_dead_letters(self, subject: Subject) -> None:
        job = subject.running(lease=5, max_attempts=1)
        subject.advance(6)
        assert subject.backend.reap().dead == [job.id]
        stored = subject.job(job.id)
        assert (stored.status, stored.reason) == (Status.DEAD, DeadReason.LEASE_EXPIRED)
        assert stored.finished_at == subject.at(6)
        assert stored.errors[-1]["error"] == "LeaseExpired"

    def test_an_expired_job_whose_cancel_was_requested_is_buried_as_cancelled(
        self, subject: Subject
    ) -> None:
        job = subject.running(lease=5, max_attempts=9)
        assert subject.backend.cancel(job.id) == "cancel_requested"
        subject.advance(6)
        assert subject.backend.reap().dead == [job.id]
        assert subject.job(job.id).reason == DeadReason.CANCELLED

    def test_reap_leaves_live_leases_alone_and_twice_is_harmless(self, subject: Subject) -> None:
        short = subject.running(lease=5)
        long = subject.running(lease=60)
        subject.advance(10)
        assert subject.backend.reap().requeued == [short.id]
        after = subject.state()
        assert subject.backend.reap().requeued == [] and subject.backend.reap().dead == []
        assert subject.state() == after
        assert subject.job(long.id).status == Status.PROCESSING

    def test_reap_takes_at_most_its_limit(self, subject: Subject) -> None:
        subject.enqueue_many([job_spec() for _ in range(5)])
        subject.claim(limit=5, lease=5)
        subject.advance(6)
        assert len(subject.backend.reap(limit=2).requeued) == 2
        assert len(subject.backend.reap(limit=10).requeued) == 3

    def test_the_stale_owner_of_a_reaped_job_can_change_nothing(self, subject: Subject) -> None:
        old = subject.running("t", "w-old", lease=5, max_attempts=5)
        subject.advance(6)
        subject.backend.reap()
        new = subject.claim_one("w-new", start=True, lease=30)
        assert new.id == old.id and token(new) != token(old)
        before = subject.state()
        backend = subject.backend
        assert backend.start(owned(old), 30) == []
        assert backend.heartbeat(owned(old), 30).lost == {old.id}
        assert backend.complete([Completion(old.id, token(old))]) == set()
        assert backend.fail([failure(old)]).lost == {old.id}
        assert backend.release(owned(old)) == set()
        assert subject.state() == before
        assert subject.complete(new) == {new.id}, "the current owner still can"
