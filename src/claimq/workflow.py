"""Workflows: jobs with dependencies (a DAG), written in one transaction (docs/workflows.md).

A job whose dependencies have not all finished is held (Status.HELD: never claimed). The
token-guarded write that finishes its last dependency releases it, in the same transaction, so a
stale worker releases nothing and a lost answer releases exactly once. When a dependency ends in
dead letters, the edge's policy decides: "cancel" (the default: the dependent goes to dead
letters, reason dependency_failed, naming it, and so on down), "run" (it runs anyway and sees
which failed in ctx.dependencies()) or "wait" (it stays held until an operator resurrects the
dependency or cancels the workflow)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from claimq import _audit
from claimq._validate import NewJob
from claimq.backends.base import Backend, Edge, NewWorkflow, Owned, WorkflowInfo
from claimq.errors import InvalidInput, LeaseLost
from claimq.job import Job, Status
from claimq.task import Call as Call
from claimq.task import Task


class _App(Protocol):
    """What a workflow needs of claimq.App (which imports this module)."""

    @property
    def backend(self) -> Backend: ...

    @property
    def idempotency_retention(self) -> float: ...

    def _new_job(self, task: str | Task[Any, Any], **options: Any) -> NewJob: ...
    def result(self, job_id: int, *, timeout: float | None = None) -> Any: ...
    async def aresult(self, job_id: int, *, timeout: float | None = None) -> Any: ...

Policy = Literal["cancel", "run", "wait"]
When = Literal["succeeded", "finished", "failed"]
POLICIES: tuple[str, ...] = ("cancel", "run", "wait")
_WHEN: dict[str, tuple[Policy, str | None]] = {
    # a group's callback: the policy of its edges, and its run_if
    "succeeded": ("cancel", None),
    "finished": ("run", None),
    "failed": ("run", "failed"),
}
_JOB_KEY_OPTIONS = ("idempotency_key", "unique", "unique_for", "on_conflict")
_MAX_NAME = 200


def call(task: str | Task[Any, Any], payload: dict[str, Any] | None = None,
         **options: Any) -> Call:
    """A job to put in a workflow, chain or group: enqueue()'s arguments, not yet written."""
    return Call(task, payload, options)


@dataclass(frozen=True, eq=False)
class Step:
    """One job of a Workflow being built; pass it in another step's `after`."""

    index: int
    call: Call
    workflow: Workflow = field(repr=False)


After = Step | tuple[Step, Policy]


class Workflow:
    """A DAG of jobs built in memory, then written at once by `app.enqueue_workflow(wf)`:
    all of it or nothing, inside the caller's transaction with `conn=`.

    `key`: a workflow idempotency key (enqueued again, the first one's handle comes back and
    nothing is written). `on_failure`: the default policy of its edges."""

    def __init__(self, name: str = "workflow", *, key: str | None = None,
                 on_failure: Policy = "cancel") -> None:
        if not isinstance(name, str) or not name or len(name) > _MAX_NAME:
            raise InvalidInput(f"a workflow's name is 1 to {_MAX_NAME} characters, got {name!r}")
        if key is not None and (not isinstance(key, str) or not key or len(key) > _MAX_NAME):
            raise InvalidInput(f"a workflow's key is 1 to {_MAX_NAME} characters, got {key!r}")
        self.name = name
        self.key = key
        self.on_failure = _policy(on_failure)
        self.steps: list[Step] = []
        self._after: list[list[tuple[int, str | None]]] = []
        self._run_if: list[str | None] = []

    def add(self, task: str | Task[Any, Any] | Call, payload: dict[str, Any] | None = None, *,
            after: Iterable[After] = (), on_dependency_failure: Policy | None = None,
            **options: Any) -> Step:
        """A job that starts once every step in `after` finished. An item of `after` may be
        `(step, policy)` for that edge alone; `on_dependency_failure` is the policy of this
        job's edges (else the workflow's `on_failure`). `options`: enqueue()'s (queue,
        priority, delay, max_attempts, ...; its `on_failure` is a sequence's, as there)."""
        job = task if isinstance(task, Call) else Call(task, payload, options)
        if isinstance(task, Call) and (payload is not None or options):
            raise InvalidInput("add(call) takes the call's own payload and options")
        policy = None if on_dependency_failure is None else _policy(on_dependency_failure)
        return self._add(job, after, policy, None)

    def _add(self, job: Call, after: Iterable[After], policy: str | None,
             run_if: str | None) -> Step:
        for name in _JOB_KEY_OPTIONS:
            if job.options.get(name) is not None:
                raise InvalidInput(
                    f"a workflow job takes no {name}: the workflow's key makes it run once")
        edges: list[tuple[int, str | None]] = []
        for item in after:
            parent, edge_policy = item if isinstance(item, tuple) else (item, policy)
            if not isinstance(parent, Step) or parent.workflow is not self:
                raise InvalidInput(f"after= takes steps of this workflow, got {parent!r}")
            if any(p == parent.index for p, _ in edges):
                raise InvalidInput(f"step {parent.index} is listed twice in after=")
            edges.append((parent.index, None if edge_policy is None else _policy(edge_policy)))
        step = Step(len(self.steps), job, self)
        self.steps.append(step)
        self._after.append(edges)
        self._run_if.append(run_if)
        return step

    def chain(self, *calls: Call | Task[Any, Any], after: Iterable[After] = ()) -> list[Step]:
        """Each job after the one before it (the first after `after`)."""
        steps: list[Step] = []
        previous: list[After] = list(after)
        for item in calls:
            step = self._add(_as_call(item), previous, None, None)
            steps.append(step)
            previous = [step]
        return steps

    def group(self, *calls: Call | Task[Any, Any], after: Iterable[After] = (),
              then: Call | Task[Any, Any] | None = None,
              when: When = "succeeded") -> tuple[list[Step], Step | None]:
        """A batch: the jobs run side by side (after `after`); `then` runs once all of them
        finished: when="succeeded" only if every one succeeded (else it is cancelled),
        "finished" in any case, "failed" only if one of them failed (else it is skipped:
        archived without running)."""
        if when not in _WHEN:
            raise InvalidInput(f"when must be one of {sorted(_WHEN)}, got {when!r}")
        members = [self._add(_as_call(item), list(after), None, None) for item in calls]
        if then is None:
            return members, None
        policy, run_if = _WHEN[when]
        return members, self._add(_as_call(then), members, policy, run_if)

    def validated(self, app: _App) -> NewWorkflow:
        if not self.steps:
            raise InvalidInput("a workflow needs at least one job")
        jobs = [app._new_job(s.call.task, payload=s.call.payload, **s.call.options)
                for s in self.steps]
        return NewWorkflow(self.name, self.key, self.on_failure, jobs,
                           [list(e) for e in self._after], list(self._run_if))


def chain(*calls: Call | Task[Any, Any], name: str = "chain", key: str | None = None) -> Workflow:
    """A workflow of jobs that run one after another, each once the previous succeeded."""
    wf = Workflow(name, key=key)
    wf.chain(*calls)
    return wf


def group(*calls: Call | Task[Any, Any], then: Call | Task[Any, Any] | None = None,
          when: When = "succeeded", name: str = "group", key: str | None = None) -> Workflow:
    """A batch of jobs side by side, with an optional callback `then` (see Workflow.group)."""
    wf = Workflow(name, key=key)
    wf.group(*calls, then=then, when=when)
    return wf


WorkflowState = Literal["running", "blocked", "succeeded", "failed"]


def workflow_state(counts: dict[str, int]) -> WorkflowState:
    """running: a job can still run; blocked: only held jobs are left, waiting on a dead
    dependency for an operator; succeeded: every job succeeded; failed: all ended, some dead."""
    if any(counts.get(s, 0) for s in (Status.PENDING, Status.FETCHED, Status.PROCESSING)):
        return "running"
    if counts.get(Status.HELD, 0):
        return "blocked" if counts.get(Status.DEAD, 0) else "running"
    return "failed" if counts.get(Status.DEAD, 0) else "succeeded"


@dataclass(frozen=True)
class WorkflowStatus:
    info: WorkflowInfo
    state: WorkflowState

    @property
    def counts(self) -> dict[str, int]:
        return self.info.counts

    @property
    def finished(self) -> bool:
        return self.state in ("succeeded", "failed")


class WorkflowHandle:
    """A workflow written to the database: its id, its jobs' ids (in the order they were
    added), and what an operator does with it."""

    def __init__(self, app: _App, workflow_id: int, job_ids: Sequence[int],
                 created: bool = True) -> None:
        self.app = app
        self.id = workflow_id
        self.job_ids = list(job_ids)
        self.created = created

    def __repr__(self) -> str:
        return f"WorkflowHandle(id={self.id}, jobs={len(self.job_ids)})"

    def job_id(self, step: Step) -> int:
        return self.job_ids[step.index]

    def status(self) -> WorkflowStatus:
        info = self.app.backend.get_workflow(self.id)
        if info is None:
            raise InvalidInput(f"no workflow {self.id} (pruned, or never written)")
        return WorkflowStatus(info, workflow_state(info.counts))

    def jobs(self) -> list[Job]:
        return self.app.backend.workflow_graph(self.id)[0]

    def graph(self) -> tuple[list[Job], list[Edge]]:
        return self.app.backend.workflow_graph(self.id)

    def wait(self, timeout: float | None = None, poll: float = 0.05) -> WorkflowStatus:
        """Waits until every job ended (or only held jobs are left, blocked on a dead one);
        TimeoutError after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.status()
            if status.state != "running":
                return status
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"workflow {self.id} still running after {timeout} s")
            time.sleep(poll)

    async def await_(self, timeout: float | None = None) -> WorkflowStatus:
        return await asyncio.to_thread(self.wait, timeout)

    def result(self, step: Step | None = None, *, timeout: float | None = None) -> Any:
        """The result of `step`, or of the workflow's one last job (the one no other waits
        for) when none is given: app.result()'s, waiting up to `timeout`."""
        return self.app.result(self._target(step), timeout=timeout)

    async def aresult(self, step: Step | None = None, *, timeout: float | None = None) -> Any:
        return await self.app.aresult(self._target(step), timeout=timeout)

    def _target(self, step: Step | None) -> int:
        if step is not None:
            return self.job_id(step)
        _, edges = self.graph()
        parents = {e.parent for e in edges}
        sinks = [i for i in self.job_ids if i not in parents]
        if len(sinks) != 1:
            raise InvalidInput(f"workflow {self.id} ends in {len(sinks)} jobs: name the step")
        return sinks[0]

    def cancel(self) -> int:
        """Cancels every job not finished (running ones are asked to stop); how many."""
        count = self.app.backend.cancel_workflow(self.id)
        _audit.record(self.app.backend, "cancel workflow", f"workflow {self.id}", {}, count)
        return count

    def retry(self) -> list[int]:
        """Reruns the steps that failed (and, after them, what they cancelled); never a step
        that succeeded. The ids brought back."""
        ids = self.app.backend.retry_workflow(self.id)
        _audit.record(self.app.backend, "retry workflow", f"workflow {self.id}", {"ids": ids},
                      len(ids))
        return ids


def spawn(app: _App, owned: Owned, calls: Sequence[Call | Workflow],
          traceparent: str | None = None) -> list[int]:
    """ctx.spawn()'s rule, for a handler in the worker and one in an isolated process alike:
    the calls (a Workflow: with dependencies among its jobs) join the workflow of the job
    `owned` names, in one transaction fenced by its token (LeaseLost when the attempt no
    longer owns it); every job waiting for that job also waits for each new one."""
    wf = Workflow("spawned")
    for item in calls:
        if isinstance(item, Workflow):
            base = len(wf.steps)
            for step, edges in zip(item.steps, item._after, strict=True):
                wf._add(step.call, [wf.steps[base + p] for p, _ in edges], None, None)
        else:
            wf._add(item, (), None, None)
    new = wf.validated(app)
    jobs = new.jobs
    if traceparent is not None:
        jobs = [j._replace(trace_context=traceparent) for j in jobs]
    ids = app.backend.spawn(owned, jobs, [[p for p, _ in edges] for edges in new.after],
                            app.idempotency_retention)
    if ids is None:
        raise LeaseLost(owned.id, "spawn")
    return ids


def _as_call(item: Call | Task[Any, Any]) -> Call:
    return item if isinstance(item, Call) else Call(item)


def _policy(value: object) -> Policy:
    if value not in POLICIES:
        raise InvalidInput(f"on_failure must be one of {list(POLICIES)}, got {value!r}")
    return value  # type: ignore[return-value]
