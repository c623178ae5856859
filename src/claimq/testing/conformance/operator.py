"""The operator's calls: reading jobs, cancel, resurrect, purge, set_priority."""

from __future__ import annotations

from claimq.backends.base import JobFilter, NewWorkflow
from claimq.job import DeadReason, Status
from claimq.testing.conformance._harness import RETENTION, Subject, failure, job_spec

UNKNOWN_ID = 987_654_321


class TestReadJobs:
    def test_get_job_finds_a_job_in_every_table_and_nothing_else(self, subject: Subject) -> None:
        live = subject.enqueue()
        done = subject.running()
        subject.complete(done, "[1, 2]")
        buried = subject.running()
        subject.backend.fail([failure(buried, permanent=True, reason="permanent_error")])
        assert subject.job(live).status == Status.PENDING
        assert (subject.job(done.id).status, subject.job(done.id).result) == (
            Status.SUCCEEDED, [1, 2])
        assert subject.job(buried.id).status == Status.DEAD
        assert subject.backend.get_job(UNKNOWN_ID) is None

    def test_list_jobs_filters_orders_and_pages(self, subject: Subject) -> None:
        ids = subject.enqueue_many([job_spec("a" if n % 2 else "b", queue=f"q{n % 3}")
                                    for n in range(9)])
        assert [j.id for j in subject.jobs("live")] == ids
        assert [j.id for j in subject.jobs("live", queue="q1")] == ids[1::3]
        assert [j.id for j in subject.jobs("live", task="a")] == ids[1::2]
        page = subject.backend.list_jobs("live", limit=3, offset=3)
        assert [j.id for j in page] == ids[3:6]
        claimed = subject.claim(limit=2)
        assert [j.id for j in subject.jobs("live", status="fetched")] == [j.id for j in claimed]
        assert subject.jobs("live", queue="none") == []

    def test_finished_lists_go_newest_first_and_dead_filters_by_reason(
        self, subject: Subject
    ) -> None:
        first, second = subject.running(), subject.running()
        subject.complete(first)
        subject.advance(1)
        subject.complete(second)
        assert [j.id for j in subject.jobs("archive")] == [second.id, first.id]
        perm, cancelled = subject.running(), subject.enqueue()
        subject.backend.fail([failure(perm, permanent=True, reason="permanent_error")])
        subject.backend.cancel(cancelled)
        assert [j.id for j in subject.jobs("dead", status=DeadReason.CANCELLED)] == [cancelled]
        assert [j.reason for j in subject.jobs("dead", status="permanent_error")] == [
            DeadReason.PERMANENT_ERROR]


class TestLiveStates:
    """find_jobs(state=...) and count_states(): a live job is running (claimed), held (a
    workflow job waiting for its dependencies), due, retrying (after an attempt, its run_at
    ahead) or scheduled (never attempted, its run_at ahead), one rule on every backend."""

    def _world(self, subject: Subject) -> dict[str, int]:
        due = subject.enqueue(queue="s")
        scheduled = subject.enqueue(queue="s", delay=600)
        running = subject.running(queue="r", task="r").id
        retried = subject.running(queue="s2", task="f")
        assert subject.backend.fail([failure(retried, delay=300)]).retried == {retried.id}
        ids = {"due": due, "scheduled": scheduled, "running": running, "retrying": retried.id}
        if subject.backend.capabilities.workflows:
            added = subject.backend.add_workflow(NewWorkflow(
                "states", None, "cancel", [job_spec("p", queue="w"), job_spec("c", queue="w")],
                [[], [(0, None)]], [None, None]), RETENTION, None)
            ids["held"] = added.job_ids[1]
            ids["due 2"] = added.job_ids[0]
        return ids

    def test_each_live_job_is_found_under_its_state(self, subject: Subject) -> None:
        ids = self._world(subject)
        for state in ("due", "scheduled", "running", "retrying", "held"):
            found = [j.id for j in subject.backend.find_jobs("live", JobFilter(state=state),
                                                             None, 100)]
            want = sorted((i for name, i in ids.items() if name.split()[0] == state),
                          reverse=True)
            assert found == want, (state, found, want)
        subject.advance(601)  # the retry and the scheduled job come due
        due = [j.id for j in subject.backend.find_jobs("live", JobFilter(state="due"), None,
                                                       100)]
        assert set(due) == {i for name, i in ids.items()
                            if name.split()[0] in ("due", "scheduled", "retrying")}

    def test_count_states_counts_by_queue_and_state(self, subject: Subject) -> None:
        ids = self._world(subject)
        counts = {(c.queue, c.state): c.jobs for c in subject.backend.count_states()}
        want = {("s", "due"): 1, ("s", "scheduled"): 1, ("r", "running"): 1,
                ("s2", "retrying"): 1}
        if "held" in ids:
            want |= {("w", "due"): 1, ("w", "held"): 1}
        assert counts == want


class TestCancel:
    def test_a_pending_or_fetched_job_is_cancelled_at_once(self, subject: Subject) -> None:
        subject.enqueue()
        fetched = subject.claim_one()
        pending = subject.enqueue()
        subject.advance(4)
        assert subject.backend.cancel(pending) == "cancelled"
        assert subject.backend.cancel(fetched.id) == "cancelled"
        for job_id in (pending, fetched.id):
            stored = subject.job(job_id)
            assert (stored.status, stored.reason) == (Status.DEAD, DeadReason.CANCELLED)
            assert stored.finished_at == subject.at(4)
        assert subject.counts() == (0, 0, 2)

    def test_a_running_job_gets_a_request_its_worker_sees(self, subject: Subject) -> None:
        job = subject.running()
        assert subject.backend.cancel(job.id) == "cancel_requested"
        stored = subject.job(job.id)
        assert stored.status == Status.PROCESSING and stored.cancel_requested is True
        assert subject.backend.cancel(job.id) == "cancel_requested"

    def test_finished_and_unknown_jobs(self, subject: Subject) -> None:
        done = subject.running()
        subject.complete(done)
        buried = subject.enqueue()
        subject.backend.cancel(buried)
        before = subject.state()
        assert subject.backend.cancel(done.id) == "finished"
        assert subject.backend.cancel(buried) == "finished"
        assert subject.backend.cancel(UNKNOWN_ID) == "not_found"
        assert subject.state() == before


class TestResurrect:
    def test_a_dead_job_comes_back_pending_with_fresh_attempts(self, subject: Subject) -> None:
        job = subject.running(payload={"v": 1}, priority=2, max_attempts=1)
        subject.backend.fail([failure(job, delay=0)])
        subject.advance(9)
        assert subject.backend.resurrect(job.id) is True
        stored = subject.job(job.id)
        assert (stored.status, stored.attempts, stored.payload, stored.priority) == (
            Status.PENDING, 0, {"v": 1}, 2)
        assert stored.run_at == subject.at(9) and stored.reason is None
        assert len(stored.errors) == 1, "the history stays"
        assert subject.counts() == (1, 0, 0)
        assert [j.id for j in subject.claim()] == [job.id]

    def test_with_a_new_payload_and_priority(self, subject: Subject) -> None:
        job_id = subject.enqueue(payload={"v": 1}, queue="gone")
        subject.backend.cancel(job_id)
        assert subject.backend.resurrect(job_id, '{"v": 2}', 7) is True
        stored = subject.job(job_id)
        assert (stored.payload, stored.priority, stored.queue) == ({"v": 2}, 7, "gone")

    def test_only_dead_jobs_can_be_resurrected(self, subject: Subject) -> None:
        live = subject.enqueue()
        done = subject.running()
        subject.complete(done)
        before = subject.state()
        assert subject.backend.resurrect(live) is False
        assert subject.backend.resurrect(done.id) is False
        assert subject.backend.resurrect(UNKNOWN_ID) is False
        assert subject.state() == before


class TestPurge:
    def test_purge_by_age_on_the_clock_and_by_queue_and_task(self, subject: Subject) -> None:
        old = subject.running("a", queue="x")
        subject.complete(old)
        subject.advance(100)
        young = subject.running("b", queue="y")
        subject.complete(young)
        assert subject.backend.purge("archive", older_than=150) == 0
        assert subject.backend.purge("archive", older_than=50) == 1
        assert [j.id for j in subject.jobs("archive")] == [young.id]
        assert subject.backend.purge("archive", queue="x") == 0
        assert subject.backend.purge("archive", task="b") == 1
        buried = [subject.enqueue(queue=q) for q in ("x", "y", "y")]
        for job_id in buried:
            subject.backend.cancel(job_id)
        assert subject.backend.purge("dead", queue="y") == 2
        assert subject.backend.purge("dead") == 1
        assert subject.counts() == (0, 0, 0)


class TestSetPriority:
    def test_only_a_pending_job_changes_priority(self, subject: Subject) -> None:
        pending = subject.enqueue()
        running = subject.running()
        assert subject.backend.set_priority(pending, 9) is True
        assert subject.job(pending).priority == 9
        before = subject.state()
        assert subject.backend.set_priority(running.id, 9) is False
        assert subject.backend.set_priority(UNKNOWN_ID, 9) is False
        assert subject.state() == before


class TestClock:
    def test_the_backend_reads_its_clock(self, subject: Subject) -> None:
        assert subject.backend.now() == subject.at(0)
        subject.advance(12.5)
        assert subject.backend.now() == subject.at(12.5)


class TestFinishedHistory:
    def test_jobs_land_in_the_bucket_of_their_finish_by_queue_and_task(
        self, subject: Subject
    ) -> None:
        def finish(at: float, queue: str, task: str, dead: bool = False) -> None:
            subject.advance(at - (subject.clock.now() - subject.at(0)).total_seconds())
            job = subject.running(task, queue=queue)
            if dead:
                subject.backend.fail([failure(job, permanent=True, reason="permanent_error")])
            else:
                subject.complete(job)

        finish(5, "qa", "ta")  # before the history's start: not in it
        finish(130, "qa", "ta")
        finish(131, "qa", "ta")
        finish(140, "qa", "tb", dead=True)
        finish(250, "qb", "ta")
        finish(399.5, "qb", "ta", dead=True)
        finish(400, "qc", "ta")  # at the history's end (now): in it, after the last bucket
        # now: 400 s; 5 buckets of 60 s from 100 s
        now, rows = subject.backend.finished_history(5, 60)
        assert now == subject.at(400)
        assert [tuple(r) for r in rows] == [
            (0, "qa", "ta", 2, 0), (0, "qa", "tb", 0, 1), (2, "qb", "ta", 1, 0),
            (4, "qb", "ta", 0, 1), (5, "qc", "ta", 1, 0)]
        assert subject.backend.finished_history(1, 60)[1] == [
            (0, "qb", "ta", 0, 1), (1, "qc", "ta", 1, 0)]
        subject.advance(3600)
        assert subject.backend.finished_history(5, 60)[1] == []
