"""Workflows through the Backend protocol: a held job is never claimed before its dependencies
finished, is released exactly once, by a token-guarded write only; each failure policy; the
cascade; resurrect continues; a running job's fan-out; a rolled-back caller leaves nothing."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from claimq._validate import NewJob
from claimq.backends.base import Completion, Dependency, NewWorkflow, Owned
from claimq.job import DeadReason, Job, Status
from claimq.testing.conformance._harness import (
    RETENTION,
    STALE,
    Subject,
    failure,
    job_spec,
    owned,
    stale,
)


def step(name: str, **options: Any) -> NewJob:
    """A job of task `name` on its own queue `name`, so a test claims exactly that step."""
    options.setdefault("queue", name)
    return job_spec(name, {"step": name}, **options)


def workflow(
    steps: Sequence[NewJob],
    after: dict[int, Sequence[int | tuple[int, str]]] | None = None,
    *,
    on_failure: str = "cancel",
    key: str | None = None,
    run_if: dict[int, str] | None = None,
    name: str = "wf",
) -> NewWorkflow:
    after = after or {}
    edges = [
        [(d, None) if isinstance(d, int) else (d[0], d[1]) for d in after.get(i, ())]
        for i in range(len(steps))
    ]
    flags = [(run_if or {}).get(i) for i in range(len(steps))]
    return NewWorkflow(name, key, on_failure, list(steps), edges, flags)


def add(subject: Subject, wf: NewWorkflow, conn: Any = None) -> list[int]:
    added = subject.backend.add_workflow(wf, RETENTION, conn)
    assert added.created
    return added.job_ids


def take(subject: Subject, queue: str) -> Job:
    """Claims and starts the one job of `queue`."""
    return subject.claim_one(queue=queue, start=True)


def claimable(subject: Subject, queue: str) -> list[int]:
    jobs = subject.claim(queues=[queue], limit=100, worker="peek")
    for job in jobs:  # put them back untouched, as far as the test can tell
        subject.backend.release(owned(job))
    return [j.id for j in jobs]


def finish(subject: Subject, queue: str, result: Any = None) -> Job:
    job = take(subject, queue)
    done = subject.backend.complete([Completion(job.id, job.claim_token or "",
                                                json.dumps(result))])
    assert done == {job.id}
    return job


def bury(subject: Subject, queue: str) -> Job:
    job = take(subject, queue)
    result = subject.backend.fail([failure(job, permanent=True, reason="permanent_error")])
    assert result.dead == {job.id}
    return job


def status(subject: Subject, job_id: int) -> Status:
    return subject.job(job_id).status


class _Workflows:
    @pytest.fixture(autouse=True)
    def _supported(self, subject: Subject) -> None:
        if not subject.backend.capabilities.workflows:
            pytest.skip("this backend does not implement workflows (Capabilities.workflows)")


class TestWorkflowRelease(_Workflows):
    def test_a_job_is_held_until_every_dependency_succeeded(self, subject: Subject) -> None:
        a, b, c = add(subject, workflow([step("a"), step("b"), step("c")], {2: [0, 1]}))
        held = subject.job(c)
        assert held.status == Status.HELD and held.workflow_id is not None
        assert subject.job(a).workflow_id == held.workflow_id
        assert claimable(subject, "c") == []
        assert c in [j.id for j in subject.jobs("live")], "a held job is visible as such"
        finish(subject, "a")
        assert status(subject, c) == Status.HELD, "released early: b has not finished"
        assert claimable(subject, "c") == []
        finish(subject, "b")
        assert status(subject, c) == Status.PENDING
        assert take(subject, "c").id == c

    def test_a_retried_failure_releases_nothing(self, subject: Subject) -> None:
        _, b = add(subject, workflow([step("a", max_attempts=3), step("b")], {1: [0]}))
        job = take(subject, "a")
        assert subject.backend.fail([failure(job, delay=0)]).retried == {job.id}
        assert status(subject, b) == Status.HELD
        finish(subject, "a")
        assert status(subject, b) == Status.PENDING

    def test_a_stale_token_releases_nothing_and_a_repeated_answer_releases_once(
        self, subject: Subject
    ) -> None:
        _, b = add(subject, workflow([step("a"), step("b")], {1: [0]}))
        job = take(subject, "a")
        assert subject.backend.complete([Completion(job.id, STALE, None)]) == set()
        assert status(subject, b) == Status.HELD, "a stale worker released a dependent"
        answer = [Completion(job.id, job.claim_token or "", None)]
        assert subject.backend.complete(answer) == {job.id}
        assert subject.backend.complete(answer) == set(), "the answer lost and sent again"
        finish(subject, "b")
        assert claimable(subject, "b") == [], "released twice"
        info = subject.backend.get_workflow(subject.job(b).workflow_id or 0)
        assert info is not None and info.counts == {"succeeded": 2}

    def test_a_released_job_keeps_its_own_run_at(self, subject: Subject) -> None:
        _, b = add(subject, workflow([step("a"), step("b", delay=100)], {1: [0]}))
        finish(subject, "a")
        assert status(subject, b) == Status.PENDING and claimable(subject, "b") == []
        subject.advance(101)
        assert claimable(subject, "b") == [b]

    def test_a_held_job_takes_a_new_priority_for_when_it_is_released(
        self, subject: Subject
    ) -> None:
        _, b = add(subject, workflow([step("a"), step("b", priority=1)], {1: [0]}))
        assert subject.backend.set_priority(b, 7)
        assert subject.job(b).status == Status.HELD and subject.job(b).priority == 7
        finish(subject, "a")
        released = subject.job(b)
        assert (released.status, released.priority) == (Status.PENDING, 7)
        assert subject.backend.set_priority(b, 3) and subject.job(b).priority == 3
        finish(subject, "b")
        assert not subject.backend.set_priority(b, 5), "a finished job changed its priority"

    def test_a_chain_runs_in_order_and_a_diamond_joins(self, subject: Subject) -> None:
        ids = add(subject, workflow(
            [step("a"), step("b"), step("c"), step("d")], {1: [0], 2: [0], 3: [1, 2]}))
        finish(subject, "a")
        assert [status(subject, i) for i in ids[1:]] == [
            Status.PENDING, Status.PENDING, Status.HELD]
        finish(subject, "c")
        assert status(subject, ids[3]) == Status.HELD
        finish(subject, "b")
        finish(subject, "d")
        info = subject.backend.get_workflow(subject.job(ids[0]).workflow_id or 0)
        assert info is not None and info.counts == {"succeeded": 4}
        assert info.finished_at == subject.at(0)

    def test_two_clients_finishing_the_last_two_parents_release_the_child_once(
        self, subject: Subject
    ) -> None:
        other = subject.other_client()
        a, b, c = add(subject, workflow([step("a"), step("b"), step("c")], {2: [0, 1]}))
        ja, jb = take(subject, "a"), take(subject, "b")
        subject.backend.complete([Completion(ja.id, ja.claim_token or "", None)])
        other.complete([Completion(jb.id, jb.claim_token or "", None)])
        assert status(subject, c) == Status.PENDING
        assert [j.id for j in subject.jobs("live")] == [c]


class TestWorkflowResults(_Workflows):
    def test_dependencies_come_in_the_order_given_with_their_results(
        self, subject: Subject
    ) -> None:
        a, b, c = add(subject, workflow([step("a"), step("b"), step("c")], {2: [1, 0]}))
        finish(subject, "a", {"rows": [1, 2]})
        finish(subject, "b", 7)
        assert subject.backend.dependencies(c) == [
            Dependency(b, "b", Status.SUCCEEDED, 7, None),
            Dependency(a, "a", Status.SUCCEEDED, {"rows": [1, 2]}, None),
        ]
        assert subject.backend.dependencies(a) == []

    def test_the_graph_lists_every_job_and_edge(self, subject: Subject) -> None:
        a, b, c = add(subject, workflow(
            [step("a"), step("b"), step("c")], {1: [0], 2: [(0, "run"), 1]}))
        finish(subject, "a")
        wf_id = subject.job(a).workflow_id or 0
        jobs, edges = subject.backend.workflow_graph(wf_id)
        assert [(j.id, j.status) for j in jobs] == [
            (a, Status.SUCCEEDED), (b, Status.PENDING), (c, Status.HELD)]
        assert sorted((e.parent, e.child, e.on_failure, e.resolved) for e in edges) == [
            (a, b, "cancel", True), (a, c, "run", True), (b, c, "cancel", False)]


class TestWorkflowFailure(_Workflows):
    def test_a_dead_dependency_cancels_its_dependents_by_default_naming_it(
        self, subject: Subject
    ) -> None:
        a, b, c = add(subject, workflow([step("a"), step("b"), step("c")], {1: [0], 2: [1]}))
        bury(subject, "a")
        for child, parent in ((b, a), (c, b)):
            stored = subject.job(child)
            assert (stored.status, stored.reason) == (Status.DEAD, DeadReason.DEPENDENCY_FAILED)
            assert stored.errors[-1]["dependency"] == parent
            assert str(parent) in stored.errors[-1]["message"]
        assert subject.counts() == (0, 0, 3)

    def test_run_anyway_releases_and_shows_which_failed(self, subject: Subject) -> None:
        a, b, c = add(subject, workflow(
            [step("a"), step("b"), step("c")], {2: [0, 1]}, on_failure="run"))
        bury(subject, "a")
        assert status(subject, c) == Status.HELD
        finish(subject, "b", "ok")
        assert status(subject, c) == Status.PENDING
        assert subject.backend.dependencies(c) == [
            Dependency(a, "a", Status.DEAD, None, DeadReason.PERMANENT_ERROR),
            Dependency(b, "b", Status.SUCCEEDED, "ok", None),
        ]

    def test_an_edge_policy_overrides_the_workflows(self, subject: Subject) -> None:
        _, b, c = add(subject, workflow(
            [step("a"), step("b"), step("c")], {1: [(0, "run")], 2: [0]}))
        bury(subject, "a")
        assert status(subject, b) == Status.PENDING
        assert subject.job(c).reason == DeadReason.DEPENDENCY_FAILED

    def test_wait_holds_the_dependent_until_an_operator_resurrects(
        self, subject: Subject
    ) -> None:
        a, b = add(subject, workflow([step("a"), step("b")], {1: [0]}, on_failure="wait"))
        bury(subject, "a")
        assert status(subject, b) == Status.HELD
        assert subject.backend.resurrect(a)
        assert status(subject, b) == Status.HELD, "released before the rerun finished"
        finish(subject, "a")
        assert status(subject, b) == Status.PENDING

    def test_a_callback_for_failures_runs_only_when_one_failed(self, subject: Subject) -> None:
        ids = add(subject, workflow(
            [step("a"), step("b"), step("cb")], {2: [0, 1]}, on_failure="run",
            run_if={2: "failed"}))
        finish(subject, "a")
        finish(subject, "b")
        assert status(subject, ids[2]) == Status.SUCCEEDED, "nothing failed: not run"
        assert claimable(subject, "cb") == []
        ids = add(subject, workflow(
            [step("a"), step("b"), step("cb")], {2: [0, 1]}, on_failure="run",
            run_if={2: "failed"}, name="again"))
        bury(subject, "a")
        finish(subject, "b")
        assert status(subject, ids[2]) == Status.PENDING

    def test_a_reaped_last_attempt_applies_the_policy(self, subject: Subject) -> None:
        _, b = add(subject, workflow([step("a", max_attempts=1), step("b")], {1: [0]}))
        take(subject, "a")
        subject.advance(31)
        assert len(subject.backend.reap().dead) == 1
        assert subject.job(b).reason == DeadReason.DEPENDENCY_FAILED

    def test_cancelling_a_held_job_cascades(self, subject: Subject) -> None:
        a, b, c = add(subject, workflow([step("a"), step("b"), step("c")], {1: [0], 2: [1]}))
        assert subject.backend.cancel(b) == "cancelled"
        assert subject.job(b).reason == DeadReason.CANCELLED
        assert subject.job(c).reason == DeadReason.DEPENDENCY_FAILED
        finish(subject, "a")
        assert subject.counts() == (0, 1, 2)


class TestWorkflowResurrect(_Workflows):
    def test_retry_reruns_the_failed_step_and_its_dependents_only(
        self, subject: Subject
    ) -> None:
        a, b, c = add(subject, workflow([step("a"), step("b"), step("c")], {1: [0], 2: [1]}))
        finish(subject, "a")
        bury(subject, "b")
        assert subject.job(c).reason == DeadReason.DEPENDENCY_FAILED
        wf_id = subject.job(a).workflow_id or 0
        assert subject.backend.retry_workflow(wf_id) == [b]
        assert (status(subject, a), status(subject, b), status(subject, c)) == (
            Status.SUCCEEDED, Status.PENDING, Status.HELD)
        assert claimable(subject, "a") == [], "a finished step ran again"
        finish(subject, "b")
        finish(subject, "c")
        info = subject.backend.get_workflow(wf_id)
        assert info is not None and info.counts == {"succeeded": 3}

    def test_resurrecting_one_dead_job_brings_back_what_it_cancelled(
        self, subject: Subject
    ) -> None:
        a, b, c = add(subject, workflow([step("a"), step("b"), step("c")], {1: [0], 2: [1]}))
        bury(subject, "a")
        assert subject.backend.resurrect(a)
        assert [status(subject, i) for i in (a, b, c)] == [
            Status.PENDING, Status.HELD, Status.HELD]
        finish(subject, "a")
        assert status(subject, b) == Status.PENDING

    def test_cancel_workflow_ends_every_live_job(self, subject: Subject) -> None:
        a, b, c = add(subject, workflow([step("a"), step("b"), step("c")], {2: [0]}))
        running = take(subject, "b")
        wf_id = subject.job(a).workflow_id or 0
        assert subject.backend.cancel_workflow(wf_id) == 3
        assert subject.job(a).reason == DeadReason.CANCELLED
        assert subject.job(c).status == Status.DEAD
        assert subject.job(running.id).cancel_requested


class TestWorkflowFanOut(_Workflows):
    def test_a_running_job_fans_out_and_its_dependent_waits_for_every_new_job(
        self, subject: Subject
    ) -> None:
        a, c = add(subject, workflow([step("a"), step("c")], {1: [0]}))
        job = take(subject, "a")
        new = subject.backend.spawn(owned(job)[0], [step("x"), step("y")], [[], [0]], RETENTION)
        assert new is not None and len(new) == 2
        x, y = new
        assert (status(subject, x), status(subject, y)) == (Status.PENDING, Status.HELD)
        assert subject.job(x).workflow_id == subject.job(a).workflow_id
        subject.backend.complete([Completion(job.id, job.claim_token or "", None)])
        assert status(subject, c) == Status.HELD, "released before the fan-out finished"
        finish(subject, "x")
        assert status(subject, c) == Status.HELD
        finish(subject, "y")
        assert status(subject, c) == Status.PENDING
        assert [d.id for d in subject.backend.dependencies(c)][0] == a

    def test_a_stale_owner_spawns_nothing(self, subject: Subject) -> None:
        add(subject, workflow([step("a"), step("c")], {1: [0]}))
        job = take(subject, "a")
        before = subject.state()
        assert subject.backend.spawn(Owned(job.id, STALE), [step("x")], [[]], RETENTION) is None
        assert subject.state() == before
        assert stale(job).claim_token == STALE

    def test_a_job_outside_a_workflow_gets_one_to_fan_out_in(self, subject: Subject) -> None:
        job = subject.running("solo")
        new = subject.backend.spawn(owned(job)[0], [step("x")], [[]], RETENTION)
        assert new is not None
        assert subject.job(new[0]).workflow_id is not None
        assert subject.job(job.id).workflow_id == subject.job(new[0]).workflow_id


class TestWorkflowWrites(_Workflows):
    def test_a_key_names_one_workflow(self, subject: Subject) -> None:
        first = subject.backend.add_workflow(
            workflow([step("a"), step("b")], {1: [0]}, key="nightly"), RETENTION)
        again = subject.backend.add_workflow(
            workflow([step("a"), step("b"), step("z")], key="nightly"), RETENTION)
        assert first.created and not again.created
        assert (again.id, again.job_ids) == (first.id, first.job_ids)
        assert len(subject.jobs("live")) == 2
        assert [w.id for w in subject.backend.list_workflows(10)] == [first.id]

    def test_a_rolled_back_transaction_leaves_nothing(self, subject: Subject) -> None:
        with pytest.raises(RuntimeError), subject.backend.transaction() as conn:
            add(subject, workflow([step("a"), step("b")], {1: [0]}), conn)
            raise RuntimeError("the caller's own work failed")
        assert subject.counts() == (0, 0, 0)
        assert subject.backend.list_workflows(10) == []

    def test_list_is_newest_first_and_pages(self, subject: Subject) -> None:
        ids = [subject.backend.add_workflow(workflow([step("a")], name=f"w{i}"), RETENTION).id
               for i in range(3)]
        listed = subject.backend.list_workflows(2)
        assert [w.id for w in listed] == ids[::-1][:2]
        assert [w.id for w in subject.backend.list_workflows(2, before=listed[-1].id)] == ids[:1]
        assert listed[0].name == "w2" and listed[0].counts == {"pending": 1}
        assert subject.backend.get_workflow(max(ids) + 1000) is None
