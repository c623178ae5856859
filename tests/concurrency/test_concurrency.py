"""Proofs with separate OS processes (multiprocessing, spawn) against a real SQLite file and a
real PostgreSQL server: exclusive claims, the bulkhead, fencing tokens, idempotency keys and
transactions that roll back."""

from __future__ import annotations

import multiprocessing as mp
import queue as queue_mod
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import concurrency_procs as procs
import pytest
from polling import wait_until

from claimq import App, JobNotFound, Status

CTX = mp.get_context("spawn")
ALL = 100_000


def run_processes(
    target: Callable[..., Any], args: list[tuple[Any, ...]], timeout: float = 120
) -> list[Any]:
    """Run target(*args[i]) in len(args) spawned processes at once; their return values, in
    order. A barrier (appended to each args tuple) lines them up after their imports."""
    barrier = CTX.Barrier(len(args))
    results = CTX.Queue()
    workers = [
        CTX.Process(target=procs.entry, args=(target, i, (*a, barrier), results), daemon=True)
        for i, a in enumerate(args)
    ]
    for w in workers:
        w.start()
    out: dict[int, Any] = {}
    deadline = time.monotonic() + timeout
    try:
        while len(out) < len(workers):
            try:
                index, status, value = results.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue_mod.Empty:
                raise AssertionError(f"processes did not finish within {timeout}s") from None
            if status != "ok":
                raise AssertionError(f"process {index} failed:\n{value}")
            out[index] = value
    finally:
        for w in workers:
            w.join(timeout=10)
            if w.is_alive():
                w.kill()
    assert all(w.exitcode == 0 for w in workers), [w.exitcode for w in workers]
    return [out[i] for i in range(len(workers))]


def queue_info(app: App, name: str) -> Any:
    [info] = [q for q in app.queues() if q.name == name]
    return info


# -- (a) every job claimed exactly once ---------------------------------------------------------


def test_batch_claims_from_eight_processes_hand_out_each_job_once(app: App, db_url: str) -> None:
    total, processes = 20_000, 8
    ids: list[int] = []
    for start in range(0, total, 5_000):
        ids += app.enqueue_many(
            [{"task": "t", "queue": "bulk", "payload": {"n": n}}
             for n in range(start, start + 5_000)]
        )
    assert len(set(ids)) == total
    records = run_processes(
        procs.claim_complete_loop,
        [(db_url, f"w{i}", "bulk", 50) for i in range(processes)],
    )
    handed = [(job_id, token, f"w{i}") for i, got in enumerate(records) for job_id, token in got]
    claimed = Counter(job_id for job_id, _, _ in handed)
    assert len(handed) == total, f"{len(handed)} claims for {total} jobs"
    assert set(claimed) == set(ids)
    assert max(claimed.values()) == 1, "a job was handed to two owners"
    assert len({token for _, token, _ in handed}) == total, "tokens must be unique"
    assert sum(1 for got in records if got) >= 2, "the claims were not concurrent at all"
    # Nothing is left live; the archive holds every job once, completed by whoever claimed it.
    assert app.list_jobs("live", limit=ALL) == []
    info = queue_info(app, "bulk")
    assert (info.archived, info.dead, info.pending, info.fetched, info.processing) == (
        total, 0, 0, 0, 0
    )
    archived = app.list_jobs("archive", queue="bulk", limit=ALL)
    assert len(archived) == total
    owner = {job_id: worker for job_id, _, worker in handed}
    assert all(job.worker_id == owner[job.id] and job.attempts == 1 for job in archived)


# -- (b) the bulkhead holds across processes ----------------------------------------------------


@contextmanager
def sampling(db_url: str, queue: str) -> Iterator[list[int]]:
    """A thread that counts the queue's fetched + processing jobs, as often as it can."""
    samples: list[int] = []
    stop = threading.Event()

    def sample() -> None:
        with App(db_url) as watcher:
            while not stop.is_set():
                info = queue_info(watcher, queue)
                samples.append(info.fetched + info.processing)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield samples
    finally:
        stop.set()
        thread.join(timeout=30)


def max_overlap(intervals: list[tuple[float, float]]) -> int:
    """The most intervals that share one instant."""
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals],
                    key=lambda e: (e[0], e[1]))
    current = best = 0
    for _, step in events:
        current += step
        best = max(best, current)
    return best


def test_bulkhead_max_workers_holds_across_eight_processes(app: App, db_url: str) -> None:
    limit, jobs = 3, 240
    app.configure_queue("bh", max_workers=limit)
    app.enqueue_many([{"task": "t", "queue": "bh"} for _ in range(jobs)])
    app.enqueue_many([{"task": "t", "queue": "free"} for _ in range(20)])
    with sampling(db_url, "bh") as samples:
        time.sleep(0.05)
        records = run_processes(
            procs.bulkhead_claimer, [(db_url, f"w{i}", "bh", 0.02) for i in range(8)]
        )
    assert len(samples) >= 200, f"only {len(samples)} samples"
    assert max(samples) <= limit, f"the database showed {max(samples)} jobs in flight"
    assert max(samples) == limit, "the queue never filled up: the test proves nothing"
    intervals = [iv for r in records for iv in r["intervals"]]
    assert len(intervals) == jobs
    assert max(r["biggest_claim"] for r in records) <= limit
    assert max_overlap(intervals) <= limit, "claimers held more jobs at once than max_workers"
    assert sum(1 for r in records if r["intervals"]) >= 2
    info = queue_info(app, "bh")
    assert (info.archived, info.pending, info.fetched, info.processing) == (jobs, 0, 0, 0)
    assert queue_info(app, "free").pending == 20, "other queues are not touched"


# -- (c) a stale owner in another process changes nothing ----------------------------------------


class Agent:
    """A process that claims and writes when the test tells it to."""

    def __init__(self, db_url: str, name: str, start: datetime | None = None) -> None:
        self.pipe, child = CTX.Pipe()
        self.process = CTX.Process(
            target=procs.agent, args=(db_url, name, child, start), daemon=True)
        self.process.start()

    def __call__(self, command: str, **args: Any) -> Any:
        self.pipe.send((command, args))
        if not self.pipe.poll(60):
            raise AssertionError(f"agent did not answer {command}")
        reply = self.pipe.recv()
        if isinstance(reply, str) and reply.startswith("error"):
            raise AssertionError(f"{command} failed in the agent: {reply}")
        return reply

    def close(self) -> None:
        if self.process.is_alive():
            with suppress(AssertionError, OSError, EOFError):
                self("stop")
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()


@pytest.fixture
def agents(db_url: str) -> Iterator[Callable[..., Agent]]:
    """Agents by name; those given a `start` time run on FakeClocks from it (`advance`)."""
    made: list[Agent] = []

    def make(name: str, start: datetime | None = None) -> Agent:
        made.append(Agent(db_url, name, start))
        return made[-1]

    yield make
    for agent in made:
        agent.close()


def snapshot(app: App, ids: list[int]) -> list[Any]:
    return [app.get_job(i) for i in ids]


@pytest.mark.parametrize("first_owner_started", [True, False], ids=["processing", "fetched"])
def test_stale_owner_in_another_process_matches_zero_rows(
    app: App, agents: Callable[..., Agent], first_owner_started: bool
) -> None:
    ids = app.enqueue_many([{"task": "t", "queue": "z", "max_attempts": 5} for _ in range(4)])
    # Three processes on clocks that agree (as hosts reading one database server's do).
    start = datetime.now(UTC)
    a, b, reaper = agents("A", start), agents("B", start), agents("reaper", start)
    first = a("claim", queues=["z"], limit=4, lease=0.3)
    assert sorted(i for i, _ in first) == ids
    if first_owner_started:
        assert [a("start", id=i) for i in ids] == ["ok"] * 4
    assert reaper("reap") == {"requeued": [], "dead": []}, "the leases are still running"
    for agent in (a, b, reaper):
        agent("advance", seconds=0.6)
    assert sorted(reaper("reap")["requeued"]) == ids
    second = b("claim", queues=["z"], limit=4, lease=60)
    assert sorted(i for i, _ in second) == ids
    assert not {t for _, t in first} & {t for _, t in second}, "re-claim must issue new tokens"

    # B holds the jobs as fetched: A's start is refused by the token alone.
    before = snapshot(app, ids)
    for i in ids:
        assert a("start", id=i) == "LeaseLost"
    assert snapshot(app, ids) == before
    # B starts them: now A's heartbeat, complete, fail and release are refused by the token.
    assert [b("start", id=i) for i in ids] == ["ok"] * 4
    before = snapshot(app, ids)
    assert all(j.status is Status.PROCESSING and j.worker_id == "B" for j in before)
    for op in ("start", "heartbeat", "complete", "fail", "release"):
        for i in ids:
            assert a(op, id=i) == "LeaseLost", f"A's stale {op} of job {i} was accepted"
        assert snapshot(app, ids) == before, f"A's stale {op} changed a job"
    batched = a("batched", ids=ids)
    assert batched == {"start": [], "heartbeat_lost": ids, "complete": [], "fail_lost": ids,
                       "release": []}
    assert snapshot(app, ids) == before
    # The reaper finds nothing to do, and B finishes its jobs normally.
    assert reaper("reap") == {"requeued": [], "dead": []}
    assert [b("complete", id=i) for i in ids] == ["ok"] * 4
    assert [app.get_job(i).result for i in ids] == [{"by": "B"}] * 4


# -- (d) one idempotency key from many processes -----------------------------------------------


def test_one_idempotency_key_from_eight_processes_makes_one_job(app: App, db_url: str) -> None:
    results = run_processes(
        procs.enqueue_same_key, [(db_url, "order-7", "idem", 6) for _ in range(8)]
    )
    returned = {job_id for ids in results for job_id in ids}
    assert len(returned) == 1, f"one key gave {len(returned)} jobs: {returned}"
    [job_id] = returned
    assert [j.id for j in app.list_jobs(limit=ALL)] == [job_id]
    assert [q.name for q in app.queues()] == ["idem"]
    assert app.get_job(job_id).idempotency_key == "order-7"
    # Still the same job once it has finished (within the retention window).
    [job] = app.claim("w", ["idem"])
    app.start(job)
    app.complete(job)
    again = run_processes(
        procs.enqueue_same_key, [(db_url, "order-7", "idem", 3) for _ in range(8)]
    )
    assert {i for ids in again for i in ids} == {job_id}
    assert app.list_jobs(limit=ALL) == [] and len(app.list_jobs("archive")) == 1


def test_eight_processes_create_one_queue_and_every_keyed_job(app: App, db_url: str) -> None:
    results = run_processes(
        procs.enqueue_own_keys, [(db_url, f"p{i}", "fresh", 25) for i in range(8)]
    )
    ids = [job_id for got in results for job_id in got]
    assert len(set(ids)) == 8 * 25
    assert [q.name for q in app.queues()] == ["fresh"]
    assert queue_info(app, "fresh").pending == 8 * 25


# -- (e) a rolled-back enqueue never exists -----------------------------------------------------


def test_rollback_in_another_process_leaves_no_job(
    app: App, agents: Callable[..., Agent]
) -> None:
    writer = agents("writer")
    assert writer("tx_begin") == "ok"
    job_id = writer("tx_enqueue", payload={"secret": 1}, queue="txq", key="tx-key")
    # Open but not committed: invisible to this process.
    with pytest.raises(JobNotFound):
        app.get_job(job_id)
    assert app.list_jobs(limit=ALL) == [] and app.queues() == []
    assert writer("tx_rollback") == "ok"
    with pytest.raises(JobNotFound):
        app.get_job(job_id)
    assert app.claim("w", limit=10) == []
    assert app.list_jobs(limit=ALL) == [] and app.queues() == []
    # The key was never taken: enqueuing it again makes a new job (SQLite may reuse the id of
    # a row that was never committed; the payload tells the two apart).
    fresh = app.enqueue("t", idempotency_key="tx-key")
    assert app.get_job(fresh).payload == {}
    assert len(app.list_jobs(limit=ALL)) == 1


def test_process_dying_inside_its_transaction_leaves_no_job(
    app: App, agents: Callable[..., Agent]
) -> None:
    writer = agents("writer")
    assert writer("tx_begin") == "ok"
    job_id = writer("tx_enqueue", queue="crash")
    writer.pipe.send(("tx_crash", {}))
    writer.process.join(timeout=30)
    assert writer.process.exitcode == 17
    with pytest.raises(JobNotFound):
        app.get_job(job_id)
    # The dead process's locks are gone: writes go on as usual.
    other = app.enqueue("t", queue="crash")
    assert [j.id for j in app.claim("w", ["crash"], limit=10)] == [other]
    assert len(app.list_jobs(limit=ALL)) == 1


def test_committed_enqueue_in_another_process_exists(
    app: App, agents: Callable[..., Agent]
) -> None:
    writer = agents("writer")
    assert writer("tx_begin") == "ok"
    job_id = writer("tx_enqueue", payload={"v": 1}, queue="ok")
    assert writer("tx_commit") == "ok"
    assert app.get_job(job_id).payload == {"v": 1}


def test_claimers_never_see_rolled_back_jobs(app: App, db_url: str, tmp_path: Path) -> None:
    """One process enqueues in transactions and rolls every other one back while three others
    claim continuously: they complete exactly the committed jobs."""
    stop = tmp_path / "stop"
    barrier = CTX.Barrier(4)
    results = CTX.Queue()
    args: list[tuple[Any, ...]] = [(db_url, "rb", 30)] + [
        (db_url, f"c{i}", "rb", str(stop)) for i in range(3)
    ]
    targets = [procs.rounds_in_transactions] + [procs.claim_until_told] * 3
    workers = [
        CTX.Process(target=procs.entry, args=(t, i, (*a, barrier), results), daemon=True)
        for i, (t, a) in enumerate(zip(targets, args, strict=True))
    ]
    for w in workers:
        w.start()
    out: dict[int, Any] = {}
    try:
        while len(out) < len(workers):
            index, status, value = results.get(timeout=120)
            assert status == "ok", value
            out[index] = value
            if index == 0:
                stop.touch()
    finally:
        stop.touch()
        for w in workers:
            w.join(timeout=10)
            if w.is_alive():
                w.kill()
    written = out[0]
    completed = [job_id for i in (1, 2, 3) for job_id in out[i]]
    assert len(written["committed"]) == 15 and len(written["rolled_back"]) == 15
    assert sorted(completed) == sorted(written["committed"])
    archived = app.list_jobs("archive", limit=ALL)
    assert {j.id for j in archived} == set(written["committed"])
    assert sorted(j.payload["round"] for j in archived) == list(range(1, 30, 2)), (
        "exactly the committed (odd) rounds ran"
    )
    assert app.list_jobs(limit=ALL) == [] and app.list_jobs("dead", limit=ALL) == []
    # A rolled-back id is gone; SQLite may have given it to a later committed round.
    for job_id in written["rolled_back"]:
        try:
            reused = app.get_job(job_id)
        except JobNotFound:
            continue
        assert reused.payload["round"] % 2 == 1 and job_id in written["committed"]


# -- (g) MariaDB: lock waits under eight claimers are retried, counted, never raised -------------


def _waits_seen(watcher: Any, database: str, seen: dict[int, set[Any]]) -> int:
    """Adds the lock waits of `database`'s sessions now in progress to `seen` (per session, the
    waiting transactions); returns how many sessions have waited in two transactions (their
    first one timed out and ran again)."""
    cur = watcher.cursor()
    cur.execute(
        "SELECT t.trx_mysql_thread_id, t.trx_id, t.trx_wait_started"
        " FROM information_schema.INNODB_TRX t"
        " JOIN information_schema.PROCESSLIST p ON p.id = t.trx_mysql_thread_id"
        " WHERE t.trx_state = 'LOCK WAIT' AND p.db = %s", (database,))
    for session, trx, since in cur.fetchall():
        seen.setdefault(session, set()).add((trx, since))
    return sum(1 for waits in seen.values() if len(waits) >= 2)


@pytest.mark.mariadb
def test_lock_waits_under_eight_claimers_are_retried_and_counted_on_mariadb(
    mariadb_server: str,
) -> None:
    """Eight processes drain one queue on MariaDB while a foreign REPEATABLE READ transaction
    locks every row and gap of the archive: each completion's INSERT waits, times out
    (lock_wait_timeout=1) and its transaction runs again. Once some session has waited twice
    the lock goes; every job is still handed out once and archived, no process saw an error,
    and the retries are counted in the backends' `retries`."""
    from dbs import mariadb_database

    from claimq.backends.mysql import MySQLBackend

    total, processes = 2_000, 8
    with mariadb_database(mariadb_server) as fresh, \
            App(fresh + ("&" if "?" in fresh else "?") + "lock_wait_timeout=1") as app:
        backend = app.backend
        assert isinstance(backend, MySQLBackend)
        app.migrate()
        ids = app.enqueue_many([{"task": "t", "queue": "dl"} for _ in range(total)])
        blocker, watcher = backend.connect(), backend.connect()
        cur = blocker.cursor()
        cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        cur.execute("START TRANSACTION")
        cur.execute("SELECT id FROM claimq_archive FOR UPDATE")  # the supremum's gap too
        out: dict[str, Any] = {}

        def drain() -> None:
            try:
                out["records"] = run_processes(
                    procs.claim_complete_counting,
                    [(app.url, f"w{i}", "dl", 20) for i in range(processes)], timeout=240)
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                out["error"] = exc

        thread = threading.Thread(target=drain, daemon=True)
        thread.start()
        seen: dict[int, set[Any]] = {}
        try:
            # InnoDB refreshes what INNODB_TRX shows only when it was last read over 0.1 s ago:
            # read it more often and it never changes.
            wait_until(lambda: "error" in out or _waits_seen(watcher, backend.database, seen),
                       120, "a claimer's completion to wait, time out and wait again",
                       interval=0.25)
        finally:
            blocker.rollback()
            blocker.close()
            watcher.close()
        thread.join(240)
        assert not thread.is_alive(), "the claimers did not finish"
        assert "error" not in out, out.get("error")
        records = out["records"]
        info = queue_info(app, "dl")
        assert (info.archived, info.pending, info.fetched, info.processing) == (total, 0, 0, 0)
    claimed = Counter(job_id for got, _ in records for job_id, _ in got)
    assert set(claimed) == set(ids) and max(claimed.values()) == 1, "a job was claimed twice"
    retries: Counter[str] = Counter()
    for _, counted in records:
        retries.update(counted)
    assert retries["lock_wait_timeout"] >= 1, retries
    print(f"mariadb, {processes} claimers: retried {dict(retries)}; "
          f"sessions that waited: {len(seen)}")
