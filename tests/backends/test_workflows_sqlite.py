"""Workflows on SQLite (issue 26): the release rule of backends/_workflow.py run through the
SQLite backend's statements, on real database files and a FakeClock. The shared conformance
class (claimq.testing.conformance.workflows) covers the interface on every backend; these pin
SQLite's own side: the held table's bookkeeping, each failure policy, resurrect, spawn, the
caller's transaction, retention, and that a queue without workflows never touches the
workflow tables."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from claimq._validate import NewJob, new_job
from claimq.backends import open_backend
from claimq.backends.base import Completion, Failure, NewWorkflow, Owned, PruneBatch
from claimq.backends.sqlite.backend import SQLiteBackend
from claimq.clock import FakeClock
from claimq.job import Job, Status

RETENTION = 3600.0


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=datetime(2031, 3, 4, 5, 6, 7, tzinfo=UTC))


@pytest.fixture
def backend(tmp_path: Path, clock: FakeClock) -> Iterator[SQLiteBackend]:
    b = open_backend(f"sqlite:///{tmp_path}/claimq.db", clock=clock)
    assert isinstance(b, SQLiteBackend)
    b.migrate()
    yield b
    b.close()


def job(task: str, **options: Any) -> NewJob:
    return new_job(task=task, payload={"task": task}, **options)


def workflow(tasks: Sequence[str], after: Sequence[Sequence[int | tuple[int, str]]] = (),
             on_failure: str = "cancel", key: str | None = None,
             run_if: Sequence[str | None] | None = None, name: str = "wf") -> NewWorkflow:
    deps = [[(d, None) if isinstance(d, int) else d for d in a] for a in after]
    deps += [[] for _ in range(len(tasks) - len(deps))]
    return NewWorkflow(name, key, on_failure, [job(t) for t in tasks], deps,
                       list(run_if) if run_if is not None else [None] * len(tasks))


def raw(b: SQLiteBackend, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(b.path) as conn:
        return [tuple(r) for r in conn.execute(sql, params)]


def waiting(b: SQLiteBackend, job_id: int) -> int | None:
    rows = raw(b, "SELECT waiting FROM claimq_held WHERE id = ?", job_id)
    return rows[0][0] if rows else None


def status(b: SQLiteBackend, job_id: int) -> str:
    found = b.get_job(job_id)
    assert found is not None
    return found.status.value


def claim(b: SQLiteBackend, *ids: int) -> dict[int, Job]:
    """Claims (and starts) every pending job; returns those asked for (all: none asked)."""
    jobs = {j.id: j for j in b.claim("w1", None, 100, 30, start=True)}
    for i in ids:
        assert i in jobs, f"job {i} was not claimable"
    return {i: jobs[i] for i in ids} if ids else jobs


def complete(b: SQLiteBackend, j: Job, result: str = "null") -> set[int]:
    assert j.claim_token is not None
    return b.complete([Completion(j.id, j.claim_token, result)])


def fail(b: SQLiteBackend, j: Job) -> None:
    assert j.claim_token is not None
    result = b.fail([Failure(j.id, j.claim_token, {"error": "Boom", "message": "boom"}, 0.0,
                             "permanent_error", permanent=True)])
    assert result.dead == {j.id}


def everywhere(b: SQLiteBackend, job_id: int) -> list[str]:
    """The tables that hold `job_id` (exactly one, always)."""
    return [t for t in ("jobs", "held", "archive", "dead")
            if raw(b, f"SELECT 1 FROM claimq_{t} WHERE id = ?", job_id)]


# -- release ------------------------------------------------------------------------------------


def test_a_fan_in_is_never_released_early_and_released_once(backend: SQLiteBackend) -> None:
    added = backend.add_workflow(workflow(["a", "b", "c", "d"], [[], [0], [0], [1, 2]]),
                                 RETENTION)
    a, b, c, d = added.job_ids
    assert added.created and [status(backend, i) for i in added.job_ids] == [
        "pending", "held", "held", "held"]
    assert (waiting(backend, b), waiting(backend, d)) == (1, 2)
    first = claim(backend)
    assert list(first) == [a]  # held jobs are never claimed
    complete(backend, first[a])
    assert status(backend, b) == status(backend, c) == "pending"
    jobs = claim(backend, b, c)
    complete(backend, jobs[b])
    assert (status(backend, d), waiting(backend, d)) == ("held", 1)
    assert complete(backend, jobs[b]) == set()  # a second answer for b: nothing again
    assert waiting(backend, d) == 1
    complete(backend, jobs[c])
    assert status(backend, d) == "pending" and everywhere(backend, d) == ["jobs"]
    assert raw(backend, "SELECT count(*) FROM claimq_deps WHERE NOT resolved") == [(0,)]
    info = backend.get_workflow(added.id)
    assert info is not None and info.counts == {"succeeded": 3, "pending": 1}
    assert info.finished_at is None


def test_release_waits_for_run_at_and_keeps_a_later_one(backend: SQLiteBackend,
                                                         clock: FakeClock) -> None:
    wf = workflow(["a", "b"], [[], [0]])
    later = clock.now().timestamp() + 500
    wf = NewWorkflow(wf.name, None, "cancel", [wf.jobs[0], job("b", delay=500)], wf.after,
                     wf.run_if)
    a, b = backend.add_workflow(wf, RETENTION).job_ids
    clock.advance(10)
    complete(backend, claim(backend, a)[a])
    found = backend.get_job(b)
    assert found is not None and found.run_at is not None
    assert found.status == Status.PENDING and found.run_at.timestamp() == later


def test_a_stale_token_releases_nothing(backend: SQLiteBackend, clock: FakeClock) -> None:
    a, b = backend.add_workflow(workflow(["a", "b"], [[], [0]]), RETENTION).job_ids
    stale = claim(backend, a)[a]
    clock.advance(60)
    assert backend.reap().requeued == [a]
    assert complete(backend, stale) == set()
    assert status(backend, b) == "held" and waiting(backend, b) == 1
    complete(backend, claim(backend, a)[a])
    assert status(backend, b) == "pending"


# -- failure policies ---------------------------------------------------------------------------


def test_cancel_policy_cascades_with_a_reason_that_names_the_dependency(
        backend: SQLiteBackend) -> None:
    a, b, c, x = backend.add_workflow(
        workflow(["a", "b", "c", "x"], [[], [0], [1], []]), RETENTION).job_ids
    jobs = claim(backend, a, x)
    fail(backend, jobs[a])
    for i in (b, c):
        dead = backend.get_job(i)
        assert dead is not None and dead.status == Status.DEAD
        assert dead.reason == "dependency_failed"
    dead_b = backend.get_job(b)
    assert dead_b is not None and dead_b.errors[-1] == {
        "type": "DependencyFailed", "dependency": a,
        "message": f"dependency {a} (a) ended in dead letters: permanent_error"}
    dead_c = backend.get_job(c)
    assert dead_c is not None and dead_c.errors[-1]["dependency"] == b
    assert status(backend, x) == "processing"  # not a dependent: untouched
    assert raw(backend, "SELECT count(*) FROM claimq_held") == [(0,)]


def test_run_policy_releases_the_dependent_which_sees_the_failure(
        backend: SQLiteBackend) -> None:
    a, b = backend.add_workflow(workflow(["a", "b"], [[], [(0, "run")]]), RETENTION).job_ids
    fail(backend, claim(backend, a)[a])
    assert status(backend, b) == "pending"
    [dep] = backend.dependencies(b)
    assert (dep.id, dep.task, dep.status, dep.reason) == (a, "a", "dead", "permanent_error")


def test_the_workflows_policy_is_the_default_and_an_edge_overrides_it(
        backend: SQLiteBackend) -> None:
    a, b, c = backend.add_workflow(
        workflow(["a", "b", "c"], [[], [0], [(0, "cancel")]], on_failure="run"),
        RETENTION).job_ids
    fail(backend, claim(backend, a)[a])
    assert (status(backend, b), status(backend, c)) == ("pending", "dead")


def test_wait_policy_holds_until_the_dependency_is_resurrected(backend: SQLiteBackend) -> None:
    a, b = backend.add_workflow(workflow(["a", "b"], [[], [0]], on_failure="wait"),
                                RETENTION).job_ids
    fail(backend, claim(backend, a)[a])
    assert status(backend, b) == "held" and waiting(backend, b) == 1
    assert backend.resurrect(a)
    assert status(backend, a) == "pending" and waiting(backend, b) == 1
    complete(backend, claim(backend, a)[a])
    assert status(backend, b) == "pending"


def test_run_if_failed_runs_only_after_a_failure(backend: SQLiteBackend) -> None:
    ok, on_err, after = backend.add_workflow(
        workflow(["ok", "on_err", "after"], [[], [(0, "run")], [1]],
                 run_if=[None, "failed", None]), RETENTION).job_ids
    complete(backend, claim(backend, ok)[ok])
    skipped = backend.get_job(on_err)
    assert skipped is not None and skipped.status == Status.SUCCEEDED
    assert skipped.result is None and skipped.started_at is None
    assert status(backend, after) == "pending"  # the skipped callback released its dependent

    bad, handler = backend.add_workflow(
        workflow(["bad", "handler"], [[], [(0, "run")]], run_if=[None, "failed"]),
        RETENTION).job_ids
    fail(backend, claim(backend, bad)[bad])
    assert status(backend, handler) == "pending"


def test_cancel_of_a_held_job_cancels_its_dependents(backend: SQLiteBackend) -> None:
    a, b, c, d = backend.add_workflow(
        workflow(["a", "b", "c", "d"], [[], [0], [1], [(1, "run")]]), RETENTION).job_ids
    assert backend.cancel(b) == "cancelled"
    found = backend.get_job(b)
    assert found is not None and found.reason == "cancelled"
    found = backend.get_job(c)
    assert found is not None and found.reason == "dependency_failed"
    assert status(backend, d) == "pending"  # its one edge, from b, is under 'run'
    assert status(backend, a) == "pending"  # b's dependency: untouched


def test_cancel_workflow_and_retry_workflow(backend: SQLiteBackend) -> None:
    added = backend.add_workflow(workflow(["a", "b", "c"], [[], [], [0, 1]]), RETENTION)
    a, b, c = added.job_ids
    jobs = claim(backend, a, b)
    assert backend.cancel_workflow(added.id) == 3  # a, b flagged; c buried
    assert status(backend, c) == "dead"
    found = backend.get_job(a)
    assert found is not None and found.cancel_requested
    fail(backend, jobs[a])
    complete(backend, jobs[b])
    assert backend.retry_workflow(added.id) == [a, c]
    assert status(backend, a) == "pending" and status(backend, c) == "held"
    complete(backend, claim(backend, a)[a])
    assert status(backend, c) == "pending"


# -- resurrect ----------------------------------------------------------------------------------


def test_resurrect_continues_from_the_failed_step(backend: SQLiteBackend) -> None:
    a, b, c, d, x = backend.add_workflow(
        workflow(["a", "b", "c", "d", "x"], [[], [0], [1, 4], [2], []]), RETENTION).job_ids
    jobs = claim(backend, a, x)
    complete(backend, jobs[a])
    complete(backend, jobs[x])
    fail(backend, claim(backend, b)[b])
    assert [status(backend, i) for i in (c, d)] == ["dead", "dead"]
    assert backend.resurrect(b)
    assert status(backend, b) == "pending"
    assert (waiting(backend, c), waiting(backend, d)) == (1, 1)  # x archived: resolved
    assert status(backend, a) == status(backend, x) == "succeeded"  # never run again
    complete(backend, claim(backend, b)[b])
    complete(backend, claim(backend, c)[c])
    complete(backend, claim(backend, d)[d])
    assert [everywhere(backend, i) for i in (a, b, c, d, x)] == [["archive"]] * 5
    found = backend.get_job(a)
    assert found is not None and found.attempts == 1


def test_a_restored_job_with_another_failed_parent_is_cancelled_again(
        backend: SQLiteBackend) -> None:
    a, b, c = backend.add_workflow(workflow(["a", "b", "c"], [[], [], [0, 1]]),
                                   RETENTION).job_ids
    jobs = claim(backend, a, b)
    fail(backend, jobs[a])
    fail(backend, jobs[b])
    assert backend.resurrect(a)
    found = backend.get_job(c)
    assert found is not None and found.reason == "dependency_failed"
    assert found.errors[-1]["dependency"] == b
    assert backend.resurrect(b)
    assert status(backend, c) == "held" and waiting(backend, c) == 2


def test_a_run_edge_counts_once_across_a_resurrect(backend: SQLiteBackend) -> None:
    a, z, c = backend.add_workflow(
        workflow(["a", "z", "c"], [[], [], [(0, "run"), 1]]), RETENTION).job_ids
    jobs = claim(backend, a, z)
    fail(backend, jobs[a])
    assert waiting(backend, c) == 1
    assert backend.resurrect(a)
    complete(backend, claim(backend, a)[a])
    assert waiting(backend, c) == 1  # a's end was counted already
    complete(backend, jobs[z])
    assert status(backend, c) == "pending"


# -- spawn --------------------------------------------------------------------------------------


def test_spawn_is_fenced_and_a_fan_in_waits_for_the_spawned_jobs(
        backend: SQLiteBackend, clock: FakeClock) -> None:
    added = backend.add_workflow(workflow(["s", "fan_in"], [[], [0]]), RETENTION)
    s, f = added.job_ids
    owner = claim(backend, s)[s]
    assert owner.claim_token is not None
    assert backend.spawn(Owned(s, "not-the-token"), [job("p")], [[]], RETENTION) is None
    assert raw(backend, "SELECT count(*) FROM claimq_jobs") == [(1,)]
    spawned = backend.spawn(Owned(s, owner.claim_token),
                            [job("p1"), job("p2"), job("p3")], [[], [], [0]], RETENTION)
    assert spawned is not None
    p1, p2, p3 = spawned
    assert waiting(backend, f) == 4 and waiting(backend, p3) == 1
    assert [status(backend, i) for i in spawned] == ["pending", "pending", "held"]
    complete(backend, owner)
    assert waiting(backend, f) == 3
    jobs = claim(backend, p1, p2)
    complete(backend, jobs[p1])
    complete(backend, jobs[p2])
    assert status(backend, f) == "held"
    complete(backend, claim(backend, p3)[p3])
    assert status(backend, f) == "pending"
    assert [d.id for d in backend.dependencies(f)] == [s, p1, p2, p3]
    graph_jobs, edges = backend.workflow_graph(added.id)
    assert [j.id for j in graph_jobs] == [s, f, p1, p2, p3]
    assert all(j.workflow_id == added.id for j in graph_jobs)
    assert len(edges) == 5 and all(e.resolved for e in edges)
    # after the spawner's lease is gone, it spawns nothing
    clock.advance(1)
    assert backend.spawn(Owned(s, owner.claim_token), [job("late")], [[]], RETENTION) is None


def test_spawn_outside_a_workflow_makes_one_named_after_the_task(backend: SQLiteBackend) -> None:
    [s] = backend.enqueue([job("parent_task")], RETENTION)
    owner = claim(backend, s)[s]
    assert owner.claim_token is not None
    assert backend.spawn(Owned(s, owner.claim_token), [], [], RETENTION) == []
    assert raw(backend, "SELECT count(*) FROM claimq_workflows") == [(0,)]
    [child] = backend.spawn(Owned(s, owner.claim_token), [job("c")], [[]], RETENTION) or [0]
    found, spawned = backend.get_job(s), backend.get_job(child)
    assert found is not None and spawned is not None
    assert found.workflow_id is not None and spawned.workflow_id == found.workflow_id
    info = backend.get_workflow(found.workflow_id)
    assert info is not None and info.name == "parent_task" and info.on_failure == "cancel"


# -- transactions and keys ----------------------------------------------------------------------


def test_add_workflow_in_a_rolled_back_transaction_leaves_nothing(
        backend: SQLiteBackend) -> None:
    with pytest.raises(RuntimeError), backend.transaction() as conn:
        added = backend.add_workflow(workflow(["a", "b"], [[], [0]], key="k"), RETENTION,
                                     conn=conn)
        assert added.created
        raise RuntimeError("the caller's business write failed")
    for table in ("workflows", "deps", "held", "jobs", "archive", "dead", "queues"):
        assert raw(backend, f"SELECT count(*) FROM claimq_{table}") == [(0,)], table
    assert backend.add_workflow(workflow(["a"], key="k"), RETENTION).created


def test_add_workflow_commits_with_the_callers_transaction(backend: SQLiteBackend) -> None:
    with backend.transaction() as conn:
        added = backend.add_workflow(workflow(["a", "b"], [[], [0]]), RETENTION, conn=conn)
    assert [status(backend, i) for i in added.job_ids] == ["pending", "held"]


def test_a_workflow_key_names_one_workflow(backend: SQLiteBackend) -> None:
    first = backend.add_workflow(workflow(["a", "b"], [[], [0]], key="nightly"), RETENTION)
    again = backend.add_workflow(workflow(["x", "y", "z"], key="nightly"), RETENTION)
    assert (again.id, again.job_ids, again.created) == (first.id, first.job_ids, False)
    assert raw(backend, "SELECT count(*) FROM claimq_jobs") == [(1,)]
    assert raw(backend, "SELECT count(*) FROM claimq_held") == [(1,)]
    infos = backend.list_workflows(10)
    assert [i.id for i in infos] == [first.id] and infos[0].key == "nightly"


# -- reads --------------------------------------------------------------------------------------


def test_held_jobs_are_listed_and_found_with_their_workflow(backend: SQLiteBackend) -> None:
    added = backend.add_workflow(workflow(["a", "b"], [[], [0]]), RETENTION)
    a, b = added.job_ids
    held = backend.list_jobs("live", status="held")
    assert [(j.id, j.status, j.workflow_id) for j in held] == [(b, Status.HELD, added.id)]
    assert [j.id for j in backend.list_jobs("live")] == [a, b]
    from claimq.backends.base import JobFilter
    found = backend.find_jobs("live", JobFilter(status="held"), None, 10)
    assert [j.id for j in found] == [b]
    assert [j.id for j in backend.find_jobs("live", JobFilter(), None, 10)] == [b, a]
    complete(backend, claim(backend, a)[a])
    archived = backend.list_jobs("archive")
    assert [(j.id, j.workflow_id) for j in archived] == [(a, added.id)]


# -- retention ----------------------------------------------------------------------------------


def test_retention_keeps_a_live_workflows_rows_and_forgets_a_finished_one(
        backend: SQLiteBackend, clock: FakeClock) -> None:
    added = backend.add_workflow(workflow(["a", "b"], [[], [0]]), RETENTION)
    a, b = added.job_ids
    [plain] = backend.enqueue([job("plain")], RETENTION)
    jobs = claim(backend, a, plain)
    complete(backend, jobs[a])
    complete(backend, jobs[plain])
    clock.advance(100)
    batch = PruneBatch("archive", None, (), 10, None, 100)
    assert backend.prune(batch) == 1  # the plain job; a stays while b waits
    assert backend.purge("archive") == 0
    assert everywhere(backend, a) == ["archive"] and backend.dependencies(b)[0].result is None
    complete(backend, claim(backend, b)[b])
    clock.advance(100)
    assert backend.prune(batch) == 2
    assert backend.get_workflow(added.id) is None
    assert raw(backend, "SELECT count(*) FROM claimq_deps") == [(0,)]


# -- cost -------------------------------------------------------------------------------------


def test_a_queue_without_workflows_never_reads_the_workflow_tables(
        backend: SQLiteBackend) -> None:
    ids = backend.enqueue([job("a"), job("b"), job("c")], RETENTION)
    statements: list[str] = []
    backend._conn().set_trace_callback(statements.append)
    jobs = claim(backend, *ids)
    complete(backend, jobs[ids[0]])
    fail(backend, jobs[ids[1]])
    backend.release([Owned(ids[2], jobs[ids[2]].claim_token or "")])
    backend.cancel(ids[2])
    backend._conn().set_trace_callback(None)
    touched = [s for s in statements if "claimq_deps" in s or "claimq_held" in s
               or "claimq_workflows" in s]
    assert statements and not touched


def test_stats_count_held_jobs(backend: SQLiteBackend) -> None:
    from claimq.stats import build

    backend.add_workflow(workflow(["a", "b", "c"], [[], [0], [0]]), RETENTION)
    stats = build(backend.stats(60), 60)
    task_b = stats.task("b")
    queue = stats.queue("default")
    assert task_b is not None and queue is not None
    assert (task_b.held, task_b.pending, queue.held, queue.pending) == (1, 0, 2, 1)


def test_purge_forgets_workflows_left_without_jobs(backend: SQLiteBackend) -> None:
    added = backend.add_workflow(workflow(["a", "b"], [[], [0]]), RETENTION)
    a, b = added.job_ids
    complete(backend, claim(backend, a)[a])
    assert backend.purge("archive") == 0  # b still waits for a's result
    complete(backend, claim(backend, b)[b])
    assert backend.purge("archive") == 2
    assert backend.get_workflow(added.id) is None
    assert raw(backend, "SELECT count(*) FROM claimq_deps") == [(0,)]


def test_migrating_a_database_with_jobs_keeps_them_outside_any_workflow(
        tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    from claimq.backends.sqlite import backend as module

    url = f"sqlite:///{tmp_path}/old.db"
    before = [m for m in module._MIGRATIONS if m[0] < 13]
    monkeypatch.setattr(module, "_MIGRATIONS", before)
    old = open_backend(url, clock=clock)
    assert old.migrate()[-1] == 12
    ids = old.enqueue([job("a"), job("b")], RETENTION)
    [first] = old.claim("w", None, 1, 30, start=True)
    old.close()
    monkeypatch.undo()
    new = open_backend(url, clock=clock)
    assert isinstance(new, SQLiteBackend)
    assert new.migrate()[0] == 13  # the workflows migration, then any later one
    new.check_schema()
    assert complete(new, first) == {first.id}
    found = new.get_job(ids[1])
    assert found is not None and found.status == Status.PENDING and found.workflow_id is None
    archived = new.get_job(first.id)
    assert archived is not None and archived.workflow_id is None
    assert raw(new, "SELECT count(*) FROM claimq_workflows") == [(0,)]
    new.close()


# -- a random DAG, drained, then retried ---------------------------------------------------------


def _expected(n: int, parents: dict[int, list[tuple[int, str]]], fails: set[int],
              run_if: dict[int, str | None]) -> dict[int, str]:
    """Each node's end by the rule: 'dependency_failed' (a 'cancel' edge from a parent that
    ended dead), 'held' (waits for ever: a 'wait' edge from a dead parent, or a parent held),
    'skipped' (run_if='failed' and no 'run' edge from a dead parent), 'dead', 'succeeded'."""
    end: dict[int, str] = {}
    for i in range(n):
        ps = parents.get(i, [])
        dead = [(p, pol) for p, pol in ps if end[p] in ("dead", "dependency_failed")]
        if any(pol == "cancel" for _, pol in dead):
            end[i] = "dependency_failed"
        elif any(end[p] == "held" for p, _ in ps) or any(pol == "wait" for _, pol in dead):
            end[i] = "held"
        elif run_if.get(i) == "failed" and not dead:
            end[i] = "skipped"
        else:
            end[i] = "dead" if i in fails else "succeeded"
    return end


def _drain(b: SQLiteBackend, ids: list[int], parents: dict[int, list[tuple[int, str]]],
           fails: set[int], rng: Any, runs: dict[int, int], retried: bool = False) -> None:
    """Claims and settles until nothing is pending; at each claim, every edge into the job is
    resolved and every dependency has ended as its edge allows (archived, or dead under 'run';
    after a retry, a 'run' edge counted before may lead from a parent running again)."""
    node = {job_id: i for i, job_id in enumerate(ids)}
    while True:
        claimed = b.claim("w", None, 7, 30, start=True)
        if not claimed:
            return
        rng.shuffle(claimed)
        for j in claimed:
            i = node[j.id]
            assert raw(b, "SELECT count(*) FROM claimq_deps WHERE child = ? AND NOT resolved",
                       j.id) == [(0,)]
            for p, policy in parents.get(i, []):
                parent = b.get_job(ids[p])
                assert parent is not None
                assert parent.status == Status.SUCCEEDED or (policy == "run" and (
                    parent.status == Status.DEAD or retried)), (i, p, parent.status)
            runs[i] = runs.get(i, 0) + 1
            if i in fails:
                fail(b, j)
            else:
                complete(b, j, str(i))


@pytest.mark.parametrize("seed", range(6))
def test_a_random_dag_ends_as_the_rule_says_and_retry_finishes_it(
        backend: SQLiteBackend, seed: int) -> None:
    import random

    rng = random.Random(seed)
    n = 60
    parents: dict[int, list[tuple[int, str]]] = {}
    for i in range(5, n):
        chosen = rng.sample(range(i), rng.randint(1, min(3, i)))
        parents[i] = [(p, rng.choice(["cancel", "cancel", "run", "wait"])) for p in chosen]
    fails = {i for i in range(n) if rng.random() < 0.08}
    run_if = {i: "failed" for i in range(5, n) if rng.random() < 0.1}
    wf = NewWorkflow("random", None, "cancel", [job(f"n{i}") for i in range(n)],
                     [parents.get(i, []) for i in range(n)], [run_if.get(i) for i in range(n)])
    added = backend.add_workflow(wf, RETENTION)
    ids = added.job_ids
    runs: dict[int, int] = {}
    _drain(backend, ids, parents, fails, rng, runs)

    want = _expected(n, parents, fails, run_if)
    for i, job_id in enumerate(ids):
        found = backend.get_job(job_id)
        assert found is not None
        got = {Status.HELD: "held", Status.DEAD: found.reason or "dead"}.get(
            found.status, found.status.value)
        if want[i] == "skipped":
            assert (got, found.started_at, runs.get(i)) == ("succeeded", None, None), i
        elif want[i] == "dead":
            assert got == "permanent_error", (i, got)
        else:
            assert got == want[i], (i, got, want[i])
        assert runs.get(i, 0) == (1 if want[i] in ("dead", "succeeded") else 0), i
    assert raw(backend, "SELECT count(*) FROM claimq_held h WHERE waiting <> (SELECT count(*) "
                        "FROM claimq_deps e WHERE e.child = h.id AND NOT e.resolved)") == [(0,)]

    # retry: the failed steps run again (and succeed now); nothing that finished runs again
    retried = backend.retry_workflow(added.id)
    assert sorted(retried) == sorted(ids[i] for i in range(n) if want[i] == "dead")
    before = dict(runs)
    _drain(backend, ids, parents, set(), rng, runs, retried=True)
    for i, job_id in enumerate(ids):
        found = backend.get_job(job_id)
        assert found is not None and found.status == Status.SUCCEEDED, (i, found.status)
        again = runs.get(i, 0) - before.get(i, 0)
        # a run_if='failed' job whose dependencies all succeed now is archived unrun
        rerun = want[i] not in ("succeeded", "skipped") and i not in run_if
        assert again == (1 if rerun else 0), (i, want[i], again)
    info = backend.get_workflow(added.id)
    assert info is not None and info.counts == {"succeeded": n} and info.finished_at is not None


def test_release_of_a_cancelled_job_and_the_reaper_release_its_dependents(
        backend: SQLiteBackend, clock: FakeClock) -> None:
    wf = NewWorkflow("w", None, "cancel", [job("a"), job("b"), job("r", max_attempts=1),
                                           job("s")],
                     [[], [(0, None)], [], [(2, "run")]], [None] * 4)
    a, b, r, s = backend.add_workflow(wf, RETENTION).job_ids
    jobs = claim(backend, a, r)
    assert backend.cancel(a) == "cancel_requested"
    assert status(backend, b) == "held"
    token = jobs[a].claim_token
    assert token is not None and backend.release([Owned(a, token)]) == {a}
    found = backend.get_job(a)
    assert found is not None and found.reason == "cancelled"
    assert status(backend, b) == "dead"
    clock.advance(60)
    assert backend.reap().dead == [r]
    assert status(backend, s) == "pending"  # its edge from r is under 'run'


def test_held_has_every_column_of_jobs_in_order_then_waiting_and_run_if(
        backend: SQLiteBackend) -> None:
    """A job moves between claimq_jobs and claimq_held whole: a column added to one and not the
    other would be lost, or shifted into the wrong one, on the way."""
    def columns(table: str) -> list[tuple[Any, ...]]:
        return [(r[1], r[2], r[3]) for r in raw(backend, f"PRAGMA table_info(claimq_{table})")]

    jobs, held = columns("jobs"), columns("held")
    assert [c[0] for c in held[len(jobs):]] == ["waiting", "run_if"]
    assert [c[:2] for c in held[:len(jobs)]] == [c[:2] for c in jobs]
    for table in ("jobs", "held", "archive", "dead"):
        assert any(c[0] == "workflow_id" for c in columns(table))
