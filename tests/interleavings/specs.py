"""The interleavings, one small declarative entry each: a world (what the database holds
before), operation A, the pause point A stops at, operation B that runs while A waits there,
and what must hold after (the invariants of invariants.py always; `check` adds what committed
state alone cannot say, such as which of two writers won).

A spec runs on every backend whose code has its point (found in the source, see `points`);
the matrix (test_matrix.py) fails when A never reaches its point, so a spec cannot silently
stop testing what it names. How to add one: README.md."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from interleave import World, claim, complete, fail, failure, settle
from invariants import claimed_once, one_owner_wins

from claimq._validate import new_job
from claimq.backends.base import Completion, NewWorkflow, Owned
from claimq.errors import KeyHeld

BACKENDS = ("sqlite", "postgresql", "mariadb")
SRC = Path(__file__).resolve().parents[2] / "src" / "claimq"
_FOLDER = {"sqlite": "sqlite", "postgresql": "postgres", "mariadb": "mysql"}
_POINT = re.compile(r"""\bpause\(\s*["']([a-z_]+\.[a-z_]+)["']\s*\)""")

Ctx = dict[str, Any]


def points() -> dict[str, set[str]]:
    """Each backend's pause points: those in its own folder, those of a shared backend module
    (backends/_NAME.py) that its backend.py imports, and those outside every backend folder
    (code above the backend runs on all of them)."""
    found: dict[str, set[str]] = {b: set() for b in BACKENDS}
    for path in SRC.rglob("*.py"):
        names = set(_POINT.findall(path.read_text()))
        owners = [b for b, folder in _FOLDER.items()
                  if f"backends/{folder}/" in path.as_posix()]
        if path.parent.name == "backends" and path.name.startswith("_"):
            owners = [b for b, folder in _FOLDER.items() if _imports(folder, path.stem)]
        elif not owners:
            owners = list(BACKENDS)
        for backend in owners:
            found[backend] |= names
    return found


def _imports(folder: str, module: str) -> bool:
    """Whether backends/<folder>/backend.py imports the shared module backends/<module>.py
    (e.g. _workflow: the release rule SQLite and MariaDB run, PostgreSQL writes in SQL)."""
    text = (SRC / "backends" / folder / "backend.py").read_text()
    return re.search(rf"(?<![\w.]){module}\.\w|backends\.{module}\b", text) is not None


@dataclass(frozen=True)
class Spec:
    name: str
    point: str
    world: Callable[[World], Ctx]
    a: Callable[[World, Ctx], Any]
    b: Callable[[World, Ctx], Any]
    check: Callable[[World, Ctx, Any], list[str]] = field(default=lambda w, c, o: [])
    backends: tuple[str, ...] = BACKENDS  # narrowed further to where the point exists

    def id(self) -> str:
        return f"{self.point}:{self.name}"


# -- worlds ---------------------------------------------------------------------------------------

Q = "q"


def pending(n: int = 3, **kw: Any) -> Callable[[World], Ctx]:
    def make(w: World) -> Ctx:
        return {"ids": w.enqueue(n, queue=Q, **kw)}
    return make


def running(n: int = 1, *, expired: bool = False, start: bool = True, **kw: Any
            ) -> Callable[[World], Ctx]:
    """n jobs claimed by a setup worker (processing, or fetched with start=False); with
    `expired` their lease has run out (the clock moved past it)."""
    def make(w: World) -> Ctx:
        ids = w.enqueue(n, queue=Q, **kw)
        jobs = w.claim(queues=[Q], limit=n, start=start)
        assert sorted(j.id for j in jobs) == sorted(ids)
        if expired:
            w.clock.advance(60)
        return {"ids": ids, "jobs": jobs}
    return make


def limited(max_workers: int, n: int = 3) -> Callable[[World], Ctx]:
    def make(w: World) -> Ctx:
        w.b.configure_queue(Q, max_workers=max_workers)
        return {"ids": w.enqueue(n, queue=Q)}
    return make


def dead(n: int = 1) -> Callable[[World], Ctx]:
    def make(w: World) -> Ctx:
        ctx = running(n)(w)
        result = fail(w.b, ctx["jobs"], permanent=True)
        assert result.dead == set(ctx["ids"])
        return ctx
    return make


def with_breaker(inner: Callable[[World], Ctx]) -> Callable[[World], Ctx]:
    def make(w: World) -> Ctx:
        w.b.configure_breaker("t.work", failures=1, window=60, cooldown=30, queue=Q)
        return inner(w)
    return make


def due_and_later(inner: Callable[[World], Ctx] | None = None) -> Callable[[World], Ctx]:
    """One job due now, then two an hour later (run_now's rows); after `inner`'s, if given."""
    def make(w: World) -> Ctx:
        ctx = inner(w) if inner is not None else {}
        ids = w.enqueue(1, queue=Q) + w.enqueue(2, queue=Q, delay=timedelta(hours=1))
        return {**ctx, "ids": ids}
    return make


def keyed_and_plain(w: World) -> Ctx:
    """A flow queue `f` (a concurrency key) and a plain queue `q`."""
    keyed = w.enqueue(2, queue="f", concurrency_key="k", concurrency_limit=1)
    return {"ids": keyed + w.enqueue(3, queue=Q)}


def scheduled(w: World) -> Ctx:
    """The schedule `tick` (every minute), its first tick due now."""
    w.b.schedules.add("tick", "t.tick", every=60, payload={"v": 1})
    w.clock.advance(61)
    return {"ids": []}


def fire(app: str) -> Callable[[World, Ctx], Any]:
    return lambda w, c: getattr(w, app).schedules.fire_due()


def edit(app: str, how: str) -> Callable[[World, Ctx], Any]:
    def run(w: World, c: Ctx) -> Any:
        schedules = getattr(w, app).schedules
        return schedules.pause("tick") if how == "pause" else schedules.change(
            "tick", payload={"v": 2})
    return run


def tick_fired_once(w: World, c: Ctx, o: Any) -> list[str]:
    """The due tick became one job, and the schedule does not fire it again."""
    again = w.probe.schedules.fire_due()
    return [f"the tick fired again: {again}"] if again else []


def edit_landed(how: str) -> Callable[[World, Ctx, Any], list[str]]:
    """The edit is in the row after both (not undone by the firing's write)."""
    def check(w: World, c: Ctx, o: Any) -> list[str]:
        got = w.probe.schedules.get("tick")
        ok = got.paused if how == "pause" else got.payload == {"v": 2}
        return [] if ok else [f"the {how} was lost: {got}"]
    return check


# -- operations -----------------------------------------------------------------------------------


def claim_a(limit: int = 2, queues: list[str] | None = None) -> Callable[[World, Ctx], Any]:
    return lambda w, c: claim(w.a, queues or [Q], limit, "wa")


def claim_b(limit: int = 3, queues: list[str] | None = None) -> Callable[[World, Ctx], Any]:
    return lambda w, c: claim(w.b, queues or [Q], limit, "wb")


def reap(app: str) -> Callable[[World, Ctx], Any]:
    return lambda w, c: getattr(w, app).backend.reap()


def reap_later(app: str) -> Callable[[World, Ctx], Any]:
    """Reap after the clock has passed the jobs' lease (moved while A waits)."""
    def run(w: World, c: Ctx) -> Any:
        w.clock.advance(60)
        return getattr(w, app).backend.reap()
    return run


def cancel(app: str) -> Callable[[World, Ctx], Any]:
    return lambda w, c: getattr(w, app).backend.cancel(c["ids"][0])


def heartbeat_b(w: World, c: Ctx) -> Any:
    return w.b.backend.heartbeat([Owned(j.id, str(j.claim_token)) for j in c["jobs"]], 30.0)


def start_b(w: World, c: Ctx) -> Any:
    return w.b.backend.start([Owned(j.id, str(j.claim_token)) for j in c["jobs"]], 30.0)


def set_priority(app: str) -> Callable[[World, Ctx], Any]:
    return lambda w, c: getattr(w, app).backend.set_priority(c["ids"][0], 9)


def run_now(app: str) -> Callable[[World, Ctx], Any]:
    return lambda w, c: getattr(w, app).backend.run_now(c["ids"])


def settle_and_claim(w: World, c: Ctx) -> Any:
    """A worker's settle: its running job completed and the next one claimed, one transaction."""
    return settle(w.a, c["jobs"], [], [Q], 1)


# -- what each side took --------------------------------------------------------------------------


def _ids(result: Any) -> set[int]:
    """The job ids an operation's answer says it changed (any kind of answer)."""
    if result is None:
        return set()
    if isinstance(result, set):
        return set(result)
    if isinstance(result, list):
        return {j.id for j in result}
    if hasattr(result, "requeued"):  # ReapResult
        return set(result.requeued) | set(result.dead)
    if hasattr(result, "retried"):  # FailResult
        return set(result.retried) | set(result.dead)
    if hasattr(result, "alive"):  # HeartbeatResult
        return set(result.alive)
    if hasattr(result, "completed"):  # Settled
        return set(result.completed) | _ids(result.failed) | _ids(result.claimed)
    if isinstance(result, list | tuple) and result and hasattr(result[0], "attempts"):
        return {s.id for s in result}
    raise TypeError(f"no ids in {result!r}")


def _started(result: Any) -> set[int]:
    return {s.id for s in result}


def disjoint_claims(w: World, c: Ctx, o: Any) -> list[str]:
    return claimed_once(o.a_result, o.b_result)


def one_winner(a_ids: Callable[[Any], set[int]] = _ids, b_ids: Callable[[Any], set[int]] = _ids
               ) -> Callable[[World, Ctx, Any], list[str]]:
    def check(w: World, c: Ctx, o: Any) -> list[str]:
        return one_owner_wins(o, a_ids(o.a_result), b_ids(o.b_result), c["ids"])
    return check


def _cancelled(result: Any, c: Ctx) -> set[int]:
    return {c["ids"][0]} if result == "cancelled" else set()


def cancel_vs_claim(cancel_side: str) -> Callable[[World, Ctx, Any], list[str]]:
    def check(w: World, c: Ctx, o: Any) -> list[str]:
        cancelled = _cancelled(getattr(o, f"{cancel_side}_result"), c)
        other = o.b_result if cancel_side == "a" else o.a_result
        return one_owner_wins(o, cancelled, _ids(other), c["ids"])
    return check


def cancel_truthful(side: str) -> Callable[[World, Ctx, Any], list[str]]:
    """Cancel's answer is what the tables say after both operations: "cancelled" - a dead
    letter; "cancel_requested" - live and marked, or since finished by its owner."""
    def check(w: World, c: Ctx, o: Any) -> list[str]:
        answer, job = getattr(o, f"{side}_result"), c["ids"][0]
        where = [t for t in ("jobs", "archive", "dead")
                 if w.rows(f"SELECT id FROM {w.table(t)} WHERE id = {job}")]
        ok = {"cancelled": ["dead"], "cancel_requested": ["jobs", "archive", "dead"],
              "finished": ["archive", "dead"]}.get(answer, [])
        return [] if where and where[0] in ok else [f"cancel said {answer!r}; job in {where}"]
    return check


def no_deadlock(w: World, c: Ctx, o: Any) -> list[str]:
    """MariaDB: A and B took their locks in one order. A deadlock (1213) is retried, so only the
    backends' retry counts show one (SQLite and PostgreSQL count none). test_matrix.py checks
    it after every spec."""
    n = sum(getattr(app.backend, "retries", {}).get("deadlock", 0) for app in (w.a, w.b))
    return [f"A and B deadlocked {n} time(s)"] if n else []


def both(*checks: Callable[[World, Ctx, Any], list[str]]) -> Callable[[World, Ctx, Any], list[str]]:
    return lambda w, c, o: [p for chk in checks for p in chk(w, c, o)]


def resurrected_once(w: World, c: Ctx, o: Any) -> list[str]:
    both = o.a_result and o.b_result
    return [f"job {c['ids'][0]} resurrected twice"] if both else []


KEY = "i"


def dead_keyed(w: World) -> Ctx:
    """One dead letter holding the idempotency key KEY (unique="active": once it is dead, a new
    enqueue of the key is accepted, and its resurrection races that enqueue for the key)."""
    ids = w.enqueue(1, queue=Q, idempotency_key=KEY, unique="active")
    jobs = w.claim(queues=[Q], limit=1)
    assert fail(w.b, jobs, permanent=True).dead == set(ids)
    return {"ids": ids, "jobs": jobs}


def resurrect_keyed(app: str) -> Callable[[World, Ctx], Any]:
    """Resurrects the world's dead letter: ("resurrected", moved) or ("refused", holder id)."""
    def run(w: World, c: Ctx) -> Any:
        try:
            return "resurrected", getattr(w, app).backend.resurrect(c["ids"][0])
        except KeyHeld as exc:
            return "refused", exc.holder_id
    return run


def enqueue_keyed(app: str) -> Callable[[World, Ctx], Any]:
    """Enqueues a job of KEY (unique="active"): ("enqueued", the id the enqueue returned)."""
    def run(w: World, c: Ctx) -> Any:
        job_id = int(getattr(w, app).enqueue("t.work", {"n": 9}, queue=Q,
                                             idempotency_key=KEY, unique="active"))
        w.enqueued.add(job_id)
        return "enqueued", job_id
    return run


def key_goes_to_one(w: World, c: Ctx, o: Any) -> list[str]:
    """Either the resurrection took the key (the enqueue answered with the resurrected job) or
    it was refused naming the enqueued job as the key's holder (and the dead letter stayed)."""
    results = dict([o.a_result, o.b_result])
    dead_id, enqueued = c["ids"][0], results["enqueued"]
    if "resurrected" in results:
        if results["resurrected"] is not True:
            return [f"resurrect of {dead_id} answered {results['resurrected']!r}"]
        return [] if enqueued == dead_id else [
            f"job {dead_id} resurrected and job {enqueued} enqueued with its key"]
    problems = [] if results["refused"] == enqueued != dead_id else [
        f"resurrect refused naming holder {results['refused']}, the enqueue answered {enqueued}"]
    still = w.rows(f"SELECT count(*) FROM {w.table('dead')} WHERE id = {int(dead_id)}")
    return problems + ([] if int(still[0][0]) == 1 else [f"refused dead letter {dead_id} moved"])


def no_debounce_lost(w: World, c: Ctx, o: Any) -> list[str]:
    """The debounced payload is queued (pending) unless the claim took the holder first, and
    then a new job holds it."""
    rows = w.rows(f"SELECT id, status, payload FROM {w.table('jobs')}")
    if not any("late" in str(p) and s == "pending" for _, s, p in rows):
        return [f"the debounced payload is not pending: {rows}"]
    return []


def same_holder(w: World, c: Ctx, o: Any) -> list[str]:
    """Two enqueues of one key answer with one job."""
    return [] if o.a_result == o.b_result else [f"two holders: {o.a_result}, {o.b_result}"]


def keyed_enqueue(app: str, **kw: Any) -> Callable[[World, Ctx], Any]:
    def run(w: World, c: Ctx) -> Any:
        w.scopes["k"] = kw.get("unique") or "until_done"
        job = int(getattr(w, app).enqueue("t.work", {"late": True}, queue=Q,
                                          idempotency_key="k", **kw))
        w.enqueued.add(job)
        return job
    return run


def heartbeat_a(w: World, c: Ctx) -> Any:
    return w.a.backend.heartbeat([Owned(j.id, str(j.claim_token)) for j in c["jobs"]], 30.0)


def confirm(app: str) -> Callable[[World, Ctx], Any]:
    def run(w: World, c: Ctx) -> Any:
        [job] = c["jobs"]
        return getattr(w, app).backend.confirm_owned(Owned(job.id, str(job.claim_token)), 30.0)
    return run


def still_owned(side: str) -> Callable[[World, Ctx, Any], list[str]]:
    """ensure_owned never answers 'lost' for a job its worker still owns."""
    def check(w: World, c: Ctx, o: Any) -> list[str]:
        lost = getattr(o, f"{side}_result").lost
        return [f"{side} took owned jobs {sorted(lost)} for lost"] if lost else []
    return check


def running_and_pending(w: World) -> Ctx:
    """One job running (claimed by the setup worker), three pending behind it."""
    ctx = running(1)(w)
    ctx["ids"] = ctx["ids"] + w.enqueue(3, queue=Q)
    return ctx


def expired_dead_key(w: World) -> Ctx:
    """A dead keyed job whose key window has passed: the key pruner may take the key."""
    ids = w.enqueue(1, queue=Q, idempotency_key="k")
    assert w.b.cancel(ids[0]) == "cancelled"
    w.clock.advance(2 * 86400 + 60)
    return {"ids": ids}


def key_still_held(w: World, c: Ctx, o: Any) -> list[str]:
    again = w.probe.enqueue("t.work", queue=Q, idempotency_key="k")
    return [] if again == c["ids"][0] else [f"the key went to a duplicate {again}"]


# -- workflows (issue 26) -------------------------------------------------------------------------


def workflow(n: int, after: list[list[tuple[int, str | None]]], claimed: tuple[int, ...] = (),
             done: tuple[int, ...] = (), failed: tuple[int, ...] = (),
             on_failure: str = "cancel") -> Callable[[World], Ctx]:
    """A workflow of `n` jobs (`after`: per job, its dependencies as (index, policy)); the jobs
    at `claimed` claimed by the setup worker (ctx "jobs", in that order), then those at `done`
    completed and those at `failed` failed for good by it."""
    def make(w: World) -> Ctx:
        jobs = [new_job(task="t.work", payload={"n": i}, queue=Q) for i in range(n)]
        deps = after + [[] for _ in range(n - len(after))]
        added = w.b.backend.add_workflow(
            NewWorkflow("wf", None, on_failure, jobs, deps, [None] * n), 3600.0)
        w.enqueued.update(added.job_ids)
        ids = added.job_ids
        got = {j.id: j for j in w.claim(queues=[Q], limit=n)} if claimed else {}
        owned = [got[ids[i]] for i in claimed]
        others = [Owned(j.id, str(j.claim_token)) for j in got.values() if j not in owned]
        if others:  # claimed along, not asked for: back to pending
            assert w.b.backend.release(others) == {o.id for o in others}
        if done:
            complete(w.b, [got[ids[i]] for i in done])
        if failed:
            assert fail(w.b, [got[ids[i]] for i in failed], permanent=True).dead == {
                ids[i] for i in failed}
        return {"ids": ids, "jobs": owned, "workflow": added.id}
    return make


def complete_job(app: str, k: int) -> Callable[[World, Ctx], Any]:
    """Completes the k-th claimed job of the world (ctx "jobs") with its token."""
    return lambda w, c: complete(getattr(w, app), [c["jobs"][k]])


def cancel_job(app: str, i: int) -> Callable[[World, Ctx], Any]:
    return lambda w, c: getattr(w, app).backend.cancel(c["ids"][i])


def resurrect_job(app: str, i: int) -> Callable[[World, Ctx], Any]:
    return lambda w, c: getattr(w, app).backend.resurrect(c["ids"][i])


def set_priority_job(app: str, i: int) -> Callable[[World, Ctx], Any]:
    return lambda w, c: getattr(w, app).backend.set_priority(c["ids"][i], 9)


def priority_of(i: int, expected: int) -> Callable[[World, Ctx, Any], list[str]]:
    """Job i of the world, wherever it is among jobs and held, has priority `expected`."""
    def check(w: World, c: Ctx, o: Any) -> list[str]:
        got = [r[0] for table in ("jobs", "held") for r in w.rows(
            f"SELECT priority FROM {w.table(table)} WHERE id = {int(c['ids'][i])}")]
        return [] if got == [expected] else [f"job {c['ids'][i]} has priority {got}"]
    return check


def _place(w: World, job_id: int) -> list[tuple[str, Any]]:
    """The tables that hold `job_id`, with its status or reason there."""
    found = []
    for table, column in (("jobs", "status"), ("held", "waiting"), ("archive", "id"),
                          ("dead", "reason")):
        found += [(table, r[0]) for r in w.rows(
            f"SELECT {column} FROM {w.table(table)} WHERE id = {int(job_id)}")]
    return found


def is_at(i: int, *where: tuple[str, Any]) -> Callable[[World, Ctx, Any], list[str]]:
    """Job i of the world ends in one of `where` ((table, status or reason); None: any)."""
    def check(w: World, c: Ctx, o: Any) -> list[str]:
        place = _place(w, c["ids"][i])
        ok = len(place) == 1 and any(
            place[0][0] == t and (v is None or place[0][1] == v) for t, v in where)
        return [] if ok else [f"job {c['ids'][i]} is in {place}, expected one of {where}"]
    return check


def answered(side: str, expected: Any) -> Callable[[World, Ctx, Any], list[str]]:
    def check(w: World, c: Ctx, o: Any) -> list[str]:
        got = getattr(o, f"{side}_result")
        return [] if got == expected else [f"{side} answered {got!r}, not {expected!r}"]
    return check


def restale(w: World) -> Ctx:
    """a -> c; a's first claim's lease ran out and the reaper gave it back; a is claimed again.
    ctx "jobs": [a's current claim, a's stale claim]."""
    ctx = workflow(2, [[], [(0, None)]], claimed=(0,))(w)
    stale = ctx["jobs"][0]
    w.clock.advance(60)
    assert w.b.backend.reap().requeued == [stale.id]
    [again] = w.claim(queues=[Q], limit=1)
    return {**ctx, "jobs": [again, stale]}


def settle_some(app: str, done: tuple[int, ...], dead: tuple[int, ...] = ()
                ) -> Callable[[World, Ctx], Any]:
    """One settle() of the world's claimed jobs (ctx "jobs"): those at `done` completed, those
    at `dead` failed for good (PostgreSQL: the failures' statement commits first)."""
    def run(w: World, c: Ctx) -> Any:
        jobs = c["jobs"]
        return getattr(w, app).backend.settle(
            [Completion(jobs[k].id, str(jobs[k].claim_token), '"ok"') for k in done],
            [failure(jobs[k], permanent=True) for k in dead], None)
    return run


def one_completion(w: World, c: Ctx, o: Any) -> list[str]:
    both_done = o.a_result.completed & o.b_result.completed
    return [f"both settles completed {both_done}"] if both_done else []


_RESURRECTED = (("jobs", "pending"),)
_WORKFLOW_SPECS: list[Spec] = [
    # two parents of one child finish at the same instant in two workers: one release
    Spec("complete x complete, one child", "release.decremented",
         workflow(3, [[], [], [(0, None), (1, None)]], claimed=(0, 1)),
         complete_job("a", 0), complete_job("b", 1), is_at(2, ("jobs", "pending"))),
    # the last parent's completion, and its answer lost and sent again (same token)
    Spec("complete x the same completion again", "release.moved",
         workflow(2, [[], [(0, None)]], claimed=(0,)), complete_job("a", 0),
         complete_job("b", 0), both(is_at(1, ("jobs", "pending")), answered("b", set()))),
    # a stale token's completion (the reaper gave the job to another claim) releases nothing
    Spec("complete x stale completion", "release.decremented", restale,
         complete_job("a", 0), complete_job("b", 1),
         both(is_at(1, ("jobs", "pending")), answered("b", set()))),
    Spec("stale completion x complete", "release.moved", restale,
         complete_job("a", 0), complete_job("b", 1),
         both(is_at(1, ("jobs", "pending")), answered("b", set()))),
    # cancel of the child while its last parent's completion releases it
    *[Spec("complete x cancel of the child", point,
           workflow(2, [[], [(0, None)]], claimed=(0,)), complete_job("a", 0),
           cancel_job("b", 1), both(is_at(1, ("dead", "cancelled")),
                                    answered("b", "cancelled")))
      for point in ("release.decremented", "release.moved")],
    # a new priority for the child while its last parent's completion releases it: set on the
    # held row or on the released one, never lost between the two
    *[Spec("complete x set_priority of the child", point,
           workflow(2, [[], [(0, None)]], claimed=(0,)), complete_job("a", 0),
           set_priority_job("b", 1), both(is_at(1, ("jobs", "pending")), answered("b", True),
                                          priority_of(1, 9)))
      for point in ("release.decremented", "release.moved")],
    # cancel of a parent (its edge 'run') racing the other parent's completion
    Spec("cancel of a parent x complete of the other", "release.decremented",
         workflow(3, [[], [], [(0, "run"), (1, None)]], claimed=(1,)),
         cancel_job("a", 0), complete_job("b", 0), is_at(2, ("jobs", "pending"))),
    # resurrect of a failed step racing a cancel of it, or of the dependent it brings back
    Spec("resurrect x cancel of it", "resurrect.unburied",
         workflow(2, [[], [(0, None)]], claimed=(0,), failed=(0,)), resurrect_job("a", 0),
         cancel_job("b", 0), both(answered("a", True), answered("b", "cancelled"),
                                  is_at(0, ("dead", "cancelled")),
                                  is_at(1, ("dead", "dependency_failed")))),
    Spec("resurrect x cancel of its dependent", "resurrect.unburied",
         workflow(2, [[], [(0, None)]], claimed=(0,), failed=(0,)), resurrect_job("a", 0),
         cancel_job("b", 1), both(answered("b", "cancelled"), is_at(0, *_RESURRECTED),
                                  is_at(1, ("dead", "cancelled")))),
    # the restored dependent's other parent completes while the resurrect re-derives its
    # edges: that parent's end is counted exactly once (never taken for live and lost)
    Spec("resurrect x the restored job's other parent completing", "resurrect.unburied",
         workflow(3, [[], [], [(0, None), (1, None)]], claimed=(0, 1), failed=(1,)),
         resurrect_job("a", 1), complete_job("b", 0),
         both(answered("a", True), is_at(1, *_RESURRECTED), is_at(2, ("held", 1)))),
    # PostgreSQL's settle between its failures' statement (committed, releasing as the dead
    # letters' trigger does) and its completions' (releasing in the settle statement)
    Spec("settle x settle, three parents of one child", "settle.failed",
         workflow(4, [[], [], [], [(0, "run"), (1, "run"), (2, "run")]], claimed=(0, 1, 2)),
         settle_some("a", (0,), (1,)), settle_some("b", (2,)),
         is_at(3, ("jobs", "pending"))),
    Spec("settle x the same completion again", "settle.failed",
         workflow(3, [[], [], [(0, None)]], claimed=(0, 1)), settle_some("a", (0,), (1,)),
         settle_some("b", (0,)), both(is_at(2, ("jobs", "pending")), one_completion)),
    Spec("settle x cancel of the held child", "settle.failed",
         workflow(3, [[], [], [(0, None)]], claimed=(0, 1)), settle_some("a", (0,), (1,)),
         cancel_job("b", 2), both(is_at(2, ("dead", "cancelled")),
                                  answered("b", "cancelled"))),
    Spec("resurrect x resurrect, a workflow job", "resurrect.unburied",
         workflow(2, [[], [(0, None)]], claimed=(0,), failed=(0,)), resurrect_job("a", 0),
         resurrect_job("b", 0), both(resurrected_once, is_at(0, *_RESURRECTED),
                                     is_at(1, ("held", 1)))),
]


# -- the matrix -----------------------------------------------------------------------------------

SPECS: list[Spec] = [
    # claim: between choosing its candidates and writing them
    Spec("claim x claim", "claim.candidates", pending(4), claim_a(2), claim_b(4),
         disjoint_claims),
    Spec("claim x claim, concurrency key limit 1", "claim.candidates",
         pending(3, concurrency_key="k", concurrency_limit=1), claim_a(2), claim_b(3),
         disjoint_claims),
    Spec("claim x claim, sequence", "claim.candidates", pending(3, sequence_key="s"),
         claim_a(2), claim_b(3), disjoint_claims),
    Spec("claim x claim, max_workers 1", "claim.candidates", limited(1), claim_a(2),
         claim_b(3), disjoint_claims),
    Spec("claim x cancel", "claim.candidates", pending(1), claim_a(1), cancel("b"),
         both(cancel_vs_claim("b"), cancel_truthful("b"))),
    # operators' writes by id that wait for the claim's row must not hold an index record its
    # UPDATE needs (MariaDB: the in-flight index, issue 24 defect 3's lock order; every spec
    # checks no_deadlock)
    Spec("claim x set_priority", "claim.candidates", pending(1), claim_a(1), set_priority("b")),
    Spec("claim x run_now", "claim.candidates", due_and_later(), claim_a(1), run_now("b")),
    Spec("settle's claim x set_priority", "claim.candidates", due_and_later(running(1)),
         settle_and_claim, set_priority("b")),
    Spec("settle's claim x run_now", "claim.candidates", due_and_later(running(1)),
         settle_and_claim, run_now("b")),
    Spec("claim x pause", "claim.candidates", pending(2), claim_a(2),
         lambda w, c: w.b.configure_queue(Q, paused=True)),
    Spec("claim x debounce", "claim.candidates",
         pending(1, idempotency_key="d", unique="pending", on_conflict="replace"), claim_a(1),
         lambda w, c: w.enqueue(1, queue=Q, idempotency_key="d", unique="pending",
                                on_conflict="replace", delay=timedelta(hours=1)) and None),
    # claims of limited (flow) queues: between locking the queues' rows and claiming
    Spec("claim x claim, max_workers 1", "claim.queues_locked", limited(1), claim_a(2),
         claim_b(3), disjoint_claims),
    Spec("claim x claim, concurrency key limit 1", "claim.queues_locked",
         pending(3, concurrency_key="k", concurrency_limit=1), claim_a(2), claim_b(3),
         disjoint_claims),
    Spec("claim x claim, sequence", "claim.queues_locked", pending(3, sequence_key="s"),
         claim_a(2), claim_b(3), disjoint_claims),
    Spec("claim x pause, max_workers 2", "claim.queues_locked", limited(2), claim_a(2),
         lambda w, c: w.b.configure_queue(Q, paused=True)),
    Spec("claim x cancel, max_workers 1", "claim.queues_locked", limited(1, 1), claim_a(1),
         cancel("b"), both(cancel_vs_claim("b"), cancel_truthful("b"))),
    Spec("claim x claim, flow and plain queues", "claim.flow_claimed", keyed_and_plain,
         claim_a(4, ["f", Q]), claim_b(3, [Q]), disjoint_claims),
    # settle: its failures written, its completions not yet (PostgreSQL: two statements)
    Spec("settle x reap", "settle.failed", running(2),
         lambda w, c: settle(w.a, [c["jobs"][0]], [c["jobs"][1]]), reap_later("b"),
         one_winner(lambda s: set(s.completed))),
    # complete: the owner's rows locked (MariaDB) or archived and not yet deleted (SQLite)
    *[Spec(f"complete x {what}", point, world, lambda w, c: complete(w.a, c["jobs"]), b, chk)
      for point in ("settle.locked", "settle.archived")
      for what, world, b, chk in (
          ("reap", running(1, expired=True), reap("b"), one_winner()),
          ("cancel", running(1), cancel("b"), cancel_truthful("b")),
          ("complete", running(1), lambda w, c: complete(w.b, c["jobs"]), one_winner()),
          ("heartbeat", running(1, expired=True), heartbeat_b, one_winner()),
      )],
    # fail: the owner's rows locked (MariaDB) or buried and not yet deleted (SQLite)
    *[Spec(f"fail x {what}", point, world,
           lambda w, c: fail(w.a, c["jobs"], permanent=True), b, chk)
      for point in ("fail.locked", "fail.buried")
      for what, world, b, chk in (
          ("reap", running(1, expired=True), reap("b"), one_winner()),
          ("cancel", running(1), cancel("b"), cancel_truthful("b")),
          ("complete", running(1), lambda w, c: complete(w.b, c["jobs"]), one_winner()),
      )],
    Spec("fail x claim, breaker", "fail.breaker", with_breaker(running(1)),
         lambda w, c: fail(w.a, c["jobs"]) and w.enqueue(1, queue=Q) and None,
         claim_b(3)),
    # reap: expired rows selected, not yet written
    Spec("reap x complete", "reap.selected", running(1, expired=True), reap("a"),
         lambda w, c: complete(w.b, c["jobs"]), one_winner()),
    Spec("reap x reap", "reap.selected", running(2, expired=True), reap("a"), reap("b"),
         one_winner()),
    Spec("reap x cancel", "reap.selected", running(1, expired=True), reap("a"), cancel("b"),
         cancel_truthful("b")),
    Spec("reap x heartbeat", "reap.selected", running(1, expired=True), reap("a"),
         heartbeat_b, one_winner()),
    # cancel: the job buried and not yet deleted (SQLite) or locked (MariaDB)
    *[Spec(f"cancel x {what}", point, world, cancel("a"), b, chk)
      for point in ("cancel.buried", "cancel.locked")
      for what, world, b, chk in (
          ("claim", pending(1), claim_b(1), both(cancel_vs_claim("a"), cancel_truthful("a"))),
          ("start", running(1, start=False), start_b,
           both(cancel_truthful("a"), lambda w, c, o: one_owner_wins(
               o, _cancelled(o.a_result, c), _started(o.b_result), c["ids"]))),
      )],
    # resurrect: the dead letter copied back (SQLite) or locked (MariaDB)
    *[Spec("resurrect x resurrect", point, dead(1),
           lambda w, c: w.a.backend.resurrect(c["ids"][0]),
           lambda w, c: w.b.backend.resurrect(c["ids"][0]), resurrected_once)
      for point in ("resurrect.copied", "resurrect.locked")],
    # resurrect of a keyed dead letter: its key checked (and taken), the job not yet moved; and
    # an enqueue of the same key between its key check and its write
    Spec("resurrect x enqueue, same key", "resurrect.key_checked", dead_keyed,
         resurrect_keyed("a"), enqueue_keyed("b"), key_goes_to_one),
    Spec("enqueue x resurrect, same key", "enqueue.key_checked", dead_keyed,
         enqueue_keyed("a"), resurrect_keyed("b"), key_goes_to_one),
    # schedules: an edit between its read and its write; a firing between its read of the due
    # rows and its writes
    *[Spec(f"{how} x fire", "schedule.edit_read", scheduled, edit("a", how), fire("b"),
           both(edit_landed(how), tick_fired_once)) for how in ("change", "pause")],
    *[Spec(f"fire x {how}", "schedule.fire_due", scheduled, fire("a"), edit("b", how),
           both(edit_landed(how), tick_fired_once)) for how in ("change", "pause")],
    Spec("change x pause", "schedule.edit_read", scheduled, edit("a", "change"),
         edit("b", "pause"), both(edit_landed("change"), edit_landed("pause"))),
    Spec("fire x fire", "schedule.fire_due", scheduled, fire("a"), fire("b"), tick_fired_once),
    # keyed enqueue: the key's holder read, the job not yet written
    # (PostgreSQL reads the holder only after its insert met the key: a holder exists)
    Spec("enqueue x enqueue, one key", "enqueue.key_checked", lambda w: {"ids": []},
         keyed_enqueue("a"), keyed_enqueue("b"), same_holder, backends=("sqlite", "mariadb")),
    Spec("enqueue x enqueue, key held", "enqueue.key_checked", pending(1, idempotency_key="k"),
         keyed_enqueue("a"), keyed_enqueue("b"), same_holder),
    Spec("enqueue x cancel of the holder", "enqueue.key_checked",
         pending(1, idempotency_key="k"), keyed_enqueue("a"), cancel("b")),
    # debounce: the pending holder read, its replace not yet written
    Spec("debounce x claim", "debounce.holder_read",
         pending(1, idempotency_key="k", unique="pending", on_conflict="replace"),
         keyed_enqueue("a", unique="pending", on_conflict="replace",
                       delay=timedelta(hours=1)), claim_b(1), no_debounce_lost),
    # heartbeat and ensure_owned: the job's row locked (a heartbeat) or read (ensure_owned)
    Spec("heartbeat x ensure_owned", "heartbeat.locked", running(1), heartbeat_a, confirm("b"),
         still_owned("b")),
    *[Spec(f"ensure_owned x {what}", point, running(1), confirm("a"), b, chk)
      for point in ("ensure_owned.read", "ensure_owned.locked")
      for what, b, chk in (("heartbeat", heartbeat_b, still_owned("a")),
                           ("ensure_owned", confirm("b"), both(still_owned("a"),
                                                               still_owned("b"))))],
    # settle that claims the next jobs: the claim written, not yet committed
    Spec("settle and claim x claim", "settle.claimed", running_and_pending,
         lambda w, c: settle(w.a, c["jobs"], [], [Q], 2), claim_b(3),
         lambda w, c, o: claimed_once(o.a_result.claimed, o.b_result)),
    # key pruner: an expired key selected, not yet deleted (MariaDB)
    Spec("prune keys x resurrect", "prune.selected", expired_dead_key,
         lambda w, c: w.a.backend.prune_idempotency_keys(w.a.idempotency_retention, 100),
         lambda w, c: w.b.resurrect(c["ids"][0]), key_still_held),
    # queue and breaker changes
    Spec("key rate change x claim", "configure_queue.updated", pending(3, rate_key="r"),
         lambda w, c: w.a.configure_queue(Q, key_rate_limit="1/m"), claim_b(3)),
    Spec("breaker set x claim", "breaker.set", pending(2),
         lambda w, c: w.a.configure_breaker("t.work", failures=1, queue=Q), claim_b(2)),
    Spec("breaker set x fail", "breaker.set", running(1),
         lambda w, c: w.a.configure_breaker("t.work", failures=1, queue=Q),
         lambda w, c: fail(w.b, c["jobs"])),
    *_WORKFLOW_SPECS,
]

# Points whose specs come with the fixes that add them (the coordinator moves each here from
# AWAITING once its spec is in SPECS). test_coverage.py fails on a point in neither.
AWAITING: set[str] = set()


def cases() -> list[tuple[Spec, str]]:
    """Every (spec, backend) pair whose backend has the spec's point."""
    where = points()
    return [(s, b) for s in SPECS for b in s.backends if s.point in where[b]]
