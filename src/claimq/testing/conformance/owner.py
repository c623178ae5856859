"""The owner's transitions (start, heartbeat, confirm_owned, complete, fail, release, settle,
orphaned), each guarded by the claim token: every write that matches no row is reported, never
success."""

from __future__ import annotations

from claimq.backends.base import ClaimRequest, Completion, Owned
from claimq.job import DeadReason, Status
from claimq.testing.conformance._harness import (
    STALE,
    Subject,
    failure,
    job_spec,
    owned,
    stale,
    token,
)

UNKNOWN = Owned(987_654_321, STALE)


class TestStart:
    def test_start_moves_a_fetched_job_to_processing(self, subject: Subject) -> None:
        subject.enqueue_many([job_spec(), job_spec()])
        job = subject.claim_one(lease=30)
        subject.advance(3)
        [started] = subject.backend.start(owned(job), None)
        assert (started.id, started.attempts) == (job.id, 1)
        stored = subject.job(job.id)
        assert (stored.status, stored.attempts) == (Status.PROCESSING, 1)
        assert stored.started_at == stored.heartbeat_at == subject.at(3)
        assert stored.lease_until == subject.at(30), "no lease given: the claim's stays"
        other = subject.claim_one(lease=30)
        subject.backend.start(owned(other), 50)
        assert subject.job(other.id).lease_until == subject.at(53)

    def test_start_refuses_a_stale_token_a_started_job_and_an_unknown_id(
        self, subject: Subject
    ) -> None:
        subject.enqueue()
        job = subject.claim_one()
        before = subject.state()
        assert subject.backend.start([*owned(stale(job)), UNKNOWN], 30) == []
        assert subject.state() == before
        assert len(subject.backend.start(owned(job), 30)) == 1
        assert subject.backend.start(owned(job), 30) == [], "started twice"
        assert subject.job(job.id).attempts == 1

    def test_start_refuses_a_job_whose_cancel_was_requested(self, subject: Subject) -> None:
        # A fetched job is cancelled outright; a processing one gets the flag. Either way no
        # further start can happen.
        subject.enqueue()
        job = subject.claim_one()
        assert subject.backend.cancel(job.id) == "cancelled"
        assert subject.backend.start(owned(job), 30) == []
        assert subject.job(job.id).status == Status.DEAD


class TestHeartbeat:
    def test_heartbeat_extends_the_leases_of_fetched_and_processing_jobs(
        self, subject: Subject
    ) -> None:
        subject.enqueue_many([job_spec() for _ in range(2)])
        fetched = subject.claim_one(lease=5)
        running = subject.claim_one(lease=5, start=True)
        subject.advance(4)
        result = subject.backend.heartbeat(owned(fetched, running), 60)
        assert result.alive == {fetched.id, running.id}
        assert result.lost == set() and result.cancel_requested == set()
        for job in (fetched, running):
            stored = subject.job(job.id)
            assert stored.lease_until == subject.at(64) and stored.heartbeat_at == subject.at(4)
        subject.advance(5)
        assert subject.backend.reap().requeued == [], "the renewed leases have not run out"

    def test_without_a_lease_the_queue_lease_applies(self, subject: Subject) -> None:
        subject.backend.configure_queue("q", lease_seconds=200)
        job = subject.running(queue="q", lease=5)
        subject.backend.heartbeat(owned(job), None)
        assert subject.job(job.id).lease_until == subject.at(200)

    def test_a_stale_token_an_unknown_id_and_a_finished_job_are_lost(
        self, subject: Subject
    ) -> None:
        done = subject.running()
        subject.complete(done)
        mine = subject.running()
        before = subject.state()
        result = subject.backend.heartbeat([*owned(stale(mine), done), UNKNOWN], 60)
        assert result.alive == set()
        assert result.lost == {mine.id, done.id, UNKNOWN.id}
        assert subject.state() == before

    def test_heartbeat_reports_a_cancel_request(self, subject: Subject) -> None:
        job, other = subject.running(), subject.running()
        assert subject.backend.cancel(job.id) == "cancel_requested"
        result = subject.backend.heartbeat(owned(job, other), 30)
        assert result.alive == {job.id, other.id}
        assert result.cancel_requested == {job.id}


class TestConfirmOwned:
    """confirm_owned (ctx.ensure_owned): one job's lease, answered from its token and status,
    never `busy` (waiting on another transaction's row lock is the backend's: issue 24)."""

    def test_confirm_owned_renews_a_job_still_owned(self, subject: Subject) -> None:
        job = subject.running(lease=5)
        subject.advance(4)
        [mine] = owned(job)
        result = subject.backend.confirm_owned(mine, 60)
        assert (result.alive, result.lost, result.busy) == ({job.id}, set(), set())
        assert subject.job(job.id).lease_until == subject.at(64)

    def test_confirm_owned_loses_a_stale_token_and_a_finished_job(self, subject: Subject) -> None:
        done = subject.running()
        subject.complete(done)
        mine = subject.running()
        before = subject.state()
        for gone in (*owned(stale(mine)), *owned(done), UNKNOWN):
            result = subject.backend.confirm_owned(gone, 60)
            assert (result.alive, result.lost) == (set(), {gone.id})
        assert subject.state() == before

    def test_confirm_owned_reports_a_cancel_request(self, subject: Subject) -> None:
        job = subject.running()
        assert subject.backend.cancel(job.id) == "cancel_requested"
        [mine] = owned(job)
        result = subject.backend.confirm_owned(mine, 30)
        assert result.alive == {job.id} and result.cancel_requested == {job.id}


class TestComplete:
    def test_complete_archives_a_processing_job_with_its_result(self, subject: Subject) -> None:
        job = subject.running(payload={"a": 1})
        subject.advance(7)
        assert subject.complete(job, '{"sum": 3}') == {job.id}
        stored = subject.job(job.id)
        assert (stored.status, stored.result, stored.payload) == (
            Status.SUCCEEDED, {"sum": 3}, {"a": 1})
        assert stored.finished_at == subject.at(7) and stored.attempts == 1
        assert subject.counts() == (0, 1, 0)

    def test_complete_refuses_stale_tokens_fetched_jobs_unknown_ids_and_repeats(
        self, subject: Subject
    ) -> None:
        job = subject.running()
        subject.enqueue()
        fetched = subject.claim_one()
        before = subject.state()
        done = [Completion(job.id, STALE), Completion(fetched.id, token(fetched)),
                Completion(UNKNOWN.id, UNKNOWN.token), Completion(job.id, "not-a-token")]
        assert subject.backend.complete(done) == set()
        assert subject.state() == before
        assert subject.complete(job) == {job.id}
        assert subject.complete(job) == set(), "completed twice"

    def test_many_completions_in_one_call(self, subject: Subject) -> None:
        jobs = [subject.running() for _ in range(5)]
        result = subject.backend.complete(
            [Completion(j.id, token(j), None) for j in jobs] + [Completion(UNKNOWN.id, STALE)])
        assert result == {j.id for j in jobs}
        assert subject.counts() == (0, 5, 0)


class TestFail:
    def test_a_failure_with_attempts_left_goes_back_to_pending_after_its_delay(
        self, subject: Subject
    ) -> None:
        job = subject.running(max_attempts=3)
        subject.advance(2)
        result = subject.backend.fail([failure(job, delay=40, message="first")])
        assert (result.retried, result.dead, result.lost) == ({job.id}, set(), set())
        stored = subject.job(job.id)
        assert stored.status == Status.PENDING and stored.claim_token is None
        assert stored.worker_id is None and stored.lease_until is None
        assert stored.run_at == subject.at(42) and stored.attempts == 1
        assert [e["message"] for e in stored.errors] == ["first"]
        subject.advance(39)
        assert subject.claim() == []
        subject.advance(1)
        assert [j.id for j in subject.claim()] == [job.id]

    def test_a_permanent_failure_goes_to_dead_letters(self, subject: Subject) -> None:
        job = subject.running(max_attempts=5)
        subject.advance(1)
        result = subject.backend.fail([failure(job, permanent=True, reason="permanent_error")])
        assert result.dead == {job.id} and result.retried == set()
        stored = subject.job(job.id)
        assert (stored.status, stored.reason) == (Status.DEAD, DeadReason.PERMANENT_ERROR)
        assert stored.finished_at == subject.at(1)
        assert [e["message"] for e in stored.errors] == ["boom"]
        assert subject.counts() == (0, 0, 1)

    def test_the_last_attempt_goes_to_dead_letters_with_every_error(
        self, subject: Subject
    ) -> None:
        job = subject.running(max_attempts=2)
        subject.backend.fail([failure(job, delay=0, message="one")])
        again = subject.claim_one(start=True)
        result = subject.backend.fail([failure(again, delay=0, message="two")])
        assert result.dead == {job.id}
        stored = subject.job(job.id)
        assert stored.reason == DeadReason.RETRIES_EXHAUSTED and stored.attempts == 2
        assert [e["message"] for e in stored.errors] == ["one", "two"]

    def test_fail_refuses_stale_tokens_unknown_ids_and_finished_jobs(
        self, subject: Subject
    ) -> None:
        job = subject.running()
        done = subject.running()
        subject.complete(done)
        before = subject.state()
        unknown = failure(done)
        unknown = type(unknown)(UNKNOWN.id, STALE, unknown.error, 1.0, "retries_exhausted")
        result = subject.backend.fail([failure(stale(job)), failure(done), unknown])
        assert result.lost == {job.id, done.id, UNKNOWN.id}
        assert result.retried == result.dead == set()
        assert subject.state() == before


class TestRelease:
    def test_release_hands_a_job_back_without_spending_its_attempt(
        self, subject: Subject
    ) -> None:
        job_id = subject.enqueue(run_at=subject.at(-3))
        job = subject.claim_one(start=True)
        assert subject.backend.release(owned(job)) == {job_id}
        stored = subject.job(job_id)
        assert (stored.status, stored.attempts, stored.claim_token) == (Status.PENDING, 0, None)
        assert stored.run_at == subject.at(-3) and stored.started_at is None
        fetched = subject.claim_one()
        assert subject.backend.release(owned(fetched), delay=15) == {job_id}
        assert subject.job(job_id).run_at == subject.at(15)
        assert subject.job(job_id).attempts == 0

    def test_a_job_whose_cancel_was_requested_goes_to_dead_letters(
        self, subject: Subject
    ) -> None:
        job = subject.running()
        assert subject.backend.cancel(job.id) == "cancel_requested"
        assert subject.backend.release(owned(job)) == {job.id}
        stored = subject.job(job.id)
        assert (stored.status, stored.reason) == (Status.DEAD, DeadReason.CANCELLED)

    def test_release_refuses_stale_tokens_unknown_ids_and_pending_jobs(
        self, subject: Subject
    ) -> None:
        job = subject.running()
        before = subject.state()
        assert subject.backend.release([*owned(stale(job)), UNKNOWN]) == set()
        assert subject.state() == before
        assert subject.backend.release(owned(job)) == {job.id}
        assert subject.backend.release(owned(job)) == set(), "released twice"


class TestSettle:
    def test_completions_failures_and_the_next_claim_in_one_call(self, subject: Subject) -> None:
        backend = subject.backend
        done, lost = subject.running(queue="w"), subject.running(queue="w")
        retry, bury = subject.running(queue="w"), subject.running(queue="w")
        waiting = subject.enqueue_many([job_spec(queue="next") for _ in range(3)])
        settled = backend.settle(
            [Completion(done.id, token(done), '"ok"'), Completion(lost.id, STALE)],
            [failure(retry, delay=60), failure(bury, permanent=True, reason="permanent_error"),
             failure(stale(lost))],
            ClaimRequest("w9", ["next"], 2, 30.0, True),
        )
        assert settled.completed == {done.id}
        assert (settled.failed.retried, settled.failed.dead, settled.failed.lost) == (
            {retry.id}, {bury.id}, {lost.id})
        assert [j.id for j in settled.claimed] == waiting[:2]
        assert all(j.status == Status.PROCESSING and j.worker_id == "w9" and j.attempts == 1
                   for j in settled.claimed)
        assert subject.job(done.id).result == "ok"
        assert subject.job(lost.id).status == Status.PROCESSING

    def test_settle_without_a_claim_and_with_nothing_to_do(self, subject: Subject) -> None:
        backend = subject.backend
        subject.enqueue()
        empty = backend.settle([], [], None)
        assert (empty.completed, empty.claimed) == (set(), [])
        none = backend.settle([], [], ClaimRequest("w", None, 0, 30.0))
        assert none.claimed == [] and subject.jobs("live")[0].status == Status.PENDING
        fetched = backend.settle([], [], ClaimRequest("w", None, 5, 30.0))
        assert [j.status for j in fetched.claimed] == [Status.FETCHED]
        assert fetched.claimed[0].lease_until == subject.at(30)


class TestOrphaned:
    def test_orphaned_lists_what_a_worker_holds_but_does_not_know(
        self, subject: Subject
    ) -> None:
        subject.enqueue_many([job_spec() for _ in range(4)])
        known = subject.claim_one("w1", lease=30)
        lost = subject.claim_one("w1", lease=30, start=True)
        expired = subject.claim_one("w1", lease=5)
        subject.claim_one("w2", lease=30)
        subject.advance(10)
        assert subject.backend.orphaned("w1", [known.id]) == owned(lost)
        assert subject.backend.orphaned("w1", [known.id, lost.id]) == []
        assert subject.backend.orphaned("nobody", []) == []
        assert expired.id not in {o.id for o in subject.backend.orphaned("w1", [])}
