"""The hostile-handler suite (issue 12, "How it is checked"): ordinary handler code and ordinary
mistakes, run by real worker processes on both backends.

For every handler: the job ends in the right table with the right reason, no two attempts of
one job overlap (each run is recorded with its start and end, see hostile_app), the chaos
suite's invariant checker holds over the recorded runs (no job lost, one valid owner per run,
no stale write, every extra run in the history), and the worker keeps running: alive after,
it still claims and finishes a fresh job, and stops cleanly.

The expectations chosen (what a user would expect):
- A timeout the handler catches (asyncio.timeout, asyncio.wait_for, an anyio cancel scope) is
  the handler's business: the job succeeds (archive).
- A timeout the handler does not catch is an exception like any other: the attempt fails and
  is retried; when the attempts run out the job is dead with `retries_exhausted` (it is not
  the job's own `timeout=`, which gives reason `timeout`: see the inner/job timeout case).
- A TaskGroup whose child fails raises an ExceptionGroup: caught, the job succeeds; not
  caught, it is retried, then dead as `retries_exhausted`.
- A handler may cancel its own task and un-cancel it after catching: the job succeeds.
- KeyboardInterrupt, SystemExit and GeneratorExit raised by handler code are that attempt's
  failure, not a stop of the worker (the worker's own stop comes from its signal handlers):
  retried, then dead as `retries_exhausted`, the history naming the exception class.
- An exception whose __str__ raises is still a failure with a history entry naming its class.
- Context variables a job sets are never visible to another job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hostile_harness import (
    OPTIONS,
    Expect,
    UnstartedSampler,
    assert_no_overlap,
    assert_still_working,
    check_invariants,
    check_outcome,
    max_open_at_once,
    runs_by_job,
    wait_done,
)

from claimq import App

pytest_plugins = ["hostile_fixtures"]  # happ, spawn_hostile
pytestmark = pytest.mark.timeout(120)

ARCHIVE = Expect("archive")
EXHAUSTED = Expect("dead", "retries_exhausted")
TIMEOUT = Expect("dead", "timeout")


@dataclass(frozen=True)
class Case:
    task: str
    want: Expect
    attempts: int
    error: str | None = None  # the exception class every history entry names
    result: dict[str, Any] | None = None
    payload: dict[str, Any] = field(default_factory=dict)


CASES = [
    Case("h.timeout_caught", ARCHIVE, 1, result={"timed_out": True}),
    Case("h.timeout_uncaught", EXHAUSTED, 3, error="TimeoutError"),
    Case("h.wait_for_caught", ARCHIVE, 1, result={"timed_out": True}),
    Case("h.wait_for_uncaught", EXHAUSTED, 3, error="TimeoutError"),
    Case("h.taskgroup_caught", ARCHIVE, 1, result={"caught": 1}),
    Case("h.taskgroup_uncaught", EXHAUSTED, 3, error="ExceptionGroup"),
    Case("h.anyio_move_on", ARCHIVE, 1, result={"cancelled_caught": True}),
    Case("h.anyio_fail_after", EXHAUSTED, 3, error="TimeoutError"),
    Case("h.self_cancel_uncancel", ARCHIVE, 1, result={"uncancelled": True}),
    # Its own caught timeout must not disturb the job's timeout (task timeout=0.5 s).
    Case("h.inner_timeout_then_job_timeout", TIMEOUT, 2),
    Case("h.keyboard_interrupt_async", EXHAUSTED, 2, error="KeyboardInterrupt"),
    Case("h.keyboard_interrupt_sync", EXHAUSTED, 2, error="KeyboardInterrupt"),
    Case("h.system_exit_async", EXHAUSTED, 2, error="SystemExit"),
    Case("h.system_exit_sync", EXHAUSTED, 2, error="SystemExit"),
    Case("h.generator_exit_async", EXHAUSTED, 2, error="GeneratorExit"),
    Case("h.generator_exit_sync", EXHAUSTED, 2, error="GeneratorExit"),
    Case("h.bad_str_async", EXHAUSTED, 2, error="BadStr"),
    Case("h.bad_str_sync", EXHAUSTED, 2, error="BadStr"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.task.removeprefix("h.") for c in CASES])
def test_hostile_handler(happ: App, spawn_hostile, case: Case) -> None:
    """The hostile job, beside two plain jobs, ends as `case` says; the worker lives on."""
    worker = spawn_hostile(happ.url, **OPTIONS)
    worker_id = worker.wait_started()
    job_id = happ.enqueue(case.task, case.payload)
    neighbours = [happ.enqueue("h.normal_async", {"seconds": 0.3}),
                  happ.enqueue("h.normal_sync", {"seconds": 0.3})]
    wait_done(happ, [worker], [job_id, *neighbours], timeout=30)

    check_outcome(happ, job_id, case.want, error=case.error, attempts=case.attempts)
    if case.result is not None:
        assert happ.get_job(job_id).result == case.result
    for n in neighbours:
        check_outcome(happ, n, ARCHIVE, attempts=1)
    assert_no_overlap(happ, [job_id, *neighbours])
    check_invariants(happ, {job_id: case.want, **dict.fromkeys(neighbours, ARCHIVE)},
                     effects_for_archived=False)
    assert len(runs_by_job(happ)[job_id]) == case.attempts
    assert_still_working(happ, worker, worker_id)


def test_context_variables_never_cross_jobs(happ: App, spawn_hostile) -> None:
    """A context variable a job sets (async: before its first await; sync: in its thread) is
    never seen by another job, and each job keeps its own value to its end."""
    worker = spawn_hostile(happ.url, **OPTIONS)
    worker_id = worker.wait_started()
    ids = [happ.enqueue("h.ctxvar_async" if i % 2 else "h.ctxvar_sync", {}) for i in range(16)]
    wait_done(happ, [worker], ids, timeout=30)
    for job_id in ids:
        check_outcome(happ, job_id, ARCHIVE, attempts=1)
        assert happ.get_job(job_id).result == {"seen_before": None, "after": f"job-{job_id}"}
    assert_no_overlap(happ, ids)
    check_invariants(happ, dict.fromkeys(ids, ARCHIVE), effects_for_archived=False)
    assert_still_working(happ, worker, worker_id)


def test_blocking_sleep_in_async_handler_beside_20_jobs(happ: App, spawn_hostile) -> None:
    """`time.sleep(2 x lease)` inside `async def` blocks the worker's event loop, beside 20
    normal jobs (half async, half sync). Expected: every job archived, each attempt of a job
    over before the next began (a job the runtime lost while frozen is not run twice at once),
    the invariants hold, and the worker goes on working."""
    lease = 1.5
    worker = spawn_hostile(happ.url, **{**OPTIONS, "lease": lease, "concurrency": 8})
    worker_id = worker.wait_started()
    normal = [happ.enqueue("h.normal_async" if i % 2 else "h.normal_sync", {"seconds": 0.5})
              for i in range(20)]
    blocker = happ.enqueue("h.blocking_sleep", {"seconds": 2 * lease})
    wait_done(happ, [worker], [blocker, *normal], timeout=40)
    for job_id in [blocker, *normal]:
        check_outcome(happ, job_id, ARCHIVE)
    assert_no_overlap(happ, [blocker, *normal])
    check_invariants(happ, dict.fromkeys([blocker, *normal], ARCHIVE),
                     effects_for_archived=False)
    assert_still_working(happ, worker, worker_id)


def test_sync_handler_past_its_timeout_in_a_max_workers_1_queue(happ: App, spawn_hostile) -> None:
    """A sync handler (timeout=1, max_attempts=3) sleeping 3 s in a queue with max_workers=1,
    and a healthy job of the same queue enqueued after it. Expected: the overrunning attempt
    holds its slot until its thread ends, so no two runs of the queue are ever open at once
    (neither two attempts of the job nor the healthy job beside one), each attempt counts as
    timed out and the job is dead with `timeout` after 3 attempts; the healthy job is
    archived and is never held claimed (fetched or processing) for long without having started."""
    worker = spawn_hostile(happ.url, **{**OPTIONS, "concurrency": 2})
    worker_id = worker.wait_started()
    sampler = UnstartedSampler(happ, "single")
    sampler.start()
    try:
        slow = happ.enqueue("h.sync_overrun", {"seconds": 3.0})
        worker.wait_log(rf"hostile run-started {slow} attempt=1", timeout=20)
        healthy = happ.enqueue("h.sync_quick_single", {})
        wait_done(happ, [worker], [slow, healthy], timeout=40)
    finally:
        sampler.stop.set()
        sampler.join(5)
    check_outcome(happ, slow, TIMEOUT, attempts=3)
    check_outcome(happ, healthy, ARCHIVE, attempts=1)
    by_job = runs_by_job(happ)
    queue_runs = by_job[slow] + by_job[healthy]
    assert max_open_at_once(queue_runs) == 1, (
        "more than one run of the max_workers=1 queue at once: "
        f"{[(r.job_id, r.attempt, r.started, r.ended) for r in queue_runs]}"
    )
    assert_no_overlap(happ, [slow, healthy])
    assert not sampler.errors, sampler.errors[:3]
    stalled = {k: round(v, 2) for k, v in sampler.longest.items() if v > 1.5}
    assert not stalled, f"jobs processing without a started run (job, token) -> s: {stalled}"
    check_invariants(happ, {slow: TIMEOUT, healthy: ARCHIVE}, effects_for_archived=False)
    assert_still_working(happ, worker, worker_id)


def _all_together(happ: App, spawn_hostile, rounds: int) -> None:
    """Every hostile case `rounds` times, with context-variable and plain jobs, all at once on
    two workers, the chaos suite's ownership sampler running throughout: every job as its case
    says, no overlapping attempts, no moment with two valid owners, the invariants at the end,
    both workers alive, one still claiming after the other stopped."""
    from chaos_harness import Sampler

    first = spawn_hostile(happ.url, **OPTIONS)
    first_id = first.wait_started()
    second = spawn_hostile(happ.url, **OPTIONS)
    second.wait_started()
    sampler = Sampler(happ)
    sampler.start()
    expected: dict[int, Case] = {}
    try:
        for _ in range(rounds):
            for case in CASES:
                expected[happ.enqueue(case.task, case.payload)] = case
            for task in ("h.ctxvar_async", "h.ctxvar_sync", "h.normal_async", "h.normal_sync"):
                expected[happ.enqueue(task, {})] = Case(task, ARCHIVE, 1)
        wait_done(happ, [first, second], expected, timeout=30 + 10 * rounds)
    finally:
        sampler.stop.set()
        sampler.join(5)
    for job_id, case in expected.items():
        check_outcome(happ, job_id, case.want, error=case.error, attempts=case.attempts)
        if case.result is not None:
            assert happ.get_job(job_id).result == case.result, (job_id, case.task)
        if case.task.startswith("h.ctxvar"):
            assert happ.get_job(job_id).result == {"seen_before": None,
                                                   "after": f"job-{job_id}"}
    assert_no_overlap(happ, expected)
    assert sampler.samples > 0 and not sampler.errors, sampler.errors[:3]
    assert not sampler.violations, f"two valid owners of one job: {sampler.violations[:5]}"
    check_invariants(happ, {i: c.want for i, c in expected.items()}, effects_for_archived=False)
    assert first.alive() and second.alive()
    assert second.stop() == 0
    assert_still_working(happ, first, first_id)


def test_all_hostile_handlers_together(happ: App, spawn_hostile) -> None:
    _all_together(happ, spawn_hostile, rounds=1)


@pytest.mark.soak
@pytest.mark.timeout(600)
def test_all_hostile_handlers_together_soak(happ: App, spawn_hostile) -> None:
    """The same, ten rounds (CI may run only the one-round form: `-m "not soak"`)."""
    _all_together(happ, spawn_hostile, rounds=10)
