"""Issue 24, defect 8: a flow claim must not take a job whose run_at was moved into the future
while the claim ran (a debounce, `unique="pending", on_conflict="replace"` with a delay).

PostgreSQL's flow claim is one statement (claim_flow.sql / claim_keyed.sql): it chooses the jobs
from its snapshot, then locks them. The race is forced by making the statement wait between
the two: it completes a job of the same queue first (the `done` part, which the choice reads to
count the keys in flight), and the test holds that job's row locked. While the claim waits
there, a debounce moves the chosen job an hour later and commits; then the test lets the claim
go on. MariaDB and SQLite choose and lock in one step (a locking read; the writer lock): the
claim is stopped at `claim.candidates`, after its choice, and the debounce runs then."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlparse

import pytest
from dbs import fresh_db_url

from claimq import App
from claimq._pause import set_hook
from claimq.backends.base import ClaimRequest, Completion

pytestmark = pytest.mark.timeout(60)

WAIT = 20.0
HOUR = 3600.0


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    yield from fresh_db_url(request, request.param, tmp_path)


@pytest.fixture
def app(url: str) -> Iterator[App]:
    app = App(url)
    app.migrate()
    yield app
    app.close()


def _wait_until(check: Callable[[], bool], what: str,
                explain: Callable[[], Any] = lambda: "") -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what} {explain()}"
        time.sleep(0.01)


def _setup(app: App) -> tuple[Any, int]:
    """A flow queue (concurrency keys): job `running` in flight (key a), job `waiting` due
    (key b, held for a debounce by its idempotency key). Returns (running, waiting's id)."""
    app.enqueue("t.flow", {"n": 0}, queue="q", concurrency_key="a", concurrency_limit=5)
    waiting = app.enqueue("t.flow", {"n": 1}, queue="q", concurrency_key="b",
                          concurrency_limit=5, idempotency_key="debounced", unique="pending",
                          on_conflict="replace")
    [running] = app.claim("w-1", queues=["q"], limit=1, start=True)
    assert running.id != waiting
    return running, waiting


def _debounce(app: App) -> int:
    return app.enqueue("t.flow", {"n": 2}, queue="q", concurrency_key="b", concurrency_limit=5,
                       idempotency_key="debounced", unique="pending", on_conflict="replace",
                       delay=timedelta(seconds=HOUR))


def _settle_and_claim(app: App, running: Any, out: dict[str, Any]) -> threading.Thread:
    def run() -> None:
        try:
            out["settled"] = app.backend.settle(
                [Completion(running.id, running.claim_token)], [],
                ClaimRequest("w-2", ["q"], 10, 60.0, True))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _check(app: App, waiting: int, out: dict[str, Any]) -> None:
    assert "error" not in out, out
    claimed = {j.id: j for j in out["settled"].claimed}
    job = app.get_job(waiting)
    if waiting in claimed:
        # claimed before the debounce: then it ran at its due time and the debounce queued anew
        assert job.payload == {"n": 1}, f"job {waiting} claimed with the debounced payload"
        assert job.run_at <= claimed[waiting].updated_at
    else:
        assert job.status == "pending" and job.payload == {"n": 2}
        assert job.run_at > app.backend.now() + timedelta(seconds=HOUR - 600)
    assert out["settled"].completed


@pytest.mark.parametrize("url", ["postgresql"], indirect=True)
def test_postgres_flow_claim_rechecks_run_at_when_it_locks(app: App, url: str) -> None:
    import psycopg

    backend: Any = app.backend
    running, waiting = _setup(app)
    out: dict[str, Any] = {}
    holder = psycopg.connect(backend.conninfo)
    try:
        holder.execute(f"SELECT id FROM {backend.schema}.jobs WHERE id = %s FOR UPDATE",
                       (running.id,))
        pid = holder.info.backend_pid
        thread = _settle_and_claim(app, running, out)
        _wait_until(lambda: app.backend.run_sql(
            "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
            [pid])[0][0] > 0 or not thread.is_alive(),
            "the claim to wait on the completed job's row")
        assert thread.is_alive(), f"the claim did not wait on the held row: {out}"
        # the claim's snapshot is taken, its choice made: the debounce moves the job later
        assert _debounce(app) == waiting
        holder.commit()
    finally:
        holder.close()
    thread.join(WAIT)
    assert not thread.is_alive()
    assert "error" not in out, out
    assert waiting not in {j.id for j in out["settled"].claimed}, (
        f"job {waiting} claimed an hour early: its run_at was moved while the claim ran")
    _check(app, waiting, out)


@pytest.mark.parametrize("url", ["sqlite", "mariadb"], indirect=True)
def test_paused_flow_claim_and_a_debounce(app: App, url: str) -> None:
    """MariaDB and SQLite: the claim stopped at `claim.candidates` (its jobs chosen, not yet
    taken) while the debounce runs: either the debounce waits (the chosen rows are locked)
    and then queues anew, or it moved the job first and the claim leaves it."""
    running, waiting = _setup(app)
    chosen = threading.Event()
    go_on = threading.Event()

    def hook(point: str) -> None:
        if point == "claim.candidates" and not chosen.is_set():
            chosen.set()
            assert go_on.wait(WAIT)

    out: dict[str, Any] = {}
    debounced: dict[str, Any] = {}
    previous = set_hook(hook)
    try:
        thread = _settle_and_claim(app, running, out)
        assert chosen.wait(WAIT), "the claim never reached claim.candidates"

        def debounce() -> None:
            try:
                debounced["id"] = _debounce(app)
            except BaseException as exc:  # noqa: BLE001
                debounced["error"] = exc

        other = threading.Thread(target=debounce, daemon=True)
        other.start()
        if url.startswith("mysql"):
            database = urlparse(url).path.lstrip("/")
            _wait_until(lambda: not other.is_alive() or app.backend.run_sql(
                "SELECT count(*) FROM information_schema.processlist WHERE db = %s "
                "AND info LIKE 'UPDATE claimq_jobs%%SET payload%%'", [database])[0][0] > 0,
                "the debounce's replace to wait on the chosen row, or the debounce to end")
        go_on.set()
        thread.join(WAIT)
        other.join(WAIT)
        assert not thread.is_alive() and not other.is_alive()
    finally:
        go_on.set()
        set_hook(previous)
    assert "error" not in debounced, debounced
    _check(app, waiting, out)
