"""PostgreSQL workflows (issue 26): the release rule as migration 014 and _settle_done.sql write
it, driven through the Backend on a FakeClock: never released early, released exactly once
(also when two parents finish at the same time in two transactions, the second waiting for the
first's row lock on the held child), each failure policy and run_if, cascading cancels (in a
loop: a long chain does not recurse), resurrect continuing a workflow, spawn fenced by its
token, add_workflow inside a caller's rolled-back transaction, the key, retention, the
partitioned archive, and the notice that wakes a worker."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from claimq._validate import NewJob, new_job
from claimq.backends import open_backend
from claimq.backends.base import (
    Completion,
    Failure,
    NewWorkflow,
    Owned,
    PruneBatch,
)
from claimq.backends.postgres.backend import PostgresBackend
from claimq.clock import FakeClock
from claimq.job import Job, Status

pytestmark = pytest.mark.postgres

Q = "wf"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=datetime(2031, 5, 1, tzinfo=UTC))


@pytest.fixture
def open_pg(pg_base_url: str, clock: FakeClock) -> Iterator[Callable[[], PostgresBackend]]:
    """Backends on one fresh schema (each its own pool: two "processes")."""
    url = f"{pg_base_url}?schema=t_{uuid.uuid4().hex[:12]}"
    opened: list[PostgresBackend] = []

    def make() -> PostgresBackend:
        backend = open_backend(url, clock=clock)
        assert isinstance(backend, PostgresBackend)
        if not opened:
            backend.migrate()
        opened.append(backend)
        return backend

    yield make
    for b in opened[1:]:
        b.close()
    opened[0].drop_all()


@pytest.fixture
def pg(open_pg: Callable[[], PostgresBackend]) -> PostgresBackend:
    return open_pg()


def job(task: str, **kw: Any) -> NewJob:
    return new_job(task=task, payload={"task": task}, queue=Q, **kw)


def workflow(
    pg: PostgresBackend, tasks: Sequence[str], after: Sequence[Sequence[Any]] = (),
    on_failure: str = "cancel", key: str | None = None, run_if: Sequence[str | None] = (),
    conn: Any = None,
) -> list[int]:
    """add_workflow of `tasks`; `after[i]`: indexes (or (index, policy)) job i waits for."""
    deps = [[d if isinstance(d, tuple) else (d, None) for d in ds] for ds in after]
    deps += [[]] * (len(tasks) - len(deps))
    run = list(run_if) + [None] * (len(tasks) - len(run_if))
    added = pg.add_workflow(NewWorkflow("wf", key, on_failure, [job(t) for t in tasks], deps, run),
                            3600.0, conn=conn)
    return added.job_ids


def claim(pg: PostgresBackend, limit: int = 100) -> list[Job]:
    return pg.claim("w", [Q], limit, 30.0, True)


def done(jobs: Sequence[Job], result: str = '"ok"') -> list[Completion]:
    return [Completion(j.id, str(j.claim_token), result) for j in jobs]


def die(pg: PostgresBackend, jobs: Sequence[Job]) -> set[int]:
    failures = [Failure(j.id, str(j.claim_token), {"error": "Boom"}, 0.0, "permanent_error",
                        True) for j in jobs]
    return pg.fail(failures).dead


def status(pg: PostgresBackend, job_id: int) -> tuple[Status, str | None]:
    found = pg.get_job(job_id)
    assert found is not None
    return found.status, found.reason


def run(pg: PostgresBackend, task: str) -> Job:
    """Claims until `task` comes (completing nothing else) and returns it."""
    got = [j for j in claim(pg) if j.task == task]
    assert len(got) == 1, f"{task} not claimable"
    return got[0]


def counts(pg: PostgresBackend) -> dict[str, int]:
    rows = pg.run_sql(
        f"SELECT 'jobs', count(*) FROM {pg.schema}.jobs UNION ALL "
        f"SELECT 'held', count(*) FROM {pg.schema}.held UNION ALL "
        f"SELECT 'archive', count(*) FROM {pg.schema}.archive UNION ALL "
        f"SELECT 'dead', count(*) FROM {pg.schema}.dead")
    return {str(name): int(n) for name, n in rows}


def drain(pg: PostgresBackend) -> list[str]:
    """Runs everything claimable to success, in rounds; the tasks in the order they ran."""
    ran: list[str] = []
    while True:
        got = claim(pg)
        if not got:
            return ran
        ran += sorted(j.task for j in got)
        assert pg.complete(done(got)) == {j.id for j in got}


# -- the rule -----------------------------------------------------------------------------------


def test_never_released_early_and_fan_in_results_in_order(pg: PostgresBackend) -> None:
    a, b, c, d = workflow(pg, ["a", "b", "c", "d"], [[], [0], [0], [2, 1]])
    assert [status(pg, i)[0] for i in (a, b, c, d)] == ["pending", "held", "held", "held"]
    assert [j.task for j in claim(pg)] == ["a"]  # held jobs are never claimed
    [ja] = pg.list_jobs("live", status="processing")
    assert pg.complete(done([ja], '"A"')) == {a}
    got = claim(pg)
    assert sorted(j.task for j in got) == ["b", "c"]
    jb = next(j for j in got if j.task == "b")
    jc = next(j for j in got if j.task == "c")
    pg.complete(done([jc], '"C"'))
    assert status(pg, d)[0] == "held"  # one of two dependencies left
    assert claim(pg) == []
    pg.complete(done([jb], '"B"'))
    assert status(pg, d)[0] == "pending"
    deps = pg.dependencies(d)
    assert [(x.id, x.task, x.status, x.result) for x in deps] == [
        (c, "c", "succeeded", "C"), (b, "b", "succeeded", "B")]  # the order given
    assert drain(pg) == ["d"]
    info = pg.get_workflow(pg.get_job(d).workflow_id)  # type: ignore[arg-type, union-attr]
    assert info is not None and info.counts == {"succeeded": 4}
    assert info.finished_at is not None
    assert counts(pg) == {"jobs": 0, "held": 0, "archive": 4, "dead": 0}


def test_a_release_happens_once_and_a_stale_token_releases_nothing(pg: PostgresBackend) -> None:
    a, b = workflow(pg, ["a", "b"], [[], [0]])
    [ja] = claim(pg)
    stale = Completion(ja.id, str(uuid.uuid4()), '"x"')
    assert pg.complete([stale]) == set()
    assert status(pg, b)[0] == "held"
    assert pg.complete(done([ja])) == {a}
    # the answer lost and the completion sent again: nothing matches, nothing released twice
    assert pg.complete(done([ja])) == set()
    assert counts(pg) == {"jobs": 1, "held": 0, "archive": 1, "dead": 0}
    [jb] = claim(pg)
    assert jb.id == b and jb.attempts == 1


def test_held_jobs_are_visible_live(pg: PostgresBackend) -> None:
    a, b = workflow(pg, ["a", "b"], [[], [0]])
    found = pg.get_job(b)
    assert found is not None and found.status == Status.HELD and found.workflow_id is not None
    assert pg.get_job(a).workflow_id == found.workflow_id  # type: ignore[union-attr]
    assert [j.id for j in pg.list_jobs("live", status="held")] == [b]
    assert [j.id for j in pg.list_jobs("live")] == [a, b]
    from claimq.backends.base import JobFilter
    assert [j.id for j in pg.find_jobs("live", JobFilter(status="held"), None, 10)] == [b]
    jobs, edges = pg.workflow_graph(found.workflow_id)  # type: ignore[arg-type]
    assert [(j.id, j.status) for j in jobs] == [(a, "pending"), (b, "held")]
    assert [(e.parent, e.child, e.on_failure, e.resolved) for e in edges] == [
        (a, b, "cancel", False)]


def test_cancel_policy_cascades_through_a_long_chain(pg: PostgresBackend) -> None:
    n = 400  # a loop, not recursion: a chain this long would exhaust the stack of triggers
    ids = workflow(pg, [f"s{i}" for i in range(n)], [[]] + [[i] for i in range(n - 1)])
    [first] = claim(pg)
    assert die(pg, [first]) == {ids[0]}
    assert counts(pg) == {"jobs": 0, "held": 0, "archive": 0, "dead": n}
    second = pg.get_job(ids[1])
    assert second is not None and second.reason == "dependency_failed"
    assert second.errors[-1] == {
        "type": "DependencyFailed", "dependency": ids[0],
        "message": f"dependency {ids[0]} (s0) ended in dead letters: permanent_error"}
    last = pg.get_job(ids[-1])
    assert last is not None and last.errors[-1]["dependency"] == ids[-2]


def test_run_policy_counts_a_dead_dependency_as_finished(pg: PostgresBackend) -> None:
    a, b, c = workflow(pg, ["a", "b", "c"], [[], [], [(0, "run"), (1, "run")]])
    got = claim(pg)
    die(pg, [j for j in got if j.task == "a"])
    assert status(pg, c)[0] == "held"
    pg.complete(done([j for j in got if j.task == "b"]))
    assert status(pg, c)[0] == "pending"
    deps = pg.dependencies(c)
    assert [(x.status, x.reason) for x in deps] == [("dead", "permanent_error"),
                                                     ("succeeded", None)]


def test_wait_policy_holds_until_resurrected(pg: PostgresBackend) -> None:
    a, b = workflow(pg, ["a", "b"], [[], [0]], on_failure="wait")
    [ja] = claim(pg)
    die(pg, [ja])
    assert status(pg, b)[0] == "held"
    assert pg.resurrect(a)
    assert status(pg, a)[0] == "pending" and status(pg, b)[0] == "held"
    [ja] = claim(pg)
    pg.complete(done([ja]))
    assert drain(pg) == ["b"]


def test_run_if_failed(pg: PostgresBackend) -> None:
    # nothing failed: the handler is archived unrun, and its own dependent runs after it
    a, on_fail, after = workflow(pg, ["a", "on_fail", "after"],
                                 [[], [(0, "run")], [1]], run_if=[None, "failed", None])
    assert drain(pg) == ["a", "after"]
    skipped = pg.get_job(on_fail)
    assert skipped is not None and skipped.status == "succeeded" and skipped.result is None
    assert skipped.started_at is None
    # a dependency died: it runs
    a2, on_fail2 = workflow(pg, ["a2", "on_fail2"], [[], [(0, "run")]], run_if=[None, "failed"])
    die(pg, [run(pg, "a2")])
    assert status(pg, on_fail2)[0] == "pending"


def test_cancel_of_a_held_job_and_of_a_workflow(pg: PostgresBackend) -> None:
    a, b, c = workflow(pg, ["a", "b", "c"], [[], [0], [1]])
    assert pg.cancel(b) == "cancelled"
    assert status(pg, b) == ("dead", "cancelled")
    assert status(pg, c) == ("dead", "dependency_failed")
    assert status(pg, a)[0] == "pending"
    assert drain(pg) == ["a"]
    x, y, z = workflow(pg, ["x", "y", "z"], [[], [], [0, 1]])
    [jx] = claim(pg, 1)  # processing: flagged; y pending and z held: buried
    assert jx.id == x
    wf = pg.get_job(x).workflow_id  # type: ignore[union-attr]
    assert pg.cancel_workflow(wf) == 3  # type: ignore[arg-type]
    assert status(pg, y) == ("dead", "cancelled") and status(pg, z) == ("dead", "cancelled")
    assert pg.get_job(x).cancel_requested  # type: ignore[union-attr]


def test_resurrect_continues_without_rerunning_what_finished(pg: PostgresBackend) -> None:
    a, b, c, d = workflow(pg, ["a", "b", "c", "d"], [[], [0], [1], [1, 2]])
    ja = run(pg, "a")
    pg.complete(done([ja], '"A"'))
    jb = run(pg, "b")
    die(pg, [jb])
    assert [status(pg, i)[1] for i in (c, d)] == ["dependency_failed", "dependency_failed"]
    wf = pg.get_job(a).workflow_id  # type: ignore[union-attr]
    assert pg.retry_workflow(wf) == [b]  # type: ignore[arg-type]
    assert [status(pg, i)[0] for i in (a, b, c, d)] == ["succeeded", "pending", "held", "held"]
    assert drain(pg) == ["b", "c", "d"]  # a never again
    assert pg.get_job(a).attempts == 1  # type: ignore[union-attr]


def test_resurrect_of_a_job_whose_other_parent_stays_dead_buries_it_again(
        pg: PostgresBackend) -> None:
    a, b, c = workflow(pg, ["a", "b", "c"], [[], [], [0, 1]])
    got = claim(pg)
    die(pg, got)  # a and b dead; c dependency_failed
    assert status(pg, c) == ("dead", "dependency_failed")
    pg.resurrect(a)
    # c came back with a, and was buried again at once: b is still dead, under 'cancel'
    assert status(pg, a)[0] == "pending"
    assert status(pg, c) == ("dead", "dependency_failed")
    pg.resurrect(b)
    assert status(pg, c)[0] == "held"
    assert drain(pg) == ["a", "b", "c"]


# -- spawn -----------------------------------------------------------------------------------------


def test_spawn_is_fenced_and_the_fan_in_waits_for_spawned_jobs(pg: PostgresBackend) -> None:
    split, merge = workflow(pg, ["split", "merge"], [[], [0]])
    js = run(pg, "split")
    assert pg.spawn(Owned(js.id, str(uuid.uuid4())), [job("part")], [], 3600.0) is None
    parts = pg.spawn(Owned(js.id, str(js.claim_token)), [job("p0"), job("p1"), job("p2")],
                     [[], [], [0, 1]], 3600.0)
    assert parts is not None and len(parts) == 3
    assert status(pg, parts[2])[0] == "held"
    pg.complete(done([js]))
    assert status(pg, merge)[0] == "held"  # waits for the spawned jobs too
    assert drain(pg) == ["p0", "p1", "p2", "merge"]
    assert [x.id for x in pg.dependencies(merge)] == [split, *parts]
    # a job outside any workflow gets a workflow of its own
    [lone] = pg.enqueue([job("lone")], 3600.0)
    jl = run(pg, "lone")
    [child] = pg.spawn(Owned(jl.id, str(jl.claim_token)), [job("child")], [[]], 3600.0) or []
    wf = pg.get_job(lone).workflow_id  # type: ignore[union-attr]
    assert wf is not None and pg.get_job(child).workflow_id == wf  # type: ignore[union-attr]
    assert pg.get_workflow(wf).name == "lone"  # type: ignore[union-attr]


# -- adding ----------------------------------------------------------------------------------------


def test_add_workflow_in_a_rolled_back_transaction_leaves_nothing(pg: PostgresBackend) -> None:
    with pytest.raises(RuntimeError), pg.transaction() as conn:
        workflow(pg, ["a", "b"], [[], [0]], key="k", conn=conn)
        raise RuntimeError("roll back")
    assert counts(pg) == {"jobs": 0, "held": 0, "archive": 0, "dead": 0}
    assert pg.list_workflows(10) == []
    assert pg.run_sql(f"SELECT count(*) FROM {pg.schema}.deps") == [(0,)]
    with pg.transaction() as conn:
        ids = workflow(pg, ["a", "b"], [[], [0]], key="k", conn=conn)
    assert [status(pg, i)[0] for i in ids] == ["pending", "held"]


def test_a_workflow_key_names_one_workflow(pg: PostgresBackend) -> None:
    first = pg.add_workflow(NewWorkflow("n", "key", "cancel", [job("a"), job("b")],
                                        [[], [(0, None)]], [None, None]), 3600.0)
    again = pg.add_workflow(NewWorkflow("n", "key", "cancel", [job("x")], [[]], [None]), 3600.0)
    assert first.created and not again.created
    assert (again.id, again.job_ids) == (first.id, first.job_ids)
    assert counts(pg)["jobs"] + counts(pg)["held"] == 2
    assert [w.key for w in pg.list_workflows(10)] == ["key"]


# -- concurrency -----------------------------------------------------------------------------------


def _lock_waiters(pg: PostgresBackend) -> int:
    [(n,)] = pg.run_sql(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
        "AND datname = current_database() AND pid <> pg_backend_pid()")
    return int(n)


@pytest.mark.parametrize("second", ["complete", "fail_run"])
def test_two_parents_finishing_at_once_release_the_child_once(
        open_pg: Callable[[], PostgresBackend], second: str) -> None:
    one, two = open_pg(), open_pg()
    p1, p2, child = workflow(one, ["p1", "p2", "child"], [[], [], [(0, "run"), (1, "run")]])
    got = claim(one)
    j1 = next(j for j in got if j.task == "p1")
    j2 = next(j for j in got if j.task == "p2")
    errors: list[BaseException] = []

    def finish_second() -> None:
        try:
            if second == "complete":
                assert two.complete(done([j2])) == {p2}
            else:
                assert die(two, [j2]) == {p2}
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            errors.append(exc)

    with one.transaction() as conn:
        assert one.complete(done([j1]), conn=conn) == {p1}  # counted down, not committed
        thread = threading.Thread(target=finish_second)
        thread.start()
        deadline = time.monotonic() + 30
        while _lock_waiters(one) == 0 and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert thread.is_alive(), "the second parent did not wait for the first's row lock"
    thread.join(30)
    assert not errors, errors
    assert status(one, child)[0] == "pending"
    assert counts(one) == {"jobs": 1, "held": 0, "archive": 1 + (second == "complete"),
                           "dead": int(second != "complete")}
    [jc] = claim(one)
    assert jc.id == child


def test_many_parents_finishing_in_parallel_release_the_fan_in_once(
        open_pg: Callable[[], PostgresBackend]) -> None:
    backends = [open_pg() for _ in range(4)]
    n = 40
    ids = workflow(backends[0], [f"p{i}" for i in range(n)] + ["fan_in"],
                   [[] for _ in range(n)] + [list(range(n))])
    got = claim(backends[0])
    assert len(got) == n
    barrier = threading.Barrier(len(backends))
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            mine = got[k::len(backends)]
            barrier.wait()
            for j in mine:
                backends[k].complete(done([j]))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(len(backends))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert status(backends[0], ids[-1])[0] == "pending"
    assert counts(backends[0]) == {"jobs": 1, "held": 0, "archive": n, "dead": 0}


def test_a_released_job_wakes_its_queue(pg: PostgresBackend) -> None:
    a, b = workflow(pg, ["a", "b"], [[], [0]])
    [ja] = claim(pg)
    listener = pg.listen()
    try:
        pg.complete(done([ja]))
        notices = list(listener.notices(2.0))
    finally:
        listener.close()
    assert ("job", Q) in [(n.kind, n.payload) for n in notices]


# -- retention -------------------------------------------------------------------------------------


def test_retention_keeps_a_live_workflows_rows_and_drops_a_finished_one(
        pg: PostgresBackend, clock: FakeClock) -> None:
    a, b, c = workflow(pg, ["a", "b", "c"], [[], [0], [1]])
    drain_one = run(pg, "a")
    pg.complete(done([drain_one], '"A"'))
    clock.advance(86400)
    everything = PruneBatch("archive", None, (), 0.0, None, 100)
    assert pg.prune(everything) == 0  # b and c still wait: a's result stays
    assert pg.purge("archive") == 0
    assert pg.dependencies(b)[0].result == "A"
    drain(pg)
    clock.advance(86400)
    assert pg.prune(everything) == 3
    assert pg.list_workflows(10) == []
    assert pg.run_sql(f"SELECT count(*) FROM {pg.schema}.deps") == [(0,)]


def test_partitioned_archive_keeps_the_workflow(pg: PostgresBackend) -> None:
    assert pg.partition_archive()
    a, b = workflow(pg, ["a", "b"], [[], [0]])
    assert drain(pg) == ["a", "b"]
    wf = pg.get_job(a).workflow_id  # type: ignore[union-attr]
    assert wf is not None and pg.get_workflow(wf).counts == {"succeeded": 2}  # type: ignore[union-attr]



# -- every path that ends a job ----------------------------------------------------------------


def test_flow_queues_release_too(pg: PostgresBackend) -> None:
    """claim_keyed.sql (concurrency keys only) and claim_flow.sql (a rate limit) complete with
    _settle_done.sql as settle.sql does."""
    from claimq.backends.base import RateLimit

    keyed = new_job(task="k", payload={}, queue="keyed", concurrency_key="c",
                    concurrency_limit=1)
    after = new_job(task="k2", payload={}, queue="keyed", concurrency_key="c",
                    concurrency_limit=1)
    pg.configure_queue("rated", rate_limit=RateLimit(100, 1.0))
    rated = new_job(task="r", payload={}, queue="rated")
    rated_after = new_job(task="r2", payload={}, queue="rated")
    for first, second, queue in ((keyed, after, "keyed"), (rated, rated_after, "rated")):
        added = pg.add_workflow(NewWorkflow("f", None, "cancel", [first, second],
                                            [[], [(0, None)]], [None, None]), 3600.0)
        [j] = pg.claim("w", [queue], 5, 30.0, True)
        assert pg.complete(done([j])) == {added.job_ids[0]}
        assert status(pg, added.job_ids[1])[0] == "pending", queue
        [j2] = pg.claim("w", [queue], 5, 30.0, True)
        assert j2.id == added.job_ids[1]


def test_a_cancelled_job_handed_back_buries_and_cancels_its_dependents(
        pg: PostgresBackend) -> None:
    a, b = workflow(pg, ["a", "b"], [[], [0]])
    [ja] = claim(pg)
    assert pg.cancel(a) == "cancel_requested"
    assert pg.release([Owned(ja.id, str(ja.claim_token))]) == {a}
    assert status(pg, a) == ("dead", "cancelled")
    assert status(pg, b) == ("dead", "dependency_failed")


def test_a_reaped_job_applies_the_policy(pg: PostgresBackend, clock: FakeClock) -> None:
    ids = pg.add_workflow(NewWorkflow("r", None, "cancel", [job("a", max_attempts=1), job("b")],
                                      [[], [(0, "run")]], [None, None]), 3600.0).job_ids
    claim(pg)
    clock.advance(120)
    assert pg.reap().dead == [ids[0]]
    assert status(pg, ids[1])[0] == "pending"


# -- roles and an existing database -------------------------------------------------------------


def test_least_privilege_roles_run_workflows(pg_base_url: str) -> None:
    from pgroles import least_privilege

    with least_privilege(pg_base_url, {k: [k] for k in ("producer", "worker", "admin")}) as roles:
        backends = {k: open_backend(roles.url(k)) for k in ("producer", "worker", "admin")}
        try:
            producer, worker, admin = (backends[k] for k in ("producer", "worker", "admin"))
            a, b, c, d = producer.add_workflow(NewWorkflow(
                "roles", "key", "cancel", [job("a"), job("b"), job("c"), job("d")],
                [[], [(0, None)], [(0, None)], [(1, None)]], [None] * 4), 3600.0).job_ids
            ja = worker.claim("w", [Q], 1, 30.0, True)[0]
            assert worker.spawn(Owned(ja.id, str(ja.claim_token)), [job("s")], [[]],
                                3600.0) is not None
            assert worker.complete(done([ja])) == {a}
            [js] = worker.claim("w", [Q], 10, 30.0, True)  # b and c wait for a's spawn too
            assert worker.complete(done([js])) == {js.id}
            got = {j.task: j for j in worker.claim("w", [Q], 10, 30.0, True)}
            assert set(got) == {"b", "c"}
            assert die(worker, [got["b"]]) == {b}  # d is cancelled by the trigger, as worker
            assert worker.get_job(d).reason == "dependency_failed"  # type: ignore[union-attr]
            assert worker.complete(done([got["c"]])) == {c}
            assert admin.resurrect(b)
            assert [j.id for j in admin.list_jobs("live", status="held")] == [d]
        finally:
            for backend in backends.values():
                backend.close()


def test_migrating_a_database_with_jobs_in_flight(pg_base_url: str) -> None:
    """Migration 014 on a database at 013 with live, archived and dead jobs: they keep working
    (no workflow), and workflows work beside them."""
    from claimq.backends._sqlfiles import load_migrations

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_base_url, autocommit=True) as conn, conn.transaction():
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"CREATE TABLE {schema}.migrations (version integer PRIMARY KEY,"
                     " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
        for version, name, text in load_migrations("claimq.backends.postgres", schema):
            if version < 14:
                conn.execute(text.encode())
                conn.execute(f"INSERT INTO {schema}.migrations VALUES (%s, %s)", (version, name))
        for n in range(3):
            conn.execute(f"INSERT INTO {schema}.jobs (queue, task, payload) "
                         f"VALUES ('{Q}', 'old', '{{\"n\": {n}}}')")
    backend = open_backend(f"{pg_base_url}?schema={schema}")
    try:
        assert backend.migrate()[0] == 14  # the workflows migration, then any later one
        old = claim(backend)  # type: ignore[arg-type]
        assert len(old) == 3 and all(j.workflow_id is None for j in old)
        assert backend.complete(done(old[:2])) == {old[0].id, old[1].id}
        assert die(backend, old[2:]) == {old[2].id}  # type: ignore[arg-type]
        a, b = workflow(backend, ["a", "b"], [[], [0]])  # type: ignore[arg-type]
        assert drain(backend) == ["a", "b"]  # type: ignore[arg-type]
        assert backend.purge("archive") == 4 and backend.purge("dead") == 1
        assert backend.list_workflows(10) == []
    finally:
        backend.drop_all()


def test_held_has_every_column_of_jobs_in_order_then_waiting_and_run_if(
        pg: PostgresBackend) -> None:
    """A job moves between jobs and held whole (insert … select *): a column added to jobs and
    not to held would be lost, or shifted into the wrong one, on the way."""
    def columns(table: str) -> list[tuple[Any, ...]]:
        with pg.transaction() as conn:
            return [tuple(r.values()) for r in conn.execute(
                "SELECT column_name, data_type, is_nullable, column_default"
                " FROM information_schema.columns WHERE table_schema = %s AND table_name = %s"
                " ORDER BY ordinal_position", (pg.schema, table)).fetchall()]

    jobs, held = columns("jobs"), columns("held")
    assert [c[0] for c in held[len(jobs):]] == ["waiting", "run_if"]
    assert [c[:3] for c in held[:len(jobs)]] == [c[:3] for c in jobs]
    for table in ("jobs", "held", "archive", "dead"):
        assert any(c[0] == "workflow_id" for c in columns(table))
