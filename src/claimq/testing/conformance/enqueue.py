"""Enqueue: the rows it writes, due times on the clock, idempotency keys, the caller's
transaction."""

from __future__ import annotations

import pytest

from claimq.job import Status
from claimq.retry import RetryPolicy
from claimq.testing.conformance._harness import RETENTION, Subject, job_spec


class TestEnqueue:
    def test_writes_pending_rows_in_order_with_every_option(self, subject: Subject) -> None:
        retry = RetryPolicy(base=2.0, cap=60.0)
        ids = subject.enqueue_many([
            job_spec("a", {"n": 1}, queue="q1", priority=7, max_attempts=3, tags=("x", "y"),
                     timeout=12.5, retry=retry),
            job_spec("b", None, queue="q2"),
        ])
        assert len(ids) == 2 and ids[0] < ids[1]
        first, second = subject.job(ids[0]), subject.job(ids[1])
        assert (first.task, first.queue, first.payload, first.priority) == ("a", "q1", {"n": 1}, 7)
        assert (first.max_attempts, first.tags, first.timeout) == (3, ("x", "y"), 12.5)
        assert first.retry == retry.to_dict()
        assert first.status == Status.PENDING and first.attempts == 0 and first.errors == ()
        assert first.claim_token is None and first.worker_id is None
        assert first.lease_until is None and first.cancel_requested is False
        assert first.run_at == first.created_at == subject.at(0)
        assert (second.payload, second.priority, second.tags, second.retry) == ({}, 0, (), None)
        assert [j.id for j in subject.jobs("live")] == ids

    def test_an_empty_batch_writes_nothing(self, subject: Subject) -> None:
        assert subject.enqueue_many([]) == []
        assert subject.counts() == (0, 0, 0) and subject.backend.list_queues() == []

    def test_creates_its_queue_with_the_defaults(self, subject: Subject) -> None:
        subject.enqueue(queue="fresh")
        [info] = subject.backend.list_queues()
        assert (info.name, info.paused, info.active, info.max_workers) == (
            "fresh", False, True, None)
        assert info.lease_seconds == 30 and info.timeout_seconds is None
        assert info.pending == 1

    def test_delay_and_run_at_are_due_on_the_clock(self, subject: Subject) -> None:
        later = subject.enqueue(delay=60)
        at = subject.enqueue(run_at=subject.at(120))
        past = subject.enqueue(run_at=subject.at(-5))
        assert subject.job(later).run_at == subject.at(60)
        assert subject.job(at).run_at == subject.at(120)
        assert [j.id for j in subject.claim(limit=10)] == [past]
        subject.advance(59)
        assert subject.claim(limit=10) == []
        subject.advance(1)
        assert [j.id for j in subject.claim(limit=10)] == [later]
        subject.advance(60)
        assert [j.id for j in subject.claim(limit=10)] == [at]


class TestIdempotencyKeys:
    def test_a_held_key_returns_its_job_and_writes_nothing(self, subject: Subject) -> None:
        first = subject.enqueue(payload={"v": 1}, queue="a", idempotency_key="order-42")
        before = subject.state()
        assert subject.enqueue(payload={"v": 2}, queue="b", idempotency_key="order-42") == first
        assert subject.state() == before, "a held key writes nothing, not even its queue"
        assert subject.job(first).payload == {"v": 1}
        assert subject.job(first).idempotency_key == "order-42"

    def test_one_batch_with_a_repeated_key_writes_one_job(self, subject: Subject) -> None:
        ids = subject.enqueue_many([job_spec(idempotency_key="k"), job_spec(),
                                    job_spec(idempotency_key="k")])
        assert ids[0] == ids[2] != ids[1]
        assert subject.counts() == (2, 0, 0)

    def test_a_running_job_holds_its_key(self, subject: Subject) -> None:
        job = subject.running(idempotency_key="k")
        assert subject.enqueue(idempotency_key="k") == job.id

    @pytest.mark.parametrize("outcome", ["archive", "dead"])
    def test_a_finished_job_holds_its_key_for_the_retention_window(
        self, subject: Subject, outcome: str
    ) -> None:
        from claimq.testing.conformance._harness import failure

        job = subject.running(idempotency_key="k")
        if outcome == "archive":
            assert subject.complete(job) == {job.id}
        else:
            assert subject.backend.fail([failure(job, permanent=True)]).dead == {job.id}
        subject.advance(RETENTION - 1)
        assert subject.enqueue(idempotency_key="k") == job.id
        assert subject.counts() == ((0, 1, 0) if outcome == "archive" else (0, 0, 1))
        subject.advance(2)
        fresh = subject.enqueue(payload={"again": 1}, idempotency_key="k")
        assert fresh != job.id and subject.job(fresh).payload == {"again": 1}
        assert subject.enqueue(idempotency_key="k") == fresh  # the new job holds it now

    def test_purge_forgets_expired_keys_only(self, subject: Subject) -> None:
        done = subject.running(idempotency_key="done")
        subject.complete(done)
        live = subject.enqueue(idempotency_key="live")
        assert subject.backend.purge_idempotency_keys(RETENTION) == 0
        subject.advance(RETENTION + 1)
        assert subject.backend.purge_idempotency_keys(RETENTION) == 1
        assert subject.backend.purge_idempotency_keys(RETENTION) == 0
        assert subject.enqueue(idempotency_key="live") == live
        assert subject.enqueue(idempotency_key="done") not in (done.id, live)


class TestCallerTransaction:
    def test_jobs_enqueued_in_a_transaction_exist_only_if_it_commits(
        self, subject: Subject
    ) -> None:
        backend = subject.backend
        with pytest.raises(RuntimeError), backend.transaction() as conn:
            backend.enqueue([job_spec(queue="tx")], RETENTION, conn)
            raise RuntimeError("roll back")
        assert subject.counts() == (0, 0, 0)
        with backend.transaction() as conn:
            [job_id] = backend.enqueue([job_spec(queue="tx")], RETENTION, conn)
        assert subject.job(job_id).status == Status.PENDING

    def test_a_completion_in_a_rolled_back_transaction_does_not_land(
        self, subject: Subject
    ) -> None:
        from claimq.backends.base import Completion
        from claimq.testing.conformance._harness import token

        job = subject.running()
        backend = subject.backend
        with pytest.raises(RuntimeError), backend.transaction() as conn:
            assert backend.complete([Completion(job.id, token(job), '{"r": 1}')], conn) == {job.id}
            raise RuntimeError("roll back")
        assert subject.job(job.id).status == Status.PROCESSING
        with backend.transaction() as conn:
            assert backend.complete([Completion(job.id, token(job), '{"r": 2}')], conn) == {job.id}
        assert subject.job(job.id).result == {"r": 2}
