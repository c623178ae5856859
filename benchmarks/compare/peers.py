"""Drivers for claimq's peers, run inside benchmarks/compare/.peers-venv by compare.py.

    .peers-venv/bin/python peers.py SYSTEM --dsn postgresql://... --jobs 20000 --concurrency 20

SYSTEM is pgqueuer, procrastinate, chancy (PostgreSQL) or huey (SQLite: --file, --processes).
Each run does the same workload as `benchmarks/bench.py --mode burn`: bulk-enqueue N no-op jobs
(timed), then drain them with one worker process (huey: --processes) at the given concurrency.
The drain is timed from the first handler call to the moment the last job is recorded as
done: a poller thread watches the system's own table (every 5 ms) for PostgreSQL peers; huey's
completion signal counts for huey. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable
from importlib import metadata
from typing import Any

POLL = 0.002
_first_call: float | None = None
_calls = 0
_expected = 0
all_called = threading.Event()


def mark() -> None:
    """Called by every no-op handler: the first call starts the drain clock; the last lets
    the poller start looking for the final completion records."""
    global _first_call, _calls
    if _first_call is None:
        _first_call = time.monotonic()
    _calls += 1
    if _calls >= _expected:
        all_called.set()


class Poller(threading.Thread):
    """Once every handler has been called, polls `sql` (one integer: jobs not yet recorded as
    done) on its own connection until it reads 0. It polls only after the last handler call,
    so it puts no load on the database or the CPU during the drain."""

    def __init__(self, dsn: str, sql: str) -> None:
        super().__init__(name="peer-poller", daemon=True)
        self.dsn, self.sql = dsn, sql
        self.done = threading.Event()
        self.stop = threading.Event()
        self.done_at = 0.0
        self.error: BaseException | None = None

    def run(self) -> None:
        import psycopg

        try:
            with psycopg.connect(self.dsn, autocommit=True) as conn:
                while not all_called.wait(0.05):
                    if self.stop.is_set():
                        return
                while not self.stop.is_set():
                    row = conn.execute(self.sql).fetchone()
                    if row is not None and row[0] == 0:
                        self.done_at = time.monotonic()
                        break
                    time.sleep(POLL)
        except BaseException as exc:  # noqa: BLE001 - reported by the driver
            self.error = exc
        finally:
            self.done.set()

    async def wait(self, timeout: float, worker: asyncio.Future[Any] | None = None) -> None:
        """Until the jobs are done; raises if the worker task ends (fails) before that."""
        waiter = asyncio.ensure_future(asyncio.to_thread(self.done.wait, timeout))
        pending = {waiter} if worker is None else {waiter, worker}
        finished, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        if waiter not in finished:
            self.stop.set()
            assert worker is not None
            worker.result()  # raises the worker's error
            raise RuntimeError("the worker stopped before the jobs were done")
        if not waiter.result():
            self.stop.set()
            raise TimeoutError(f"jobs not done after {timeout:.0f}s")
        if self.error is not None:
            raise self.error


def scalar(dsn: str, sql: str) -> Any:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(sql).fetchone()
        return None if row is None else row[0]


def analyze(dsn: str) -> None:
    """ANALYZE the database after the bulk enqueue (outside the timing), for every system alike:
    the planner then sees the backlog, as it would once autovacuum has run."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ANALYZE")


def result(
    system: str, package: str, jobs: int, enq: float, first: float | None, last: float,
    verify: dict[str, Any], settings: dict[str, Any],
) -> dict[str, Any]:
    drain = last - (first or last)
    return {
        "system": system,
        "package": package,
        "version": metadata.version(package),
        "jobs": jobs,
        "enqueue": {"seconds": enq, "jobs_per_s": jobs / enq if enq > 0 else None},
        "drain": {"seconds": drain, "jobs_per_s": jobs / drain if drain > 0 else None},
        "verify": verify,
        "settings": settings,
    }


async def timed_enqueue(jobs: int, chunk: int, enqueue: Callable[[int], Any]) -> float:
    started = time.perf_counter()
    for offset in range(0, jobs, chunk):
        await enqueue(min(chunk, jobs - offset))
    return time.perf_counter() - started


# -- pgqueuer -----------------------------------------------------------------------------------


async def run_pgqueuer(a: argparse.Namespace) -> dict[str, Any]:
    import asyncpg
    from pgqueuer import AsyncpgDriver, QueueManager
    from pgqueuer.queries import Queries

    conn = await asyncpg.connect(a.dsn)
    driver = AsyncpgDriver(conn)
    queries = Queries(driver)
    await queries.install()
    qm = QueueManager(queries)
    batch = a.concurrency // 2  # pgqueuer needs max_concurrent_tasks >= 2 x batch_size

    @qm.entrypoint("noop")
    async def noop(job: Any) -> None:
        mark()

    async def enqueue(n: int) -> None:
        await queries.enqueue(["noop"] * n, [None] * n, [0] * n)

    enq = await timed_enqueue(a.jobs, a.enqueue_batch, enqueue)
    if a.analyze:
        analyze(a.dsn)
    poller = Poller(a.dsn, "SELECT count(*) FROM pgqueuer")
    poller.start()
    run = asyncio.create_task(qm.run(batch_size=batch, max_concurrent_tasks=a.concurrency))
    try:
        await poller.wait(a.timeout, run)
    finally:
        qm.shutdown.set()
        await run
    verify = {
        "left": scalar(a.dsn, "SELECT count(*) FROM pgqueuer"),
        "succeeded": scalar(a.dsn, "SELECT count(DISTINCT job_id) FROM pgqueuer_log "
                                   "WHERE status = 'successful'"),
    }
    verify["ok"] = verify["left"] == 0 and verify["succeeded"] == a.jobs
    await conn.close()
    return result("pgqueuer", "pgqueuer", a.jobs, enq, _first_call, poller.done_at, verify, {
        "driver": f"asyncpg {metadata.version('asyncpg')}, one connection (AsyncpgDriver)",
        "batch_size": batch, "max_concurrent_tasks": a.concurrency,
        "enqueue": f"Queries.enqueue(lists) in chunks of {a.enqueue_batch}",
    })


# -- procrastinate ------------------------------------------------------------------------------


async def run_procrastinate(a: argparse.Namespace) -> dict[str, Any]:
    import procrastinate

    app = procrastinate.App(
        connector=procrastinate.PsycopgConnector(conninfo=a.dsn, min_size=4, max_size=10)
    )

    @app.task(name="noop", queue="bench")
    async def noop() -> None:
        mark()

    async with app.open_async():
        await app.schema_manager.apply_schema_async()

        async def enqueue(n: int) -> None:
            await noop.batch_defer_async(*({} for _ in range(n)))

        enq = await timed_enqueue(a.jobs, a.enqueue_batch, enqueue)
        if a.analyze:
            analyze(a.dsn)
        poller = Poller(a.dsn, "SELECT count(*) FROM procrastinate_jobs "
                               "WHERE status IN ('todo', 'doing')")
        poller.start()
        worker = asyncio.create_task(app.run_worker_async(
            concurrency=a.concurrency, wait=False,
            install_signal_handlers=False, fetch_job_polling_interval=1.0,
        ))
        try:
            await poller.wait(a.timeout, worker)
        finally:
            await asyncio.wait_for(worker, 60)
    verify = {
        "left": scalar(a.dsn, "SELECT count(*) FROM procrastinate_jobs "
                              "WHERE status <> 'succeeded'"),
        "succeeded": scalar(a.dsn, "SELECT count(*) FROM procrastinate_jobs "
                                   "WHERE status = 'succeeded' AND attempts <= 1"),
    }
    verify["ok"] = verify["left"] == 0 and verify["succeeded"] == a.jobs
    return result("procrastinate", "procrastinate", a.jobs, enq, _first_call, poller.done_at,
                  verify, {
                      "connector": "PsycopgConnector, pool 4..10",
                      "worker": f"run_worker_async(concurrency={a.concurrency}, "
                                "wait=False, listen_notify default)",
                      "enqueue": f"Task.batch_defer_async in chunks of {a.enqueue_batch}",
                  })


# -- chancy -------------------------------------------------------------------------------------


async def chancy_noop() -> None:
    mark()


async def run_chancy(a: argparse.Namespace) -> dict[str, Any]:
    import logging

    from chancy import Chancy, Job, Queue, Worker

    log = logging.getLogger("chancy-bench")
    log.setLevel(logging.WARNING)
    async with Chancy(a.dsn, log=log) as chancy:
        await chancy.migrate()
        await chancy.declare(Queue(
            name="bench", concurrency=a.concurrency,
            executor="chancy.executors.asyncex.AsyncExecutor",
            polling_interval=1, eager_polling=True,
        ))
        job = Job.from_func(chancy_noop, queue="bench")

        async def enqueue(n: int) -> None:
            async for _refs in chancy.push_many([job] * n, batch_size=n):
                pass

        enq = await timed_enqueue(a.jobs, a.enqueue_batch, enqueue)
        if a.analyze:
            analyze(a.dsn)
        poller = Poller(a.dsn, "SELECT count(*) FROM chancy_jobs WHERE state <> 'succeeded'")
        poller.start()
        async with Worker(chancy, register_signal_handlers=False):
            await poller.wait(a.timeout)
        verify = {
            "left": scalar(a.dsn, "SELECT count(*) FROM chancy_jobs WHERE state <> 'succeeded'"),
            "succeeded": scalar(a.dsn, "SELECT count(*) FROM chancy_jobs "
                                       "WHERE state = 'succeeded' AND attempts <= 1"),
        }
    verify["ok"] = verify["left"] == 0 and verify["succeeded"] == a.jobs
    return result("chancy", "chancy", a.jobs, enq, _first_call, poller.done_at, verify, {
        "queue": f"concurrency={a.concurrency}, AsyncExecutor, polling_interval=1, "
                 "eager_polling=True",
        "worker": "defaults (send_outgoing_interval 1 s, default plugins)",
        "enqueue": f"Chancy.push_many in chunks of {a.enqueue_batch}",
    })


# -- huey (SQLite) ------------------------------------------------------------------------------


def run_huey(a: argparse.Namespace) -> dict[str, Any]:
    from huey import SqliteHuey
    from huey.signals import SIGNAL_COMPLETE, SIGNAL_EXECUTING

    ctx = multiprocessing.get_context("fork")  # huey's process workers fork from the consumer
    done = ctx.Value("q", 0)
    first = ctx.Value("d", 0.0)
    last = ctx.Value("d", 0.0)
    huey = SqliteHuey("bench", filename=a.file)

    @huey.task()
    def noop() -> None:
        pass

    @huey.signal(SIGNAL_EXECUTING)
    def on_start(signal: Any, task: Any, *args: Any) -> None:
        if not first.value:
            with first.get_lock():
                if not first.value:
                    first.value = time.monotonic()

    @huey.signal(SIGNAL_COMPLETE)
    def on_complete(signal: Any, task: Any, *args: Any) -> None:
        with done.get_lock():
            done.value += 1
            last.value = time.monotonic()

    started = time.perf_counter()
    for _ in range(a.jobs):
        noop()  # huey has no bulk enqueue: one INSERT (one transaction) per job
    enq = time.perf_counter() - started
    def consume() -> None:  # the consumer is made in its own process (it forks the workers)
        huey.create_consumer(workers=a.processes, worker_type="process", periodic=False).run()

    proc = ctx.Process(target=consume, name="huey-consumer")
    proc.start()
    deadline = time.monotonic() + a.timeout
    while done.value < a.jobs:
        if time.monotonic() > deadline or not proc.is_alive():
            break
        time.sleep(POLL)
    if proc.is_alive() and proc.pid:
        os.kill(proc.pid, 2)  # SIGINT: huey's graceful stop
    proc.join(30)
    if proc.is_alive():
        proc.kill()
        proc.join()
    verify = {"left": huey.pending_count(), "succeeded": done.value}
    verify["ok"] = verify["left"] == 0 and verify["succeeded"] == a.jobs
    return result("huey", "huey", a.jobs, enq, first.value or None, last.value, verify, {
        "storage": "SqliteHuey defaults (WAL, fsync=None: SQLite's default synchronous=FULL)",
        "consumer": f"workers={a.processes}, worker_type=process, periodic=False, "
                    "default polling (0.1 s, backoff 1.15)",
        "enqueue": "one task call (one transaction) per job: huey has no bulk enqueue",
        "delivery": "at most once: a dequeued task is deleted before it runs",
    })


# -- main ---------------------------------------------------------------------------------------


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("system", choices=["pgqueuer", "procrastinate", "chancy", "huey"])
    p.add_argument("--dsn", default="")
    p.add_argument("--file", default="huey-bench.db")
    p.add_argument("--jobs", type=int, default=20_000)
    p.add_argument("--concurrency", type=int, default=20)
    p.add_argument("--processes", type=int, default=1)
    p.add_argument("--enqueue-batch", type=int, default=5000)
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--analyze", action="store_true", help="ANALYZE after the bulk enqueue")
    a = p.parse_args()
    global _expected
    _expected = a.jobs
    if a.system == "huey":
        out = run_huey(a)
    else:
        runner = {"pgqueuer": run_pgqueuer, "procrastinate": run_procrastinate,
                  "chancy": run_chancy}[a.system]
        out = asyncio.run(runner(a))
    out["settings"]["python"] = sys.version.split()[0]
    print(json.dumps(out))
    sys.stdout.flush()
    if not out["verify"]["ok"]:
        sys.exit(1)


if __name__ == "__main__":
    # Run as the module `peers`, so chancy can import its job function by name.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import peers

    peers.main()
