"""What the dashboard stands on: find_jobs (filters, keyset paging), delete_finished, run_now,
the audit table, and grant (least-privilege roles where the database has them)."""

from __future__ import annotations

import json
import uuid

import pytest

from claimq.backends.base import JobFilter
from claimq.errors import InvalidInput
from claimq.job import DeadReason, Status
from claimq.testing.conformance._harness import Subject, failure, job_spec


class TestFindJobs:
    def test_filters_combine_and_pages_follow_ids_downwards(self, subject: Subject) -> None:
        ids = subject.enqueue_many([
            job_spec("a" if n % 2 else "b", {"n": n, "who": "Alice" if n % 3 else "bob"},
                     queue=f"q{n % 2}", tags=("red",) if n < 4 else ("blue", "x"))
            for n in range(10)])
        find = subject.backend.find_jobs
        assert [j.id for j in find("live", JobFilter(), None, 100)] == ids[::-1]
        assert [j.id for j in find("live", JobFilter(task="a"), None, 100)] == ids[1::2][::-1]
        assert [j.id for j in find("live", JobFilter(tag="red"), None, 100)] == ids[:4][::-1]
        assert [j.id for j in find("live", JobFilter(tag="x", queue="q0"), None, 100)] == [
            ids[8], ids[6], ids[4]]
        assert [j.id for j in find("live", JobFilter(text="alice"), None, 100)] == [
            i for n, i in enumerate(ids) if n % 3][::-1]
        assert find("live", JobFilter(tag="re"), None, 100) == []  # a whole tag, not a part
        first = find("live", JobFilter(), None, 4)
        second = find("live", JobFilter(), first[-1].id, 4)
        third = find("live", JobFilter(), second[-1].id, 4)
        assert [j.id for j in first + second + third] == ids[::-1]
        assert find("live", JobFilter(), ids[0], 4) == []

    def test_status_means_the_live_status_or_the_dead_reason(self, subject: Subject) -> None:
        pending = subject.enqueue(queue="p")
        fetched = subject.claim_one(queue="p")
        assert fetched.id == pending
        other = subject.enqueue(queue="p")
        buried = subject.running()
        subject.backend.fail([failure(buried, permanent=True, reason="permanent_error",
                                      message="needle in the history")])
        cancelled = subject.enqueue()
        subject.backend.cancel(cancelled)
        done = subject.running()
        subject.complete(done, '{"ok": true}')
        find = subject.backend.find_jobs
        assert [j.id for j in find("live", JobFilter(status="fetched"), None, 10)] == [pending]
        assert [j.id for j in find("live", JobFilter(status="pending"), None, 10)] == [other]
        dead = find("dead", JobFilter(status=DeadReason.CANCELLED), None, 10)
        assert [(j.id, j.status, j.reason) for j in dead] == [
            (cancelled, Status.DEAD, DeadReason.CANCELLED)]
        assert [j.id for j in find("dead", JobFilter(text="needle"), None, 10)] == [buried.id]
        archived = find("archive", JobFilter(), None, 10)
        assert [(j.id, j.status, j.result) for j in archived] == [
            (done.id, Status.SUCCEEDED, {"ok": True})]


class TestDeleteAndRunNow:
    def test_delete_finished_deletes_exactly_the_ids_given(self, subject: Subject) -> None:
        jobs = [subject.running() for _ in range(3)]
        for job in jobs:
            subject.backend.fail([failure(job, permanent=True, reason="permanent_error")])
        kept = subject.running()
        subject.complete(kept)
        gone = subject.backend.delete_finished("dead", [jobs[0].id, jobs[2].id, kept.id, 99999])
        assert sorted(gone) == [jobs[0].id, jobs[2].id]
        assert [j.id for j in subject.jobs("dead")] == [jobs[1].id]
        assert [j.id for j in subject.jobs("archive")] == [kept.id]
        assert subject.backend.delete_finished("archive", [kept.id]) == [kept.id]

    def test_run_now_makes_waiting_pending_jobs_due_and_nothing_else(
        self, subject: Subject
    ) -> None:
        later = subject.enqueue(queue="r", delay=600)
        due = subject.enqueue(queue="r")
        running = subject.running()
        assert subject.claim(queues=["r"], limit=5)[0].id == due
        assert subject.backend.run_now([later, due, running.id]) == [later]
        assert subject.job(later).run_at == subject.at(0)
        assert [j.id for j in subject.claim(queues=["r"], limit=5)] == [later]
        assert subject.backend.run_now([later]) == []


class TestAudit:
    def test_entries_come_back_newest_first_with_their_detail(self, subject: Subject) -> None:
        first = subject.backend.record_audit("admin", "pause", "queue:q", "{}", 1)
        subject.advance(5)
        detail = {"filter": {"queue": "q", "text": "<script>"}, "ids": [1, 2]}
        second = subject.backend.record_audit("admin", "bulk_cancel", "live", json.dumps(detail),
                                              2)
        entries = subject.backend.list_audit(None, 10)
        assert [e.id for e in entries] == [second, first]
        assert (entries[0].actor, entries[0].action, entries[0].target, entries[0].detail,
                entries[0].affected, entries[0].at) == (
            "admin", "bulk_cancel", "live", detail, 2, subject.at(5))
        assert [e.id for e in subject.backend.list_audit(second, 10)] == [first]
        assert subject.backend.list_audit(first, 10) == []


class TestGrant:
    def test_each_kind_gets_its_rights_and_no_more(self, subject: Subject) -> None:
        backend = subject.backend
        if not backend.capabilities.roles:
            with pytest.raises(InvalidInput):
                backend.grant("someone", "reader")
            return
        role = f"cq_conf_{uuid.uuid4().hex[:10]}"
        backend.run_sql(f'CREATE ROLE "{role}"')
        try:
            def can(table: str, privilege: str) -> bool:
                [(answer,)] = backend.run_sql(
                    "SELECT has_table_privilege(%s, %s, %s)",
                    (role, f"{backend.schema}.{table}", privilege))
                return bool(answer)

            backend.grant(role, "reader")
            assert can("jobs", "SELECT") and can("audit", "SELECT")
            assert not can("jobs", "UPDATE") and not can("jobs", "INSERT")
            backend.grant(role, "producer")
            assert can("jobs", "INSERT") and not can("jobs", "DELETE")
            backend.grant(role, "worker")
            assert can("jobs", "DELETE") and can("archive", "INSERT")
            assert not can("archive", "DELETE") and not can("audit", "INSERT")
            backend.grant(role, "admin")
            assert can("archive", "DELETE") and can("dead", "DELETE") and can("audit", "INSERT")
            # The audit is never rewritten; the pruner (run with admin rights) bounds it by
            # age (audit_age), so admin deletes.
            assert not can("audit", "UPDATE") and can("audit", "DELETE")
        finally:
            backend.run_sql(f'DROP OWNED BY "{role}"')
            backend.run_sql(f'DROP ROLE "{role}"')
