"""Workflows through the public API and a real Worker, on each backend: bad input refused at
the call with nothing written; chains, groups and their callbacks; policies; handles; the
caller's transaction. (The Backend-level rules: claimq.testing.conformance.workflows.)"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from claimq import (
    App,
    InvalidInput,
    JobContext,
    Permanent,
    Workflow,
    call,
    chain,
    group,
)
from claimq.job import DeadReason, Status
from claimq.testing import drain


@pytest.fixture
def log() -> list[tuple[str, str, float]]:
    return []


def tasks(app: App, log: list[tuple[str, str, float]],
          broken: dict[str, bool] | None = None) -> dict[str, Any]:
    """Handlers that do what real code does: an async one under asyncio.timeout with a task
    group, a blocking sync one, and one that raises Permanent on demand."""

    @app.task(name="fetch")
    async def fetch(ctx: JobContext, n: int) -> int:
        log.append(("start", f"fetch{n}", time.monotonic()))
        async with asyncio.timeout(5), asyncio.TaskGroup() as group:
            parts = [group.create_task(asyncio.sleep(0, result=n)) for _ in range(3)]
        log.append(("end", f"fetch{n}", time.monotonic()))
        return sum(p.result() for p in parts)

    @app.task(name="combine")
    def combine(ctx: JobContext) -> list[Any]:
        log.append(("start", "combine", time.monotonic()))
        time.sleep(0.01)  # a blocking call, in the handler's thread
        found = [(d.task, d.status, d.result) for d in ctx.dependencies()]
        log.append(("end", "combine", time.monotonic()))
        return found

    @app.task(name="boom")
    def boom(permanent: bool = True) -> None:
        log.append(("start", "boom", time.monotonic()))
        if broken is not None and not broken["now"]:
            return
        if permanent:
            raise Permanent("no such account")
        raise ValueError("a bug")

    return {"fetch": fetch, "combine": combine, "boom": boom}


def order(log: list[tuple[str, str, float]]) -> list[str]:
    return [name for what, name, _ in log if what == "start"]


class TestRefused:
    def test_bad_workflows_are_refused_at_the_call_and_write_nothing(self, app: App) -> None:
        other = Workflow("other")
        foreign = other.add("t")
        wf = Workflow("wf")
        with pytest.raises(InvalidInput, match="after= takes steps of this workflow"):
            wf.add("t", after=[foreign])
        with pytest.raises(InvalidInput, match="on_failure must be one of"):
            wf.add("t", on_dependency_failure="explode")  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match="takes no idempotency_key"):
            wf.add("t", idempotency_key="k")
        with pytest.raises(InvalidInput, match="when must be one of"):
            wf.group(call("t"), then=call("t"), when="sometimes")  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match="name"):
            Workflow("")
        with pytest.raises(InvalidInput, match="at least one job"):
            app.enqueue_workflow(Workflow("empty"))
        first = wf.add("t", {"ok": 1})
        wf.add("t", {"bad": {1, 2}}, after=[first])  # a set is not JSON
        with pytest.raises(InvalidInput):
            app.enqueue_workflow(wf)
        assert app.list_jobs("live") == [] and app.workflows() == []
        with pytest.raises(InvalidInput, match="no workflow"):
            app.workflow(123456)


class TestRun:
    def test_a_chain_starts_each_job_after_the_one_before_ended(
        self, app: App, log: list[tuple[str, str, float]]
    ) -> None:
        t = tasks(app, log)
        handle = app.enqueue_workflow(chain(*(t["fetch"].step(n=n) for n in (1, 2, 3))))
        assert [j.status for j in handle.jobs()] == [Status.PENDING, Status.HELD, Status.HELD]
        drain(app, concurrency=4)
        assert order(log) == ["fetch1", "fetch2", "fetch3"]
        ends = {name: at for what, name, at in log if what == "end"}
        starts = {name: at for what, name, at in log if what == "start"}
        assert ends["fetch1"] <= starts["fetch2"] and ends["fetch2"] <= starts["fetch3"]
        assert handle.result() == 9 and handle.status().state == "succeeded"

    def test_a_fan_in_sees_every_result_in_order(
        self, app: App, log: list[tuple[str, str, float]]
    ) -> None:
        t = tasks(app, log)
        wf = Workflow("fan-in")
        members = [wf.add(t["fetch"], {"n": n}) for n in (3, 1, 2)]
        wf.add(t["combine"], after=members)
        handle = app.enqueue_workflow(wf)
        drain(app, concurrency=3)
        assert handle.result() == [["fetch", "succeeded", 9], ["fetch", "succeeded", 3],
                                   ["fetch", "succeeded", 6]]
        assert order(log)[-1] == "combine"

    def test_a_group_callback_is_cancelled_when_a_member_failed(
        self, app: App, log: list[tuple[str, str, float]]
    ) -> None:
        t = tasks(app, log)
        handle = app.enqueue_workflow(
            group(t["fetch"].step(n=1), t["boom"].step(), then=t["combine"].step()))
        drain(app, concurrency=2)
        assert "combine" not in order(log)
        callback = app.get_job(handle.job_ids[-1])
        assert (callback.status, callback.reason) == (Status.DEAD, DeadReason.DEPENDENCY_FAILED)
        assert str(handle.job_ids[1]) in callback.errors[-1]["message"]
        status = handle.status()
        assert status.state == "failed" and status.finished
        assert status.counts == {"succeeded": 1, "dead": 2}

    @pytest.mark.parametrize("fails", [False, True])
    def test_a_failure_callback_runs_only_when_a_member_failed(
        self, app: App, log: list[tuple[str, str, float]], fails: bool
    ) -> None:
        t = tasks(app, log)
        members = [t["fetch"].step(n=1),
                   t["boom"].step() if fails else t["fetch"].step(n=2)]
        handle = app.enqueue_workflow(group(*members, then=t["combine"].step(), when="failed"))
        drain(app, concurrency=2)
        assert ("combine" in order(log)) is fails
        assert app.get_job(handle.job_ids[-1]).status == Status.SUCCEEDED

    def test_wait_blocks_until_the_failed_step_is_resurrected(
        self, app: App, log: list[tuple[str, str, float]]
    ) -> None:
        broken = {"now": True}
        t = tasks(app, log, broken)
        wf = Workflow("careful", on_failure="wait")
        first = wf.add(t["boom"], {"permanent": True})
        wf.add(t["fetch"], {"n": 5}, after=[first])
        handle = app.enqueue_workflow(wf)
        drain(app)
        assert handle.status().state == "blocked"
        assert [j.status for j in handle.jobs()] == [Status.DEAD, Status.HELD]
        broken["now"] = False  # the operator fixed what the step needed
        assert handle.retry() == [handle.job_ids[0]]
        drain(app)
        assert handle.status().state == "succeeded" and handle.result() == 15


class TestHandles:
    def test_a_key_a_handle_back_and_the_list(self, app: App) -> None:
        wf = Workflow("nightly", key="2031-03-04")
        wf.add("t", after=[wf.add("t")])
        first = app.enqueue_workflow(wf)
        again = app.enqueue_workflow(wf)
        assert first.created and not again.created
        assert (again.id, again.job_ids) == (first.id, first.job_ids)
        back = app.workflow(first.id)
        assert back.job_ids == first.job_ids
        [listed] = app.workflows()
        assert (listed.id, listed.name, listed.key) == (first.id, "nightly", "2031-03-04")
        assert listed.counts == {"pending": 1, "held": 1}
        held = app.list_jobs("live", status="held")
        assert [j.id for j in held] == first.job_ids[1:] and held[0].status == Status.HELD
        assert [j.id for j in app.find_jobs("live", status="held")] == first.job_ids[1:]
        assert first.status().state == "running"

    def test_result_needs_a_step_when_the_workflow_ends_in_several_jobs(self, app: App) -> None:
        wf = Workflow("two-ends")
        a = wf.add("t")
        wf.add("t", after=[a])
        wf.add("t", after=[a])
        handle = app.enqueue_workflow(wf)
        with pytest.raises(InvalidInput, match="ends in 2 jobs"):
            handle.result(timeout=0.01)

    def test_cancel_ends_every_job_not_finished(self, app: App) -> None:
        wf = Workflow("cancel-me")
        wf.chain(call("t"), call("t"), call("t"))
        handle = app.enqueue_workflow(wf)
        assert handle.cancel() == 3
        assert [j.status for j in handle.jobs()] == [Status.DEAD] * 3
        assert handle.status().state == "failed"

    def test_a_workflow_in_a_rolled_back_transaction_leaves_nothing(self, app: App) -> None:
        wf = Workflow("rolled-back")
        wf.add("t", after=[wf.add("t")])
        with pytest.raises(RuntimeError), app.transaction() as conn:
            app.enqueue_workflow(wf, conn=conn)
            raise RuntimeError("the caller's own write failed")
        assert app.list_jobs("live") == [] and app.workflows() == []


def test_a_process_isolated_handler_reads_its_dependencies_and_spawns(db_url: str) -> None:
    """Issue 26, item 6 (workflow jobs keep process isolation): ctx.dependencies() and
    ctx.spawn() in the child process, over its own connection to the worker's database (the
    module's App is pointed there), spawn fenced by the attempt's token like the worker's."""
    import isolated_workflow_app as module

    from claimq.testing import use_database

    with use_database(module.app, db_url):
        wf = Workflow("isolated")
        first = wf.add("iso.part", {"n": 1})
        spread = wf.add("iso.fan_out", {"n": 3})
        end = wf.add("iso.fan_in", after=[first, spread])
        handle = module.app.enqueue_workflow(wf)
        assert drain(module.app, timeout=120).succeeded == 6
        spawned = handle.result(spread)
        assert len(spawned) == 3
        # the spawner's dependent also waits for what it spawned, after its given ones
        assert handle.result(end) == [["iso.part", "succeeded", 10],
                                      ["iso.fan_out", "succeeded", spawned],
                                      ["iso.part", "succeeded", 0],
                                      ["iso.part", "succeeded", 10],
                                      ["iso.part", "succeeded", 20]]
        assert sorted(module.app.get_job(j).result for j in spawned) == [0, 10, 20]
        assert handle.status().state == "succeeded"
