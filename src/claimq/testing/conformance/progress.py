"""A running job's progress: written only by the claim that holds it in processing, kept after
the job finishes, dropped when the job is purged."""

from __future__ import annotations

from claimq.backends.base import Owned, Progress
from claimq.testing.conformance._harness import Subject, owned, stale


class TestProgress:
    def test_the_owner_records_progress_and_the_last_one_wins(self, subject: Subject) -> None:
        job = subject.running()
        assert subject.backend.get_progress(job.id) is None
        [mine] = owned(job)
        assert subject.backend.set_progress(mine, 0.25, "a quarter") is True
        assert subject.backend.get_progress(job.id) == Progress(0.25, "a quarter", 1,
                                                                subject.at(0))
        subject.advance(5)
        assert subject.backend.set_progress(mine, 1.0, None) is True
        assert subject.backend.get_progress(job.id) == Progress(1.0, None, 1, subject.at(5))

    def test_no_one_else_writes_it(self, subject: Subject) -> None:
        job = subject.running()
        [mine] = owned(job)
        subject.backend.set_progress(mine, 0.5, "mine")
        before = subject.state()
        for other in (owned(stale(job))[0], Owned(job.id, "not-a-token"), Owned(job.id + 99,
                                                                                mine.token)):
            assert subject.backend.set_progress(other, 0.9, "theirs") is False
        assert subject.backend.get_progress(job.id) == Progress(0.5, "mine", 1, subject.at(0))
        assert subject.state() == before

    def test_a_job_not_processing_takes_none(self, subject: Subject) -> None:
        subject.enqueue(queue="q")
        fetched = subject.claim_one(queue="q")  # claimed, not started
        assert subject.backend.set_progress(owned(fetched)[0], 0.5, None) is False
        job = subject.running()
        assert subject.complete(job) == {job.id}
        assert subject.backend.set_progress(owned(job)[0], 0.5, None) is False
        assert subject.backend.get_progress(fetched.id) is None

    def test_it_outlives_the_job_until_the_job_is_purged(self, subject: Subject) -> None:
        done, kept = subject.running(), subject.running()
        for job in (done, kept):
            subject.backend.set_progress(owned(job)[0], 0.75, "nearly")
        assert subject.complete(done) == {done.id}
        assert subject.backend.get_progress(done.id) == Progress(0.75, "nearly", 1,
                                                                 subject.at(0))
        assert subject.backend.purge("archive") == 1
        assert subject.backend.get_progress(done.id) is None
        assert subject.backend.get_progress(kept.id) is not None
