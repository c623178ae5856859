"""Code that runs in separate OS processes (multiprocessing, spawn context). Each function
opens its own App on the database URL it is given; nothing is shared but the database."""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from datetime import datetime
from multiprocessing.connection import Connection
from typing import Any

from claimq import App, Job, LeaseLost
from claimq.backends.base import Completion, Failure, Owned
from claimq.clock import FakeClock


def entry(target: Callable[..., Any], index: int, args: tuple[Any, ...], results: Any) -> None:
    """Run `target(*args)` and report ("ok", value) or ("error", traceback) on `results`."""
    try:
        results.put((index, "ok", target(*args)))
    except BaseException:  # noqa: BLE001 - everything goes back to the test process
        results.put((index, "error", traceback.format_exc()))


# -- (a) batch claims over many jobs ------------------------------------------------------------


def claim_complete_loop(url: str, worker: str, queue: str, limit: int, barrier: Any) -> list[
    tuple[int, str]
]:
    """Claim batches until the queue is drained; start and complete each batch. Returns every
    (id, token) this process was handed."""
    return claim_complete_counting(url, worker, queue, limit, barrier)[0]


def claim_complete_counting(url: str, worker: str, queue: str, limit: int, barrier: Any
                            ) -> tuple[list[tuple[int, str]], dict[str, int]]:
    """claim_complete_loop, and the deadlocks and lock-wait timeouts its backend retried (a
    backend that counts none: {})."""
    got: list[tuple[int, str]] = []
    with App(url) as app:
        backend = app.backend
        app.queues()  # connect before the start line
        barrier.wait()
        empty = 0
        while empty < 5:
            jobs = app.claim(worker, [queue], limit=limit, lease=300)
            if not jobs:
                empty += 1  # PostgreSQL may skip rows another claimer holds locked: look again
                time.sleep(0.01)
                continue
            empty = 0
            owned = [Owned(j.id, j.claim_token or "") for j in jobs]
            started = backend.start(owned, None)
            assert sorted(s.id for s in started) == sorted(o.id for o in owned), "start lost"
            done = backend.complete([Completion(o.id, o.token) for o in owned])
            assert done == {o.id for o in owned}, "complete lost a job this process owns"
            got.extend((o.id, o.token) for o in owned)
        retries = dict(getattr(backend, "retries", {}))
    return got, retries


# -- (b) bulkhead -------------------------------------------------------------------------------


def bulkhead_claimer(url: str, worker: str, queue: str, hold: float, barrier: Any) -> dict[
    str, Any
]:
    """Claim (limit 5), start, hold, complete, until the queue is empty. Returns, per job, the
    interval in which this process certainly owned it: from the moment claim() returned to the
    moment complete() was called (time.monotonic is one clock for every process on a host)."""
    intervals: list[tuple[float, float]] = []
    biggest = 0
    with App(url) as app:
        app.queues()
        barrier.wait()
        while True:
            jobs = app.claim(worker, [queue], limit=5, lease=60)
            if not jobs:
                [info] = [q for q in app.queues() if q.name == queue]
                if info.pending + info.scheduled + info.fetched + info.processing == 0:
                    break
                time.sleep(0.002)
                continue
            owned_from = time.monotonic()
            biggest = max(biggest, len(jobs))
            for job in jobs:
                app.start(job)
            time.sleep(hold)
            owned_until = time.monotonic()
            for job in jobs:
                app.complete(job)
            intervals.extend((owned_from, owned_until) for _ in jobs)
    return {"intervals": intervals, "biggest_claim": biggest}


# -- (c) an agent that does what the test process tells it ---------------------------------------


def agent(url: str, name: str, pipe: Connection, start: datetime | None = None) -> None:
    """Serve commands from the test process: claim, the owner's transitions on the Jobs this
    process was handed, their batched backend forms, reap, and a transaction of its own. With
    `start`, the process runs on a FakeClock from that time, which `advance` moves."""
    clock = None if start is None else FakeClock(start=start)
    with App(url, clock=clock) as app:
        held: dict[int, Job] = {}
        tx: Any = None
        while True:
            command, args = pipe.recv()
            if command == "stop":
                pipe.send("stopped")
                return
            try:
                if command == "advance":
                    assert clock is not None, "this agent runs on the system clock"
                    reply: Any = clock.advance(args["seconds"]).isoformat()
                elif command == "tx_begin":
                    tx = _begin(app)
                    reply = "ok"
                elif command.startswith("tx_"):
                    reply = _serve_tx(app, tx, command, args)
                else:
                    reply = _serve(app, name, held, command, args)
            except LeaseLost:
                reply = "LeaseLost"
            except Exception as exc:  # noqa: BLE001 - reported to the test, which fails
                reply = f"error: {exc!r}"
            pipe.send(reply)


def _serve(app: App, name: str, held: dict[int, Job], command: str, args: dict[str, Any]) -> Any:
    if command == "claim":
        jobs = app.claim(name, args.get("queues"), args.get("limit", 1), args.get("lease"))
        held.update({j.id: j for j in jobs})
        return [(j.id, j.claim_token) for j in jobs]
    if command == "reap":
        result = app.reap()
        return {"requeued": result.requeued, "dead": result.dead}
    if command in ("start", "heartbeat", "complete", "fail", "release"):
        job = held[args["id"]]
        if command == "start":
            app.start(job)
        elif command == "heartbeat":
            app.heartbeat(job)
        elif command == "complete":
            app.complete(job, {"by": name})
        elif command == "fail":
            app.fail(job, RuntimeError(f"{name} failed it"))
        else:
            app.release(job)
        return "ok"
    if command == "batched":
        jobs = [held[i] for i in args["ids"]]
        owned = [Owned(j.id, j.claim_token or "") for j in jobs]
        backend = app.backend
        return {
            "start": sorted(s.id for s in backend.start(owned, None)),
            "heartbeat_lost": sorted(backend.heartbeat(owned, 30).lost),
            "complete": sorted(backend.complete([Completion(o.id, o.token) for o in owned])),
            "fail_lost": sorted(
                backend.fail(
                    [Failure(o.id, o.token, {"error": "E"}, 0.0, "retries_exhausted")
                     for o in owned]
                ).lost
            ),
            "release": sorted(backend.release(owned, 0.0)),
        }
    raise ValueError(f"unknown command {command!r}")


def _begin(app: App) -> Any:
    backend: Any = app.backend
    if backend.kind == "sqlite":
        conn = backend.connect()
        conn.execute("BEGIN IMMEDIATE")
        return conn
    if backend.kind == "mysql":
        conn = backend.connect()
        conn.cursor().execute("START TRANSACTION")
        return conn
    import psycopg

    return psycopg.connect(backend.conninfo)  # autocommit off: a transaction begins at once


def _serve_tx(app: App, tx: Any, command: str, args: dict[str, Any]) -> Any:
    if command == "tx_enqueue":
        return app.enqueue(
            "t", args.get("payload", {}), queue=args.get("queue", "default"),
            idempotency_key=args.get("key"), conn=tx,
        )
    if command == "tx_crash":
        os._exit(17)  # die with the transaction open: no commit, no rollback, no cleanup
    _finish(app, tx, commit=command == "tx_commit")
    return "ok"


def _finish(app: App, tx: Any, *, commit: bool) -> None:
    if app.backend.kind == "sqlite":
        tx.execute("COMMIT" if commit else "ROLLBACK")
    elif commit:
        tx.commit()
    else:
        tx.rollback()
    tx.close()


# -- (d) idempotent enqueues --------------------------------------------------------------------


def enqueue_same_key(url: str, key: str, queue: str, times: int, barrier: Any) -> list[int]:
    with App(url) as app:
        app.queues()
        barrier.wait()
        return [app.enqueue("t", {"pid": os.getpid()}, queue=queue, idempotency_key=key)
                for _ in range(times)]


def enqueue_own_keys(url: str, prefix: str, queue: str, count: int, barrier: Any) -> list[int]:
    with App(url) as app:
        app.queues()
        barrier.wait()
        return [app.enqueue("t", queue=queue, idempotency_key=f"{prefix}-{i}")
                for i in range(count)]


# -- (e) transactions that commit or roll back while others claim -----------------------------


def rounds_in_transactions(url: str, queue: str, rounds: int, barrier: Any) -> dict[str, list[int]]:
    """Enqueue one job per round inside a transaction of this process; hold it open a moment,
    then commit odd rounds and roll back even ones."""
    committed: list[int] = []
    rolled_back: list[int] = []
    with App(url) as app:
        app.queues()
        barrier.wait()
        for i in range(rounds):
            tx = _begin(app)
            job_id = app.enqueue("t", {"round": i}, queue=queue, conn=tx)
            time.sleep(0.01)
            _finish(app, tx, commit=bool(i % 2))
            (committed if i % 2 else rolled_back).append(job_id)
    return {"committed": committed, "rolled_back": rolled_back}


def claim_until_told(url: str, worker: str, queue: str, stop_file: str, barrier: Any) -> list[int]:
    """Claim, start and complete whatever shows up, until `stop_file` exists and the queue is
    empty. Returns the ids this process completed."""
    seen: list[int] = []
    with App(url) as app:
        app.queues()
        barrier.wait()
        while True:
            jobs = app.claim(worker, [queue], limit=10, lease=60)
            for job in jobs:
                app.start(job)
                app.complete(job)
                seen.append(job.id)
            if not jobs:
                if os.path.exists(stop_file):
                    [info] = [q for q in app.queues() if q.name == queue] or [None]
                    if info is None or info.pending + info.fetched + info.processing == 0:
                        break
                time.sleep(0.005)
    return seen
