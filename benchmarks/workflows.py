"""Workflows' cost (issue 26's benchmark checks), in one run on PostgreSQL:

- fan-out/fan-in: a workflow of N no-op jobs and one job after all of them, drained by one
  worker process at concurrency 20, against a plain drain of the same number of jobs; the
  repetitions alternate, and the figure is the workflow's drain as a fraction of the plain
  one's (target: at least 70 %).
- chain step latency: a chain of M no-op jobs run by one idle worker; one step's latency is
  the time from a job's end to the next one's start, both on the database's clock (archive
  finished_at and started_at; target p50 at most 5 ms).

A drain's rate is its jobs over the span from the first start to the last end (archive, the
database's clock), so enqueueing and the worker's start-up are outside it.

    .venv/bin/python benchmarks/workflows.py --reps 5 --out benchmarks/results/workflows.json
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psycopg

from claimq import App, Workflow, call

ROOT = Path(__file__).resolve().parent.parent
WORKER = """
import asyncio, os, sys
from claimq import App, Worker
app = App(os.environ["CLAIMQ_DATABASE_URL"])

@app.task(name="bench.noop")
async def noop(n: int = 0) -> None:
    pass

Worker(app, concurrency=int(sys.argv[1]), poll_interval=0.05).run()
"""


def fresh(base: str) -> tuple[App, str]:
    schema = f"wfb_{uuid.uuid4().hex[:10]}"
    url = f"{base}?schema={schema}"
    app = App(url)
    app.migrate()
    return app, schema


def drop(base: str, schema: str) -> None:
    with psycopg.connect(base, autocommit=True) as c:
        c.execute(f"DROP SCHEMA {schema} CASCADE")


def run_worker(url: str, app: App, expected: int, concurrency: int) -> None:
    env = {**os.environ, "CLAIMQ_DATABASE_URL": url}
    proc = subprocess.Popen([sys.executable, "-c", WORKER, str(concurrency)], env=env,
                            cwd=ROOT)
    try:
        while True:
            time.sleep(0.05)
            finished = len(app.list_jobs("archive", limit=expected + 1))
            if finished >= expected:
                return
            if proc.poll() is not None:
                raise RuntimeError(f"the worker exited with {proc.returncode}")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def span(app: App, schema: str, base: str) -> tuple[int, float]:
    with psycopg.connect(base, autocommit=True) as c:
        row = c.execute(f"SELECT count(*), extract(epoch FROM max(finished_at) - min(started_at))"
                        f" FROM {schema}.archive").fetchone()
    assert row is not None
    return int(row[0]), float(row[1])


def drain(base: str, jobs: int, workflow: bool) -> float:
    app, schema = fresh(base)
    url = f"{base}?schema={schema}"
    try:
        if workflow:
            wf = Workflow("fan-out")
            members = [wf.add("bench.noop", {"n": n}) for n in range(jobs)]
            wf.add("bench.noop", after=members)
            app.enqueue_workflow(wf)
        else:
            app.enqueue_many({"task": "bench.noop", "payload": {"n": n}}
                             for n in range(jobs + 1))
        run_worker(url, app, jobs + 1, 20)
        count, seconds = span(app, schema, base)
        assert count == jobs + 1
        return count / seconds
    finally:
        app.close()
        drop(base, schema)


def chain_latency(base: str, steps: int) -> list[float]:
    app, schema = fresh(base)
    url = f"{base}?schema={schema}"
    try:
        wf = Workflow("chain")
        wf.chain(*(call("bench.noop", {"n": n}) for n in range(steps)))
        handle = app.enqueue_workflow(wf)
        run_worker(url, app, steps, 1)
        with psycopg.connect(base, autocommit=True) as c:
            rows = c.execute(
                f"SELECT id, started_at, finished_at FROM {schema}.archive ORDER BY id").fetchall()
        assert [r[0] for r in rows] == handle.job_ids
        return [(b[1] - a[2]).total_seconds() * 1000
                for a, b in zip(rows, rows[1:], strict=False)]
    finally:
        app.close()
        drop(base, schema)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--chain", type=int, default=1_000)
    parser.add_argument("--out", type=Path, default=None)
    a = parser.parse_args()

    runs: dict[str, list[float]] = {"plain": [], "fan-out": []}
    for rep in range(a.reps):
        order = ["plain", "fan-out"] if rep % 2 == 0 else ["fan-out", "plain"]
        for name in order:
            rate = drain(a.database, a.jobs, name == "fan-out")
            runs[name].append(rate)
            print(f"rep {rep + 1} {name}: {rate:,.0f} jobs/s", file=sys.stderr, flush=True)
    ratios = [f / p for f, p in zip(runs["fan-out"], runs["plain"], strict=True)]
    latencies = chain_latency(a.database, a.chain)
    q = statistics.quantiles(latencies, n=100)
    result = {
        "command": " ".join(["benchmarks/workflows.py", *sys.argv[1:]]),
        "jobs": a.jobs,
        "drain_jobs_per_s": runs,
        "fan_out_over_plain_per_rep": ratios,
        "fan_out_over_plain_of_medians": statistics.median(runs["fan-out"])
        / statistics.median(runs["plain"]),
        "chain_steps": a.chain,
        "chain_step_latency_ms": {"p50": statistics.median(latencies), "p90": q[89],
                                  "p99": q[98], "max": max(latencies)},
        "loadavg": os.getloadavg()[0],
    }
    print(json.dumps(result, indent=2))
    if a.out:
        a.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
