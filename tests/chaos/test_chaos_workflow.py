"""Workflows under kills: a random 1,000-job DAG (7 levels, a fan-in of 60, about 2 % of the
jobs failing for good, edges that cancel or run anyway) run by claimq's supervisor with four
worker processes while the test SIGKILLs one of them every second. Every job starts only
after each of its dependencies ended (the handlers record start and end times), none runs twice
unless its lease was lost, and every job ends as the policies say."""

from __future__ import annotations

import os
import random
import signal
import time
from collections import defaultdict

import chaos_biz as biz
import pytest
from chaos_harness import worker_children

from claimq import App, Workflow
from claimq.job import DeadReason, Status

LEVELS = (100, 200, 200, 200, 150, 149)  # then the fan-in: 1,000 jobs
FAN_IN = 60
OPTIONS = {"processes": 4, "concurrency": 8, "lease": 2.0, "poll_interval": 0.1, "grace": 1.0}

pytestmark = pytest.mark.timeout(420)


Parents = dict[int, list[tuple[int, str]]]


def random_dag(rng: random.Random) -> tuple[list[dict[str, object]], Parents]:
    """Nodes (payloads) and, per node, its parents with each edge's policy."""
    nodes: list[dict[str, object]] = []
    parents: Parents = {}
    levels: list[list[int]] = []
    for size in LEVELS:
        level = []
        for _ in range(size):
            n = len(nodes)
            nodes.append({"node": n, "fail": rng.random() < 0.02,
                          "sleep": 0.5 if rng.random() < 0.2 else 0.0})
            if levels:
                chosen = rng.sample(levels[-1], rng.randint(1, 3))
                if len(levels) > 1 and rng.random() < 0.3:
                    chosen.append(rng.choice(levels[rng.randrange(len(levels) - 1)]))
                parents[n] = [(p, "run" if rng.random() < 0.3 else "cancel") for p in chosen]
            level.append(n)
        levels.append(level)
    last = len(nodes)
    nodes.append({"node": last, "fail": False, "sleep": 0.0})
    parents[last] = [(p, "run") for p in rng.sample(levels[-1] + levels[-2], FAN_IN)]
    return nodes, parents


def expected_ends(nodes: list[dict[str, object]], parents: Parents) -> dict[int, str]:
    """Each node's end by the rule: cancelled when a dependency behind a "cancel" edge ended
    dead, else it runs: dead when it fails by design, else succeeded."""
    end: dict[int, str] = {}
    for node in nodes:  # nodes are in topological order (each level after the one before)
        n = int(str(node["node"]))
        if any(end[p] != "succeeded" and policy == "cancel" for p, policy in parents.get(n, [])):
            end[n] = DeadReason.DEPENDENCY_FAILED
        else:
            end[n] = DeadReason.PERMANENT_ERROR if node["fail"] else "succeeded"
    return end


def test_a_random_dag_under_repeated_kills(capp: App, spawn) -> None:
    """Slow: a thousand jobs with per-run business writes, through four worker processes of
    which one is SIGKILLed every second (each kill costs its jobs a 2 s lease)."""
    rng = random.Random(os.getpid())
    nodes, parents = random_dag(rng)
    wf = Workflow("chaos")
    steps = []
    for node in nodes:
        n = int(str(node["node"]))
        after = [(steps[p], policy) for p, policy in parents.get(n, [])]
        steps.append(wf.add("chaos.step", node, after=after))  # type: ignore[arg-type]
    handle = capp.enqueue_workflow(wf)
    ids = handle.job_ids
    assert len(ids) == 1000

    supervisor = spawn(capp.url, **OPTIONS)
    supervisor.wait_log(r"worker \S+ started:", count=4, timeout=40)
    kills = 0
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        time.sleep(1.0)
        if handle.status().state != "running":
            break
        children = worker_children(supervisor.pid)
        if children:
            os.kill(rng.choice(children), signal.SIGKILL)
            kills += 1
    status = handle.status()
    assert status.state != "running", f"not finished in time: {status.counts}"
    assert supervisor.stop(timeout=30) == 0

    jobs = {j.id: j for j in handle.jobs()}
    runs: dict[int, list[biz.Run]] = defaultdict(list)
    for run in biz.runs(capp):
        runs[run.job_id].append(run)
    want = expected_ends(nodes, parents)
    index = {job_id: n for n, job_id in enumerate(ids)}

    for job_id, job in jobs.items():
        n = index[job_id]
        end = "succeeded" if job.status == Status.SUCCEEDED else job.reason
        assert end == want[n], (n, job.status, job.reason, job.errors[-2:])
        mine = runs[job_id]
        if end == DeadReason.DEPENDENCY_FAILED:
            assert mine == [], f"node {n} ran though a dependency failed"
            continue
        # none twice unless its lease was lost
        lost = sum(1 for e in job.errors if e.get("error") == "LeaseExpired")
        assert 1 <= len(mine) <= 1 + lost, (n, len(mine), job.errors)
        # started only after every dependency's run ended
        first_start = min(r.started for r in mine)
        for p, _ in parents.get(n, []):
            if want[p] == DeadReason.DEPENDENCY_FAILED:
                continue  # never ran (cancelled), behind a "run" edge
            ended = [r.ended for r in runs[ids[p]] if r.ended is not None]
            assert ended and max(ended) <= first_start, (
                f"node {n} started at {first_start}, before dependency {p} ended at {ended}")

    fan_in = jobs[ids[-1]]
    assert fan_in.status == Status.SUCCEEDED and fan_in.result == len(ids) - 1
    dead = sum(1 for e in want.values() if e != "succeeded")
    assert status.counts == {k: v for k, v in (("succeeded", len(ids) - dead),
                                               ("dead", dead)) if v}
    assert status.state == ("failed" if dead else "succeeded")
    killed_mid_run = sum(1 for rs in runs.values() for r in rs if r.ended is None)
    assert kills >= 3 and killed_mid_run > 0, (kills, killed_mid_run)
    print(f"workflow chaos: {kills} kills, {killed_mid_run} runs killed mid-run, "
          f"{dead} dead by design or cascade, counts {status.counts}")
