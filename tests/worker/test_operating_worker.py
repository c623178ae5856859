"""The worker registry with real worker processes: a worker's row appears at its start, shows
its jobs in flight, is marked dead by another worker's reaper once a SIGKILLed worker's
heartbeat lapsed, and goes away at a clean stop."""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Callable

import pytest
from worker_harness import WorkerProcess, wait_until

from claimq import App, __version__
from claimq.backends.base import WorkerInfo

# Every backend, MariaDB too (its registry rows and its reaper's marking).
EVERY_BACKEND = pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"],
                                        indirect=True)
FAST = {"presence_interval": 0.2, "presence_timeout": 1.5, "lease": 1.0, "grace": 0}


def _row(app: App, worker_id: str) -> WorkerInfo | None:
    return next((w for w in app.workers() if w.id == worker_id), None)


@EVERY_BACKEND
def test_a_sigkilled_worker_is_marked_dead_once_its_heartbeat_lapses(
    app: App, spawn_worker: Callable[..., WorkerProcess]
) -> None:
    victim = spawn_worker(app.url, concurrency=3, queues=["default"], **FAST)
    victim_id = victim.wait_started()
    row = wait_until(lambda: _row(app, victim_id), 20, "the victim's registry row")
    assert row.alive and row.pid == victim.pid and row.host == socket.gethostname()
    assert (row.concurrency, row.queues, row.version) == (3, ("default",), __version__)

    job_id = app.enqueue("t.sleep_async", {"seconds": 5})
    victim.wait_handler(job_id)
    wait_until(lambda: (r := _row(app, victim_id)) is not None and r.in_flight == 1, 20,
               "the victim's row to show its job in flight")

    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(10)
    rescuer = spawn_worker(app.url, **FAST)
    rescuer_id = rescuer.wait_started()
    dead = wait_until(lambda: (r := _row(app, victim_id)) is not None and not r.alive and r,
                      30, "the victim's row to be marked dead")
    assert dead.dead_at is not None and dead.silent_for >= FAST["presence_timeout"]
    rescuer_row = _row(app, rescuer_id)
    assert rescuer_row is not None and rescuer_row.alive
    rescuer.wait_log(r"worker\.dead: 1 worker")

    assert rescuer.stop() == 0
    assert _row(app, rescuer_id) is None  # a clean stop takes its row away
    assert _row(app, victim_id) is not None  # the dead one stays until it is pruned


def test_a_metrics_port_in_use_stops_the_worker_with_a_clear_error(app: App) -> None:
    from claimq import InvalidInput, Worker

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        worker = Worker(app, metrics_port=port, metrics_no_token=True)
        with pytest.raises(InvalidInput, match=f"cannot serve metrics on 127.0.0.1:{port}"):
            worker.run(install_signals=False)
    assert app.workers() == []  # it never registered


def test_metrics_default_to_loopback_and_a_token(app: App, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    from claimq import InvalidInput, Worker

    monkeypatch.delenv("CLAIMQ_METRICS_TOKEN", raising=False)
    with pytest.raises(InvalidInput, match="metrics need a bearer token"):
        Worker(app, metrics_port=0)  # never an open port by default
    with pytest.raises(InvalidInput, match="not both"):
        Worker(app, metrics_port=0, metrics_token="x" * 16, metrics_no_token=True)
    with pytest.raises(InvalidInput, match="at least 16 characters"):
        Worker(app, metrics_port=0, metrics_token="short")
    assert Worker(app).metrics_host == "127.0.0.1"
    assert Worker(app).exports_stats is False  # no /metrics: no lease, no gauges
    monkeypatch.setenv("CLAIMQ_METRICS_TOKEN", "t" * 20)
    worker = Worker(app, metrics_port=0)
    assert (worker.metrics_host, worker.metrics_token) == ("127.0.0.1", "t" * 20)
    server = worker._serve_metrics()
    try:
        assert server.server_address[0] == "127.0.0.1"
        assert worker.metrics_address == ("127.0.0.1", server.server_port)
    finally:
        server.shutdown()
        server.server_close()
