"""Issue 24, defect 10: what a worker's own drain costs when jobs of a task its App does not
register sit ahead of its own in the same queue (two Apps on one database). FOREIGN such jobs
(priority 1) and OWN jobs of its own task (a no-op async handler) in a fresh queue; one
in-process worker at concurrency 20 drains until its own jobs are done (or 30 s pass). Two
variants, alternating: the hand-back alone (the claims take the foreign jobs again each time
they fall due: `Worker.skip_unknown = False`), and hand-back plus the claims passing over the
names met (`skip_tasks`, the default).

    .venv/bin/python benchmarks/foreign_tasks.py postgresql://…/db --foreign 2000 --own 10000
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time
import uuid

from claimq import App
from claimq.worker import Worker

GIVE_UP = 30.0  # seconds


def one(app: App, skip: bool, foreign: int, own: int) -> tuple[int, float, dict[str, int]]:
    """(own jobs done, seconds, the worker's counters) of one drain."""
    queue = "fb" + uuid.uuid4().hex[:8]
    app.enqueue_many([{"task": "other.x", "payload": {}, "queue": queue, "priority": 1}] * foreign)
    app.enqueue_many([{"task": "bench.noop", "payload": {"n": i}, "queue": queue}
                      for i in range(own)])

    async def run() -> tuple[int, float, dict[str, int]]:
        worker = Worker(app, queues=[queue], concurrency=20, poll_interval=0.05,
                        schedules=False, prune=False)
        worker.skip_unknown = skip
        running = asyncio.create_task(worker.arun(install_signals=False))
        began = time.perf_counter()
        while time.perf_counter() - began < GIVE_UP:
            left = await asyncio.to_thread(app.list_jobs, "live", queue=queue,
                                           task="bench.noop", limit=1)
            if not left:
                break
            await asyncio.sleep(0.05)
        took = time.perf_counter() - began
        worker.stop()
        counters = await running
        done = len(await asyncio.to_thread(app.list_jobs, "archive", queue=queue,
                                           limit=own + 1))
        return done, took, counters

    return asyncio.run(run())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("database")
    p.add_argument("--foreign", type=int, default=2000)
    p.add_argument("--own", type=int, default=10_000)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    logging.getLogger("claimq").setLevel(logging.ERROR)  # one task.unknown warning per run
    app = App(a.database)
    app.migrate()

    @app.task(name="bench.noop")
    async def noop(n: int) -> None:
        pass

    for r in range(1, a.rounds + 1):
        for skip in (False, True):
            done, took, c = one(app, skip, a.foreign, a.own)
            print(f"round {r} skip_tasks={'on ' if skip else 'off'}: {done} of {a.own} own "
                  f"jobs in {took:.1f}s = {done / took:,.0f} jobs/s; handed back "
                  f"{c.get('handed_back', 0)}, claims {c.get('claims', 0)}", flush=True)
    app.close()


if __name__ == "__main__":
    main()
