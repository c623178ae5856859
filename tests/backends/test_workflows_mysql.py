"""Workflows on MariaDB (issue 26): the release rule of backends/_workflow.py run through the
MariaDB backend's statements, on a real server and a FakeClock. The shared conformance class
(claimq.testing.conformance.workflows) covers the interface on every backend; these pin
MariaDB's own side: the held table's bookkeeping, each failure policy, resurrect, spawn, the
caller's transaction, key idempotency, retention, InnoDB's row locks when two transactions
finish the last two parents of one job at once, and that a queue without workflows never runs
a workflow statement."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from dbs import mariadb_database

from claimq._pause import set_hook
from claimq._validate import NewJob, new_job
from claimq.backends import _workflow
from claimq.backends.base import Completion, Failure, NewWorkflow, Owned, PruneBatch
from claimq.backends.mysql import MySQLBackend
from claimq.backends.mysql import backend as mysql_module
from claimq.clock import FakeClock
from claimq.job import Job, Status

pytestmark = [pytest.mark.mariadb, pytest.mark.timeout(180)]

RETENTION = 3600.0
TABLES = ("jobs", "held", "archive", "dead")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=datetime(2031, 3, 4, 5, 6, 7, tzinfo=UTC))


@pytest.fixture
def url(mariadb_server: str) -> Iterator[str]:
    with mariadb_database(mariadb_server) as found:
        yield found


@pytest.fixture
def backend(url: str, clock: FakeClock) -> Iterator[MySQLBackend]:
    b = MySQLBackend(url, clock=clock)
    b.migrate()
    yield b
    b.close()


@pytest.fixture
def other(url: str, clock: FakeClock, backend: MySQLBackend) -> Iterator[MySQLBackend]:
    """A second client (its own connections), as another worker process would be."""
    b = MySQLBackend(url, clock=clock)
    yield b
    b.close()


def job(task: str, **options: Any) -> NewJob:
    """A job of task `task`, on its own queue `task` unless told."""
    options.setdefault("queue", task)
    return new_job(task=task, payload={"task": task}, **options)


def workflow(tasks: Sequence[str], after: Sequence[Sequence[int | tuple[int, str]]] = (),
             on_failure: str = "cancel", key: str | None = None,
             run_if: Sequence[str | None] | None = None, name: str = "wf") -> NewWorkflow:
    deps = [[(d, None) if isinstance(d, int) else d for d in a] for a in after]
    deps += [[] for _ in range(len(tasks) - len(deps))]
    return NewWorkflow(name, key, on_failure, [job(t) for t in tasks], deps,
                       list(run_if) if run_if is not None else [None] * len(tasks))


def raw(b: MySQLBackend, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    return b.run_sql(sql, params)


def waiting(b: MySQLBackend, job_id: int) -> int | None:
    rows = raw(b, "SELECT waiting FROM claimq_held WHERE id = %s", job_id)
    return int(rows[0][0]) if rows else None


def status(b: MySQLBackend, job_id: int) -> str:
    found = b.get_job(job_id)
    assert found is not None
    return found.status.value


def everywhere(b: MySQLBackend, job_id: int) -> list[str]:
    """The tables that hold `job_id` (exactly one, always)."""
    return [t for t in TABLES if raw(b, f"SELECT 1 FROM claimq_{t} WHERE id = %s", job_id)]


def claim(b: MySQLBackend, *ids: int) -> dict[int, Job]:
    """Claims (and starts) every pending job; returns those asked for (all: none asked)."""
    jobs = {j.id: j for j in b.claim("w1", None, 100, 30, start=True)}
    for i in ids:
        assert i in jobs, f"job {i} was not claimable"
    return {i: jobs[i] for i in ids} if ids else jobs


def complete(b: MySQLBackend, j: Job, result: str = "null") -> set[int]:
    assert j.claim_token is not None
    return b.complete([Completion(j.id, j.claim_token, result)])


def fail(b: MySQLBackend, j: Job) -> None:
    assert j.claim_token is not None
    result = b.fail([Failure(j.id, j.claim_token, {"error": "Boom", "message": "boom"}, 0.0,
                             "permanent_error", permanent=True)])
    assert result.dead == {j.id}


def counts(b: MySQLBackend) -> dict[str, int]:
    names = (*TABLES, "workflows", "deps")
    return {t: int(raw(b, f"SELECT count(*) FROM claimq_{t}")[0][0]) for t in names}


# -- release ------------------------------------------------------------------------------------


def test_a_fan_in_is_never_released_early_and_released_once(backend: MySQLBackend) -> None:
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
    complete(backend, claim(backend, d)[d])
    info = backend.get_workflow(added.id)
    assert info is not None and info.counts == {"succeeded": 4}
    assert info.finished_at == backend.clock.now()


def test_a_released_job_keeps_a_later_run_at_and_its_flow_keys(
        backend: MySQLBackend, clock: FakeClock) -> None:
    wf = workflow(["a", "b"], [[], [0]])
    later = job("b", delay=500, concurrency_key="k", concurrency_limit=1)
    a, b = backend.add_workflow(NewWorkflow(wf.name, None, "cancel", [wf.jobs[0], later],
                                            wf.after, wf.run_if), RETENTION).job_ids
    clock.advance(10)
    complete(backend, claim(backend, a)[a])
    found = backend.get_job(b)
    assert found is not None and found.status == Status.PENDING
    assert found.run_at == datetime(2031, 3, 4, 5, 14, 27, tzinfo=UTC)
    assert raw(backend, "SELECT concurrency_key, concurrency_limit, workflow_id FROM claimq_jobs"
               " WHERE id = %s", b) == [("k", 1, found.workflow_id)]


def test_a_stale_token_releases_nothing(backend: MySQLBackend, clock: FakeClock) -> None:
    a, b = backend.add_workflow(workflow(["a", "b"], [[], [0]]), RETENTION).job_ids
    stale = claim(backend, a)[a]
    clock.advance(60)
    assert backend.reap().requeued == [a]
    assert complete(backend, stale) == set()
    assert status(backend, b) == "held" and waiting(backend, b) == 1
    complete(backend, claim(backend, a)[a])
    assert status(backend, b) == "pending"


def test_settle_releases_before_its_claim_so_the_next_step_is_claimed_at_once(
        backend: MySQLBackend) -> None:
    from claimq.backends.base import ClaimRequest

    a, b = backend.add_workflow(workflow(["a", "b"], [[], [0]]), RETENTION).job_ids
    ja = claim(backend, a)[a]
    assert ja.claim_token is not None
    settled = backend.settle([Completion(a, ja.claim_token, "1")], [],
                             ClaimRequest("w1", None, 1, 30, True))
    assert settled.completed == {a} and [j.id for j in settled.claimed] == [b]


def test_a_release_into_a_flow_controlled_queue_is_claimed_under_its_key_limit(
        backend: MySQLBackend) -> None:
    """The released jobs carry their concurrency keys into the jobs table: the settle's flow
    claim (which locks the queue's row) takes one of the two, the limit keeps the other."""
    from claimq.backends.base import ClaimRequest

    wf = NewWorkflow("flow", None, "cancel", [
        job("a"), job("b", queue="f", concurrency_key="k", concurrency_limit=1),
        job("c", queue="f", concurrency_key="k", concurrency_limit=1)],
        [[], [(0, None)], [(0, None)]], [None, None, None])
    a, b, c = backend.add_workflow(wf, RETENTION).job_ids
    ja = claim(backend, a)[a]
    settled = backend.settle([Completion(a, ja.claim_token or "", "1")], [],
                             ClaimRequest("w1", ["f"], 2, 30, True))
    assert settled.completed == {a} and [j.id for j in settled.claimed] == [b]
    assert status(backend, c) == "pending"
    assert backend.retries == Counter()


# -- two transactions, one child ----------------------------------------------------------------


def _lock_waits(b: MySQLBackend) -> int:
    """Statements of this test's database that have run for a second or more: waiting for a
    row lock (the test's own operations take milliseconds). (innodb_trx does not list a
    transaction whose wait began in the optimizer's read of a const table, as a decrement's
    does, so the process list it is.)"""
    return int(raw(b, "SELECT count(*) FROM information_schema.processlist"
                      " WHERE db = DATABASE() AND command = 'Query' AND time >= 1"
                      " AND info NOT LIKE '%%information_schema%%'")[0][0])


def _stopped_at(point: str) -> tuple[Callable[[str], None], threading.Event, threading.Event]:
    """A pause hook that stops the first thread to arrive at `point` until `go` is set."""
    arrived, go = threading.Event(), threading.Event()
    owner: list[int] = []
    lock = threading.Lock()

    def hook(name: str) -> None:
        if name != point:
            return
        with lock:
            if owner:
                return
            owner.append(threading.get_ident())
        arrived.set()
        assert go.wait(60)

    return hook, arrived, go


def _race(backend: MySQLBackend, point: str, a: Callable[[], Any], b: Callable[[], Any]
          ) -> dict[str, Any]:
    """Runs `a` in a thread until it stops at pause point `point`, then `b` in another until
    the database shows it waiting for a lock (it must: `a` holds the rows it wants), resumes
    `a`; both results (or errors)."""
    hook, arrived, go = _stopped_at(point)
    results: dict[str, Any] = {}

    def run(name: str, op: Callable[[], Any]) -> None:
        try:
            results[name] = op()
        except BaseException as exc:  # noqa: BLE001 - reported by the caller's assert
            results[name] = exc

    previous = set_hook(hook)
    try:
        ta = threading.Thread(target=run, args=("a", a))
        ta.start()
        assert arrived.wait(60), f"A never reached {point}"
        tb = threading.Thread(target=run, args=("b", b))
        tb.start()
        for _ in range(3000):
            if _lock_waits(backend) or not tb.is_alive():
                break
            threading.Event().wait(0.01)
        blocked = tb.is_alive() and _lock_waits(backend) == 1
        go.set()
        ta.join(60)
        tb.join(60)
    finally:
        go.set()
        set_hook(previous)
    assert blocked, "B did not wait for the rows A holds"
    return results


def test_the_last_two_parents_finishing_at_once_release_the_child_once(
        backend: MySQLBackend, other: MySQLBackend) -> None:
    """A completes parent a and stops in the release rule right after its decrement, holding
    the child's row; B completes parent b meanwhile on its own connection: B waits for that
    row lock, then decrements what A committed and releases the child, once. Nobody met a
    deadlock."""
    a, b, c = backend.add_workflow(workflow(["a", "b", "c"], [[], [], [0, 1]]),
                                   RETENTION).job_ids
    jobs = claim(backend, a, b)
    results = _race(backend, "release.decremented", lambda: complete(backend, jobs[a]),
                    lambda: complete(other, jobs[b]))
    assert results == {"a": {a}, "b": {b}}
    assert everywhere(backend, c) == ["jobs"] and status(backend, c) == "pending"
    assert list(claim(backend)) == [c]
    assert backend.retries == Counter() and other.retries == Counter()


def test_a_cancel_racing_the_release_of_its_job_ends_it_once(
        backend: MySQLBackend, other: MySQLBackend) -> None:
    """A's completion has copied the child into jobs (release.moved) and not committed; a
    cancel of the child meanwhile waits for it, then finds it in jobs and cancels it there."""
    a, b, c = backend.add_workflow(workflow(["a", "b", "c"], [[], [], [0, 1]]),
                                   RETENTION).job_ids
    jobs = claim(backend, a, b)
    complete(backend, jobs[b])
    results = _race(backend, "release.moved", lambda: complete(backend, jobs[a]),
                    lambda: other.cancel(c))
    assert results == {"a": {a}, "b": "cancelled"}
    assert everywhere(backend, c) == ["dead"]
    assert backend.get_job(c).reason == "cancelled"  # type: ignore[union-attr]
    assert backend.retries == Counter() and other.retries == Counter()


def test_a_stale_completion_racing_the_owners_releases_once(
        backend: MySQLBackend, other: MySQLBackend, clock: FakeClock) -> None:
    """A's parent was reaped and claimed again; the new owner completes it (stopped after its
    decrement) while the stale owner sends its completion: the stale one matches nothing."""
    a, b = backend.add_workflow(workflow(["a", "b"], [[], [0]]), RETENTION).job_ids
    stale = claim(backend, a)[a]
    clock.advance(60)
    assert backend.reap().requeued == [a]
    fresh = claim(backend, a)[a]
    results = _race(backend, "release.decremented", lambda: complete(backend, fresh),
                    lambda: complete(other, stale))
    assert results == {"a": {a}, "b": set()}
    assert status(backend, b) == "pending" and list(claim(backend)) == [b]


def test_many_fan_ins_finished_from_two_clients_at_once_each_release_once(
        backend: MySQLBackend, other: MySQLBackend) -> None:
    """Twenty fan-ins of two parents; one client completes every first parent while the other
    completes every second one, in opposite orders, at the same time."""
    children = []
    pairs: list[tuple[int, int]] = []
    for i in range(20):
        a, b, c = backend.add_workflow(workflow(["a", "b", "c"], [[], [], [0, 1]],
                                                name=f"w{i}"), RETENTION).job_ids
        pairs.append((a, b))
        children.append(c)
    jobs = claim(backend)
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def run(client: MySQLBackend, ids: list[int]) -> None:
        try:
            start.wait(30)
            for i in ids:
                assert complete(client, jobs[i]) == {i}
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(backend, [a for a, _ in pairs])),
               threading.Thread(target=run, args=(other, [b for _, b in pairs][::-1]))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    live = sorted(j.id for j in backend.list_jobs("live", limit=1000))
    assert live == children
    assert raw(backend, "SELECT count(*) FROM claimq_held") == [(0,)]
    assert sorted(claim(backend)) == children


# -- failure policies ---------------------------------------------------------------------------


def test_cancel_policy_cascades_with_a_reason_that_names_the_dependency(
        backend: MySQLBackend) -> None:
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
    assert counts(backend)["held"] == 0


def test_run_policy_releases_the_dependent_which_sees_the_failure(backend: MySQLBackend) -> None:
    a, b = backend.add_workflow(workflow(["a", "b"], [[], [(0, "run")]]), RETENTION).job_ids
    fail(backend, claim(backend, a)[a])
    assert status(backend, b) == "pending"
    [dep] = backend.dependencies(b)
    assert (dep.id, dep.task, dep.status, dep.reason) == (a, "a", "dead", "permanent_error")


def test_wait_policy_holds_until_the_dependency_is_resurrected(backend: MySQLBackend) -> None:
    a, b = backend.add_workflow(workflow(["a", "b"], [[], [0]], on_failure="wait"),
                                RETENTION).job_ids
    fail(backend, claim(backend, a)[a])
    assert status(backend, b) == "held" and waiting(backend, b) == 1
    assert backend.resurrect(a)
    assert status(backend, a) == "pending" and waiting(backend, b) == 1
    complete(backend, claim(backend, a)[a])
    assert status(backend, b) == "pending"


def test_run_if_failed_runs_only_after_a_failure_and_is_archived_unrun_otherwise(
        backend: MySQLBackend) -> None:
    a, cb, after = backend.add_workflow(
        workflow(["a", "cb", "after"], [[], [(0, "run")], [1]], run_if=[None, "failed", None]),
        RETENTION).job_ids
    complete(backend, claim(backend, a)[a])
    skipped = backend.get_job(cb)
    assert skipped is not None and skipped.status == Status.SUCCEEDED
    assert skipped.started_at is None and skipped.result is None
    assert status(backend, after) == "pending"  # the skipped job released its dependent
    a, cb = backend.add_workflow(
        workflow(["a", "cb"], [[], [(0, "run")]], run_if=[None, "failed"], name="again"),
        RETENTION).job_ids
    fail(backend, claim(backend, a)[a])
    assert status(backend, cb) == "pending"


def test_a_reaped_last_attempt_and_a_released_cancelled_job_apply_the_policy(
        backend: MySQLBackend, clock: FakeClock) -> None:
    a, b = backend.add_workflow(
        workflow(["a", "b"], [[], [0]]), RETENTION).job_ids
    backend.run_sql("UPDATE claimq_jobs SET max_attempts = 1 WHERE id = %s", (a,))
    claim(backend, a)
    clock.advance(31)
    assert backend.reap().dead == [a]
    assert backend.get_job(b).reason == "dependency_failed"  # type: ignore[union-attr]
    x, y = backend.add_workflow(workflow(["x", "y"], [[], [0]], name="w2"), RETENTION).job_ids
    jx = claim(backend, x)[x]
    assert backend.cancel(x) == "cancel_requested"
    assert jx.claim_token is not None
    assert backend.release([Owned(x, jx.claim_token)]) == {x}
    assert backend.get_job(y).reason == "dependency_failed"  # type: ignore[union-attr]


def test_cancelling_a_held_job_cascades_and_its_other_parent_releases_nothing(
        backend: MySQLBackend) -> None:
    a, b, c = backend.add_workflow(workflow(["a", "b", "c"], [[], [0], [1]]),
                                   RETENTION).job_ids
    assert backend.cancel(b) == "cancelled"
    assert backend.get_job(b).reason == "cancelled"  # type: ignore[union-attr]
    assert backend.get_job(c).reason == "dependency_failed"  # type: ignore[union-attr]
    complete(backend, claim(backend, a)[a])
    assert [everywhere(backend, i) for i in (a, b, c)] == [["archive"], ["dead"], ["dead"]]
    assert backend.cancel(b) == "finished"


def test_cancel_workflow_buries_held_and_waiting_jobs_and_flags_running_ones(
        backend: MySQLBackend) -> None:
    a, b, c, d = backend.add_workflow(workflow(["a", "b", "c", "d"], [[], [], [0], [2]]),
                                      RETENTION).job_ids
    [running] = backend.claim("w1", ["b"], 1, 30, start=True)
    assert backend.cancel_workflow(backend.get_job(a).workflow_id or 0) == 4  # type: ignore[union-attr]
    assert [everywhere(backend, i) for i in (a, b, c, d)] == [
        ["dead"], ["jobs"], ["dead"], ["dead"]]
    assert {backend.get_job(i).reason for i in (a, c, d)} == {"cancelled"}  # type: ignore[union-attr]
    assert backend.heartbeat([Owned(b, running.claim_token or "")], 30).cancel_requested == {b}


# -- resurrect ----------------------------------------------------------------------------------


def test_resurrect_continues_from_the_failed_step_without_rerunning_what_finished(
        backend: MySQLBackend) -> None:
    a, b, c, d = backend.add_workflow(
        workflow(["a", "b", "c", "d"], [[], [0], [1], [0]]), RETENTION).job_ids
    jobs = claim(backend, a)
    complete(backend, jobs[a])
    jobs = claim(backend, b, d)
    complete(backend, jobs[d])
    fail(backend, jobs[b])
    assert backend.get_job(c).reason == "dependency_failed"  # type: ignore[union-attr]
    wf_id = backend.get_job(a).workflow_id or 0  # type: ignore[union-attr]
    assert backend.retry_workflow(wf_id) == [b]
    assert [status(backend, i) for i in (a, b, c, d)] == [
        "succeeded", "pending", "held", "succeeded"]
    assert waiting(backend, c) == 1
    again = claim(backend)
    assert list(again) == [b]
    complete(backend, again[b])
    complete(backend, claim(backend, c)[c])
    info = backend.get_workflow(wf_id)
    assert info is not None and info.counts == {"succeeded": 4}


def test_a_restored_job_with_another_dead_parent_is_cancelled_again(
        backend: MySQLBackend) -> None:
    a, b, c = backend.add_workflow(workflow(["a", "b", "c"], [[], [], [0, 1]]),
                                   RETENTION).job_ids
    jobs = claim(backend, a, b)
    fail(backend, jobs[a])
    fail(backend, jobs[b])
    assert backend.resurrect(a)
    assert status(backend, a) == "pending"
    dead_c = backend.get_job(c)
    assert dead_c is not None and dead_c.reason == "dependency_failed"
    assert dead_c.errors[-1]["dependency"] == b
    assert backend.resurrect(b)  # now both parents are live again: c waits for both
    assert status(backend, c) == "held" and waiting(backend, c) == 2


# -- spawn --------------------------------------------------------------------------------------


def test_spawn_is_fenced_and_the_fan_in_waits_for_every_spawned_job(
        backend: MySQLBackend) -> None:
    a, c = backend.add_workflow(workflow(["a", "c"], [[], [0]]), RETENTION).job_ids
    ja = claim(backend, a)[a]
    before = counts(backend)
    assert backend.spawn(Owned(a, "stale"), [job("x")], [[]], RETENTION) is None
    assert counts(backend) == before
    new = backend.spawn(Owned(a, ja.claim_token or ""), [job("x"), job("y"), job("z")],
                        [[], [], [0, 1]], RETENTION)
    assert new is not None
    x, y, z = new
    assert waiting(backend, c) == 4 and waiting(backend, z) == 2
    complete(backend, ja)
    jobs = claim(backend, x, y)
    complete(backend, jobs[x])
    complete(backend, jobs[y])
    assert status(backend, c) == "held" and waiting(backend, c) == 1  # z left
    complete(backend, claim(backend, z)[z])
    assert status(backend, c) == "pending"
    assert [d.id for d in backend.dependencies(c)] == [a, x, y, z]


def test_spawn_by_a_job_outside_a_workflow_makes_one_named_after_its_task(
        backend: MySQLBackend) -> None:
    [solo] = backend.enqueue([job("solo")], RETENTION)
    js = claim(backend, solo)[solo]
    [x] = backend.spawn(Owned(solo, js.claim_token or ""), [job("x")], [[]], RETENTION) or []
    wf_id = backend.get_job(solo).workflow_id  # type: ignore[union-attr]
    assert wf_id is not None and backend.get_job(x).workflow_id == wf_id  # type: ignore[union-attr]
    info = backend.get_workflow(wf_id)
    assert info is not None and (info.name, info.on_failure) == ("solo", "cancel")


# -- writes -------------------------------------------------------------------------------------


def test_add_workflow_in_a_rolled_back_caller_transaction_leaves_nothing(
        backend: MySQLBackend) -> None:
    before = counts(backend)
    with pytest.raises(RuntimeError), backend.transaction() as conn:
        added = backend.add_workflow(workflow(["a", "b"], [[], [0]]), RETENTION, conn)
        cur = conn.cursor()
        cur.execute("SELECT count(*) FROM claimq_held")
        assert cur.fetchone()[0] == 1 and added.created  # written, inside the transaction
        raise RuntimeError("the caller's own work failed")
    assert counts(backend) == before == dict.fromkeys((*TABLES, "workflows", "deps"), 0)


def test_a_key_names_one_workflow_also_when_two_clients_add_it_at_once(
        backend: MySQLBackend, other: MySQLBackend) -> None:
    first = backend.add_workflow(workflow(["a", "b"], [[], [0]], key="k1"), RETENTION)
    again = backend.add_workflow(workflow(["a", "b", "c"], key="k1"), RETENTION)
    assert first.created and not again.created
    assert (again.id, again.job_ids) == (first.id, first.job_ids)
    start = threading.Barrier(2)
    added: list[Any] = []

    def add(client: MySQLBackend) -> None:
        start.wait(30)
        try:
            added.append(client.add_workflow(workflow(["x", "y"], [[], [0]], key="k2"),
                                             RETENTION))
        except BaseException as exc:  # noqa: BLE001 - reported below
            added.append(exc)

    threads = [threading.Thread(target=add, args=(c,)) for c in (backend, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(a.created for a in added) == [False, True]
    assert added[0].id == added[1].id and added[0].job_ids == added[1].job_ids
    assert counts(backend)["workflows"] == 2 and counts(backend)["held"] == 2


def test_held_jobs_are_listed_found_and_counted_as_held(backend: MySQLBackend) -> None:
    from claimq.backends.base import JobFilter

    a, b = backend.add_workflow(workflow(["a", "b"], [[], [0]]), RETENTION).job_ids
    assert [(j.id, j.status) for j in backend.list_jobs("live")] == [
        (a, Status.PENDING), (b, Status.HELD)]
    assert [j.id for j in backend.list_jobs("live", status="held")] == [b]
    assert [j.id for j in backend.list_jobs("live", status="pending")] == [a]
    found = backend.find_jobs("live", JobFilter(task="b"), None, 10)
    assert [(j.id, j.status, j.workflow_id) for j in found] == [
        (b, Status.HELD, backend.get_job(a).workflow_id)]  # type: ignore[union-attr]
    live = {(r.task, r.pending, r.held) for r in backend.stats(60).live}
    assert live == {("a", 1, 0), ("b", 0, 1)}
    jobs, edges = backend.workflow_graph(found[0].workflow_id or 0)
    assert [j.status for j in jobs] == [Status.PENDING, Status.HELD]
    assert [(e.parent, e.child, e.on_failure, e.resolved) for e in edges] == [
        (a, b, "cancel", False)]


# -- retention ----------------------------------------------------------------------------------


def test_retention_keeps_a_live_workflows_rows_and_forgets_a_finished_workflow(
        backend: MySQLBackend, clock: FakeClock) -> None:
    a, b = backend.add_workflow(workflow(["a", "b"], [[], [0]]), RETENTION).job_ids
    [plain] = backend.enqueue([job("plain")], RETENTION)
    jobs = claim(backend, a, plain)
    complete(backend, jobs[a])
    complete(backend, jobs[plain])
    clock.advance(1000)
    batch = PruneBatch("archive", None, (), older_than=10.0, keep_rows=None, limit=100)
    assert backend.prune(batch) == 1  # the plain job; a stays: b waits for its result
    assert everywhere(backend, a) == ["archive"]
    complete(backend, claim(backend, b)[b])
    clock.advance(1000)
    assert backend.prune(batch) == 2
    assert counts(backend) == dict.fromkeys((*TABLES, "workflows", "deps"), 0)


def test_purge_keeps_a_live_workflows_rows_and_forgets_finished_workflows(
        backend: MySQLBackend) -> None:
    a, b = backend.add_workflow(workflow(["a", "b"], [[], [(0, "run")]]), RETENTION).job_ids
    fail(backend, claim(backend, a)[a])
    assert backend.purge("dead") == 0  # b runs on: a's dead letter stays readable
    complete(backend, claim(backend, b)[b])
    assert backend.purge("dead") == 1 and backend.purge("archive") == 1
    assert counts(backend) == dict.fromkeys((*TABLES, "workflows", "deps"), 0)


# -- a queue without workflows ------------------------------------------------------------------


def test_a_queue_without_workflows_runs_no_workflow_statement(
        backend: MySQLBackend, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """Enqueue, claim, complete, fail, resurrect, reap, cancel and release of jobs outside any
    workflow: the release rule is never entered and no workflow statement runs."""
    calls: list[str] = []
    for name in ("release", "resurrect"):
        monkeypatch.setattr(_workflow, name, lambda *a, _n=name, **k: calls.append(_n))
    ran: list[str] = []
    real = mysql_module._Steps._run

    def spy(self: Any, query: str, **params: Any) -> Any:
        ran.append(query)
        return real(self, query, **params)

    monkeypatch.setattr(mysql_module._Steps, "_run", spy)
    ids = backend.enqueue([job("p", max_attempts=1) for _ in range(6)], RETENTION)
    jobs = claim(backend, *ids)
    complete(backend, jobs[ids[0]])
    fail(backend, jobs[ids[1]])
    assert backend.resurrect(ids[1])
    assert backend.cancel(ids[4]) == "cancel_requested"
    assert backend.release([Owned(ids[4], jobs[ids[4]].claim_token or "")]) == {ids[4]}
    clock.advance(60)
    assert sorted(backend.reap().dead) == [ids[2], ids[3], ids[5]]
    assert backend.cancel(ids[1]) == "cancelled"
    assert (calls, ran) == ([], [])


# -- the schema -----------------------------------------------------------------------------------


def test_held_has_every_column_of_jobs_in_order_then_waiting_and_run_if(
        backend: MySQLBackend) -> None:
    def columns(table: str) -> list[tuple[Any, ...]]:
        return raw(backend, "SELECT column_name, column_type, is_nullable, column_default"
                            " FROM information_schema.columns WHERE table_schema = %s"
                            " AND table_name = %s ORDER BY ordinal_position",
                   backend.database, f"claimq_{table}")

    jobs, held = columns("jobs"), columns("held")
    assert [c[0] for c in held[len(jobs):]] == ["waiting", "run_if"]
    assert held[:len(jobs)] == jobs
    for table in TABLES:
        assert any(c[0] == "workflow_id" for c in columns(table))


def test_migrating_a_database_with_jobs_keeps_them_outside_any_workflow(
        url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mysql_module, "_MIGRATIONS",
                        [m for m in mysql_module._MIGRATIONS if m[0] < 13])
    old = MySQLBackend(url, clock=clock)
    try:
        old.migrate()
        ids = old.enqueue([job("old") for _ in range(2)], RETENTION)
    finally:
        old.close()
    monkeypatch.undo()
    b = MySQLBackend(url, clock=clock)
    try:
        assert b.migrate()[0] == 13  # the workflows migration, then any later one
        jobs = claim(b, *ids)
        complete(b, jobs[ids[0]])
        assert [b.get_job(i).workflow_id for i in ids] == [None, None]  # type: ignore[union-attr]
        assert b.list_workflows(10) == []
    finally:
        b.close()
